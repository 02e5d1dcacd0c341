/* libFuzzer target: base/compress decoding. The first byte picks the coding (gzip, deflate,
 * zstd, br, snappy, x-snappy-framed, lz4); the rest is decoded at once under a 1 MiB cap, and
 * again through the streaming decoder in small pieces: when the one-buffer decode succeeds,
 * the stream must give the same bytes. snappy and lz4 do not stream: a success must come
 * again under a cap of exactly its size and fail one byte under it, and "snappy" must agree
 * with "x-snappy-framed" on a body that starts with the stream identifier.
 * Seeds: tests/fuzz/corpus/decompress/. Errors returned are expected; any crash, leak,
 * sanitizer report or disagreement is a bug. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"

#define CAP (1u << 20)
#define CODINGS 7 /* the enum spaa_coding values */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decode in pieces of 7 input bytes into 61-byte pieces of output, up to CAP + 1 bytes. */
static int stream(enum spaa_coding c, const uint8_t *in, size_t len, struct spaa_buf *got)
{
  struct spaa_dstream *d;
  struct spaa_err err;
  size_t pos = 0, want = 7;
  int rc = spaa_dstream_new(c, CAP, &d, &err);
  while (rc >= 0 && got->len <= CAP) {
    size_t give = len - pos < want ? len - pos : want, used, made;
    char piece[61];
    rc = spaa_dstream_step(d, in + pos, give, &used, piece, sizeof(piece), &made, &err);
    if (rc < 0 || spaa_buf_add(got, piece, made))
      break;
    pos += used;
    if (rc == 1 && pos < len && (c == SPAA_CODING_DEFLATE || c == SPAA_CODING_BR))
      rc = -1; /* the one-buffer decoder refuses bytes after a deflate or brotli stream */
    else if (!used && !made && give == len - pos)
      rc = spaa_dstream_finish(d, &err) ? -1 : 2;
    want = used || made ? 7 : want + 7;
    if (rc == 2)
      break;
  }
  spaa_dstream_free(d);
  return rc == 2 ? 0 : -1;
}

/* snappy, lz4: decoded again under caps of exactly `once`'s size and one byte less. */
static void recap(enum spaa_coding c, const uint8_t *in, size_t len, const struct spaa_buf *once)
{
  struct spaa_buf again;
  struct spaa_err err;
  spaa_buf_init(&again, 0);
  if (spaa_decompress(c, in, len, once->len, &again, &err) != 0 || again.len != once->len ||
      memcmp(again.p, once->p, once->len) != 0)
    abort();
  spaa_buf_free(&again);
  if (once->len && spaa_decompress(c, in, len, once->len - 1, &again, &err) != SPAA_E_TOO_LARGE)
    abort();
  if (c == SPAA_CODING_SNAPPY && len >= 10 && memcmp(in, "\xff\x06\x00\x00sNaPpY", 10) == 0 &&
      (spaa_decompress(SPAA_CODING_SNAPPY_FRAMED, in, len, CAP, &again, &err) != 0 ||
       again.len != once->len || memcmp(again.p, once->p, once->len) != 0))
    abort();
  spaa_buf_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spaa_buf once, got;
  struct spaa_err err;
  enum spaa_coding c;
  int rc;
  if (size < 1)
    return 0;
  c = (enum spaa_coding)(data[0] % CODINGS);
  spaa_buf_init(&once, 0);
  spaa_buf_init(&got, 0);
  rc = spaa_decompress(c, data + 1, size - 1, CAP, &once, &err);
  if (rc == 0 && once.len > CAP)
    abort();
  if (rc == 0 && c > SPAA_CODING_BR)
    recap(c, data + 1, size - 1, &once);
  else if (rc == 0 && (stream(c, data + 1, size - 1, &got) != 0 || got.len != once.len ||
                       memcmp(got.p ? got.p : "", once.p, once.len) != 0))
    abort();
  spaa_buf_free(&once);
  spaa_buf_free(&got);
  return 0;
}
