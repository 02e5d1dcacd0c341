/* Snappy (block and framing formats) and LZ4 (frame format) decoded from one buffer into
 * one buffer under a cap on the output: the codings an OpenTelemetry Collector exporter can
 * send besides gzip, zlib and zstd. Internal to base/compress (spaa_decompress calls them). */
#ifndef SPAA_BASE_SNAPPY_LZ4_H
#define SPAA_BASE_SNAPPY_LZ4_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

/* The snappy framing format's stream identifier chunk: what a framed stream starts with. */
#define SPAA__SNAPPY_STREAM_ID "\xff\x06\x00\x00sNaPpY"
#define SPAA__SNAPPY_STREAM_ID_LEN 10

/* Each decodes `len` bytes of `in` and appends the decoded bytes to `out` (empty, its bytes
 * owned by the caller), refusing more than `max_out` of them; `name` is the coding as the
 * messages name it ("snappy", "x-snappy-framed", "lz4"). Returns 0 (out NUL-terminated, its
 * bytes allocated even when there are none); SPAA_E_TOO_LARGE ("<name> body decodes to more
 * than the N-byte cap"; a snappy block's declared length is checked before anything is
 * allocated); SPAA_E_BAD_COMPRESSION ("corrupt <name> body: ...", err's offset the input byte
 * at fault) for corrupt or truncated data, a checksum that does not match, a frame that needs
 * an lz4 dictionary or bytes after the end; SPAA_E_NOMEM. On error out may hold a partial
 * result: the caller frees it. */

/* One snappy block: a varint of the decoded length, then literals and copies. */
int spaa__snappy_block_decode(const uint8_t *in, size_t len, size_t max_out, const char *name,
                              struct spaa_buf *out, struct spaa_err *err);
/* A snappy framed stream: a stream identifier chunk, then data, padding and skippable chunks,
 * every data chunk's masked CRC-32C checked. */
int spaa__snappy_framed_decode(const uint8_t *in, size_t len, size_t max_out, const char *name,
                               struct spaa_buf *out, struct spaa_err *err);
/* One LZ4 frame or several, skippable frames between them skipped; every checksum the frames
 * carry (header, blocks, content) is checked, as is a declared content size. */
int spaa__lz4_frame_decode(const uint8_t *in, size_t len, size_t max_out, const char *name,
                           struct spaa_buf *out, struct spaa_err *err);

#endif
