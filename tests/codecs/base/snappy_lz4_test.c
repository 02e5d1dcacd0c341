/* codecs/base/snappy_lz4.c through spaa_decompress: hand-built snappy blocks (every literal
 * and copy kind, overlapping copies), snappy framed streams (data, padding and skippable
 * chunks, checksums), LZ4 frames (independent and linked blocks, every checksum, content
 * size, skippable frames, several frames), and the faults of each, every truncation included.
 * The expected masked CRC-32C values were computed with python3-crcmod's crc-32c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

#include "base/compress.h"
#include "compress_testutil.h"

#define SNAPPY SPAA_CODING_SNAPPY
#define FRAMED SPAA_CODING_SNAPPY_FRAMED
#define LZ4 SPAA_CODING_LZ4
#define S(lit) (const uint8_t *)(lit), sizeof(lit) - 1 /* a string literal as bytes, length */

/* Fails with `code`, a message naming the coding and holding `msg_part`, err's offset `at`
 * (SIZE_MAX: any). */
static void expect_fail(enum spaa_coding c, const uint8_t *in, size_t len, size_t max, int code,
                        const char *msg_part, size_t at)
{
  struct spaa_buf out;
  struct spaa_err err;
  int rc = spaa_test_decode(c, in, len, max, &out, &err);
  if (rc != code || !strstr(err.msg, msg_part) || !strstr(err.msg, spaa_coding_name(c)))
    fail_msg("%s: rc=%d msg='%s', want %d '%s'", spaa_coding_name(c), rc, err.msg, code,
             msg_part);
  if (at != SIZE_MAX && err.offset != at)
    fail_msg("%s: '%s' at offset %zu, want %zu", spaa_coding_name(c), err.msg, err.offset, at);
  assert_int_equal(err.code, code);
  assert_null(out.p); /* nothing kept on error */
  assert_int_equal(out.len, 0);
}

static void corrupt(enum spaa_coding c, const uint8_t *in, size_t len, const char *msg_part,
                    size_t at)
{
  char want[64];
  snprintf(want, sizeof(want), "corrupt %s body: ", spaa_coding_name(c));
  expect_fail(c, in, len, 1 << 20, SPAA_E_BAD_COMPRESSION, want, SIZE_MAX);
  expect_fail(c, in, len, 1 << 20, SPAA_E_BAD_COMPRESSION, msg_part, at);
}

/* Every proper prefix of a valid input is refused as corrupt (none ends where a stream may). */
static void every_prefix_fails(enum spaa_coding c, const uint8_t *in, size_t len)
{
  size_t i;
  for (i = 0; i < len; i++)
    expect_fail(c, in, i, 1 << 20, SPAA_E_BAD_COMPRESSION, "corrupt", SIZE_MAX);
}

/* ---- byte builders ----------------------------------------------------------------------- */

struct bytes {
  uint8_t b[1 << 18]; /* the input being built */
  size_t n;           /* its length */
};

static void put(struct bytes *o, const void *p, size_t n)
{
  assert_true(n <= sizeof(o->b) - o->n);
  memcpy(o->b + o->n, p, n);
  o->n += n;
}

static void put_le(struct bytes *o, uint64_t v, int n)
{
  int i;
  for (i = 0; i < n; i++)
    o->b[o->n++] = (uint8_t)(v >> (8 * i));
}

/* A snappy framed chunk: type, 3-byte length, then `len` bytes of data. */
static void chunk(struct bytes *o, uint8_t type, const void *data, size_t len)
{
  o->b[o->n++] = type;
  put_le(o, len, 3);
  put(o, data, len);
}

/* A framed data chunk: type 0 or 1, the masked CRC-32C given, then the payload. */
static void data_chunk(struct bytes *o, uint8_t type, uint32_t crc, const void *p, size_t len)
{
  o->b[o->n++] = type;
  put_le(o, len + 4, 3);
  put_le(o, crc, 4);
  put(o, p, len);
}

static void stream_id(struct bytes *o) { chunk(o, 0xff, "sNaPpY", 6); }

