/* codecs/pprof_convert.c: pprof -> SPAA. Totals per sample type on every fixture, inline
 * order, label splits and merges, unsymbolized and kernel frames, header mapping,
 * determinism, the validator's verdict on every converted fixture, and all-zero sample
 * types still reachable by the views (spaa/view.h). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "spaa/spaa_io.h"
#include "spaa/view.h"
#include "codecs/registry.h"
#include "fixture.h"
#include "pprof_testlib.h"


static const char *all_fixtures[] = {
    "google-pprof_sample.cpu",
    "google-pprof_cppbench.cpu_no_samples_type",
    "google-pprof_go.nomappings.crash",
    "google-pprof_large.cpu",
    "pyroscope_heap",
    "pyroscope_go.cpu.labels.pprof",
    "pyroscope_profile_java",
    "pyroscope_profile_python",
    "pyroscope_pyspy-1.pb.gz",
    "pyroscope_dotnet.labels.pprof",
    "pyroscope_single_group_with_optional_span_id.pb.gz",
    "pyroscope_nodejs-wall.pb.gz",
    "parca_node-profile.pb.gz",
    "parca_profile-with-labels.pb.gz",
};
#define N_FIXTURES (sizeof(all_fixtures) / sizeof(all_fixtures[0]))

/* Convert bytes (a fixture that could not be read is NULL); fails the test on error. */
static struct spaa_profile *convert(const uint8_t *buf, size_t len, const char *what)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  struct spaa_profile *p;
  int rc;
  if (!buf)
    fail_msg("%s: no input", what);
  rc = spaa_convert_pprof(buf, len, NULL, &l, &err);
  if (rc)
    fail_msg("%s: %s", what, err.msg);
  assert_int_equal(l.n, 1);
  p = l.v[0].profile;
  l.v[0].profile = NULL;
  spaa_conv_list_free(&l);
  return p;
}

static struct spaa_profile *convert_tb(struct tb *b)
{
  size_t len;
  uint8_t *buf = tb_pack(b, &len);
  struct spaa_profile *p = convert(buf, len, "built profile");
  free(buf);
  return p;
}

/* Sum of the weights of `metric` over the stacks of `event`; n_stacks gets the count of the
 * event's stacks that carry the metric. The event's primary metric must be on every stack
 * of it; another metric is written only where its value is nonzero. */
static int64_t stack_total(const struct spaa_profile *p, const char *event, const char *metric,
                           size_t *n_stacks)
{
  const struct spaa_event *e = spaa_find_event(p, event);
  int64_t t = 0;
  size_t i, n = 0;
  assert_non_null(e);
  for (i = 0; i < p->n_stacks; i++) {
    const struct spaa_weight *w;
    if (strcmp(p->stacks[i].event, event))
      continue;
    w = spaa_weights_find(&p->stacks[i].weights, metric);
    if (!strcmp(metric, e->primary_metric))
      assert_non_null(w);
    if (!w)
      continue;
    n++;
    assert_int_equal(w->value.is_float, 0);
    if (strcmp(metric, e->primary_metric))
      assert_true(w->value.i != 0);
    t += w->value.i;
  }
  if (n_stacks)
    *n_stacks = n;
  return t;
}

static const struct spaa_frame *frame_by_id(const struct spaa_profile *p, uint64_t id)
{
  size_t i;
  for (i = 0; i < p->n_frames; i++)
    if (p->frames[i].id == id)
      return &p->frames[i];
  return NULL;
}

static const struct spaa_dso *dso_by_id(const struct spaa_profile *p, uint64_t id)
{
  size_t i;
  for (i = 0; i < p->n_dsos; i++)
    if (p->dsos[i].id == id)
      return &p->dsos[i];
  return NULL;
}

static void on_diag(void *ctx, const struct spaa_diag *d)
{
  if (d->is_error)
    print_error("%s: line %zu: %s (%s): %s\n", (const char *)ctx, d->line, d->rule, d->field,
                d->msg);
}

/* The index of sample type `name` in m, or SIZE_MAX. */
static size_t type_index(const Perftools__Profiles__Profile *m, const char *name)
{
  size_t j;
  for (j = 0; j < m->n_sample_type; j++) {
    const ProtobufCBinaryData *t = &m->string_table[m->sample_type[j]->type];
    if (strlen(name) == t->len && memcmp(name, t->data, t->len) == 0)
      return j;
  }
  return SIZE_MAX;
}

