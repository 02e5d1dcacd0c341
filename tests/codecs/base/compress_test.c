/* codecs/base/compress.c: capped one-buffer decoding of every coding (round trips, the cap
 * exactly at the boundary, concatenated gzip members, raw deflate, bombs, truncated, corrupt
 * and trailing bytes), the streaming decoder fed in pieces, and the compressing sink; brotli
 * (decoded only) from streams embedded below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>
#include <zstd.h>

#include "base/compress.h"
#include "compress_testutil.h"

/* `in` compressed with `c` (deflate: zlib-wrapped, or raw when `raw`). */
static uint8_t *pack(enum spaa_coding c, int raw, const uint8_t *in, size_t len, size_t *out_len)
{
  if (c == SPAA_CODING_ZSTD)
    return spaa_test_zstd(in, len, out_len);
  return spaa_test_zlib(in, len, c == SPAA_CODING_GZIP ? 31 : raw ? -15 : 15, out_len);
}

static void expect_fail(enum spaa_coding c, const uint8_t *in, size_t len, size_t max,
                        int code, const char *msg_part)
{
  struct spaa_buf out;
  struct spaa_err err;
  int rc = spaa_test_decode(c, in, len, max, &out, &err);
  if (rc != code || !strstr(err.msg, msg_part))
    fail_msg("%s: rc=%d msg='%s', want %d '%s'", spaa_coding_name(c), rc, err.msg, code,
             msg_part);
  assert_int_equal(err.code, code);
  assert_null(out.p); /* nothing kept on error */
  assert_int_equal(out.len, 0);
}

static void test_names_and_magic(void **state)
{
  (void)state;
  assert_string_equal(spaa_coding_name(SPAA_CODING_GZIP), "gzip");
  assert_string_equal(spaa_coding_name(SPAA_CODING_DEFLATE), "deflate");
  assert_string_equal(spaa_coding_name(SPAA_CODING_ZSTD), "zstd");
  assert_true(spaa_is_gzip("\x1f\x8b", 2));
  assert_false(spaa_is_gzip("\x1f", 1));
  assert_false(spaa_is_gzip("\x1f\x8c", 2));
  assert_true(spaa_is_zstd("\x28\xb5\x2f\xfd", 4));
  assert_false(spaa_is_zstd("\x28\xb5\x2f", 3));
  assert_false(spaa_is_zstd("\x28\xb5\x2f\xfe", 4));
}

/* Every coding and size: the exact cap passes, one byte less is 413 naming the coding. */
static void test_round_trip_and_cap(void **state)
{
  static const size_t sizes[] = {0, 1, 1000, 70000, 300000};
  static const struct {
    enum spaa_coding c;
    int raw;
  } codings[] = {{SPAA_CODING_GZIP, 0},
                 {SPAA_CODING_DEFLATE, 0},
                 {SPAA_CODING_DEFLATE, 1},
                 {SPAA_CODING_ZSTD, 0}};
  size_t i, k;
  (void)state;
  for (k = 0; k < sizeof(codings) / sizeof(codings[0]); k++) {
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
      size_t n = sizes[i], zl;
      uint8_t *data = spaa_test_sample(n), *z = pack(codings[k].c, codings[k].raw, data, n, &zl);
      char want[96];
      spaa_test_decodes_to(codings[k].c, z, zl, n ? n : 1, data, n);
      if (n) {
        spaa_test_decodes_to(codings[k].c, z, zl, n, data, n);     /* exactly at the cap */
        spaa_test_decodes_to(codings[k].c, z, zl, 4 * n, data, n); /* well under it */
        snprintf(want, sizeof(want), "%s body decodes to more than the %zu-byte cap",
                 spaa_coding_name(codings[k].c), n - 1);
        expect_fail(codings[k].c, z, zl, n - 1, SPAA_E_TOO_LARGE, want);
      }
      free(z);
      free(data);
    }
  }
}