/* An LZ4 frame header: magic, FLG, BD, the content size (when `size` is not UINT64_MAX), the
 * dictionary id (when dict), and the header checksum (XXH32 of the descriptor, 2nd byte). */
static void lz4_header(struct bytes *o, int independent, int block_sum, int content_sum,
                       unsigned bmax_code, uint64_t size, int dict)
{
  size_t desc;
  put_le(o, 0x184D2204u, 4);
  desc = o->n;
  o->b[o->n++] = (uint8_t)(0x40 | independent << 5 | block_sum << 4 |
                           (size != UINT64_MAX) << 3 | content_sum << 2 | (dict ? 1 : 0));
  o->b[o->n++] = (uint8_t)(bmax_code << 4);
  if (size != UINT64_MAX)
    put_le(o, size, 8);
  if (dict)
    put_le(o, 0x1234, 4);
  o->b[o->n] = (uint8_t)(XXH32(o->b + desc, o->n - desc, 0) >> 8);
  o->n++;
}

/* An LZ4 block: its size word (high bit: stored as is) and the bytes, then XXH32 of them. */
static void lz4_block(struct bytes *o, int stored, const void *p, size_t len, int block_sum)
{
  put_le(o, len | (stored ? 0x80000000u : 0), 4);
  put(o, p, len);
  if (block_sum)
    put_le(o, XXH32(p, len, 0), 4);
}

static void lz4_end(struct bytes *o, const void *content, size_t len, int content_sum)
{
  put_le(o, 0, 4);
  if (content_sum)
    put_le(o, XXH32(content, len, 0), 4);
}

static struct bytes *fresh(void)
{
  struct bytes *o = calloc(1, sizeof(*o));
  assert_non_null(o);
  return o;
}

/* ---- snappy blocks ----------------------------------------------------------------------- */

static void test_names(void **state)
{
  (void)state;
  assert_string_equal(spaa_coding_name(SNAPPY), "snappy");
  assert_string_equal(spaa_coding_name(FRAMED), "x-snappy-framed");
  assert_string_equal(spaa_coding_name(LZ4), "lz4");
}

static void test_snappy_literals(void **state)
{
  struct bytes *o = fresh();
  uint8_t big[300];
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(big); i++)
    big[i] = (uint8_t)(i * 7 + 1);
  spaa_test_decodes_to(SNAPPY, S("\x05\x10hello"), 100, S("hello"));
  spaa_test_decodes_to(SNAPPY, S("\x00"), 100, S(""));
  /* literal lengths in 1, 2, 3 and 4 following bytes (60..63): the longer forms too */
  o->n = 0;
  put(o, "\x64\xf0\x63", 3); /* 100 bytes, length - 1 in one byte */
  put(o, big, 100);
  spaa_test_decodes_to(SNAPPY, o->b, o->n, 100, big, 100);
  every_prefix_fails(SNAPPY, o->b, o->n);
  o->n = 0;
  put(o, "\xac\x02\xf4\x2b\x01", 5); /* 300 bytes, two length bytes */
  put(o, big, 300);
  spaa_test_decodes_to(SNAPPY, o->b, o->n, 300, big, 300);
  o->n = 0;
  put(o, "\x0a\xf8\x09\x00\x00", 5); /* 10 bytes, three length bytes */
  put(o, big, 10);
  spaa_test_decodes_to(SNAPPY, o->b, o->n, 10, big, 10);
  o->n = 0;
  put(o, "\x0a\xfc\x09\x00\x00\x00", 6); /* four length bytes */
  put(o, big, 10);
  spaa_test_decodes_to(SNAPPY, o->b, o->n, 10, big, 10);
  /* two literals */
  spaa_test_decodes_to(SNAPPY, S("\x07\x08" "abc\x0c" "defg"), 7, S("abcdefg"));
  free(o);
}

