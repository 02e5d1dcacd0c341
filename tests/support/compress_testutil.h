/* Helpers shared by the compression tests (base/compress, server/decode): deterministic test
 * data, and zlib and zstd compressing it with the libraries' own one-shot calls, so that
 * what is decoded was not made by the code under test. Header-only, static functions; the
 * includer includes cmocka first. */
#ifndef SPAA_TESTS_COMPRESS_TESTUTIL_H
#define SPAA_TESTS_COMPRESS_TESTUTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>

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

#endif