/* `cat a.gz b.gz c.gz` is one gzip body; zstd frames follow each other the same way. */
static void test_concatenated(void **state)
{
  size_t n = 5000, l1, l2, l3, i;
  uint8_t *data = spaa_test_sample(n), *a = spaa_test_zlib(data, n, 31, &l1);
  uint8_t *b = spaa_test_zlib(data, 0, 31, &l2);
  uint8_t *c = spaa_test_zlib(data + 1, n - 1, 31, &l3), *all = malloc(l1 + l2 + l3);
  uint8_t *want = malloc(2 * n);
  (void)state;
  memcpy(all, a, l1);
  memcpy(all + l1, b, l2); /* an empty member in the middle */
  memcpy(all + l1 + l2, c, l3);
  memcpy(want, data, n);
  memcpy(want + n, data + 1, n - 1);
  spaa_test_decodes_to(SPAA_CODING_GZIP, all, l1 + l2 + l3, 2 * n - 1, want, 2 * n - 1);
  expect_fail(SPAA_CODING_GZIP, all, l1 + l2 + l3, 2 * n - 2, SPAA_E_TOO_LARGE, "cap");
  /* the second member cut short */
  for (i = l1 + 2; i < l1 + l2; i++) /* (one byte alone is not taken for a member) */
    expect_fail(SPAA_CODING_GZIP, all, i, 2 * n, SPAA_E_BAD_COMPRESSION, "truncated");
  free(a);
  free(b);
  free(c);
  free(all);
  /* zstd: two frames */
  a = spaa_test_zstd(data, n, &l1);
  b = spaa_test_zstd(data + 1, n - 1, &l2);
  all = malloc(l1 + l2);
  memcpy(all, a, l1);
  memcpy(all + l1, b, l2);
  spaa_test_decodes_to(SPAA_CODING_ZSTD, all, l1 + l2, 2 * n - 1, want, 2 * n - 1);
  expect_fail(SPAA_CODING_ZSTD, all, l1 + l2, 2 * n - 2, SPAA_E_TOO_LARGE, "cap");
  free(a);
  free(b);
  free(all);
  free(want);
  free(data);
}

/* Cut at every length: 400 and the coding named, never a short success. */
static void test_truncated(void **state)
{
  size_t n = 3000, zl, cut;
  uint8_t *data = spaa_test_sample(n), *z;
  char want[96];
  (void)state;
  z = spaa_test_zlib(data, n, 31, &zl);
  for (cut = 0; cut < zl; cut++) {
    snprintf(want, sizeof(want), "corrupt gzip body: the stream is truncated after %zu bytes",
             cut);
    expect_fail(SPAA_CODING_GZIP, z, cut, n, SPAA_E_BAD_COMPRESSION, want);
  }
  free(z);
  z = spaa_test_zlib(data, n, 15, &zl);
  for (cut = 2; cut < zl; cut++)
    expect_fail(SPAA_CODING_DEFLATE, z, cut, n, SPAA_E_BAD_COMPRESSION, "corrupt deflate body");
  free(z);
  z = spaa_test_zstd(data, n, &zl);
  for (cut = 1; cut < zl; cut++)
    expect_fail(SPAA_CODING_ZSTD, z, cut, n, SPAA_E_BAD_COMPRESSION, "corrupt zstd body");
  snprintf(want, sizeof(want), "corrupt zstd body: the stream is truncated after %zu bytes",
           zl - 1);
  expect_fail(SPAA_CODING_ZSTD, z, zl - 1, n, SPAA_E_BAD_COMPRESSION, want);
  free(z);
  free(data);
}

static void test_corrupt_and_trailing(void **state)
{
  size_t n = 2000, zl;
  uint8_t *data = spaa_test_sample(n), *z, *junk;
  (void)state;
  expect_fail(SPAA_CODING_GZIP, (const uint8_t *)"this is not gzip", 16, n,
              SPAA_E_BAD_COMPRESSION, "corrupt gzip body: incorrect header check");
  expect_fail(SPAA_CODING_ZSTD, (const uint8_t *)"", 0, n, SPAA_E_BAD_COMPRESSION,
              "corrupt zstd body: it is empty");
  expect_fail(SPAA_CODING_ZSTD, (const uint8_t *)"\x28\xb5\x2f\xfd garbage after magic", 24, n,
              SPAA_E_BAD_COMPRESSION, "corrupt zstd body");
  expect_fail(SPAA_CODING_ZSTD, (const uint8_t *)"not zstd at all", 15, n,
              SPAA_E_BAD_COMPRESSION, "corrupt zstd body");
  /* gzip: bytes after the member that are not another member */
  z = spaa_test_zlib(data, n, 31, &zl);
  junk = malloc(zl + 10);
  memcpy(junk, z, zl);
  memset(junk + zl, 'x', 10);
  expect_fail(SPAA_CODING_GZIP, junk, zl + 10, n, SPAA_E_BAD_COMPRESSION,
              "10 unexpected bytes after the end of the stream");
  expect_fail(SPAA_CODING_GZIP, junk, zl + 1, n, SPAA_E_BAD_COMPRESSION,
              "1 unexpected bytes after");
  junk[zl] = 0x1f; /* a member's first byte alone is not a member */
  expect_fail(SPAA_CODING_GZIP, junk, zl + 1, n, SPAA_E_BAD_COMPRESSION,
              "1 unexpected bytes after");
  /* a flipped byte inside the deflate data */
  memcpy(junk, z, zl);
  junk[zl / 2] ^= 0x55;
  {
    struct spaa_buf out;
    struct spaa_err err;
    spaa_buf_init(&out, 0);
    assert_int_equal(spaa_decompress(SPAA_CODING_GZIP, junk, zl, n, &out, &err),
                     SPAA_E_BAD_COMPRESSION);
    assert_null(out.p);
  }
  free(junk);
  free(z);
  /* deflate (zlib wrapper and raw): anything after the end is refused */
  z = spaa_test_zlib(data, n, -15, &zl);
  junk = malloc(zl + 3);
  memcpy(junk, z, zl);
  memcpy(junk + zl, "abc", 3);
  expect_fail(SPAA_CODING_DEFLATE, junk, zl + 3, n, SPAA_E_BAD_COMPRESSION,
              "corrupt deflate body: 3 unexpected bytes after the end of the stream at byte");
  free(junk);
  free(z);
  /* zstd: garbage after a frame */
  z = spaa_test_zstd(data, n, &zl);
  junk = malloc(zl + 8);
  memcpy(junk, z, zl);
  memcpy(junk + zl, "trailing", 8);
  expect_fail(SPAA_CODING_ZSTD, junk, zl + 8, n, SPAA_E_BAD_COMPRESSION, "corrupt zstd body");
  free(junk);
  free(z);
  free(data);
}