static void test_snappy_copies(void **state)
{
  struct bytes *o = fresh();
  uint8_t want[400];
  size_t i;
  (void)state;
  /* copy with a 1-byte offset: 8 bytes from 4 back, overlapping itself */
  spaa_test_decodes_to(SNAPPY, S("\x0c\x0c" "abcd\x11\x04"), 12, S("abcdabcdabcd"));
  every_prefix_fails(SNAPPY, S("\x0c\x0c" "abcd\x11\x04"));
  /* a run: 20 bytes from 1 back, 2-byte offset */
  spaa_test_decodes_to(SNAPPY, S("\x15\x00" "a\x4e\x01\x00"), 21, S("aaaaaaaaaaaaaaaaaaaaa"));
  /* 4-byte offset: 3 bytes from 6 back, not overlapping */
  spaa_test_decodes_to(SNAPPY, S("\x09\x14" "abcdef\x0b\x06\x00\x00\x00"), 9, S("abcdefabc"));
  /* 1-byte offset with its high bits: 4 bytes from 300 back (0x12c: bits 1 in the tag) */
  for (i = 0; i < 300; i++)
    want[i] = (uint8_t)(i * 13 + 5);
  memcpy(want + 300, want, 4);
  o->n = 0;
  put(o, "\xb0\x02\xf4\x2b\x01", 5);
  put(o, want, 300);
  put(o, "\x21\x2c", 2);
  spaa_test_decodes_to(SNAPPY, o->b, o->n, 304, want, 304);
  /* 2-byte offset, 64 bytes (the longest): from 300 back */
  memcpy(want + 300, want, 64);
  o->n = 0;
  put(o, "\xec\x02\xf4\x2b\x01", 5);
  put(o, want, 300);
  put(o, "\xfe\x2c\x01", 3);
  spaa_test_decodes_to(SNAPPY, o->b, o->n, 364, want, 364);
  every_prefix_fails(SNAPPY, o->b, o->n);
  free(o);
}

static void test_snappy_faults(void **state)
{
  (void)state;
  corrupt(SNAPPY, S(""), "it is empty", 0);
  corrupt(SNAPPY, S("\x85"), "the decoded length is truncated", 1);
  corrupt(SNAPPY, S("\xff\xff\xff\xff\x7f"), "longer than 32 bits", 0);
  corrupt(SNAPPY, S("\xff\xff\xff\xff\xff\x01"), "longer than 32 bits", 0);
  /* offsets: 0, and further back than what was decoded */
  corrupt(SNAPPY, S("\x0c\x0c" "abcd\x11\x00"), "reaches back 0 bytes", 6);
  corrupt(SNAPPY, S("\x0c\x0c" "abcd\x11\x05"), "reaches back 5 bytes with 4 decoded", 6);
  corrupt(SNAPPY, S("\x05\x12\x01\x00"), "reaches back 1 bytes with 0 decoded", 1);
  /* truncated elements */
  corrupt(SNAPPY, S("\x05\x10hel"), "literal at byte 1 is truncated", 1);
  corrupt(SNAPPY, S("\x01\xf0"), "the literal at byte 1 is truncated", 1);
  corrupt(SNAPPY, S("\x64\xf0"), "declares 100 decoded bytes, more than its 2 bytes can hold", 0);
  corrupt(SNAPPY, S("\x0c\x0c" "abcd\x11"), "the copy at byte 6 is truncated", 6);
  corrupt(SNAPPY, S("\x0c\x0c" "abcd\x12\x04"), "the copy at byte 6 is truncated", 6);
  corrupt(SNAPPY, S("\x0c\x0c" "abcd\x13\x04\x00\x00"), "the copy at byte 6 is truncated", 6);
  corrupt(SNAPPY, S("\x0a\x10hello"), "ends after 5 of the 10 declared bytes", 7);
  /* elements past the declared length, and trailing garbage */
  corrupt(SNAPPY, S("\x03\x10hello"), "goes past the declared length 3", 1);
  corrupt(SNAPPY, S("\x05\x0c" "abcd\x11\x04"), "goes past the declared length 5", 6);
  corrupt(SNAPPY, S("\x05\x10hello\x00x"), "2 unexpected bytes after the 5 declared", 7);
  /* a declared length over the cap is refused before anything is allocated, however large */
  expect_fail(SNAPPY, S("\x0c\x0c" "abcd\x11\x04"), 11, SPAA_E_TOO_LARGE,
              "snappy body decodes to more than the 11-byte cap (it declares 12 bytes)", 0);
  expect_fail(SNAPPY, S("\xff\xff\xff\xff\x0f\x00"), 1 << 20, SPAA_E_TOO_LARGE,
              "more than the 1048576-byte cap", 0);
  /* under a cap that allows it, a length the data cannot hold is refused (no 4 GiB buffer) */
  expect_fail(SNAPPY, S("\xff\xff\xff\xff\x0f\x00"), SIZE_MAX - 2, SPAA_E_BAD_COMPRESSION,
              "declares 4294967295 decoded bytes, more than its 6 bytes can hold", 0);
  /* exactly at the cap: accepted */
  spaa_test_decodes_to(SNAPPY, S("\x0c\x0c" "abcd\x11\x04"), 12, S("abcdabcdabcd"));
}