/* Every fixture: totals per sample type equal pprof's sums exactly, every frame has a dso,
 * every stack frame exists, every stack's weights come primary first then in pprof order
 * (whatever order its samples brought them in), output is deterministic and passes the
 * validator. */
static void test_fixtures(void **state)
{
  size_t i, j, k;
  int validated = 0;
  (void)state;
  if (!spaa_test_have_fixtures("pprof", __func__))
    skip();
  for (i = 0; i < N_FIXTURES; i++) {
    struct spaa_err err = {0};
    struct spaa_pprof *d = NULL;
    struct spaa_profile *p, *p2;
    struct spaa_buf o1, o2;
    size_t len;
    uint8_t *buf = spaa_test_fixture_in("pprof", all_fixtures[i], &len);
    const Perftools__Profiles__Profile *m;
    assert_non_null(buf);
    assert_int_equal(spaa_pprof_decode(buf, len, &d, &err), 0);
    m = d->msg;
    p = convert(buf, len, all_fixtures[i]);
    /* one event, every sample type a metric of it (fixtures repeat no type name) */
    assert_int_equal(p->header.n_events, m->n_sample_type ? 1 : 0);
    for (j = 0; j < m->n_sample_type; j++) {
      const ProtobufCBinaryData *t = &m->string_table[m->sample_type[j]->type];
      const char *ev = p->header.events[0].name;
      char name[64];
      int64_t want = 0, got;
      size_t n_stacks;
      snprintf(name, sizeof(name), "%.*s", (int)t->len, (const char *)t->data);
      {
        const Perftools__Profiles__Sample *sm;
        struct spaa_pprof_iter it;
        spaa_pprof_iter_init(&it, d);
        for (k = 0; !spaa_pprof_iter_next(&it, &sm, &err) && sm; k++)
          want += sm->value[j];
        assert_int_equal(k, d->n_samples);
        spaa_pprof_iter_free(&it);
      }
      got = stack_total(p, ev, name, &n_stacks);
      if (got != want)
        fail_msg("%s: %s total %" PRId64 ", pprof says %" PRId64, all_fixtures[i], name, got, want);
      if (want == 0 && strcmp(name, p->header.events[0].primary_metric))
        assert_int_equal(n_stacks, 0); /* an all-zero column is on no stack */
      else if (!strcmp(name, p->header.events[0].primary_metric))
        assert_int_equal(n_stacks, p->n_stacks); /* the primary is on every stack */
    }
    for (j = 0; j < p->n_frames; j++) {
      assert_true(p->frames[j].has_dso);
      assert_non_null(dso_by_id(p, p->frames[j].dso));
    }
    for (j = 0; j < p->n_stacks; j++) {
      const struct spaa_stack *s = &p->stacks[j];
      assert_int_equal(strlen(s->id), 34);
      for (k = 0; k < s->n_frames; k++)
        assert_non_null(frame_by_id(p, s->frames[k]));
      if (s->n_frames) {
        assert_true(s->has_exclusive);
        assert_int_equal(s->excl_frame, s->frames[0]);
      }
      assert_true(s->weights.n >= 1);
      assert_string_equal(s->weights.v[0].metric, p->header.events[0].primary_metric);
      for (k = 2; k < s->weights.n; k++)
        if (type_index(m, s->weights.v[k - 1].metric) >= type_index(m, s->weights.v[k].metric))
          fail_msg("%s: stack %zu: '%s' before '%s', against the pprof order", all_fixtures[i],
                   j, s->weights.v[k - 1].metric, s->weights.v[k].metric);
    }
    /* determinism: a second conversion writes the same bytes */
    p2 = convert(buf, len, all_fixtures[i]);
    spaa_buf_init(&o1, 0);
    spaa_buf_init(&o2, 0);
    assert_int_equal(spaa_write_buf(p, 0, &o1, &err), 0);
    assert_int_equal(spaa_write_buf(p2, 0, &o2, &err), 0);
    assert_int_equal(o1.len, o2.len);
    assert_memory_equal(o1.p, o2.p, o1.len);
    {
      struct spaa_validate_stats st;
      memset(&st, 0, sizeof(st));
      if (spaa_validate_buf(o1.p, o1.len, on_diag, (void *)all_fixtures[i], 10, &st))
        fail_msg("%s: the SPAA does not validate (%zu errors)", all_fixtures[i], st.errors);
      assert_int_equal(st.stacks, p->n_stacks);
      validated++;
    }
    spaa_buf_free(&o1);
    spaa_buf_free(&o2);
    spaa_profile_free(p);
    spaa_profile_free(p2);
    spaa_pprof_free(d);
    free(buf);
  }
  assert_int_equal(validated, sizeof(all_fixtures) / sizeof(all_fixtures[0]));
}