/* A small input that inflates far past the cap, with a lying size in its trailer. */
static void test_bombs(void **state)
{
  size_t n = (size_t)8 << 20, zl;
  uint8_t *zeros = calloc(1, n), *z;
  (void)state;
  z = spaa_test_zlib(zeros, n, 31, &zl);
  expect_fail(SPAA_CODING_GZIP, z, zl, 1u << 20, SPAA_E_TOO_LARGE,
              "gzip body decodes to more than the 1048576-byte cap");
  z[zl - 4] = 0x10, z[zl - 3] = z[zl - 2] = z[zl - 1] = 0; /* ISIZE says 16 bytes */
  expect_fail(SPAA_CODING_GZIP, z, zl, 1u << 20, SPAA_E_TOO_LARGE, "cap");
  /* under a cap it fits: the room follows the output, and zlib checks the trailer */
  expect_fail(SPAA_CODING_GZIP, z, zl, n, SPAA_E_BAD_COMPRESSION,
              "corrupt gzip body: incorrect length check");
  free(z);
  z = spaa_test_zstd(zeros, n, &zl);
  expect_fail(SPAA_CODING_ZSTD, z, zl, 1u << 20, SPAA_E_TOO_LARGE, "cap");
  free(z);
  free(zeros);
}

/* A zstd frame that declares a window far above the cap is refused before allocating. */
static void test_zstd_window(void **state)
{
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  uint8_t *data = calloc(1, 1 << 20), out[1 << 16];
  ZSTD_inBuffer ib = {data, 1 << 20, 0};
  ZSTD_outBuffer ob = {out, sizeof(out), 0};
  (void)state;
  ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 24);
  ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1);
  assert_int_equal(ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_end), 0);
  expect_fail(SPAA_CODING_ZSTD, out, ob.pos, 4096, SPAA_E_TOO_LARGE,
              "zstd body needs a window larger than the 4096-byte cap");
  ZSTD_freeCCtx(cc);
  free(data);
}

/* A frame of 760 bytes whose header asks for a 6 MiB window (not a single segment), whole in
 * one buffer: libzstd would decode it in one pass and skip its window check; we refuse it
 * here as in pieces (found by fuzz_decompress). */
static const uint8_t ZSTD_WIDE_SMALL[] = {
  0x28, 0xb5, 0x2f, 0xfd, 0x54, 0x64, 0xf8, 0x01, 0x7d, 0x01, 0x00, 0x64,
  0x02, 0x7b, 0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22, 0x66, 0x72,
  0x61, 0x6d, 0x65, 0x22, 0x2c, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x31, 0x2c,
  0x22, 0x66, 0x75, 0x6e, 0x63, 0x22, 0x3a, 0x22, 0x6d, 0x61, 0x69, 0x6e,
  0x22, 0x7d, 0x0a, 0x01, 0x00, 0x7e, 0x96, 0x2a, 0xf5, 0x04, 0x5e, 0x44,
  0xdf, 0x3f,
};

static void test_zstd_window_whole(void **state)
{
  (void)state;
  expect_fail(SPAA_CODING_ZSTD, ZSTD_WIDE_SMALL, sizeof(ZSTD_WIDE_SMALL), 1u << 20,
              SPAA_E_TOO_LARGE, "zstd body needs a window larger than the 1048576-byte cap");
}

