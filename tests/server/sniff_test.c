/* server/sniff.c: what validate says a file looks like, for hand-made heads (a table, each
 * also gzip- and zstd-compressed) and for the shared fixtures of every format; and the
 * convert command each hint gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "base/buf.h"
#include "base/compress.h"
#include "server/sniff.h"
#include "fixture.h"

/* gzip of p[0..n) into a malloc'd buffer. */
static uint8_t *gzip_of(const uint8_t *p, size_t n, size_t *out_len)
{
  z_stream z;
  uLong cap = compressBound((uLong)n) + 64;
  uint8_t *out = malloc(cap);
  assert_non_null(out);
  memset(&z, 0, sizeof(z));
  assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  z.next_in = (Bytef *)(uintptr_t)p;
  z.avail_in = (uInt)n;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
  *out_len = z.total_out;
  deflateEnd(&z);
  return out;
}

struct want {
  int is_spaa;
  const char *from; /* NULL: none */
  const char *what; /* a part of s.what */
};

static void check(const char *label, const uint8_t *p, size_t n, const struct want *w,
                  const char *coding)
{
  struct spaa_sniff s;
  spaa_sniff(p, n, &s);
  if (s.is_spaa != w->is_spaa || (s.from == NULL) != (w->from == NULL) ||
      (s.from && strcmp(s.from, w->from)) || !strstr(s.what, w->what) ||
      (s.coding == NULL) != (coding == NULL) || (coding && strcmp(s.coding, coding)))
    fail_msg("%s: is_spaa=%d from=%s what='%s' coding=%s; want %d %s '%s' %s", label, s.is_spaa,
             s.from ? s.from : "NULL", s.what, s.coding ? s.coding : "NULL", w->is_spaa,
             w->from ? w->from : "NULL", w->what, coding ? coding : "NULL");
}

static void test_table(void **state)
{
  static const uint8_t pprof_pb[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x03, 'c',
                                     'p', 'u'};
  static const uint8_t push_pb[] = {0x0a, 0x0c, 0x0a, 0x0a, 0x0a, 0x08, '_', '_',
                                    'n', 'a', 'm', 'e', '_', '_'};
  static const uint8_t otlp_pb[] = {0x0a, 0x0e, 0x0a, 0x0c, 0x0a, 0x0a, 0x0a, 0x08,
                                    's', 'e', 'r', 'v', 'i', 'c', 'e', '.'};
  static const uint8_t junk[] = {0x00, 0xff, 0x07, 0x00, 0x01};
  static const struct {
    const char *label;
    const char *text; /* or NULL: bin */
    const uint8_t *bin;
    size_t bin_len;
    struct want w;
  } t[] = {
      {"spaa", "{\"type\": \"header\", \"format\": \"spaa\"}\n{\"type\":\"dso\"}\n", NULL, 0,
       {1, NULL, "SPAA"}},
      {"spaa without header", "{\"type\":\"stack\",\"id\":\"0x1\"}\n", NULL, 0, {1, NULL, "SPAA"}},
      {"envelope",
       "{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\",\"dsn\":\"http://k@h/1\"}\n"
       "{\"type\":\"profile\",\"length\":2}\n{}\n",
       NULL, 0, {0, "sentry", "Sentry envelope"}},
      {"envelope crlf", "{\"sent_at\":\"2024-01-01T00:00:00Z\"}\r\n{\"type\":\"profile_chunk\"}\r\n",
       NULL, 0, {0, "sentry", "Sentry envelope"}},
      {"sentry profile", "{\n  \"platform\": \"python\",\n  \"profile\": {\"samples\": []}}\n",
       NULL, 0, {0, "sentry", "Sentry profile"}},
      {"sentry chunk", "{\"chunk_id\":\"abc\",\"profile\":{}}", NULL, 0,
       {0, "sentry", "Sentry profile"}},
      {"otlp json", "{\"resourceProfiles\":[{\"resource\":{}}]}", NULL, 0,
       {0, "otlp", "OTLP-JSON"}},
      {"speedscope", "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"}",
       NULL, 0, {0, NULL, "speedscope"}},
      {"other json", "{\"hello\": \"world\"}\n", NULL, 0, {0, NULL, "JSON, but not SPAA"}},
      {"json array", "[1, 2, 3]", NULL, 0, {0, NULL, "JSON, but not SPAA"}},
      {"folded", "main;work;spin 12\nmain;idle 3\n", NULL, 0, {0, "folded", "folded"}},
      {"prose", "hello, world\nthis is a README\n", NULL, 0, {0, NULL, "not JSON"}},
      {"blank", "\n\n  \n", NULL, 0, {1, NULL, "blank"}},
      {"empty", "", NULL, 0, {1, NULL, "empty"}},
      {"pprof", NULL, pprof_pb, sizeof(pprof_pb), {0, "pprof", "pprof profile"}},
      {"push", NULL, push_pb, sizeof(push_pb), {0, "pprof-push", "Pyroscope push"}},
      {"otlp pb", NULL, otlp_pb, sizeof(otlp_pb), {0, "otlp", "OTLP profiles export request"}},
      {"junk", NULL, junk, sizeof(junk), {0, NULL, "no known profile format"}},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    const uint8_t *p = t[i].text ? (const uint8_t *)t[i].text : t[i].bin;
    size_t n = t[i].text ? strlen(t[i].text) : t[i].bin_len, gz_len;
    uint8_t *gz;
    struct spaa_buf zs;
    struct spaa_err err;
    struct want wz = t[i].w;
    check(t[i].label, p, n, &t[i].w, NULL);
    if (!n)
      continue;
    /* compressed: the same answer, with the coding; gzip SPAA is not SPAA to validate */
    gz = gzip_of(p, n, &gz_len);
    wz.is_spaa = 0;
    if (t[i].w.is_spaa)
      wz.what = t[i].w.what;
    check(t[i].label, gz, gz_len, &wz, "gzip");
    free(gz);
    spaa_buf_init(&zs, 1 << 20);
    assert_int_equal(spaa_zstd_compress(p, n, 3, &zs, &err), 0);
    check(t[i].label, (const uint8_t *)zs.p, zs.len, &t[i].w, "zstd");
    spaa_buf_free(&zs);
  }
}