/* ---- snappy framed ----------------------------------------------------------------------- */

#define CRC_HELLO 0x191c1fbbu /* masked CRC-32C of "hello" */
#define CRC_ABCD3 0x035f8da8u /* of "abcdabcdabcd" */
#define CRC_ZERO64K 0x2bcbd059u /* of 65536 zero bytes */
#define CRC_ZERO64K1 0x04db5a95u /* of 65537 zero bytes */

/* stream id, "hello" uncompressed, padding, "abcdabcdabcd" compressed, a skippable chunk,
 * another stream id, "hello" again. */
static void framed_sample(struct bytes *o)
{
  o->n = 0;
  stream_id(o);
  data_chunk(o, 0x01, CRC_HELLO, "hello", 5);
  chunk(o, 0xfe, "\0\0\0", 3);
  data_chunk(o, 0x00, CRC_ABCD3, "\x0c\x0c" "abcd\x11\x04", 8);
  chunk(o, 0x80, "skip me", 7);
  stream_id(o);
  data_chunk(o, 0x00, CRC_HELLO, "\x05\x10hello", 7);
}

static void test_framed(void **state)
{
  struct bytes *o = fresh();
  static uint8_t zeros[65537];
  const uint8_t want[] = "helloabcdabcdabcdhello";
  size_t i;
  (void)state;
  framed_sample(o);
  spaa_test_decodes_to(FRAMED, o->b, o->n, 100, want, 22);
  spaa_test_decodes_to(SNAPPY, o->b, o->n, 100, want, 22); /* "snappy" peeks: framed */
  spaa_test_decodes_to(FRAMED, o->b, o->n, 22, want, 22);  /* exactly at the cap */
  expect_fail(FRAMED, o->b, o->n, 21, SPAA_E_TOO_LARGE,
              "x-snappy-framed body decodes to more than the 21-byte cap", 0);
  expect_fail(SNAPPY, o->b, o->n, 21, SPAA_E_TOO_LARGE,
              "snappy body decodes to more than the 21-byte cap", 0);
  /* every prefix: refused, or (cut between chunks) the chunks it holds */
  for (i = 0; i < o->n; i++) {
    struct spaa_buf out;
    struct spaa_err err;
    int rc = spaa_test_decode(FRAMED, o->b, i, 100, &out, &err);
    if (rc == 0)
      assert_memory_equal(out.p, want, out.len);
    else
      assert_int_equal(rc, SPAA_E_BAD_COMPRESSION);
    assert_true(rc != 0 || i == 10 || i == 23 || i == 30 || i == 46 || i == 57 || i == 67);
    spaa_buf_free(&out);
  }
  /* only the stream identifier: nothing */
  o->n = 0;
  stream_id(o);
  spaa_test_decodes_to(FRAMED, o->b, o->n, 100, NULL, 0);
  /* chunks of 65536 decoded bytes: the most */
  o->n = 0;
  stream_id(o);
  data_chunk(o, 0x01, CRC_ZERO64K, zeros, 65536);
  spaa_test_decodes_to(FRAMED, o->b, o->n, 65536, zeros, 65536);
  o->n = 0;
  stream_id(o);
  data_chunk(o, 0x01, CRC_ZERO64K1, zeros, 65537);
  corrupt(FRAMED, o->b, o->n, "holds 65537 bytes, more than 65536", 10);
  o->n = 0;
  stream_id(o); /* declares 65537 bytes (then a literal and a run, short of them) */
  data_chunk(o, 0x00, CRC_ZERO64K1, "\x81\x80\x04\x00\x00\xfe\x01\x00", 8);
  corrupt(FRAMED, o->b, o->n, "holds 65537 bytes, more than 65536", 10);
  free(o);
}