/* ---- brotli (decoding only): streams made once with the brotli tool (Debian's `brotli`) --- */

/* br_plain(): 200 lines "line NNNN of the brotli round trip\n", 7000 bytes; BR_RT is
 * `brotli -q 11` of them (for i in $(seq 0 199); do printf 'line %04d of the brotli round
 * trip\n' $i; done | brotli -q 11 -c | xxd -i). */
#define BR_PLAIN_LEN 7000
static const uint8_t BR_RT[] = {
  0xd1, 0xb8, 0xda, 0x00, 0xef, 0x48, 0x9d, 0xfa, 0xdc, 0xf1, 0xf4, 0x60,
  0x18, 0xab, 0x5d, 0x94, 0x1c, 0x5d, 0xa6, 0xb1, 0xbd, 0x51, 0xc8, 0x0e,
  0x40, 0x76, 0xf8, 0x98, 0xc9, 0x20, 0x93, 0x44, 0x6a, 0xd1, 0x28, 0x76,
  0xb3, 0xb8, 0xb9, 0xfd, 0x5f, 0xfa, 0x9f, 0xa7, 0x9a, 0x76, 0xa0, 0x7c,
  0x3d, 0x02, 0x89, 0x42, 0x63, 0xb0, 0xb8, 0x78, 0xf6, 0x11, 0x83, 0x40,
  0xa2, 0xd0, 0x18, 0x2c, 0x2e, 0x9e, 0x7d, 0xe4, 0x20, 0x90, 0x28, 0x34,
  0x06, 0x8b, 0x8b, 0x67, 0x1f, 0x35, 0x08, 0x24, 0x0a, 0x8d, 0xc1, 0xe2,
  0xe2, 0xd9, 0x47, 0x0f, 0x02, 0x89, 0x42, 0x63, 0xb0, 0xb8, 0x78, 0xf6,
  0x31, 0x83, 0x40, 0xa2, 0xd0, 0x18, 0x2c, 0x2e, 0x9e, 0x7d, 0xec, 0x20,
  0x90, 0x28, 0x34, 0x06, 0x8b, 0x8b, 0x67, 0x1f, 0x77, 0x10, 0x48, 0x14,
  0x1a, 0x83, 0xc5, 0xc5, 0xb3, 0x8f, 0x37, 0x08, 0x24, 0x0a, 0x8d, 0xc1,
  0xe2, 0xe2, 0xd9, 0xc7, 0x1f, 0x04, 0x12, 0x85, 0xc6, 0x60, 0x71, 0xf1,
  0xe8, 0x0f, 0x31, 0x83, 0x40, 0xa2, 0xd0, 0x18, 0x2c, 0x2e, 0x9e, 0x7d,
  0xc4, 0x20, 0x90, 0x28, 0x34, 0x06, 0x8b, 0x8b, 0x67, 0x1f, 0x39, 0x08,
  0x24, 0x0a, 0x8d, 0xc1, 0xe2, 0xe2, 0xd9, 0x47, 0x0d, 0x02, 0x89, 0x42,
  0x63, 0xb0, 0xb8, 0x78, 0xf6, 0xd1, 0x83, 0x40, 0xa2, 0xd0, 0x18, 0x2c,
  0x2e, 0x9e, 0x7d, 0xcc, 0x20, 0x90, 0x28, 0x34, 0x06, 0x8b, 0x8b, 0x67,
  0x1f, 0x3b, 0x08, 0x24, 0x0a, 0x8d, 0xc1, 0xe2, 0xe2, 0xd9, 0xc7, 0x1d,
  0x04, 0x12, 0x85, 0xc6, 0x60, 0x71, 0xf1, 0xec, 0xe3, 0x0d, 0x02, 0x89,
  0x42, 0x63, 0xb0, 0xb8, 0x78, 0xf6, 0xf1, 0x07, 0x81, 0x44, 0xa1, 0x31,
  0x58, 0x5c, 0xbc, 0xe1, 0x03
};
/* `head -c 8388608 /dev/zero | brotli -q 11 -c`: 14 bytes that decode to 8 MiB of zeros. */
static const uint8_t BR_BOMB[] = {
  0x9f, 0xff, 0xff, 0x7f, 0xf8, 0x27, 0x00, 0xe2, 0xb1, 0x40, 0x20, 0xf7,
  0xfe, 0x0f
};
/* `printf '' | brotli -c`: an empty stream, one byte. */
static const uint8_t BR_EMPTY[] = {0x3f};

