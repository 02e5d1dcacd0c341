/* codecs/pprof/pprof_export.c: SPAA -> pprof. Every pprof fixture converted, exported and
 * converted again gives the same stacks (content ids and every weight) and the same sample
 * types and period; a model without pprof extras gets one sample type per metric; refusals;
 * lines without a file; unresolved frames with a file and line; OTLP's period type; stack
 * context that did not come from pprof labels written as labels. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "otlp/otlp.h"
#include "pprof/pprof.h"
#include "pprof_testlib.h"
#include "spaa/spaa_io.h"

static const char *fixtures[] = {
    "google-pprof_sample.cpu", "google-pprof_cppbench.cpu_no_samples_type",
    "google-pprof_go.nomappings.crash", "google-pprof_large.cpu", "pyroscope_heap",
    "pyroscope_go.cpu.labels.pprof", "pyroscope_profile_java", "pyroscope_profile_python",
    "pyroscope_pyspy-1.pb.gz", "pyroscope_dotnet.labels.pprof",
    "pyroscope_single_group_with_optional_span_id.pb.gz", "pyroscope_nodejs-wall.pb.gz",
    "parca_node-profile.pb.gz", "parca_profile-with-labels.pb.gz",
};

static int sink(void *ctx, const void *data, size_t len) { return spaa_buf_add(ctx, data, len); }

static struct spaa_profile *convert(const uint8_t *buf, size_t len, const char *what)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  struct spaa_profile *p;
  if (spaa_convert_pprof(buf, len, NULL, &l, &err))
    fail_msg("%s: %s", what, err.msg);
  assert_int_equal(l.n, 1);
  p = l.v[0].profile;
  l.v[0].profile = NULL;
  spaa_conv_list_free(&l);
  return p;
}

/* Same stacks in the same canonical order, each with the same weights. */
static void same_stacks(const struct spaa_profile *a, const struct spaa_profile *b,
                        const char *what)
{
  size_t i, j;
  if (a->n_stacks != b->n_stacks)
    fail_msg("%s: %zu stacks, %zu after the round trip", what, a->n_stacks, b->n_stacks);
  for (i = 0; i < a->n_stacks; i++) {
    const struct spaa_stack *x = &a->stacks[i], *y = &b->stacks[i];
    if (strcmp(x->id, y->id))
      fail_msg("%s: stack %zu: id %s became %s", what, i, x->id, y->id);
    assert_int_equal(x->weights.n, y->weights.n);
    for (j = 0; j < x->weights.n; j++) { /* merged stacks may list metrics in other orders */
      const struct spaa_weight *w = spaa_weights_find(&y->weights, x->weights.v[j].metric);
      if (!w || w->value.i != x->weights.v[j].value.i)
        fail_msg("%s: stack %s: metric %s changed", what, x->id, x->weights.v[j].metric);
    }
  }
  assert_int_equal(a->header.n_events, b->header.n_events);
  if (a->header.n_events)
    assert_string_equal(a->header.events[0].primary_metric, b->header.events[0].primary_metric);
}

static void test_fixture_round_trips(void **state)
{
  size_t i;
  (void)state;
  if (!spaa_test_have_fixtures("pprof", "pprof_export_test"))
    skip();
  for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
    size_t len;
    uint8_t *in = spaa_test_fixture_in("pprof", fixtures[i], &len);
    struct spaa_profile *a, *b;
    struct spaa_buf out;
    struct spaa_err err = {0};
    const json_t *per;
    if (!in)
      fail_msg("%s: not readable", fixtures[i]);
    a = convert(in, len, fixtures[i]);
    spaa_buf_init(&out, 0);
    if (spaa_export_pprof(a, NULL, sink, &out, &err))
      fail_msg("%s: export: %s", fixtures[i], err.msg);
    assert_true(out.len > 2 && (uint8_t)out.p[0] == 0x1f && (uint8_t)out.p[1] == 0x8b);
    b = convert((const uint8_t *)out.p, out.len, fixtures[i]);
    same_stacks(a, b, fixtures[i]);
    per = json_object_get(a->header.extra, "x_pprof_period");
    if (per && !json_equal(per, json_object_get(b->header.extra, "x_pprof_period")))
      fail_msg("%s: the period type, unit or value changed", fixtures[i]);
    spaa_profile_free(a);
    spaa_profile_free(b);
    spaa_buf_free(&out);
    free(in);
  }
}

