/* Writer tests: the exact bytes of a small profile (record and field order, escaping, numbers),
 * byte-identical reruns, read(write(p)) writing the same bytes, and zstd output. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "spaa/canon.h"
#include "spaa/spaa_io.h"

static struct spaa_profile *build(void)
{
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_event *e;
  struct spaa_dso *d;
  struct spaa_frame *f;
  struct spaa_thread *t;
  struct spaa_stack *s;
  struct spaa_sample *sm;
  struct spaa_window *w;
  uint64_t fr[] = {7, 8};
  assert_non_null(p);
  p->header.source_tool = "sentry";
  p->header.frame_order = SPAA_LEAF_TO_ROOT;
  p->header.has_time_range = 1;
  p->header.start = spaa_float(1.5);
  p->header.end = spaa_int(3);
  p->header.source = json_pack("{s:s}", "sdk", "sentry.python");
  p->header.extra = json_pack("{s:i,s:s}", "x_z", 1, "x_a", "tab\there");
  e = spaa_add_event(p);
  e->name = "wall";
  e->kind = "timer";
  e->mode = "frequency";
  e->primary_metric = "samples";
  e->has_frequency_hz = 1;
  e->frequency_hz = spaa_int(101);
  e->sampling_extra = json_pack("{s:b}", "x_adaptive", 1);
  d = spaa_add_dso(p);
  d->id = 3;
  d->name = "/app/\"quoted\"\x01.so";
  d->build_id = "00ff";
  d->has_mapping = 1;
  d->map_start = 0x1000;
  d->map_limit = 0x2000;
  d->map_offset = 0;
  f = spaa_add_frame(p);
  f->id = 8;
  f->func = "main";
  f->has_dso = 1;
  f->dso = 3;
  f->kind = "user";
  f = spaa_add_frame(p);
  f->id = 7;
  f->func = "0x1abc";
  f->func_resolved = 0;
  f->has_dso = 1;
  f->dso = 3;
  f->has_ip = 1;
  f->ip = 0x1abc;
  f->srcline = "a.c:1";
  f->srcline_resolved = 0;
  f->inlined = 1;
  f->has_inline_depth = 1;
  f->inline_depth = 1;
  f->kind = "user";
  t = spaa_add_thread(p);
  t->pid = 1;
  t->tid = 2;
  t->comm = "w\xc3\xa9";
  s = spaa_add_stack(p);
  strcpy(s->id, "0x01");
  assert_int_equal(spaa_stack_set_frames(p, s, fr, 2), 0);
  s->event = "wall";
  s->context = json_pack("{s:i,s:s}", "tid", 2, "event", "ignored");
  assert_int_equal(spaa_weights_add(p, &s->weights, "samples", spaa_int(5), NULL), 0);
  assert_int_equal(spaa_weights_add(p, &s->weights, "wall_ns", spaa_float(0.1), "nanoseconds"), 0);
  s->has_exclusive = 1;
  s->excl_frame = 7;
  assert_int_equal(spaa_weights_add(p, &s->excl_weights, "samples", spaa_int(5), NULL), 0);
  sm = spaa_add_sample(p);
  sm->has_timestamp = 1;
  sm->timestamp = spaa_float(2.0);
  sm->has_tid = 1;
  sm->tid = 2;
  sm->stack_id = "0x01";
  assert_int_equal(spaa_weights_add(p, &sm->weights, "samples", spaa_int(1), NULL), 0);
  w = spaa_add_window(p);
  w->id = "w0";
  w->start = spaa_int(0);
  w->end = spaa_float(1e300);
  w->by_stack = json_pack("[{s:s}]", "stack_id", "0x01");
  return p;
}

static const char golden[] =
    "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"source_tool\":\"sentry\","
    "\"frame_order\":\"leaf_to_root\",\"stack_id_mode\":\"content_addressable\",\"events\":[{"
    "\"name\":\"wall\",\"kind\":\"timer\",\"sampling\":{\"mode\":\"frequency\","
    "\"primary_metric\":\"samples\",\"frequency_hz\":101,\"x_adaptive\":true}}],\"time_range\":{"
    "\"start\":1.5,\"end\":3,\"unit\":\"seconds\"},\"source\":{\"sdk\":\"sentry.python\"},"
    "\"x_a\":\"tab\\there\",\"x_z\":1}\n"
    "{\"type\":\"dso\",\"id\":3,\"name\":\"/app/\\\"quoted\\\"\\u0001.so\",\"build_id\":\"00ff\","
    "\"is_kernel\":false,\"x_mapping\":{\"start\":\"0x1000\",\"limit\":\"0x2000\",\"offset\":"
    "\"0x0\"}}\n"
    "{\"type\":\"frame\",\"id\":8,\"func\":\"main\",\"func_resolved\":true,\"dso\":3,"
    "\"inlined\":false,\"kind\":\"user\"}\n"
    "{\"type\":\"frame\",\"id\":7,\"func\":\"0x1abc\",\"func_resolved\":false,\"dso\":3,\"ip\":"
    "\"0x1abc\",\"srcline\":\"a.c:1\",\"srcline_resolved\":false,\"inlined\":true,"
    "\"inline_depth\":1,\"kind\":\"user\"}\n"
    "{\"type\":\"thread\",\"pid\":1,\"tid\":2,\"comm\":\"w\xc3\xa9\"}\n"
    "{\"type\":\"stack\",\"id\":\"0x01\",\"frames\":[7,8],\"context\":{\"event\":\"wall\","
    "\"tid\":2},\"weights\":[{\"metric\":\"samples\",\"value\":5},{\"metric\":\"wall_ns\","
    "\"value\":0.1,\"unit\":\"nanoseconds\"}],\"exclusive\":{\"frame\":7,\"weights\":[{"
    "\"metric\":\"samples\",\"value\":5}]}}\n"
    "{\"type\":\"sample\",\"timestamp\":2.0,\"tid\":2,\"stack_id\":\"0x01\",\"x_weights\":[{"
    "\"metric\":\"samples\",\"value\":1}]}\n"
    "{\"type\":\"window\",\"id\":\"w0\",\"start\":0,\"end\":1e+300,\"by_stack\":[{\"stack_id\":"
    "\"0x01\"}]}\n";

static char *write_str(const struct spaa_profile *p, size_t *len)
{
  struct spaa_buf b;
  struct spaa_err err;
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_write_buf(p, 0, &b, &err), 0);
  assert_int_equal(spaa_buf_add(&b, "", 0), 0);
  return spaa_buf_steal(&b, len);
}

static void test_golden(void **state)
{
  struct spaa_profile *p = build();
  size_t len;
  char *out = write_str(p, &len);
  (void)state;
  if (strcmp(out, golden) != 0)
    print_message("got:\n%s\nwant:\n%s", out, golden);
  assert_string_equal(out, golden);
  free(out);
  spaa_profile_free(p);
}

static void test_reruns_and_roundtrip(void **state)
{
  struct spaa_profile *p = build(), *q = NULL;
  struct spaa_err err;
  size_t l1, l2, l3;
  char *a = write_str(p, &l1), *b = write_str(p, &l2), *c;
  (void)state;
  assert_int_equal(l1, l2);
  assert_memory_equal(a, b, l1);
  assert_int_equal(spaa_read_buf(a, l1, &q, &err), 0);
  c = write_str(q, &l3);
  assert_int_equal(l1, l3);
  assert_memory_equal(a, c, l1);
  free(a);
  free(b);
  free(c);
  spaa_profile_free(p);
  spaa_profile_free(q);
}

static void test_zstd_output(void **state)
{
  struct spaa_profile *p = build();
  struct spaa_buf z;
  struct spaa_err err;
  size_t plain_len;
  char *plain = write_str(p, &plain_len), *d;
  unsigned long long dl;
  (void)state;
  spaa_buf_init(&z, 0);
  assert_int_equal(spaa_write_buf(p, 3, &z, &err), 0);
  assert_true(z.len > 4);
  assert_memory_equal(z.p, "\x28\xb5\x2f\xfd", 4);
  dl = ZSTD_getFrameContentSize(z.p, z.len);
  d = malloc(plain_len + 1);
  /* streamed frames may not record their size: decompress with a known bound */
  assert_int_equal(ZSTD_decompress(d, plain_len + 1, z.p, z.len), plain_len);
  assert_memory_equal(d, plain, plain_len);
  (void)dl;
  free(d);
  free(plain);
  spaa_buf_free(&z);
  spaa_profile_free(p);
}