/* Header: events, primary event, time range, extras. */
static void test_fixture_headers(void **state)
{
  struct spaa_profile *p;
  uint8_t *buf;
  size_t len, i, n4;
  json_t *x;
  (void)state;
  if (!spaa_test_have_fixtures("pprof", __func__))
    skip();
  /* no default_sample_type: the last type (cpu) is primary, as pprof has it */
  buf = spaa_test_fixture_in("pprof", "google-pprof_sample.cpu", &len);
  p = convert(buf, len, "sample.cpu");
  assert_string_equal(p->header.source_tool, "pprof");
  assert_int_equal(p->header.frame_order, SPAA_LEAF_TO_ROOT);
  assert_string_equal(p->header.events[0].name, "cpu");
  assert_string_equal(p->header.events[0].kind, "timer");
  assert_string_equal(p->header.events[0].mode, "period");
  assert_string_equal(p->header.events[0].primary_metric, "cpu");
  assert_true(p->header.events[0].has_sample_period);
  assert_int_equal(p->header.events[0].sample_period.i, 10000000);
  assert_int_equal(p->header.n_events, 1); /* samples is a metric of the cpu event */
  assert_null(spaa_find_event(p, "samples"));
  assert_null(p->header.events[0].extra);
  assert_true(p->header.has_time_range);
  assert_string_equal(p->header.time_unit, "nanoseconds");
  assert_int_equal(p->header.start.i, 1506718679257235370LL);
  assert_int_equal(p->header.end.i, 1506718679257235370LL + 2002012950LL);
  x = json_object_get(p->header.extra, "x_pprof_period");
  assert_string_equal(json_string_value(json_object_get(x, "type")), "cpu");
  assert_int_equal(json_integer_value(json_object_get(x, "value")), 10000000);
  assert_int_equal(json_array_size(json_object_get(p->header.extra, "x_pprof_sample_types")), 2);
  spaa_profile_free(p);
  free(buf);
  /* default_sample_type = alloc_space comes first; allocation kinds */
  buf = spaa_test_fixture_in("pprof", "pyroscope_heap", &len);
  p = convert(buf, len, "heap");
  assert_string_equal(p->header.events[0].name, "alloc_space");
  assert_string_equal(p->header.events[0].kind, "allocation");
  assert_int_equal(p->header.n_events, 1);
  assert_string_equal(p->header.events[0].primary_metric, "alloc_space");
  x = p->header.events[0].extra;
  assert_string_equal(json_string_value(json_object_get(x, "x_pprof_standard_metric")),
                      "alloc_bytes");
  assert_true(json_is_true(json_object_get(json_object_get(x, "allocation_tracking"),
                                           "tracks_frees")));
  x = json_object_get(x, "x_pprof_standard_metrics");
  assert_int_equal(json_object_size(x), 4);
  assert_string_equal(json_string_value(json_object_get(x, "alloc_space")), "alloc_bytes");
  assert_string_equal(json_string_value(json_object_get(x, "alloc_objects")), "alloc_count");
  assert_string_equal(json_string_value(json_object_get(x, "inuse_objects")), "live_count");
  assert_string_equal(json_string_value(json_object_get(x, "inuse_space")), "live_bytes");
  /* metrics in order: the primary, then the others in pprof order */
  for (i = 0, n4 = 0; i < p->n_stacks; i++) {
    const struct spaa_weights *w = &p->stacks[i].weights;
    if (w->n != 4)
      continue;
    assert_string_equal(w->v[0].metric, "alloc_space");
    assert_string_equal(w->v[0].unit, "bytes");
    assert_string_equal(w->v[1].metric, "alloc_objects");
    assert_string_equal(w->v[2].metric, "inuse_objects");
    assert_string_equal(w->v[3].metric, "inuse_space");
    assert_int_equal(p->stacks[i].excl_weights.n, 4);
    n4++;
  }
  assert_true(n4 > 0);
  assert_string_equal(json_string_value(json_object_get(p->header.extra,
                                                        "x_pprof_default_sample_type")), "alloc_space");
  spaa_profile_free(p);
  free(buf);
  /* py-spy writes microseconds into time_nanos: read by magnitude, raw value kept */
  buf = spaa_test_fixture_in("pprof", "pyroscope_pyspy-1.pb.gz", &len);
  p = convert(buf, len, "pyspy");
  assert_int_equal(p->header.start.i, 1694153500000000000LL);
  assert_int_equal(json_integer_value(json_object_get(p->header.extra, "x_pprof_time_nanos")),
                   1694153500000000LL);
  spaa_profile_free(p);
  free(buf);
  /* async-profiler: comment kept; period 0 gives no sample_period */
  buf = spaa_test_fixture_in("pprof", "pyroscope_profile_java", &len);
  p = convert(buf, len, "java");
  assert_false(p->header.events[0].has_sample_period);
  assert_string_equal(json_string_value(json_array_get(json_object_get(p->header.extra,
                                                                       "x_pprof_comments"), 0)),
                      "async-profiler");
  spaa_profile_free(p);
  free(buf);
  /* drop_frames kept */
  buf = spaa_test_fixture_in("pprof", "google-pprof_cppbench.cpu_no_samples_type", &len);
  p = convert(buf, len, "cppbench");
  assert_non_null(json_string_value(json_object_get(p->header.extra, "x_pprof_drop_frames")));
  assert_false(p->header.has_time_range);
  spaa_profile_free(p);
  free(buf);
}