/* Every fixture is recognised as its own format, whatever the extension says. */
static void test_fixtures(void **state)
{
  static const struct {
    const char *rel, *from;
  } t[] = {
      {"pprof/google-pprof_sample.cpu", "pprof"},
      {"pprof/parca_node-profile.pb.gz", "pprof"},
      {"pprof/pyroscope_heap", "pprof"},
      {"pprof/pyroscope_go.cpu.labels.pprof", "pprof"},
      {"otlp/v1dev_01_cpu_basic.bin", "otlp"},
      {"otlp/v1dev_01_cpu_basic.bin.gz", "otlp"},
      {"otlp/v1dev_03_multi_resource_scope.bin", "otlp"},
      {"otlp/v1exp_01_ebpf_cpu.bin", "otlp"},
      {"otlp/v1dev_02_native_inlined_buildid.json.gz", "otlp"},
      {"otlp/pyroscope_otel-ebpf-profile.pb.json", "otlp"},
      {"sentry/constructed_envelope_profile_chunk_v2.envelope", "sentry"},
      {"sentry/constructed_envelope_transaction_profile_v1.envelope", "sentry"},
      {"sentry/vroomrs_sample_v1_python.json", "sentry"},
      {"sentry/vroomrs_android_chunk.json", "sentry"},
      {"sentry/relay_sample_v2_valid_cocoa.json", "sentry"},
  };
  size_t i, n;
  (void)state;
  if (!spaa_test_have_fixtures("pprof", "sniff_test fixtures"))
    skip();
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    uint8_t *p = spaa_test_fixture(t[i].rel, &n);
    struct spaa_sniff s;
    assert_non_null(p);
    spaa_sniff(p, n < SPAA_SNIFF_HEAD ? n : SPAA_SNIFF_HEAD, &s);
    if (s.is_spaa || !s.from || strcmp(s.from, t[i].from))
      fail_msg("%s: is_spaa=%d from=%s what='%s'", t[i].rel, s.is_spaa, s.from ? s.from : "NULL",
               s.what);
    free(p);
  }
}

static void test_hints(void **state)
{
  static const struct {
    struct spaa_sniff s;
    const char *hint;
  } t[] = {
      {{0, NULL, "x", "pprof"}, "convert it first: spaa-relay convert --from pprof F -o F.spaa"},
      {{0, "gzip", "x", "pprof"},
       "convert it first: spaa-relay convert --from pprof F -o F.spaa"},
      {{0, "gzip", "x", "otlp"},
       "convert it first: zcat F | spaa-relay convert --from otlp - -o F.spaa"},
      {{0, "zstd", "x", "sentry"},
       "convert it first: zstd -dc F | spaa-relay convert --from sentry - -o F.spaa"},
      {{0, "gzip", "SPAA", NULL}, "validate reads plain or zstd SPAA: zcat F | spaa-relay validate -"},
      {{0, NULL, "x", NULL}, "no converter reads it; spaa-relay converts sentry, otlp, pprof, "
                             "pprof-push and folded inputs (spaa-relay convert --help)"},
      {{0, NULL, "folded (collapsed) stacks text", "folded"},
       "convert it first: spaa-relay convert --from folded F -o F.spaa"},
  };
  char buf[300];
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    spaa_sniff_hint(&t[i].s, "F", buf, sizeof(buf));
    assert_string_equal(buf, t[i].hint);
  }
  spaa_sniff_hint(&t[0].s, "F", buf, 8); /* cut, still terminated */
  assert_int_equal(strlen(buf), 7);
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_table), cmocka_unit_test(test_fixtures),
                                     cmocka_unit_test(test_hints)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