/* A model from SPAA text (no x_pprof keys): one sample type per metric, primary first. */
static void test_plain_model(void **state)
{
  static const char text[] =
      "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"stack_id_mode\":\"local\",\"source_tool\":\"perf\","
      "\"frame_order\":\"leaf_to_root\",\"events\":[{\"name\":\"cycles\",\"kind\":\"hardware\","
      "\"sampling\":{\"mode\":\"period\",\"primary_metric\":\"period\",\"sample_period\":100}}]}\n"
      "{\"type\":\"dso\",\"id\":1,\"name\":\"/bin/app\"}\n"
      "{\"type\":\"frame\",\"id\":1,\"func\":\"leaf\",\"dso\":1,\"srcline\":\"a.c:10\",\"kind\":\"user\"}\n"
      "{\"type\":\"frame\",\"id\":2,\"func\":\"main\",\"dso\":1,\"kind\":\"user\"}\n"
      "{\"type\":\"stack\",\"id\":\"s1\",\"frames\":[1,2],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":300},{\"metric\":\"samples\",\"value\":3}]}\n"
      "{\"type\":\"stack\",\"id\":\"s2\",\"frames\":[2],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":100}]}\n";
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  struct spaa_buf out;
  struct spaa_profile *b;
  struct spaa_export_opts o = {"nope", NULL};
  size_t i;
  int64_t period = 0, samples = 0;
  (void)state;
  assert_int_equal(spaa_convert_spaa((const uint8_t *)text, sizeof(text) - 1, NULL, &l, &err), 0);
  spaa_buf_init(&out, 0);
  assert_int_equal(spaa_export_pprof(l.v[0].profile, NULL, sink, &out, &err), 0);
  b = convert((const uint8_t *)out.p, out.len, "plain model");
  assert_string_equal(b->header.events[0].name, "period");
  assert_string_equal(b->header.events[0].primary_metric, "period");
  for (i = 0; i < b->n_stacks; i++) {
    const struct spaa_weight *w = spaa_weights_find(&b->stacks[i].weights, "period");
    const struct spaa_weight *s = spaa_weights_find(&b->stacks[i].weights, "samples");
    period += w ? w->value.i : 0;
    samples += s ? s->value.i : 0;
  }
  assert_int_equal(period, 400);
  assert_int_equal(samples, 3);
  assert_int_equal(spaa_export_pprof(l.v[0].profile, &o, sink, &out, &err), SPAA_E_USAGE);
  spaa_profile_free(b);
  spaa_buf_free(&out);
  spaa_conv_list_free(&l);
}

/* ---- the exported pprof, decoded by the project's own decoder ------------------------ */

static struct spaa_buf export_buf(const struct spaa_profile *p, const char *what)
{
  struct spaa_buf out;
  struct spaa_err err = {0};
  spaa_buf_init(&out, 0);
  if (spaa_export_pprof(p, NULL, sink, &out, &err))
    fail_msg("%s: export: %s", what, err.msg);
  return out;
}

static struct spaa_pprof *decode(const struct spaa_buf *b, const char *what)
{
  struct spaa_pprof *d = NULL;
  struct spaa_err err = {0};
  if (spaa_pprof_decode((const uint8_t *)b->p, b->len, &d, &err))
    fail_msg("%s: decode: %s", what, err.msg);
  return d;
}

/* string_table[i] as a C string (static buffer, one at a time). */
static const char *str_at(const struct spaa_pprof *d, int64_t i)
{
  static char s[512];
  const ProtobufCBinaryData *b = &d->msg->string_table[i];
  snprintf(s, sizeof(s), "%.*s", (int)b->len, b->len ? (const char *)b->data : "");
  return s;
}

/* The lines of function `name` in d: how many, each with no filename, their line numbers
 * summed into *sum. */
