/* codecs/registry.c: converter and exporter lookups by name, the names lists, and that the
 * "spaa" exporter writes what spaa_write writes, plain or through spaa_export_buf's zstd. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zstd.h>

#include "codecs/registry.h"
#include "pprof/pprof.h"
#include "spaa/spaa_io.h"

static void test_exporter_lookup(void **state)
{
  static const struct {
    const char *name;
    spaa_export_fn fn;
    const char *ext;
  } known[] = {
      {"spaa", spaa_export_spaa, ".spaa"},
      {"collapsed", spaa_export_folded, ".folded"},
      {"pprof", spaa_export_pprof, ".pb.gz"},
      {"speedscope", spaa_export_speedscope, ".speedscope.json"},
  };
  static const char *const unknown[] = {"", "SPAA", "folded", "PPROF", "spaa ", "collapse", "otlp"};
  size_t i;
  for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
    const struct spaa_exporter *x = spaa_exporter(known[i].name);
    if (!x)
      fail_msg("no exporter \"%s\"", known[i].name);
    assert_string_equal(x->name, known[i].name);
    assert_ptr_equal(x->fn, known[i].fn);
    assert_string_equal(x->ext, known[i].ext);
    assert_non_null(x->media_type);
    assert_ptr_equal(spaa_exporter(known[i].name), x); /* the same static entry each time */
  }
  assert_string_equal(spaa_exporter("spaa")->media_type, "application/x-ndjson");
  assert_null(spaa_exporter(NULL));
  for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
    if (spaa_exporter(unknown[i]))
      fail_msg("\"%s\" should not be an exporter", unknown[i]);
}

/* Every name in the list resolves, and the list is what usage messages print. */
static void test_names(void **state)
{
  char buf[256], *save = NULL, *tok;
  assert_string_equal(spaa_exporter_names(), "spaa, collapsed, pprof, speedscope");
  assert_string_equal(spaa_exporter_names(), "spaa, collapsed, pprof, speedscope"); /* kept */
  assert_string_equal(spaa_converter_names(), "spaa, sentry, otlp, pprof, pprof-push, folded");
  snprintf(buf, sizeof(buf), "%s", spaa_exporter_names());
  for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
    assert_non_null(spaa_exporter(tok));
  snprintf(buf, sizeof(buf), "%s", spaa_converter_names());
  for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
    assert_non_null(spaa_converter(tok));
  assert_null(spaa_converter(NULL));
  assert_null(spaa_converter("collapsed"));
}

static struct spaa_profile *small_profile(void)
{
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_event *e = spaa_add_event(p);
  struct spaa_frame *f = spaa_add_frame(p);
  struct spaa_stack *s = spaa_add_stack(p);
  uint64_t fr[] = {1};
  p->header.source_tool = "test";
  e->name = "cpu";
  e->kind = "timer";
  e->mode = "frequency";
  e->primary_metric = "samples";
  f->id = 1;
  f->func = "main";
  snprintf(s->id, sizeof(s->id), "s1");
  s->event = "cpu";
  assert_int_equal(spaa_stack_set_frames(p, s, fr, 1), 0);
  assert_int_equal(spaa_weights_add(p, &s->weights, "samples", spaa_int(3), NULL), 0);
  return p;
}

static void unzstd(const struct spaa_buf *z, struct spaa_buf *out)
{
  unsigned long long n = ZSTD_getFrameContentSize(z->p, z->len);
  size_t got;
  assert_int_equal(memcmp(z->p, "\x28\xb5\x2f\xfd", 4), 0);
  if (n == ZSTD_CONTENTSIZE_UNKNOWN || n == ZSTD_CONTENTSIZE_ERROR)
    n = 1 << 20;
  assert_int_equal(spaa_buf_reserve(out, (size_t)n + 1), 0);
  got = ZSTD_decompress(out->p, (size_t)n + 1, z->p, z->len);
  assert_false(ZSTD_isError(got));
  out->len = got;
}

static void test_spaa_exporter_bytes(void **state)
{
  struct spaa_profile *p = small_profile();
  const struct spaa_exporter *x = spaa_exporter("spaa");
  struct spaa_buf want, got, z, back;
  struct spaa_err err = {0};
  spaa_buf_init(&want, 0);
  spaa_buf_init(&got, 0);
  spaa_buf_init(&z, 0);
  spaa_buf_init(&back, 0);
  assert_int_equal(spaa_write(p, spaa_buf_sink, &want, &err), 0);
  assert_int_equal(x->fn(p, NULL, spaa_buf_sink, &got, &err), 0);
  assert_int_equal(got.len, want.len);
  assert_memory_equal(got.p, want.p, want.len);
  got.len = 0;
  assert_int_equal(spaa_export_buf(x->fn, p, NULL, 0, &got, &err), 0);
  assert_int_equal(got.len, want.len);
  assert_memory_equal(got.p, want.p, want.len);
  assert_int_equal(spaa_export_buf(x->fn, p, NULL, 3, &z, &err), 0);
  unzstd(&z, &back);
  assert_int_equal(back.len, want.len);
  assert_memory_equal(back.p, want.p, want.len);
  spaa_buf_free(&want);
  spaa_buf_free(&got);
  spaa_buf_free(&z);
  spaa_buf_free(&back);
  spaa_profile_free(p);
}

static void test_export_buf_folded_and_errors(void **state)
{
  struct spaa_profile *p = small_profile();
  const struct spaa_exporter *x = spaa_exporter("collapsed");
  struct spaa_export_opts o = {"nothing", NULL};
  struct spaa_buf out, z, small;
  struct spaa_err err = {0};
  spaa_buf_init(&out, 0);
  spaa_buf_init(&z, 0);
  spaa_buf_init(&small, 4);
  assert_int_equal(spaa_export_buf(x->fn, p, NULL, 3, &z, &err), 0);
  unzstd(&z, &out);
  assert_int_equal(out.len, 7);
  assert_memory_equal(out.p, "main 3\n", 7);
  { /* a stack without frames: a path that reads as one */
    struct spaa_stack *s = spaa_add_stack(p);
    snprintf(s->id, sizeof(s->id), "s0");
    s->event = "cpu";
    assert_int_equal(spaa_weights_add(p, &s->weights, "samples", spaa_int(2), NULL), 0);
    out.len = 0;
    assert_int_equal(spaa_export_buf(x->fn, p, NULL, 0, &out, &err), 0);
    assert_int_equal(out.len, 21);
    assert_memory_equal(out.p, "main 3\n(no frames) 2\n", 21);
  }
  assert_int_equal(spaa_export_buf(x->fn, p, &o, 0, &out, &err), SPAA_E_USAGE);
  assert_int_equal(spaa_export_buf(x->fn, p, NULL, 0, &small, &err), SPAA_E_TOO_LARGE);
  spaa_buf_free(&out);
  spaa_buf_free(&z);
  spaa_buf_free(&small);
  spaa_profile_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exporter_lookup),
      cmocka_unit_test(test_names),
      cmocka_unit_test(test_spaa_exporter_bytes),
      cmocka_unit_test(test_export_buf_folded_and_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