static void test_framed_faults(void **state)
{
  struct bytes *o = fresh();
  (void)state;
  corrupt(FRAMED, S(""), "it is empty", 0);
  /* no stream identifier first (snappy then reads a block, which fails in its own way) */
  o->n = 0;
  data_chunk(o, 0x01, CRC_HELLO, "hello", 5);
  corrupt(FRAMED, o->b, o->n, "does not start with a stream identifier chunk (type 0x01", 0);
  o->n = 0;
  chunk(o, 0xfe, "", 0);
  stream_id(o);
  corrupt(FRAMED, o->b, o->n, "does not start with a stream identifier", 0);
  corrupt(FRAMED, S("\xff\x06\x00\x00sNaPpX"), "bad stream identifier chunk at byte 0", 0);
  corrupt(FRAMED, S("\xff\x07\x00\x00sNaPpYY"), "bad stream identifier chunk at byte 0", 0);
  /* checksums */
  o->n = 0;
  stream_id(o);
  data_chunk(o, 0x01, CRC_HELLO ^ 1, "hello", 5);
  corrupt(FRAMED, o->b, o->n, "the checksum of the chunk at byte 10 does not match", 10);
  o->n = 0;
  stream_id(o);
  data_chunk(o, 0x00, CRC_HELLO, "\x0c\x0c" "abcd\x11\x04", 8);
  corrupt(FRAMED, o->b, o->n, "the checksum of the chunk at byte 10 does not match", 10);
  /* a reserved unskippable chunk; reserved skippable ones are skipped */
  o->n = 0;
  stream_id(o);
  chunk(o, 0x02, "x", 1);
  corrupt(FRAMED, o->b, o->n, "reserved unskippable chunk type 0x02 at byte 10", 10);
  o->n = 0;
  stream_id(o);
  chunk(o, 0x7f, "", 0);
  corrupt(FRAMED, o->b, o->n, "reserved unskippable chunk type 0x7f", 10);
  o->n = 0;
  stream_id(o);
  chunk(o, 0x80, "", 0);
  chunk(o, 0xfd, "abc", 3);
  spaa_test_decodes_to(FRAMED, o->b, o->n, 100, NULL, 0);
  /* truncated: header, chunk, checksum */
  corrupt(FRAMED, S("\xff\x06\x00\x00sNaPpY\x01\x09\x00"), "chunk header at byte 10 is truncated",
          10);
  corrupt(FRAMED, S("\xff\x06\x00\x00sNaPpY\x01\x09\x00\x00hello"),
          "the 9-byte chunk at byte 10 is truncated (5 bytes left)", 10);
  corrupt(FRAMED, S("\xff\x06\x00\x00sNaPpY\x01\x03\x00\x00" "abc"),
          "too short for its checksum", 10);
  /* a corrupt block inside a chunk: offsets in the whole body */
  o->n = 0;
  stream_id(o);
  data_chunk(o, 0x00, CRC_ABCD3, "\x0c\x0c" "abcd\x11\x09", 8);
  corrupt(FRAMED, o->b, o->n, "the copy at byte 24 reaches back 9 bytes", 24);
  o->n = 0;
  stream_id(o);
  data_chunk(o, 0x00, CRC_HELLO, "\x85", 1);
  corrupt(FRAMED, o->b, o->n, "the decoded length of the chunk at byte 10 is truncated", 18);
  /* the cap across chunks */
  o->n = 0;
  stream_id(o);
  data_chunk(o, 0x01, CRC_HELLO, "hello", 5);
  data_chunk(o, 0x01, CRC_HELLO, "hello", 5);
  spaa_test_decodes_to(FRAMED, o->b, o->n, 10, S("hellohello"));
  expect_fail(FRAMED, o->b, o->n, 9, SPAA_E_TOO_LARGE, "more than the 9-byte cap", SIZE_MAX);
  free(o);
}