static uint8_t *br_plain(void)
{
  uint8_t *p = malloc(BR_PLAIN_LEN + 1);
  int i;
  for (i = 0; i < 200; i++)
    snprintf((char *)p + 35 * i, 36, "line %04d of the brotli round trip\n", i);
  return p;
}

static void test_br(void **state)
{
  uint8_t *plain = br_plain(), junk[sizeof(BR_RT) + 3];
  size_t cut;
  char want[96];
  struct spaa_csink *s = NULL;
  struct spaa_err err;
  (void)state;
  assert_string_equal(spaa_coding_name(SPAA_CODING_BR), "br");
  /* round trip, the cap exactly at the size, one byte under it */
  spaa_test_decodes_to(SPAA_CODING_BR, BR_RT, sizeof(BR_RT), BR_PLAIN_LEN, plain, BR_PLAIN_LEN);
  spaa_test_decodes_to(SPAA_CODING_BR, BR_RT, sizeof(BR_RT), 1u << 20, plain, BR_PLAIN_LEN);
  expect_fail(SPAA_CODING_BR, BR_RT, sizeof(BR_RT), BR_PLAIN_LEN - 1, SPAA_E_TOO_LARGE,
              "br body decodes to more than the 6999-byte cap");
  spaa_test_decodes_to(SPAA_CODING_BR, BR_EMPTY, sizeof(BR_EMPTY), 1, plain, 0);
  /* a bomb: stopped at the cap, whole under a cap that fits it */
  expect_fail(SPAA_CODING_BR, BR_BOMB, sizeof(BR_BOMB), 1u << 20, SPAA_E_TOO_LARGE,
              "br body decodes to more than the 1048576-byte cap");
  {
    struct spaa_buf out;
    size_t i;
    assert_int_equal(
        spaa_test_decode(SPAA_CODING_BR, BR_BOMB, sizeof(BR_BOMB), 8u << 20, &out, &err), 0);
    assert_int_equal(out.len, 8u << 20);
    for (i = 0; i < out.len && !out.p[i]; i++)
      ;
    assert_int_equal(i, out.len);
    spaa_buf_free(&out);
  }
  /* truncated at every length (empty included): 400 naming br */
  for (cut = 0; cut < sizeof(BR_RT); cut++) {
    snprintf(want, sizeof(want), "corrupt br body: the stream is truncated after %zu bytes",
             cut);
    expect_fail(SPAA_CODING_BR, BR_RT, cut, 1u << 20, SPAA_E_BAD_COMPRESSION, want);
  }
  expect_fail(SPAA_CODING_BR, BR_BOMB, sizeof(BR_BOMB) - 1, 16u << 20, SPAA_E_BAD_COMPRESSION,
              "corrupt br body: the stream is truncated");
  /* corrupt */
  expect_fail(SPAA_CODING_BR, (const uint8_t *)"this is not brotli", 18, 1u << 20,
              SPAA_E_BAD_COMPRESSION, "corrupt br body: ");
  memcpy(junk, BR_RT, sizeof(BR_RT));
  junk[0] = 0x11; /* a reserved window size (WBITS 9) */
  expect_fail(SPAA_CODING_BR, junk, sizeof(BR_RT), 1u << 20, SPAA_E_BAD_COMPRESSION,
              "corrupt br body: ");
  /* anything after the end of the stream */
  memcpy(junk, BR_RT, sizeof(BR_RT));
  memcpy(junk + sizeof(BR_RT), "xyz", 3);
  snprintf(want, sizeof(want),
           "corrupt br body: 3 unexpected bytes after the end of the stream at byte %zu",
           sizeof(BR_RT));
  expect_fail(SPAA_CODING_BR, junk, sizeof(BR_RT) + 3, 1u << 20, SPAA_E_BAD_COMPRESSION, want);
  /* no encoder */
  assert_int_equal(spaa_csink_open(SPAA_CODING_BR, 5, spaa_buf_sink, NULL, &s, &err),
                   SPAA_E_USAGE);
  assert_null(s);
  free(plain);
}

/* The decoders' allocator: what they hold now and at most, refusing past `limit` (0: never). */
static size_t dec_held, dec_peak, dec_limit;
static void *counting_alloc(void *opaque, size_t n)
{
  size_t *p;
  (void)opaque;
  if (dec_limit && dec_held + n > dec_limit)
    return NULL;
  if (!(p = malloc(sizeof(size_t) * 2 + n)))
    return NULL;
  p[0] = n;
  dec_held += n;
  if (dec_held > dec_peak)
    dec_peak = dec_held;
  return p + 2;
}

static void counting_release(void *opaque, void *q)
{
  size_t *p = q;
  (void)opaque;
  if (!q)
    return;
  dec_held -= p[-2];
  free(p - 2);
}

