/* Request body Content-Encoding: gzip, x-gzip, deflate (zlib or raw), zstd, br (brotli),
 * snappy (block, or framed as peeked), x-snappy-framed and lz4 (frame format), decoded into a
 * buffer under a cap on the decoded size, so that a small bomb cannot grow into gigabytes.
 * Pure: bytes in, bytes out, no HTTP. */
#ifndef SPAA_SERVER_DECODE_H
#define SPAA_SERVER_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/limits.h"

/* Check a Content-Encoding header value (NULL = absent): a comma-separated list of
 * gzip, x-gzip, deflate (also as "zlib"), zstd, br, snappy, x-snappy-framed, lz4 (any case);
 * identity, "" and "utf-8" mean no coding.
 * Returns 0 when nothing needs decoding, 1 when the body must go through spaa_decode(), or
 * SPAA_E_MEDIA_TYPE (err names the coding) for an unknown or over-long list. */
int spaa_decode_needed(const char *content_encoding, struct spaa_err *err);

/* Decode `len` bytes of `in` (codings undone last to first) into `out`, which must be empty;
 * its previous cap is replaced by `max_out`. On success out holds the decoded bytes
 * (NUL-terminated, owned by the caller: spaa_buf_free).
 * Returns 0; SPAA_E_TOO_LARGE when the decoded size would pass `max_out` (or a zstd frame
 * asks for a window larger than that, or a snappy block or lz4 frame declares a larger size);
 * SPAA_E_BAD_COMPRESSION for a corrupt or truncated stream or a checksum that does not match
 * (err names the coding and the input offset); SPAA_E_MEDIA_TYPE for an unknown coding;
 * SPAA_E_NOMEM. On error `out` is emptied. */
int spaa_decode(const char *content_encoding, const uint8_t *in, size_t len, size_t max_out,
                struct spaa_buf *out, struct spaa_err *err);

/* The same, the decoded bytes handed to sink a piece at a time instead of held, for a list
 * of one coding whose decoder streams (gzip, x-gzip, deflate, zlib, zstd, br). Returns
 * SPAA_E_USAGE, having decoded nothing, for any other list (use spaa_decode); otherwise what
 * spaa_decode would, or the sink's code when it refuses a piece. */
int spaa_decode_to(const char *content_encoding, const uint8_t *in, size_t len, size_t max_out,
                   spaa_sink_cb sink, void *ctx, struct spaa_err *err);

#endif