/* ---- LZ4 --------------------------------------------------------------------------------- */

static void test_lz4_blocks(void **state)
{
  struct bytes *o = fresh();
  const uint8_t *want = (const uint8_t *)"hello hello hello abab" "abababab";
  (void)state;
  /* literals only */
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 0, "\x50hello", 6, 0);
  lz4_end(o, NULL, 0, 0);
  spaa_test_decodes_to(LZ4, o->b, o->n, 100, S("hello"));
  every_prefix_fails(LZ4, o->b, o->n);
  /* a match (12 bytes from 6 back, overlapping), then literals; an overlapping run of 2;
   * every checksum and the content size */
  o->n = 0;
  lz4_header(o, 1, 1, 1, 4, 30, 0);
  lz4_block(o, 0, "\x68hello \x06\x00\x24" "ab\x02\x00\x00", 15, 1);
  lz4_block(o, 1, "ab", 2, 1);
  lz4_end(o, want, 30, 1);
  spaa_test_decodes_to(LZ4, o->b, o->n, 30, want, 30);
  every_prefix_fails(LZ4, o->b, o->n);
  expect_fail(LZ4, o->b, o->n, 29, SPAA_E_TOO_LARGE,
              "lz4 body decodes to more than the 29-byte cap (a frame declares 30 bytes)", 0);
  /* lengths of 15 and more: 15 + 255 + 1 literals, a match of 4 + 15 + 255 + 0 */
  {
    static uint8_t lit[271], run[545];
    size_t i;
    for (i = 0; i < sizeof(lit); i++)
      lit[i] = (uint8_t)(i * 3 + 1);
    memcpy(run, lit, 271);
    for (i = 271; i < 545; i++)
      run[i] = run[i - 1];
    o->n = 0;
    lz4_header(o, 1, 0, 1, 5, UINT64_MAX, 0);
    put_le(o, 1 + 2 + 271 + 2 + 2 + 1, 4);
    put(o, "\xff\xff\x01", 3);
    put(o, lit, 271);
    put(o, "\x01\x00\xff\x00\x00", 5);
    lz4_end(o, run, 545, 1);
    spaa_test_decodes_to(LZ4, o->b, o->n, 545, run, 545);
    every_prefix_fails(LZ4, o->b, o->n);
    expect_fail(LZ4, o->b, o->n, 544, SPAA_E_TOO_LARGE, "more than the 544-byte cap",
                SIZE_MAX);
  }
  free(o);
}

/* A match into the previous block: allowed when blocks are linked, refused when independent. */
static void test_lz4_linked(void **state)
{
  struct bytes *o = fresh();
  int independent;
  (void)state;
  for (independent = 0; independent <= 1; independent++) {
    o->n = 0;
    lz4_header(o, independent, 0, 1, 4, UINT64_MAX, 0);
    lz4_block(o, 0, "\x80" "abcdefgh", 9, 0);
    lz4_block(o, 0, "\x04\x08\x00\x10!", 5, 0); /* 8 bytes from 8 back, then "!" */
    lz4_end(o, "abcdefghabcdefgh!", 17, 1);
    if (!independent)
      spaa_test_decodes_to(LZ4, o->b, o->n, 100, S("abcdefghabcdefgh!"));
    else
      corrupt(LZ4, o->b, o->n, "the match at byte 25 reaches back 8 bytes", 25);
  }
  /* linked: no reaching past the frame's start into an earlier frame */
  o->n = 0;
  lz4_header(o, 0, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 0, "\x80" "abcdefgh", 9, 0);
  lz4_end(o, NULL, 0, 0);
  lz4_header(o, 0, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 0, "\x04\x08\x00\x10!", 5, 0);
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "the match at byte 36 reaches back 8 bytes", 36);
  free(o);
}