/* Every decoder's state and window come from spaa_decoder_alloc_set's allocator, all of it
 * given back; refused, the decoder fails as out of memory; unset, malloc again. */
static void test_decoder_alloc(void **state)
{
  static const uint8_t text[] = "the decoders' memory, counted";
  struct spaa_buf out;
  struct spaa_err err;
  uint8_t *z;
  size_t zl, i;
  (void)state;
  spaa_decoder_alloc_set(counting_alloc, counting_release);
  /* br: 14 bytes on the wire, a window of megabytes */
  dec_peak = 0;
  assert_int_equal(
      spaa_test_decode(SPAA_CODING_BR, BR_BOMB, sizeof(BR_BOMB), 8u << 20, &out, &err), 0);
  spaa_buf_free(&out);
  assert_true(dec_peak >= (size_t)1 << 20);
  assert_int_equal(dec_held, 0);
  /* zstd and gzip count their state too */
  for (i = 0; i < 2; i++) {
    enum spaa_coding c = i ? SPAA_CODING_GZIP : SPAA_CODING_ZSTD;
    z = c == SPAA_CODING_ZSTD ? spaa_test_zstd(text, sizeof(text), &zl)
                              : spaa_test_zlib(text, sizeof(text), 16 + 15, &zl);
    dec_peak = 0;
    assert_int_equal(spaa_test_decode(c, z, zl, 1u << 20, &out, &err), 0);
    assert_memory_equal(out.p, text, sizeof(text));
    spaa_buf_free(&out);
    assert_true(dec_peak > 0);
    assert_int_equal(dec_held, 0);
    free(z);
  }
  /* refused: out of memory, nothing left held */
  dec_limit = 64 << 10;
  assert_int_equal(
      spaa_test_decode(SPAA_CODING_BR, BR_BOMB, sizeof(BR_BOMB), 8u << 20, &out, &err),
      SPAA_E_NOMEM);
  assert_int_equal(dec_held, 0);
  dec_limit = 0;
  spaa_decoder_alloc_set(NULL, NULL);
  dec_peak = 0;
  assert_int_equal(
      spaa_test_decode(SPAA_CODING_BR, BR_BOMB, sizeof(BR_BOMB), 8u << 20, &out, &err), 0);
  spaa_buf_free(&out);
  assert_int_equal(dec_peak, 0);
}

/* Feed `z` to a streaming decoder `step` bytes at a time into `room`-byte pieces. */
static int stream_all(enum spaa_coding c, const uint8_t *z, size_t zl, size_t step, size_t room,
                      struct spaa_buf *got, struct spaa_err *err)
{
  struct spaa_dstream *d;
  size_t pos = 0, want = step;
  int rc = spaa_dstream_new(c, 0, &d, err);
  if (rc)
    return rc;
  for (;;) {
    size_t give = zl - pos < want ? zl - pos : want, used, made;
    uint8_t piece[64];
    rc = spaa_dstream_step(d, z + pos, give, &used, piece, room, &made, err);
    if (rc < 0)
      break;
    pos += used;
    assert_int_equal(spaa_buf_add(got, piece, made), 0);
    if (!used && !made && give == zl - pos) {
      rc = spaa_dstream_finish(d, err); /* all the input given, and no progress */
      break;
    }
    want = used || made ? step : want + step; /* no progress: it waits for more input */
  }
  spaa_dstream_free(d);
  return rc;
}

static void test_streaming(void **state)
{
  static const size_t steps[] = {1, 3, 64, 100000};
  static const size_t rooms[] = {1, 7, 64};
  size_t n = 20000, zl, i, k;
  uint8_t *data = spaa_test_sample(n), *z;
  enum spaa_coding c;
  struct spaa_err err;
  (void)state;
  for (c = SPAA_CODING_GZIP; c <= SPAA_CODING_ZSTD; c++) {
    z = pack(c, 0, data, n, &zl);
    for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
      for (k = 0; k < sizeof(rooms) / sizeof(rooms[0]); k++) {
        struct spaa_buf got;
        spaa_buf_init(&got, 0);
        if (stream_all(c, z, zl, steps[i], rooms[k], &got, &err))
          fail_msg("%s step %zu room %zu: %s", spaa_coding_name(c), steps[i], rooms[k],
                   err.msg);
        assert_int_equal(got.len, n);
        assert_memory_equal(got.p, data, n);
        spaa_buf_free(&got);
      }
    }
    /* cut short: finish says so */
    {
      struct spaa_buf got;
      spaa_buf_init(&got, 0);
      assert_int_equal(stream_all(c, z, zl - 1, 50, 64, &got, &err), SPAA_E_BAD_COMPRESSION);
      assert_non_null(strstr(err.msg, "truncated"));
      assert_non_null(strstr(err.msg, spaa_coding_name(c)));
      spaa_buf_free(&got);
    }
    free(z);
  }
  /* corrupt: the input byte at fault is named */
  {
    struct spaa_buf got;
    spaa_buf_init(&got, 0);
    assert_int_equal(stream_all(SPAA_CODING_ZSTD, (const uint8_t *)"\x28\xb5\x2f\xfd\xff\xff",
                                6, 2, 64, &got, &err),
                     SPAA_E_BAD_COMPRESSION);
    assert_non_null(strstr(err.msg, "corrupt zstd input"));
    spaa_buf_free(&got);
  }
  free(data);
}