/* Unsymbolized frames, no mappings, kernel mappings, build ids. */
static void test_fixture_frames(void **state)
{
  struct spaa_profile *p;
  uint8_t *buf;
  size_t len, i, kernel_frames = 0;
  const struct spaa_dso *kd = NULL;
  (void)state;
  if (!spaa_test_have_fixtures("pprof", __func__))
    skip();
  buf = spaa_test_fixture_in("pprof", "google-pprof_cppbench.cpu_no_samples_type", &len);
  p = convert(buf, len, "cppbench");
  assert_int_equal(p->n_dsos, 12); /* every location has a mapping: no [unknown] */
  for (i = 0; i < p->n_frames; i++) {
    char want[32];
    assert_false(p->frames[i].func_resolved);
    assert_true(p->frames[i].has_ip);
    snprintf(want, sizeof(want), "0x%" PRIx64, p->frames[i].ip);
    assert_string_equal(p->frames[i].func, want);
    assert_string_equal(p->frames[i].kind, "user");
  }
  spaa_profile_free(p);
  free(buf);
  /* no mappings at all: one synthetic [unknown] dso for every frame */
  buf = spaa_test_fixture_in("pprof", "google-pprof_go.nomappings.crash", &len);
  p = convert(buf, len, "nomappings");
  assert_int_equal(p->n_dsos, 1);
  assert_string_equal(p->dsos[0].name, "[unknown]");
  for (i = 0; i < p->n_frames; i++) {
    assert_int_equal(p->frames[i].dso, p->dsos[0].id);
    assert_string_equal(p->frames[i].kind, "unknown");
  }
  spaa_profile_free(p);
  free(buf);
  /* parca: [kernel.kallsyms] is a kernel dso, its frames kernel frames */
  buf = spaa_test_fixture_in("pprof", "parca_profile-with-labels.pb.gz", &len);
  p = convert(buf, len, "parca labels");
  for (i = 0; i < p->n_dsos; i++)
    if (strstr(p->dsos[i].name, "[kernel.kallsyms]"))
      kd = &p->dsos[i];
  assert_non_null(kd);
  assert_true(kd->is_kernel);
  for (i = 0; i < p->n_frames; i++)
    if (p->frames[i].dso == kd->id) {
      assert_string_equal(p->frames[i].kind, "kernel");
      kernel_frames++;
    }
  assert_true(kernel_frames > 0);
  spaa_profile_free(p);
  free(buf);
  /* parca node: hex build ids lowercase; "jit" mappings keep their non-hex text aside */
  buf = spaa_test_fixture_in("pprof", "parca_node-profile.pb.gz", &len);
  p = convert(buf, len, "parca node");
  assert_string_equal(p->dsos[0].build_id, "7aebc7ddb910e7aea69b7e4551441526a3cd6f22");
  assert_true(p->dsos[0].has_mapping);
  assert_int_equal(p->dsos[0].map_start, 0x400000);
  for (i = 0; i < p->n_dsos; i++)
    if (json_object_get(p->dsos[i].extra, "x_pprof_build_id"))
      assert_null(p->dsos[i].build_id);
  spaa_profile_free(p);
  free(buf);
}

