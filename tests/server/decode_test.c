/* server/decode.c: every Content-Encoding round trip, the caps (bombs), corrupt and
 * truncated streams, and unknown codings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include "compress_testutil.h"
#include "server/decode.h"

/* Decode and expect success with exactly `want`. */
static void expect_ok(const char *ce, const uint8_t *in, size_t len, size_t max,
                      const uint8_t *want, size_t want_len)
{
  struct spaa_buf out;
  struct spaa_err err;
  int rc;
  spaa_buf_init(&out, 0);
  spaa_err_clear(&err);
  rc = spaa_decode(ce, in, len, max, &out, &err);
  if (rc)
    fail_msg("%s: rc=%d %s", ce ? ce : "(none)", rc, err.msg);
  assert_int_equal(out.len, want_len);
  assert_memory_equal(out.p, want, want_len);
  assert_int_equal(out.p[out.len], 0); /* NUL-terminated */
  spaa_buf_free(&out);
}

static void expect_fail(const char *ce, const uint8_t *in, size_t len, size_t max, int code,
                        const char *msg_part)
{
  struct spaa_buf out;
  struct spaa_err err;
  int rc;
  spaa_buf_init(&out, 0);
  spaa_err_clear(&err);
  rc = spaa_decode(ce, in, len, max, &out, &err);
  if (rc != code || !strstr(err.msg, msg_part))
    fail_msg("%s: rc=%d msg='%s', want %d '%s'", ce, rc, err.msg, code, msg_part);
  assert_int_equal(err.code, code);
  assert_null(out.p); /* nothing kept on error */
  assert_int_equal(out.len, 0);
}

static void test_needed(void **state)
{
  struct spaa_err err;
  assert_int_equal(spaa_decode_needed(NULL, &err), 0);
  assert_int_equal(spaa_decode_needed("", &err), 0);
  assert_int_equal(spaa_decode_needed("identity", &err), 0);
  assert_int_equal(spaa_decode_needed("UTF-8", &err), 0);
  assert_int_equal(spaa_decode_needed(" identity , ", &err), 0);
  assert_int_equal(spaa_decode_needed("gzip", &err), 1);
  assert_int_equal(spaa_decode_needed("X-GZIP", &err), 1);
  assert_int_equal(spaa_decode_needed("deflate", &err), 1);
  assert_int_equal(spaa_decode_needed("zlib", &err), 1); /* a Collector exporter's name for it */
  assert_int_equal(spaa_decode_needed("zstd", &err), 1);
  assert_int_equal(spaa_decode_needed("gzip, zstd", &err), 1);
  assert_int_equal(spaa_decode_needed("br", &err), 1);
  assert_int_equal(spaa_decode_needed("gzip, BR", &err), 1);
  /* what a Collector exporter set to `compression: snappy | x-snappy-framed | lz4` sends */
  assert_int_equal(spaa_decode_needed("snappy", &err), 1);
  assert_int_equal(spaa_decode_needed("SNAPPY", &err), 1);
  assert_int_equal(spaa_decode_needed("x-snappy-framed", &err), 1);
  assert_int_equal(spaa_decode_needed("X-Snappy-Framed", &err), 1);
  assert_int_equal(spaa_decode_needed("lz4", &err), 1);
  assert_int_equal(spaa_decode_needed(" LZ4 ", &err), 1);
  assert_int_equal(spaa_decode_needed("snappy-framed", &err), SPAA_E_MEDIA_TYPE);
  assert_int_equal(spaa_decode_needed("compress", &err), SPAA_E_MEDIA_TYPE);
  assert_string_equal(err.msg, "unsupported Content-Encoding 'compress': expected gzip, "
                               "x-gzip, deflate, zlib, zstd, br, snappy, x-snappy-framed, lz4 "
                               "or identity");
  assert_int_equal(spaa_decode_needed("gzip, compress", &err), SPAA_E_MEDIA_TYPE);
  assert_non_null(strstr(err.msg, "'compress'"));
  assert_int_equal(spaa_decode_needed("gzip,gzip,gzip,gzip,gzip", &err), SPAA_E_MEDIA_TYPE);
  assert_non_null(strstr(err.msg, "more than 4 codings"));
}

static void test_identity(void **state)
{
  const uint8_t in[] = "plain body";
  expect_ok(NULL, in, 10, 100, in, 10);
  expect_ok("identity", in, 10, 100, in, 10);
  expect_ok("utf-8", in, 10, 100, in, 10);
  expect_ok("", (const uint8_t *)"", 0, 100, (const uint8_t *)"", 0);
}