/* A sink that fails: the writer reports the code and stops. */
static int failing_sink(void *ctx, const void *data, size_t len)
{
  (void)ctx;
  (void)data;
  (void)len;
  return SPAA_E_IO;
}

static void test_sink_failure_and_cap(void **state)
{
  struct spaa_profile *p = build();
  struct spaa_err err;
  struct spaa_buf small;
  (void)state;
  memset(&err, 0, sizeof(err));
  assert_int_equal(spaa_write(p, failing_sink, NULL, &err), SPAA_E_IO);
  assert_int_equal(err.code, SPAA_E_IO);
  spaa_buf_init(&small, 100); /* the capped buffer refuses the profile */
  assert_int_equal(spaa_write_buf(p, 0, &small, &err), SPAA_E_TOO_LARGE);
  spaa_buf_free(&small);
  spaa_profile_free(p);
}

static void test_canon_numbers(void **state)
{
  static const struct {
    double d;
    const char *want;
  } t[] = {{0.1, "0.1"},       {1.0, "1.0"},         {-0.0, "-0.0"},
           {1e300, "1e+300"},  {123456789.0, "123456789.0"},
           {1.0 / 3.0, "0.3333333333333333"}, {5e-324, "4.94065645841247e-324"}};
  size_t i;
  struct spaa_buf b;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    spaa_buf_init(&b, 0);
    assert_int_equal(spaa_canon_double(&b, t[i].d), 0);
    assert_string_equal(b.p, t[i].want);
    spaa_buf_free(&b);
  }
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_canon_double(&b, NAN), 0);
  assert_string_equal(b.p, "null");
  spaa_buf_free(&b);
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_canon_num(&b, spaa_int(INT64_MIN)), 0);
  assert_string_equal(b.p, "-9223372036854775808");
  spaa_buf_free(&b);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_golden),          cmocka_unit_test(test_reruns_and_roundtrip),
      cmocka_unit_test(test_zstd_output),     cmocka_unit_test(test_sink_failure_and_cap),
      cmocka_unit_test(test_canon_numbers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