static size_t lines_of(const struct spaa_pprof *d, const char *name, int64_t *sum)
{
  const Perftools__Profiles__Profile *m = d->msg;
  size_t i, j, k, n = 0;
  *sum = 0;
  for (i = 0; i < m->n_location; i++)
    for (j = 0; j < m->location[i]->n_line; j++) {
      const Perftools__Profiles__Line *ln = m->location[i]->line[j];
      for (k = 0; k < m->n_function && m->function[k]->id != ln->function_id; k++)
        ;
      assert_true(k < m->n_function);
      if (strcmp(str_at(d, m->function[k]->name), name))
        continue;
      assert_int_equal(m->function[k]->filename, 0);
      *sum += ln->line;
      n++;
    }
  return n;
}

/* ":LINE" (a line whose function has no file) is written back as that line of a function
 * with no filename, and the round trip keeps the stack ids: a built profile (two lines of
 * one function, and one with neither file nor line) and the Java fixture (AsyncProfiler
 * .execute :135). */
static void test_line_without_file(void **state)
{
  struct tb b;
  struct spaa_profile *a, *c;
  struct spaa_pprof *d;
  struct spaa_buf out;
  uint8_t *buf;
  size_t len;
  int64_t sum;
  (void)state;
  tb_lines_without_file(&b);
  buf = tb_pack(&b, &len);
  a = convert(buf, len, "built");
  free(buf);
  out = export_buf(a, "built");
  d = decode(&out, "built");
  assert_int_equal(lines_of(d, "work", &sum), 3);
  assert_int_equal(sum, 135 + 140 + 0);
  spaa_pprof_free(d);
  c = convert((const uint8_t *)out.p, out.len, "built, exported");
  same_stacks(a, c, "built");
  spaa_profile_free(a);
  spaa_profile_free(c);
  spaa_buf_free(&out);
  if (!spaa_test_have_fixtures("pprof", "pprof_export_test"))
    return;
  buf = spaa_test_fixture_in("pprof", "pyroscope_profile_java", &len);
  a = convert(buf, len, "java");
  out = export_buf(a, "java");
  d = decode(&out, "java");
  assert_int_equal(lines_of(d, "jpprof/one/profiler/AsyncProfiler.execute", &sum), 1);
  assert_int_equal(sum, 135);
  spaa_pprof_free(d);
  spaa_profile_free(a);
  spaa_buf_free(&out);
  free(buf);
}

/* The locations of d, one "address name file:line" line each ("address -" for one with no
 * line), sorted, into t (NUL-terminated). */
static int line_cmp(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void locations_text(const struct spaa_pprof *d, struct spaa_buf *t)
{
  const Perftools__Profiles__Profile *m = d->msg;
  char **v = calloc(m->n_location + 1, sizeof(*v));
  size_t i, j, k;
  assert_non_null(v);
  for (i = 0; i < m->n_location; i++) {
    const Perftools__Profiles__Location *l = m->location[i];
    char tmp[600];
    int n = snprintf(tmp, sizeof(tmp), "0x%" PRIx64, l->address);
    if (!l->n_line)
      n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, " -");
    for (j = 0; j < l->n_line; j++) {
      for (k = 0; k < m->n_function && m->function[k]->id != l->line[j]->function_id; k++)
        ;
      assert_true(k < m->n_function);
      n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, " %s", str_at(d, m->function[k]->name));
      n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, " %s:%" PRId64,
                    str_at(d, m->function[k]->filename), l->line[j]->line);
    }
    assert_non_null(v[i] = strdup(tmp));
  }
  qsort(v, m->n_location, sizeof(*v), line_cmp);
  for (i = 0; i < m->n_location; i++) {
    assert_int_equal(spaa_buf_add(t, v[i], strlen(v[i])), 0);
    assert_int_equal(spaa_buf_add(t, "\n", 1), 0);
    free(v[i]);
  }
  assert_int_equal(spaa_buf_add(t, "", 1), 0);
  free(v);
}

/* Unresolved frames with a srcline (a Sentry or Node frame without a function name) are
 * lines of their own locations: the SPAA's name ("[unknown]"), or none when the frame is
 * named by its address, with file and line; so two of them are two locations, not one that
 * pprof tools merge. An unresolved frame with only an address stays a location without
 * lines. Converted again, the anonymous frames keep their file and line. */