static void test_round_trips(void **state)
{
  static const size_t sizes[] = {0, 1, 100, 65535, 65536, 65537, 300000};
  size_t i;
  for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    size_t n = sizes[i], gl, zl, rl, sl;
    uint8_t *data = spaa_test_sample(n);
    uint8_t *gz = spaa_test_zlib(data, n, 31, &gl);
    uint8_t *zl_ = spaa_test_zlib(data, n, 15, &zl);
    uint8_t *raw = spaa_test_zlib(data, n, -15, &rl);
    uint8_t *zs = spaa_test_zstd(data, n, &sl);
    expect_ok("gzip", gz, gl, n + 1, data, n);
    expect_ok("x-gzip", gz, gl, n + 1, data, n);
    expect_ok("GZip", gz, gl, n, data, n); /* exactly at the cap */
    expect_ok("deflate", zl_, zl, n + 10, data, n);
    expect_ok("deflate", raw, rl, n + 10, data, n);
    expect_ok("zstd", zs, sl, n, data, n);
    free(data);
    free(gz);
    free(zl_);
    free(raw);
    free(zs);
  }
}

static void test_multi_member_and_frames(void **state)
{
  size_t n = 5000, gl, sl;
  uint8_t *data = spaa_test_sample(n);
  uint8_t *gz = spaa_test_zlib(data, n, 31, &gl);
  uint8_t *zs = spaa_test_zstd(data, n, &sl);
  uint8_t *two = malloc(2 * (gl > sl ? gl : sl));
  uint8_t *want = malloc(2 * n);
  memcpy(want, data, n);
  memcpy(want + n, data, n);
  memcpy(two, gz, gl);
  memcpy(two + gl, gz, gl);
  expect_ok("gzip", two, 2 * gl, 2 * n, want, 2 * n); /* `cat a.gz b.gz` */
  memcpy(two, zs, sl);
  memcpy(two + sl, zs, sl);
  expect_ok("zstd", two, 2 * sl, 2 * n, want, 2 * n);
  free(data);
  free(gz);
  free(zs);
  free(two);
  free(want);
}

/* "gzip, zstd": gzip was applied first, then zstd, so zstd is undone first. */
static void test_stacked(void **state)
{
  size_t n = 20000, gl, sl;
  uint8_t *data = spaa_test_sample(n);
  uint8_t *gz = spaa_test_zlib(data, n, 31, &gl);
  uint8_t *both = spaa_test_zstd(gz, gl, &sl);
  expect_ok("gzip, zstd", both, sl, n, data, n);
  expect_fail("zstd, gzip", both, sl, n, SPAA_E_BAD_COMPRESSION, "corrupt gzip body");
  free(data);
  free(gz);
  free(both);
}

/* A small body that inflates past the cap: 413, and never more than the cap in memory. */
static void test_bombs(void **state)
{
  size_t n = 64u << 20, gl, sl;
  uint8_t *zeros = calloc(1, n);
  uint8_t *gz = spaa_test_zlib(zeros, n, 31, &gl);
  uint8_t *zs = spaa_test_zstd(zeros, n, &sl);
  uint8_t *raw;
  size_t rl;
  assert_true(gl < n / 500);
  expect_fail("gzip", gz, gl, 1u << 20, SPAA_E_TOO_LARGE,
              "gzip body decodes to more than the 1048576-byte cap");
  expect_fail("zstd", zs, sl, 1u << 20, SPAA_E_TOO_LARGE, "zstd body");
  expect_fail("gzip", gz, gl, n - 1, SPAA_E_TOO_LARGE, "cap"); /* one byte short */
  expect_ok("gzip", gz, gl, n, zeros, n);                      /* exactly the cap */
  free(gz);
  raw = spaa_test_zlib(zeros, 1000, -15, &rl);
  expect_fail("deflate", raw, rl, 999, SPAA_E_TOO_LARGE, "deflate body decodes to more");
  free(raw);
  free(zs);
  free(zeros);
}

/* A zstd frame that declares a window far above the cap is refused before allocating. */
static void test_zstd_window(void **state)
{
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  uint8_t in[1000], out[2000];
  ZSTD_inBuffer ib = {in, sizeof(in), 0};
  ZSTD_outBuffer ob = {out, sizeof(out), 0};
  memset(in, 'x', sizeof(in));
  ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 27);
  /* fed in two steps, so the size is unknown and the declared window stays 2^27 */
  assert_false(ZSTD_isError(ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_continue)));
  assert_int_equal(ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_end), 0);
  ZSTD_freeCCtx(cc);
  expect_fail("zstd", out, ob.pos, 4096, SPAA_E_TOO_LARGE, "window larger than");
  expect_ok("zstd", out, ob.pos, 1u << 27, in, sizeof(in));
}