/* brotli through the streaming decoder: every piece size, cut short, corrupt, and a second
 * stream after the first (a further step starts it, as gzip's next member). */
static void test_br_streaming(void **state)
{
  static const size_t steps[] = {1, 3, 64, 100000};
  static const size_t rooms[] = {1, 7, 64};
  uint8_t *plain = br_plain(), two[2 * sizeof(BR_RT)];
  struct spaa_err err;
  struct spaa_buf got;
  size_t i, k;
  (void)state;
  for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
    for (k = 0; k < sizeof(rooms) / sizeof(rooms[0]); k++) {
      spaa_buf_init(&got, 0);
      if (stream_all(SPAA_CODING_BR, BR_RT, sizeof(BR_RT), steps[i], rooms[k], &got, &err))
        fail_msg("br step %zu room %zu: %s", steps[i], rooms[k], err.msg);
      assert_int_equal(got.len, BR_PLAIN_LEN);
      assert_memory_equal(got.p, plain, BR_PLAIN_LEN);
      spaa_buf_free(&got);
    }
  }
  spaa_buf_init(&got, 0);
  assert_int_equal(stream_all(SPAA_CODING_BR, BR_RT, sizeof(BR_RT) - 1, 50, 64, &got, &err),
                   SPAA_E_BAD_COMPRESSION);
  assert_non_null(strstr(err.msg, "corrupt br input: the stream is truncated"));
  spaa_buf_free(&got);
  spaa_buf_init(&got, 0);
  assert_int_equal(stream_all(SPAA_CODING_BR, (const uint8_t *)"not brotli at all", 17, 2, 64,
                              &got, &err),
                   SPAA_E_BAD_COMPRESSION);
  assert_non_null(strstr(err.msg, "corrupt br input: "));
  assert_non_null(strstr(err.msg, "near input byte"));
  spaa_buf_free(&got);
  memcpy(two, BR_RT, sizeof(BR_RT));
  memcpy(two + sizeof(BR_RT), BR_RT, sizeof(BR_RT));
  spaa_buf_init(&got, 0);
  assert_int_equal(stream_all(SPAA_CODING_BR, two, sizeof(two), 64, 64, &got, &err), 0);
  assert_int_equal(got.len, 2 * BR_PLAIN_LEN);
  assert_memory_equal(got.p + BR_PLAIN_LEN, plain, BR_PLAIN_LEN);
  spaa_buf_free(&got);
  free(plain);
}

/* A downstream sink that records the largest piece and can fail after some bytes. */
struct down {
  struct spaa_buf b;
  size_t biggest;
  size_t fail_after; /* 0: never */
};

static int down_cb(void *ctx, const void *data, size_t len)
{
  struct down *d = ctx;
  if (d->fail_after && d->b.len + len > d->fail_after)
    return SPAA_E_IO;
  if (len > d->biggest)
    d->biggest = len;
  return spaa_buf_add(&d->b, data, len);
}

static void test_csink_round_trip(void **state)
{
  static const size_t sizes[] = {0, 1, 5000, 1 << 20};
  static const size_t pieces[] = {1, 333, 1 << 20};
  enum spaa_coding c;
  size_t i, k;
  (void)state;
  for (c = SPAA_CODING_GZIP; c <= SPAA_CODING_ZSTD; c++) {
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
      for (k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
        size_t n = sizes[i], pos;
        uint8_t *data;
        struct spaa_csink *s;
        struct spaa_err err;
        struct down d;
        if (n > 5000 && pieces[k] == 1)
          continue; /* slow and says nothing new */
        data = spaa_test_sample(n);
        memset(&d, 0, sizeof(d));
        spaa_buf_init(&d.b, 0);
        assert_int_equal(spaa_csink_open(c, c == SPAA_CODING_ZSTD ? 3 : 6, down_cb, &d, &s,
                                         &err), 0);
        for (pos = 0; pos < n; pos += pieces[k])
          assert_int_equal(spaa_csink_write(s, data + pos, n - pos < pieces[k] ? n - pos
                                                                                 : pieces[k]),
                           0);
        assert_int_equal(spaa_csink_finish(s, &err), 0);
        spaa_csink_free(s);
        assert_true(d.biggest <= 64 * 1024);
        if (c == SPAA_CODING_GZIP)
          assert_true(spaa_is_gzip(d.b.p, d.b.len));
        if (c == SPAA_CODING_ZSTD)
          assert_true(spaa_is_zstd(d.b.p, d.b.len));
        /* (a streamed zstd frame asks for the level's window, whatever the size) */
        spaa_test_decodes_to(c, (const uint8_t *)d.b.p, d.b.len, n + (4u << 20), data, n);
        spaa_buf_free(&d.b);
        free(data);
      }
    }
  }
}