static void test_lz4_frames(void **state)
{
  struct bytes *o = fresh();
  (void)state;
  /* two frames, skippable frames before, between and after */
  o->n = 0;
  put_le(o, 0x184D2A50u, 4);
  put_le(o, 3, 4);
  put(o, "xyz", 3);
  lz4_header(o, 1, 0, 1, 7, 5, 0);
  lz4_block(o, 1, "hello", 5, 0);
  lz4_end(o, "hello", 5, 1);
  put_le(o, 0x184D2A5Fu, 4);
  put_le(o, 0, 4);
  lz4_header(o, 0, 1, 0, 6, UINT64_MAX, 0);
  lz4_block(o, 0, "\x50world", 6, 1);
  lz4_end(o, NULL, 0, 0);
  put_le(o, 0x184D2A55u, 4);
  put_le(o, 1, 4);
  put(o, "!", 1);
  spaa_test_decodes_to(LZ4, o->b, o->n, 10, S("helloworld"));
  expect_fail(LZ4, o->b, o->n, 9, SPAA_E_TOO_LARGE, "lz4 body decodes to more than the 9-byte cap",
              SIZE_MAX);
  /* trailing garbage after a frame */
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 1, "hello", 5, 0);
  lz4_end(o, NULL, 0, 0);
  put(o, "junk!", 5);
  corrupt(LZ4, o->b, o->n, "5 unexpected bytes after the end of the frame at byte 20", 20);
  o->n -= 2;
  corrupt(LZ4, o->b, o->n, "3 unexpected bytes after the end of the frame", 20);
  free(o);
}