static void test_corrupt(void **state)
{
  size_t n = 100000, gl, sl, zl;
  uint8_t *data = spaa_test_sample(n);
  uint8_t *gz = spaa_test_zlib(data, n, 31, &gl);
  uint8_t *zs = spaa_test_zstd(data, n, &sl);
  uint8_t *zlw = spaa_test_zlib(data, n, 15, &zl);
  uint8_t *junk = malloc(gl + 10);
  expect_fail("gzip", (const uint8_t *)"this is not gzip", 16, n, SPAA_E_BAD_COMPRESSION,
              "corrupt gzip body: incorrect header check");
  expect_fail("gzip", (const uint8_t *)"", 0, n, SPAA_E_BAD_COMPRESSION,
              "corrupt gzip body: the stream is truncated after 0 bytes");
  expect_fail("gzip", gz, gl / 2, n, SPAA_E_BAD_COMPRESSION, "truncated");
  expect_fail("gzip", gz, gl - 4, n, SPAA_E_BAD_COMPRESSION, "truncated"); /* no ISIZE */
  expect_fail("zstd", zs, sl / 2, n, SPAA_E_BAD_COMPRESSION, "corrupt zstd body: the stream "
                                                             "is truncated");
  expect_fail("zstd", (const uint8_t *)"\x28\xb5\x2f\xfd garbage", 12, n,
              SPAA_E_BAD_COMPRESSION, "corrupt zstd body");
  expect_fail("zstd", (const uint8_t *)"", 0, n, SPAA_E_BAD_COMPRESSION, "empty");
  expect_fail("deflate", zlw, zl - 2, n, SPAA_E_BAD_COMPRESSION, "deflate");
  /* a flipped byte inside the data */
  memcpy(junk, gz, gl);
  junk[gl / 2] ^= 0x55;
  junk[gl / 2 + 1] ^= 0xaa;
  expect_fail("gzip", junk, gl, n, SPAA_E_BAD_COMPRESSION, "corrupt gzip body");
  /* bytes after the end of a gzip member that are not another member */
  memcpy(junk, gz, gl);
  memcpy(junk + gl, "trailing!!", 10);
  expect_fail("gzip", junk, gl + 10, n, SPAA_E_BAD_COMPRESSION, "10 unexpected bytes after");
  expect_fail("compress", gz, gl, n, SPAA_E_MEDIA_TYPE, "unsupported Content-Encoding 'compress'");
  expect_fail("br", gz, gl, n, SPAA_E_BAD_COMPRESSION, "corrupt br body");
  free(data);
  free(gz);
  free(zs);
  free(zlw);
  free(junk);
}

/* What a Collector exporter sends with `compression: snappy | x-snappy-framed | lz4` (the
 * formats' own tests are tests/codecs/base/snappy_lz4_test.c). */
static void test_snappy_lz4(void **state)
{
  static const uint8_t block[] = "\x05\x10hello";
  static const uint8_t framed[] = "\xff\x06\x00\x00sNaPpY\x01\x09\x00\x00\xbb\x1f\x1c\x19hello";
  uint8_t lz4[32], wrapped[64];
  size_t n = 0, gl, wl = 0;
  const uint8_t *hello = (const uint8_t *)"hello";
  uint8_t *gz = spaa_test_zlib(hello, 5, 31, &gl);
  expect_ok("snappy", block, 7, 5, hello, 5);
  expect_ok("Snappy", framed, sizeof(framed) - 1, 5, hello, 5); /* peeked: framed */
  expect_ok("x-snappy-framed", framed, sizeof(framed) - 1, 5, hello, 5);
  expect_fail("x-snappy-framed", block, 7, 5, SPAA_E_BAD_COMPRESSION,
              "corrupt x-snappy-framed body: the stream does not start with a stream identifier");
  expect_fail("snappy", block, 7, 4, SPAA_E_TOO_LARGE,
              "snappy body decodes to more than the 4-byte cap");
  /* an lz4 frame: no options, one block stored as is */
  memcpy(lz4, "\x04\x22\x4d\x18\x60\x40", 6);
  lz4[6] = (uint8_t)(XXH32(lz4 + 4, 2, 0) >> 8);
  n = 7;
  memcpy(lz4 + n, "\x05\x00\x00\x80hello\x00\x00\x00\x00", 13);
  n += 13;
  expect_ok("lz4", lz4, n, 5, hello, 5);
  expect_fail("LZ4", lz4, n - 1, 5, SPAA_E_BAD_COMPRESSION, "corrupt lz4 body");
  /* "gzip, snappy": snappy undone first (the gzip bytes as one literal) */
  wrapped[wl++] = (uint8_t)gl;
  wrapped[wl++] = (uint8_t)((gl - 1) << 2);
  memcpy(wrapped + wl, gz, gl);
  wl += gl;
  assert_true(gl < 60);
  expect_ok("gzip, snappy", wrapped, wl, 100, hello, 5); /* the cap holds at each stage */
  free(gz);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_needed),          cmocka_unit_test(test_identity),
      cmocka_unit_test(test_round_trips),     cmocka_unit_test(test_multi_member_and_frames),
      cmocka_unit_test(test_stacked),         cmocka_unit_test(test_bombs),
      cmocka_unit_test(test_zstd_window),     cmocka_unit_test(test_corrupt),
      cmocka_unit_test(test_snappy_lz4),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