static void test_csink_failures(void **state)
{
  struct spaa_csink *s = NULL;
  struct spaa_err err;
  struct down d;
  size_t n = 1 << 20, i;
  uint8_t *data = spaa_test_sample(n);
  (void)state;
  assert_int_equal(spaa_csink_open(SPAA_CODING_GZIP, 42, down_cb, &d, &s, &err), SPAA_E_USAGE);
  assert_null(s);
  assert_non_null(strstr(err.msg, "gzip level 42"));
  assert_int_equal(spaa_csink_open(SPAA_CODING_ZSTD, 1000, down_cb, &d, &s, &err), SPAA_E_USAGE);
  assert_null(s);
  spaa_csink_free(NULL);
  /* the downstream error comes back from write, or from finish */
  for (i = 0; i < 2; i++) {
    enum spaa_coding c = i ? SPAA_CODING_ZSTD : SPAA_CODING_GZIP;
    int rc;
    memset(&d, 0, sizeof(d));
    spaa_buf_init(&d.b, 0);
    d.fail_after = 100;
    assert_int_equal(spaa_csink_open(c, 1, down_cb, &d, &s, &err), 0);
    rc = spaa_csink_write(s, data, n);
    if (rc == 0)
      rc = spaa_csink_finish(s, &err);
    assert_int_equal(rc, SPAA_E_IO);
    spaa_csink_free(s);
    spaa_buf_free(&d.b);
    /* small output: it fails only at the end (zlib passes its 10-byte gzip header at once) */
    memset(&d, 0, sizeof(d));
    spaa_buf_init(&d.b, 0);
    d.fail_after = 10;
    assert_int_equal(spaa_csink_open(c, 1, down_cb, &d, &s, &err), 0);
    assert_int_equal(spaa_csink_write(s, "abc", 3), 0);
    assert_int_equal(spaa_csink_finish(s, &err), SPAA_E_IO);
    assert_int_equal(err.code, SPAA_E_IO);
    assert_non_null(strstr(err.msg, "compression failed"));
    spaa_csink_free(s);
    spaa_buf_free(&d.b);
  }
  free(data);
}

static void test_zstd_one_shot(void **state)
{
  size_t n = 100000;
  uint8_t *data = spaa_test_sample(n);
  struct spaa_buf z, small;
  struct spaa_err err;
  (void)state;
  spaa_buf_init(&z, 0);
  assert_int_equal(spaa_buf_add(&z, "pre", 3), 0); /* appends */
  assert_int_equal(spaa_zstd_compress(data, n, 3, &z, &err), 0);
  assert_memory_equal(z.p, "pre", 3);
  assert_int_equal(ZSTD_getFrameContentSize(z.p + 3, z.len - 3), n);
  spaa_test_decodes_to(SPAA_CODING_ZSTD, (const uint8_t *)z.p + 3, z.len - 3, n, data, n);
  spaa_buf_free(&z);
  spaa_buf_init(&small, 16);
  assert_int_equal(spaa_zstd_compress(data, n, 3, &small, &err), SPAA_E_TOO_LARGE);
  spaa_buf_free(&small);
  free(data);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names_and_magic),    cmocka_unit_test(test_round_trip_and_cap),
      cmocka_unit_test(test_concatenated),       cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_corrupt_and_trailing), cmocka_unit_test(test_bombs),
      cmocka_unit_test(test_zstd_window),
      cmocka_unit_test(test_zstd_window_whole),        cmocka_unit_test(test_streaming),
      cmocka_unit_test(test_csink_round_trip),   cmocka_unit_test(test_csink_failures),
      cmocka_unit_test(test_zstd_one_shot),
      cmocka_unit_test(test_br),                 cmocka_unit_test(test_br_streaming),
      cmocka_unit_test(test_decoder_alloc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