/* The labels fixture: the same frames under one event appear in several stacks that differ
 * only by their label context. */
static void test_fixture_label_split(void **state)
{
  struct spaa_profile *p;
  uint8_t *buf;
  size_t len, i, j, splits = 0;
  (void)state;
  if (!spaa_test_have_fixtures("pprof", __func__))
    skip();
  buf = spaa_test_fixture_in("pprof", "pyroscope_go.cpu.labels.pprof", &len);
  p = convert(buf, len, "go labels");
  for (i = 0; i < p->n_stacks && !splits; i++)
    for (j = i + 1; j < p->n_stacks; j++) {
      const struct spaa_stack *a = &p->stacks[i], *b = &p->stacks[j];
      if (!strcmp(a->event, b->event) && a->n_frames == b->n_frames &&
          !memcmp(a->frames, b->frames, a->n_frames * sizeof(*a->frames))) {
        assert_false(json_equal(a->context, b->context));
        assert_string_not_equal(a->id, b->id);
        assert_non_null(json_object_get(a->context, "x_pprof_label_foo"));
        splits++;
      }
    }
  assert_true(splits > 0);
  spaa_profile_free(p);
  free(buf);
}

/* line[0] is the deepest inline: emitted first, inline_depth counting down to the physical
 * frame (depth 0, not inlined), then the caller's frames. */
static void test_inline_order(void **state)
{
  struct tb b;
  struct spaa_profile *p;
  const struct spaa_stack *s;
  const struct spaa_frame *f[4];
  uint64_t fns[3], l0, l1, m;
  size_t i;
  (void)state;
  tb_init(&b);
  tb_type(&b, "cpu", "nanoseconds");
  m = tb_map(&b, "/usr/bin/app", 0x1000, 0x9000, NULL);
  fns[0] = tb_fn(&b, "deepest", "x.c");
  fns[1] = tb_fn(&b, "middle", "x.c");
  fns[2] = tb_fn(&b, "physical", "x.c");
  l0 = tb_loc(&b, m, 0x1234, 3, fns);
  fns[0] = tb_fn(&b, "caller", "y.c");
  l1 = tb_loc(&b, m, 0x2000, 1, fns);
  tb_sample(&b, 2, (uint64_t[]){l0, l1}, (int64_t[]){7});
  p = convert_tb(&b);
  assert_int_equal(p->n_stacks, 1);
  s = &p->stacks[0];
  assert_int_equal(s->n_frames, 4);
  for (i = 0; i < 4; i++)
    assert_non_null(f[i] = frame_by_id(p, s->frames[i]));
  assert_string_equal(f[0]->func, "deepest");
  assert_true(f[0]->inlined);
  assert_int_equal(f[0]->inline_depth, 2);
  assert_string_equal(f[0]->srcline, "x.c:10");
  assert_string_equal(f[1]->func, "middle");
  assert_true(f[1]->inlined);
  assert_int_equal(f[1]->inline_depth, 1);
  assert_string_equal(f[2]->func, "physical");
  assert_false(f[2]->inlined);
  assert_true(f[2]->has_inline_depth);
  assert_int_equal(f[2]->inline_depth, 0);
  for (i = 0; i < 3; i++) {
    assert_int_equal(f[i]->ip, 0x1234);
    assert_int_equal(f[i]->dso, f[0]->dso);
  }
  assert_string_equal(f[3]->func, "caller");
  assert_false(f[3]->inlined);
  assert_false(f[3]->has_inline_depth);
  assert_int_equal(s->excl_frame, f[0]->id);
  spaa_profile_free(p);
}

/* A line whose function has no filename (async-profiler's Java, Node) keeps its line as
 * ":LINE": two call lines of one function are two frames, so two stacks; with neither file
 * nor line there is no srcline and srcline_resolved is false. The Java fixture's
 * AsyncProfiler.execute is ":135", as `go tool pprof -raw` shows it. */
