/* codecs/pprof/pprof_export.c: SPAA -> pprof. Every pprof fixture converted, exported and
 * converted again gives the same stacks (content ids and every weight) and the same sample
 * types; a model without pprof extras gets one sample type per metric; refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "pprof/pprof.h"
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
    if (!in)
      fail_msg("%s: not readable", fixtures[i]);
    a = convert(in, len, fixtures[i]);
    spaa_buf_init(&out, 0);
    if (spaa_export_pprof(a, NULL, sink, &out, &err))
      fail_msg("%s: export: %s", fixtures[i], err.msg);
    assert_true(out.len > 2 && (uint8_t)out.p[0] == 0x1f && (uint8_t)out.p[1] == 0x8b);
    b = convert((const uint8_t *)out.p, out.len, fixtures[i]);
    same_stacks(a, b, fixtures[i]);
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
      "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"source_tool\":\"perf\","
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

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixture_round_trips),
      cmocka_unit_test(test_plain_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