static void test_unresolved_lines(void **state)
{
  static const char text[] =
      "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"stack_id_mode\":\"local\","
      "\"source_tool\":\"sentry\",\"frame_order\":\"leaf_to_root\",\"events\":[{\"name\":\"wall\","
      "\"kind\":\"timer\",\"sampling\":{\"mode\":\"event\",\"primary_metric\":\"samples\"}}]}\n"
      "{\"type\":\"dso\",\"id\":1,\"name\":\"/app/node\"}\n"
      "{\"type\":\"frame\",\"id\":1,\"func\":\"[unknown]\",\"func_resolved\":false,\"dso\":1,"
      "\"srcline\":\"/app/app.js:20\",\"kind\":\"user\"}\n"
      "{\"type\":\"frame\",\"id\":2,\"func\":\"[unknown]\",\"func_resolved\":false,\"dso\":1,"
      "\"srcline\":\"/app/app.js:30\",\"kind\":\"user\"}\n"
      "{\"type\":\"frame\",\"id\":3,\"func\":\"0x1234\",\"func_resolved\":false,\"dso\":1,"
      "\"ip\":\"0x1234\",\"srcline\":\"native.c:7\",\"kind\":\"user\"}\n"
      "{\"type\":\"frame\",\"id\":4,\"func\":\"0x5678\",\"func_resolved\":false,\"dso\":1,"
      "\"ip\":\"0x5678\",\"srcline_resolved\":false,\"kind\":\"user\"}\n"
      "{\"type\":\"frame\",\"id\":5,\"func\":\"main\",\"dso\":1,\"srcline\":\"/app/app.js:5\","
      "\"kind\":\"user\"}\n"
      "{\"type\":\"stack\",\"id\":\"s1\",\"frames\":[1,5],\"context\":{\"event\":\"wall\"},"
      "\"weights\":[{\"metric\":\"samples\",\"value\":2}]}\n"
      "{\"type\":\"stack\",\"id\":\"s2\",\"frames\":[2,5],\"context\":{\"event\":\"wall\"},"
      "\"weights\":[{\"metric\":\"samples\",\"value\":3}]}\n"
      "{\"type\":\"stack\",\"id\":\"s3\",\"frames\":[3,4,5],\"context\":{\"event\":\"wall\"},"
      "\"weights\":[{\"metric\":\"samples\",\"value\":1}]}\n";
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  struct spaa_buf out, t;
  struct spaa_pprof *d;
  struct spaa_profile *c;
  size_t i, anon = 0;
  (void)state;
  assert_int_equal(spaa_convert_spaa((const uint8_t *)text, sizeof(text) - 1, NULL, &l, &err), 0);
  out = export_buf(l.v[0].profile, "unresolved");
  d = decode(&out, "unresolved");
  spaa_buf_init(&t, 0);
  locations_text(d, &t);
  assert_string_equal(t.p, "0x0 [unknown] /app/app.js:20\n"
                           "0x0 [unknown] /app/app.js:30\n"
                           "0x0 main /app/app.js:5\n"
                           "0x1234  native.c:7\n"
                           "0x5678 -\n");
  spaa_pprof_free(d);
  c = convert((const uint8_t *)out.p, out.len, "unresolved, exported");
  for (i = 0; i < c->n_frames; i++)
    if (strcmp(c->frames[i].func, "[unknown]") == 0) {
      assert_non_null(c->frames[i].srcline);
      anon += strcmp(c->frames[i].srcline, "/app/app.js:20") == 0 ||
              strcmp(c->frames[i].srcline, "/app/app.js:30") == 0;
    }
  assert_int_equal(anon, 2);
  spaa_profile_free(c);
  spaa_buf_free(&t);
  spaa_buf_free(&out);
  spaa_conv_list_free(&l);
}

/* An OTLP profile's period keeps its period_type (the event's x_otel_period_type and
 * _unit): cpu and wall nanoseconds, 10 ms, not 10,000,000 of the primary metric's count. */