static void test_lz4_faults(void **state)
{
  struct bytes *o = fresh();
  (void)state;
  corrupt(LZ4, S(""), "it is empty", 0);
  corrupt(LZ4, S("\x04\x22\x4d"), "too short for a frame", 0);
  corrupt(LZ4, S("\x28\xb5\x2f\xfd\x00\x00\x00"), "no frame magic (04 22 4d 18)", 0);
  /* the descriptor: version, reserved bits, block size, header checksum, a dictionary */
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  o->b[4] = 0x80 | 0x20; /* version 2 */
  corrupt(LZ4, o->b, o->n, "unknown frame version 2", 4);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  o->b[4] |= 0x02;
  corrupt(LZ4, o->b, o->n, "reserved bits set", 4);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 3, UINT64_MAX, 0);
  corrupt(LZ4, o->b, o->n, "unknown block maximum size 3", 5);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  o->b[6] ^= 1;
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "the header checksum of the frame at byte 0 does not match", 6);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 1);
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "needs preset dictionary 4660", 6);
  /* blocks: checksums, offsets, sizes */
  o->n = 0;
  lz4_header(o, 1, 1, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 1, "hello", 5, 1);
  o->b[o->n - 1] ^= 0x10;
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "the checksum of the block at byte 7 does not match", 16);
  o->n = 0;
  lz4_header(o, 1, 0, 1, 4, UINT64_MAX, 0);
  lz4_block(o, 1, "hello", 5, 0);
  lz4_end(o, "hellp", 5, 1);
  corrupt(LZ4, o->b, o->n, "the content checksum of the frame at byte 0 does not match", 20);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, 6, 0);
  lz4_block(o, 1, "hello", 5, 0);
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "the frame at byte 0 declares 6 bytes but holds 5", 0);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 0, "\x24" "ab\x00\x00\x00", 6, 0);
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "the match at byte 14 reaches back 0 bytes", 14);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 0, "\x24" "ab\x03\x00\x00", 6, 0);
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "the match at byte 14 reaches back 3 bytes", 14);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  put_le(o, 65537, 4);
  corrupt(LZ4, o->b, o->n, "the 65537-byte block at byte 7 is larger than the frame's 65536",
          7);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 0, "\x50hello", 6, 0);
  corrupt(LZ4, o->b, o->n, "the block header at byte 17 is truncated", 17);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 0, "\x60hello", 6, 0);
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "the 6 literal bytes of the sequence at byte 11 are truncated", 11);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 0, "\x1f" "a\x01\x00\xff", 5, 0); /* a match length that never ends */
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "the match length of the sequence at byte 11 is truncated", 16);
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 0, "\x1f" "a\x01", 3, 0);
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "the match offset at byte 13 is truncated", 13);
  /* a block that decodes past the frame's block size (64 KiB): a run of 65536 + 1 */
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  {
    size_t i, len = 0;
    uint8_t blk[300];
    blk[len++] = 0x1f;
    blk[len++] = 'a';
    blk[len++] = 1;
    blk[len++] = 0;
    for (i = 0; i < 65536 / 255; i++) /* 4 + 15 + 257 * 255 = 65554 */
      blk[len++] = 255;
    blk[len++] = 0;
    lz4_block(o, 0, blk, len, 0);
  }
  lz4_end(o, NULL, 0, 0);
  corrupt(LZ4, o->b, o->n, "the block at byte 7 decodes to more than 65536 bytes", 7);
  /* a stored block over the cap */
  o->n = 0;
  lz4_header(o, 1, 0, 0, 4, UINT64_MAX, 0);
  lz4_block(o, 1, "hello", 5, 0);
  lz4_end(o, NULL, 0, 0);
  expect_fail(LZ4, o->b, o->n, 4, SPAA_E_TOO_LARGE, "lz4 body decodes to more than the 4-byte cap",
              SIZE_MAX);
  /* a skippable frame that is cut */
  o->n = 0;
  put_le(o, 0x184D2A50u, 4);
  put_le(o, 10, 4);
  put(o, "abc", 3);
  corrupt(LZ4, o->b, o->n, "the skippable frame at byte 0 is truncated", 11);
  free(o);
}

/* None of them streams: spaa_dstream_new and spaa_dreader_new say so, spaa_csink_open too. */
static int null_sink(void *ctx, const void *data, size_t len)
{
  (void)ctx;
  (void)data;
  (void)len;
  return 0;
}

static void test_not_streamed(void **state)
{
  static const enum spaa_coding cs[] = {SNAPPY, FRAMED, LZ4};
  size_t i;
  (void)state;
  for (i = 0; i < 3; i++) {
    struct spaa_dstream *d = (struct spaa_dstream *)1;
    struct spaa_dreader *r = (struct spaa_dreader *)1;
    struct spaa_csink *s = (struct spaa_csink *)1;
    struct spaa_err err;
    assert_int_equal(spaa_dstream_new(cs[i], 0, &d, &err), SPAA_E_USAGE);
    assert_null(d);
    assert_non_null(strstr(err.msg, "decoded from one buffer at once"));
    assert_non_null(strstr(err.msg, spaa_coding_name(cs[i])));
    assert_int_equal(spaa_dreader_new(cs[i], "x", 1, 10, &r, &err), SPAA_E_USAGE);
    assert_null(r);
    assert_int_equal(spaa_csink_open(cs[i], 0, null_sink, NULL, &s, &err), SPAA_E_USAGE);
    assert_null(s);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_names),         cmocka_unit_test(test_snappy_literals),
      cmocka_unit_test(test_snappy_copies), cmocka_unit_test(test_snappy_faults),
      cmocka_unit_test(test_framed),        cmocka_unit_test(test_framed_faults),
      cmocka_unit_test(test_lz4_blocks),    cmocka_unit_test(test_lz4_linked),
      cmocka_unit_test(test_lz4_frames),    cmocka_unit_test(test_lz4_faults),
      cmocka_unit_test(test_not_streamed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
