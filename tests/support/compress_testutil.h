/* Helpers shared by the compression tests (base/compress, server/decode): deterministic test
 * data, and zlib and zstd compressing it with the libraries' own one-shot calls, so that
 * what is decoded was not made by the code under test; decoding with a check of the result.
 * Header-only, static functions; the includer includes cmocka first. */
#ifndef SPAA_TESTS_COMPRESS_TESTUTIL_H
#define SPAA_TESTS_COMPRESS_TESTUTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

#include "base/compress.h"

/* n bytes of mildly compressible text, the same on every run (malloc'd, never NULL-sized). */
static inline uint8_t *spaa_test_sample(size_t n)
{
  uint8_t *p = malloc(n ? n : 1);
  uint32_t x = 12345;
  size_t i;
  for (i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    p[i] = (uint8_t)("profile stack frame "[(x >> 16) % 20]);
  }
  return p;
}

/* zlib-compress with windowBits wb (31 gzip, 15 zlib wrapper, -15 raw deflate). */
static inline uint8_t *spaa_test_zlib(const uint8_t *in, size_t len, int wb, size_t *out_len)
{
  z_stream zs;
  size_t cap;
  uint8_t *out;
  memset(&zs, 0, sizeof(zs));
  assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, wb, 8, Z_DEFAULT_STRATEGY), Z_OK);
  cap = deflateBound(&zs, len) + 64;
  out = malloc(cap);
  zs.next_in = (Bytef *)(uintptr_t)in;
  zs.avail_in = (uInt)len;
  zs.next_out = out;
  zs.avail_out = (uInt)cap;
  assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
  *out_len = zs.total_out;
  deflateEnd(&zs);
  return out;
}

/* One zstd frame at level 3, its content size recorded. */
static inline uint8_t *spaa_test_zstd(const uint8_t *in, size_t len, size_t *out_len)
{
  size_t cap = ZSTD_compressBound(len);
  uint8_t *out = malloc(cap);
  *out_len = ZSTD_compress(out, cap, in, len, 3);
  assert_false(ZSTD_isError(*out_len));
  return out;
}

/* spaa_decompress into a fresh buffer, the error cleared first. */
static inline int spaa_test_decode(enum spaa_coding c, const uint8_t *in, size_t len,
                                   size_t max, struct spaa_buf *out, struct spaa_err *err)
{
  spaa_buf_init(out, 0);
  spaa_err_clear(err);
  return spaa_decompress(c, in, len, max, out, err);
}

/* in decodes to exactly want[0..want_len): NUL-terminated, allocated even when empty, the
 * caller's cap left on the buffer. */
static inline void spaa_test_decodes_to(enum spaa_coding c, const uint8_t *in, size_t len,
                                        size_t max, const uint8_t *want, size_t want_len)
{
  struct spaa_buf out;
  struct spaa_err err;
  int rc = spaa_test_decode(c, in, len, max, &out, &err);
  if (rc)
    fail_msg("%s: rc=%d %s", spaa_coding_name(c), rc, err.msg);
  assert_int_equal(out.len, want_len);
  if (want_len)
    assert_memory_equal(out.p, want, want_len);
  assert_non_null(out.p);
  assert_int_equal(out.p[out.len], 0);
  assert_int_equal(out.max, max);
  spaa_buf_free(&out);
}

#endif