static void test_line_without_file(void **state)
{
  struct tb b;
  struct spaa_profile *p;
  const struct spaa_frame *leaf[3];
  uint8_t *buf;
  size_t i, len, found = 0;
  (void)state;
  tb_lines_without_file(&b);
  p = convert_tb(&b);
  assert_int_equal(p->n_stacks, 3);
  assert_string_not_equal(p->stacks[0].id, p->stacks[1].id);
  assert_string_not_equal(p->stacks[1].id, p->stacks[2].id);
  assert_string_not_equal(p->stacks[0].id, p->stacks[2].id);
  for (i = 0; i < 3; i++) { /* by weight, heaviest first: line 0, 140, 135 */
    assert_non_null(leaf[i] = frame_by_id(p, p->stacks[i].frames[0]));
    assert_string_equal(leaf[i]->func, "work");
    assert_true(leaf[i]->func_resolved);
    assert_string_equal(frame_by_id(p, p->stacks[i].frames[1])->srcline, "main.js:10");
  }
  assert_null(leaf[0]->srcline);
  assert_false(leaf[0]->srcline_resolved);
  assert_string_equal(leaf[1]->srcline, ":140");
  assert_true(leaf[1]->srcline_resolved);
  assert_string_equal(leaf[2]->srcline, ":135");
  assert_true(leaf[2]->srcline_resolved);
  assert_int_not_equal(leaf[1]->id, leaf[2]->id);
  spaa_profile_free(p);
  if (!spaa_test_have_fixtures("pprof", __func__))
    return;
  buf = spaa_test_fixture_in("pprof", "pyroscope_profile_java", &len);
  p = convert(buf, len, "java");
  for (i = 0; i < p->n_frames; i++)
    if (!strcmp(p->frames[i].func, "jpprof/one/profiler/AsyncProfiler.execute")) {
      assert_string_equal(p->frames[i].srcline, ":135");
      assert_true(p->frames[i].srcline_resolved);
      found++;
    }
  assert_int_equal(found, 1);
  spaa_profile_free(p);
  free(buf);
}

/* Same locations + same labels merge; different labels split; numeric labels keep their
 * unit; a key given twice keeps both values; both types are metrics of the one event (cpu,
 * the last type); a zero value leaves no weight but the primary's. */
static void test_labels(void **state)
{
  struct tb b;
  struct spaa_profile *p;
  uint64_t f, l, m;
  size_t i, n_cpu, n_samples;
  int seen_a = 0, seen_b = 0, seen_num = 0;
  (void)state;
  tb_init(&b);
  tb_type(&b, "samples", "count");
  tb_type(&b, "cpu", "nanoseconds");
  m = tb_map(&b, "/usr/bin/app", 0, 0, NULL);
  f = tb_fn(&b, "work", "w.go");
  l = tb_loc(&b, m, 0x10, 1, &f);
  tb_sample(&b, 1, &l, (int64_t[]){1, 10});
  tb_label(&b, 0, "span", "a", 0, NULL);
  tb_sample(&b, 1, &l, (int64_t[]){2, 20});
  tb_label(&b, 1, "span", "a", 0, NULL);
  tb_sample(&b, 1, &l, (int64_t[]){4, 40});
  tb_label(&b, 2, "span", "b", 0, NULL);
  tb_sample(&b, 1, &l, (int64_t[]){8, 0}); /* no cpu stack for this one */
  tb_label(&b, 3, "bytes", NULL, 512, "bytes");
  tb_label(&b, 3, "tag", "x", 0, NULL);
  tb_label(&b, 3, "tag", "y", 0, NULL);
  p = convert_tb(&b);
  assert_int_equal(p->header.n_events, 1);
  assert_int_equal(stack_total(p, "cpu", "samples", &n_samples), 15);
  assert_int_equal(n_samples, 3);
  assert_int_equal(stack_total(p, "cpu", "cpu", &n_cpu), 70);
  assert_int_equal(n_cpu, 3); /* span=a (merged: 30), span=b (40), the numeric label (0) */
  for (i = 0; i < p->n_stacks; i++) {
    const struct spaa_stack *s = &p->stacks[i];
    const char *span = json_string_value(json_object_get(s->context, "x_pprof_label_span"));
    json_t *num = json_object_get(s->context, "x_pprof_label_bytes");
    if (!strcmp(s->event, "cpu") && span && !strcmp(span, "a")) {
      assert_int_equal(s->weights.n, 2);
      assert_int_equal(s->weights.v[0].value.i, 30);
      assert_string_equal(s->weights.v[0].unit, "nanoseconds");
      assert_string_equal(s->weights.v[1].metric, "samples");
      assert_int_equal(s->weights.v[1].value.i, 3);
      assert_string_equal(s->weights.v[1].unit, "count");
      seen_a++;
    }
    if (!strcmp(s->event, "cpu") && span && !strcmp(span, "b"))
      seen_b++;
    if (num) {
      json_t *tag = json_object_get(s->context, "x_pprof_label_tag");
      assert_string_equal(s->event, "cpu");
      assert_int_equal(s->weights.n, 2);
      assert_string_equal(s->weights.v[0].metric, "cpu");
      assert_int_equal(s->weights.v[0].value.i, 0);
      assert_int_equal(s->weights.v[1].value.i, 8);
      assert_int_equal(json_integer_value(json_object_get(num, "value")), 512);
      assert_string_equal(json_string_value(json_object_get(num, "unit")), "bytes");
      assert_int_equal(json_array_size(tag), 2);
      assert_string_equal(json_string_value(json_array_get(tag, 0)), "x");
      assert_string_equal(json_string_value(json_array_get(tag, 1)), "y");
      seen_num++;
    }
  }
  assert_int_equal(seen_a, 1);
  assert_int_equal(seen_b, 1);
  assert_int_equal(seen_num, 1);
  spaa_profile_free(p);
}