static void test_otlp_period(void **state)
{
  static const char *const files[][2] = {{"v1dev_01_cpu_basic.bin", "cpu"},
                                         {"v1dev_04_attributes_links_payload.bin", "wall"}};
  size_t i, len;
  (void)state;
  if (!spaa_test_have_fixtures("otlp", "pprof_export_test"))
    skip();
  for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    struct spaa_conv_list l = {0};
    struct spaa_err err = {0};
    struct spaa_buf out;
    struct spaa_pprof *d;
    uint8_t *in = spaa_test_fixture_in("otlp", files[i][0], &len);
    assert_non_null(in);
    if (spaa_convert_otlp(in, len, NULL, &l, &err))
      fail_msg("%s: %s", files[i][0], err.msg);
    assert_int_equal(l.n, 1);
    out = export_buf(l.v[0].profile, files[i][0]);
    d = decode(&out, files[i][0]);
    assert_non_null(d->msg->period_type);
    assert_string_equal(str_at(d, d->msg->period_type->type), files[i][1]);
    assert_string_equal(str_at(d, d->msg->period_type->unit), "nanoseconds");
    assert_int_equal(d->msg->period, 10000000);
    spaa_pprof_free(d);
    spaa_buf_free(&out);
    spaa_conv_list_free(&l);
    free(in);
  }
}

/* The labels of every sample of d, as "key=str" or "key=#num" lines in sample order (each
 * sample's labels in its order, then "|"). */
static void sample_labels_text(const struct spaa_pprof *d, struct spaa_buf *t)
{
  struct spaa_pprof_iter it;
  const Perftools__Profiles__Sample *s;
  struct spaa_err err = {0};
  char tmp[600];
  size_t i;
  spaa_pprof_iter_init(&it, d);
  while (!spaa_pprof_iter_next(&it, &s, &err) && s) {
    for (i = 0; i < s->n_label; i++) {
      const Perftools__Profiles__Label *l = s->label[i];
      int n = snprintf(tmp, sizeof(tmp), "%s=", str_at(d, l->key));
      if (l->str)
        n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, "%s\n", str_at(d, l->str));
      else
        n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, "#%" PRId64 "\n", l->num);
      assert_int_equal(spaa_buf_add(t, tmp, (size_t)n), 0);
    }
    assert_int_equal(spaa_buf_add(t, "|\n", 2), 0);
  }
  spaa_pprof_iter_free(&it);
}

/* An OTLP profile's stack context (thread name and id, trace and span ids, route, a bool, a
 * double, a unit) becomes pprof labels under the context keys, sorted; arrays and objects
 * are left out; the same model gives the same bytes. */
static void test_otlp_context_labels(void **state)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  struct spaa_buf out, again, t;
  struct spaa_pprof *d;
  uint8_t *in;
  size_t len;
  const char *want =
      "x_otel_attr_http.route=/orders/{id}/pay\n"
      "x_otel_attr_jvm.thread.daemon=false\n"
      "x_otel_attr_sampler.weight=0.5\n"
      "x_otel_attr_thread.id=#57\n"
      "x_otel_attr_thread.name=http-nio-8080-exec-3\n"
      "x_otel_span_id=00f067aa0ba902b7\n"
      "x_otel_trace_id=5b8efff798038103d269b633813fc60c\n|\n";
  (void)state;
  if (!spaa_test_have_fixtures("otlp", "pprof_export_test"))
    skip();
  in = spaa_test_fixture_in("otlp", "v1dev_04_attributes_links_payload.bin", &len);
  assert_non_null(in);
  if (spaa_convert_otlp(in, len, NULL, &l, &err))
    fail_msg("otlp: %s", err.msg);
  assert_int_equal(l.n, 1);
  out = export_buf(l.v[0].profile, "otlp");
  again = export_buf(l.v[0].profile, "otlp");
  assert_int_equal(out.len, again.len);
  assert_memory_equal(out.p, again.p, out.len);
  d = decode(&out, "otlp");
  spaa_buf_init(&t, 0);
  sample_labels_text(d, &t);
  assert_int_equal(spaa_buf_add(&t, "", 1), 0);
  if (!strstr(t.p, want))
    fail_msg("labels:\n%s\nlack:\n%s", t.p, want);
  assert_non_null(strstr(t.p, "x_otel_attr_thread.name=pool-2-thread-1\n"));
  assert_non_null(strstr(t.p, "x_otel_attr_request.body.size=#2048\n"));
  assert_non_null(strstr(t.p, "x_otel_unit_request.body.size=By\n"));
  assert_non_null(strstr(t.p, "x_otel_trace_id=4bf92f3577b34da6a3ce929d0e0e4736\n"));
  assert_null(strstr(t.p, "request.tags")); /* an array */
  assert_null(strstr(t.p, "request.meta")); /* an object */
  spaa_pprof_free(d);
  spaa_buf_free(&t);
  spaa_buf_free(&out);
  spaa_buf_free(&again);
  spaa_conv_list_free(&l);
  free(in);
}