/* Odd but legal inputs: negative (diff) values, function_id 0, empty and repeated type
 * names, a sample without locations, service passed through, a rejected profile appends
 * nothing. */
static void test_edges(void **state)
{
  struct tb b;
  struct spaa_profile *p;
  struct spaa_conv_list l = {0};
  struct spaa_convert_opts o = {.service = "checkout"};
  struct spaa_err err = {0};
  uint8_t *buf;
  size_t len, i;
  uint64_t f, loc, none = 0;
  (void)state;
  tb_init(&b);
  tb_type(&b, "cpu", "nanoseconds");
  tb_type(&b, "cpu", "nanoseconds");
  tb_type(&b, "", "count");
  f = tb_fn(&b, "f", "");
  loc = tb_loc(&b, 0, 0xabc, 1, &f);
  b.lines[0][0].function_id = 0;
  tb_sample(&b, 1, &loc, (int64_t[]){-5, 3, 1});
  tb_sample(&b, 0, &none, (int64_t[]){2, 0, 0});
  buf = tb_pack(&b, &len);
  assert_int_equal(spaa_convert_pprof(buf, len, &o, &l, &err), 0);
  assert_int_equal(l.n, 1);
  assert_string_equal(l.v[0].service, "checkout");
  assert_int_equal(l.v[0].start_ns, 0);
  p = l.v[0].profile;
  /* default unset: the last type is primary and names the one event; the metrics follow it
   * in pprof order */
  assert_int_equal(p->header.n_events, 1);
  assert_string_equal(p->header.events[0].name, "sample_type_2");
  assert_string_equal(p->header.events[0].primary_metric, "sample_type_2");
  assert_int_equal(stack_total(p, "sample_type_2", "cpu", NULL), -3);
  assert_int_equal(stack_total(p, "sample_type_2", "cpu_1", NULL), 3);
  assert_int_equal(stack_total(p, "sample_type_2", "sample_type_2", NULL), 1);
  for (i = 0; i < p->n_frames; i++) {
    assert_false(p->frames[i].func_resolved);
    assert_string_equal(p->frames[i].func, "0xabc");
  }
  for (i = 0; i < p->n_stacks; i++)
    if (p->stacks[i].n_frames == 0) {
      assert_string_equal(p->stacks[i].event, "sample_type_2");
      assert_false(p->stacks[i].has_exclusive);
      assert_int_equal(p->stacks[i].weights.n, 2);
      assert_int_equal(p->stacks[i].weights.v[0].value.i, 0);
      assert_string_equal(p->stacks[i].weights.v[1].metric, "cpu");
      assert_int_equal(p->stacks[i].weights.v[1].value.i, 2);
    } else {
      assert_int_equal(p->stacks[i].weights.n, 3);
      assert_string_equal(p->stacks[i].weights.v[0].metric, "sample_type_2");
      assert_string_equal(p->stacks[i].weights.v[1].metric, "cpu");
      assert_string_equal(p->stacks[i].weights.v[2].metric, "cpu_1");
    }
  spaa_conv_list_free(&l);
  free(buf);
  /* rejected: nothing appended, 422 */
  b.vals[0][0] = 0, b.smp[0].n_value = 2;
  buf = tb_pack(&b, &len);
  assert_int_equal(spaa_convert_pprof(buf, len, &o, &l, &err), SPAA_E_INVALID);
  assert_int_equal(l.n, 0);
  spaa_conv_list_free(&l);
  free(buf);
  /* the converter table knows pprof */
  assert_ptr_equal(spaa_converter("pprof"), spaa_convert_pprof);
  (void)p;
}

/* A view of metric m of p: 0 with the set's stack count and total, or the error code. */
static int view_of(const struct spaa_profile *p, const char *m, size_t *n, spaa_vnum *total,
                   char *unit, size_t unit_cap)
{
  struct spaa_vset v;
  struct spaa_err err = {0};
  int rc;
  spaa_vset_init(&v);
  rc = spaa_vset_from_profile(&v, p, NULL, m, 0, &err);
  *n = v.n_stacks;
  *total = v.total;
  snprintf(unit, unit_cap, "%s", v.unit ? v.unit : "");
  spaa_vset_free(&v);
  return rc;
}

/* A sample type whose values are all zero is on no stack (zero weights are left out) but
 * stays a metric of the profile: its views are empty, not an error; a metric the profile
 * never had (or a name the converter did not make) is still SPAA_E_USAGE. The views find
 * the types in x_pprof_sample_types, named as the converter names them: an empty type
 * sample_type_<i>, a repeated one <type>_<i>. Then the .NET fixture, whose exception and
 * lock_count columns are all zero. */
static void test_zero_types_declared(void **state)
{
  static const char *const zero_net[] = {"exception", "lock_count"};
  struct tb b;
  struct spaa_profile *p;
  uint64_t f, loc;
  spaa_vnum total;
  char unit[32];
  size_t n, i;
  (void)state;
  tb_init(&b);
  tb_type(&b, "", "count");
  tb_type(&b, "cpu", "nanoseconds");
  tb_type(&b, "cpu", "nanoseconds");
  tb_type(&b, "samples", "count");
  f = tb_fn(&b, "work", "w.go");
  loc = tb_loc(&b, 0, 0, 1, &f);
  tb_sample(&b, 1, &loc, (int64_t[]){0, 5, 0, 1});
  tb_sample(&b, 0, &loc, (int64_t[]){0, 7, 0, 2});
  p = convert_tb(&b);
  assert_int_equal(view_of(p, "cpu", &n, &total, unit, sizeof(unit)), 0);
  assert_int_equal(n, 2);
  assert_true(total == 12);
  assert_int_equal(view_of(p, "sample_type_0", &n, &total, unit, sizeof(unit)), 0);
  assert_int_equal(n, 0);
  assert_true(total == 0);
  assert_string_equal(unit, "count");
  assert_int_equal(view_of(p, "cpu_2", &n, &total, unit, sizeof(unit)), 0);
  assert_int_equal(n, 0);
  assert_string_equal(unit, "nanoseconds");
  assert_int_equal(view_of(p, "cpu_1", &n, &total, unit, sizeof(unit)), SPAA_E_USAGE);
  assert_int_equal(view_of(p, "exception", &n, &total, unit, sizeof(unit)), SPAA_E_USAGE);
  spaa_profile_free(p);

  if (!spaa_test_have_fixtures("pprof", __func__))
    return;
  {
    size_t len;
    uint8_t *buf = spaa_test_fixture_in("pprof", "pyroscope_dotnet.labels.pprof", &len);
    p = convert(buf, len, "pyroscope_dotnet.labels.pprof");
    free(buf);
  }
  for (i = 0; i < sizeof(zero_net) / sizeof(zero_net[0]); i++) {
    assert_int_equal(stack_total(p, p->header.events[0].name, zero_net[i], NULL), 0);
    assert_int_equal(view_of(p, zero_net[i], &n, &total, unit, sizeof(unit)), 0);
    assert_int_equal(n, 0);
    assert_true(total == 0);
    assert_string_equal(unit, "count");
  }
  assert_int_equal(view_of(p, "cpu", &n, &total, unit, sizeof(unit)), 0);
  assert_true(n > 0 && total > 0);
  assert_int_equal(view_of(p, "nosuch", &n, &total, unit, sizeof(unit)), SPAA_E_USAGE);
  spaa_profile_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures),
      cmocka_unit_test(test_fixture_headers),
      cmocka_unit_test(test_fixture_frames),
      cmocka_unit_test(test_fixture_label_split),
      cmocka_unit_test(test_inline_order),
      cmocka_unit_test(test_line_without_file),
      cmocka_unit_test(test_labels),
      cmocka_unit_test(test_edges),
      cmocka_unit_test(test_zero_types_declared),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