/* Labels of a SPAA model's context: the x_pprof_label_ ones first as they are, then the
 * other scalars by key; re-converted, each is a pprof label again. */
static void test_context_labels(void **state)
{
  static const char text[] =
      "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"stack_id_mode\":\"local\",\"source_tool\":\"perf\","
      "\"frame_order\":\"leaf_to_root\",\"events\":[{\"name\":\"cycles\",\"kind\":\"hardware\","
      "\"sampling\":{\"mode\":\"period\",\"primary_metric\":\"period\",\"sample_period\":100}}]}\n"
      "{\"type\":\"dso\",\"id\":1,\"name\":\"/bin/app\"}\n"
      "{\"type\":\"frame\",\"id\":1,\"func\":\"main\",\"dso\":1,\"kind\":\"user\"}\n"
      "{\"type\":\"stack\",\"id\":\"s1\",\"frames\":[1],\"context\":{\"event\":\"cycles\","
      "\"x_pprof_label_span\":\"a\",\"zz\":true,\"b\":-3,\"a\":\"t\",\"arr\":[1],\"obj\":{\"k\":1},"
      "\"nul\":null,\"x_pprof_label_tag\":[\"x\",\"y\"],\"r\":2.0},"
      "\"weights\":[{\"metric\":\"period\",\"value\":300}]}\n";
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  struct spaa_buf out, t;
  struct spaa_pprof *d;
  struct spaa_profile *c;
  const json_t *ctx;
  (void)state;
  assert_int_equal(spaa_convert_spaa((const uint8_t *)text, sizeof(text) - 1, NULL, &l, &err), 0);
  out = export_buf(l.v[0].profile, "model");
  d = decode(&out, "model");
  spaa_buf_init(&t, 0);
  sample_labels_text(d, &t);
  assert_int_equal(spaa_buf_add(&t, "", 1), 0);
  assert_string_equal(t.p, "span=a\ntag=x\ntag=y\na=t\nb=#-3\nr=2.0\nzz=true\n|\n");
  spaa_pprof_free(d);
  c = convert((const uint8_t *)out.p, out.len, "model, exported");
  assert_int_equal(c->n_stacks, 1);
  ctx = c->stacks[0].context;
  assert_string_equal(json_string_value(json_object_get(ctx, "x_pprof_label_span")), "a");
  assert_int_equal(json_array_size(json_object_get(ctx, "x_pprof_label_tag")), 2);
  assert_string_equal(json_string_value(json_object_get(ctx, "x_pprof_label_a")), "t");
  assert_int_equal(json_integer_value(json_object_get(json_object_get(ctx, "x_pprof_label_b"),
                                                      "value")), -3);
  assert_string_equal(json_string_value(json_object_get(ctx, "x_pprof_label_zz")), "true");
  assert_null(json_object_get(ctx, "x_pprof_label_arr"));
  assert_null(json_object_get(ctx, "x_pprof_label_nul"));
  spaa_profile_free(c);
  spaa_buf_free(&t);
  spaa_buf_free(&out);
  spaa_conv_list_free(&l);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixture_round_trips),
      cmocka_unit_test(test_plain_model),
      cmocka_unit_test(test_line_without_file),
      cmocka_unit_test(test_unresolved_lines),
      cmocka_unit_test(test_otlp_period),
      cmocka_unit_test(test_otlp_context_labels),
      cmocka_unit_test(test_context_labels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
