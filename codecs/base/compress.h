/* Compression for every layer: gzip, deflate, zstd and brotli decoded under a cap on the
 * output (so that a small bomb cannot grow into gigabytes), one buffer at once or as a
 * stream; snappy and lz4 (what OpenTelemetry Collector exporters may also send) one buffer at
 * once; and a compressing sink that streams gzip or zstd into any spaa_sink_cb. Pure: bytes
 * in, bytes out, no I/O of its own. */
#ifndef SPAA_BASE_COMPRESS_H
#define SPAA_BASE_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

enum spaa_coding {
  SPAA_CODING_GZIP,    /* RFC 1952: one member, or several concatenated (`cat a.gz b.gz`) */
  SPAA_CODING_DEFLATE, /* RFC 1950 (zlib wrapper) in; raw RFC 1951 accepted too */
  SPAA_CODING_ZSTD,    /* RFC 8878: one frame or several */
  SPAA_CODING_BR,      /* RFC 7932 (brotli): one stream; decoding only (no spaa_csink) */
  /* decoding only, and only by spaa_decompress (no spaa_dstream, spaa_dreader, spaa_csink): */
  SPAA_CODING_SNAPPY,        /* a snappy block, or the framing format when the input starts
                              * with its stream identifier chunk (as a Collector reads it) */
  SPAA_CODING_SNAPPY_FRAMED, /* the snappy framing format, every chunk's CRC-32C checked */
  SPAA_CODING_LZ4            /* the LZ4 frame format: one frame or several, skippable frames
                              * skipped, no dictionaries */
};

/* "gzip", "deflate", "zstd", "br", "snappy", "x-snappy-framed" or "lz4" (the Content-Encoding
 * tokens). */
const char *spaa_coding_name(enum spaa_coding c);
/* 1 when `buf` starts with the gzip magic (1f 8b) / the zstd frame magic (28 b5 2f fd). */
int spaa_is_gzip(const void *buf, size_t len);
int spaa_is_zstd(const void *buf, size_t len);
/* The decoded size a gzip input's trailer gives (ISIZE: the size mod 2^32 of its last
 * member, a hint only), or 0 when buf is not gzip or too short to have a trailer. */
size_t spaa_gzip_size_hint(const void *buf, size_t len);

/* Where the decoders keep their state and windows: a few input bytes can make a br decoder
 * take 16 MiB of ring buffer and a zstd one its whole window. malloc and free unless set
 * (NULL: back to them); set once, before any decoder runs. The server charges them to the
 * memory budget of the request being decoded on the thread. */
typedef void *(*spaa_alloc_fn)(void *opaque, size_t n);
typedef void (*spaa_release_fn)(void *opaque, void *p);
void spaa_decoder_alloc_set(spaa_alloc_fn alloc, spaa_release_fn release);

/* ---- decompression, one buffer --------------------------------------------------------- */

/* Decode `len` bytes of `in` into `out`, which must be empty (spaa_buf_init'd); its cap is
 * replaced by `max_out`. On success out holds the decoded bytes, NUL-terminated, owned by
 * the caller (spaa_buf_free or spaa_buf_steal). Errors, err naming the coding:
 *   SPAA_E_TOO_LARGE        the output would pass `max_out` bytes ("gzip body decodes to
 *                           more than the N-byte cap"), a zstd frame asks for a window
 *                           larger than that, or a snappy block or lz4 frame declares a
 *                           larger size (refused before anything is allocated);
 *   SPAA_E_BAD_COMPRESSION  corrupt or truncated data, an empty zstd, snappy or lz4 input, a
 *                           checksum that does not match (snappy framed, lz4), an lz4 frame
 *                           that needs a dictionary, or bytes after the end that are not
 *                           another gzip member, zstd or lz4 frame, or snappy chunk (deflate,
 *                           brotli, a snappy block: any byte after the end; err's offset is
 *                           the input byte at fault);
 *   SPAA_E_NOMEM.
 * On error `out` is emptied. */
int spaa_decompress(enum spaa_coding c, const void *in, size_t len, size_t max_out,
                    struct spaa_buf *out, struct spaa_err *err);

/* ---- decompression, streaming ---------------------------------------------------------- */

/* A decoder fed input in pieces; the caller owns both buffers and bounds its own output. */
struct spaa_dstream;

/* Start a decoder for `c`. `max_window` (zstd) refuses frames that ask for a larger window
 * (0: zstd's default limit, 128 MiB); brotli's window is at most 16 MiB (RFC 7932, no large
 * windows) whatever it says. *out is owned by the caller: spaa_dstream_free.
 * 0, SPAA_E_NOMEM, or SPAA_E_USAGE for snappy and lz4 (decoded by spaa_decompress only). */
int spaa_dstream_new(enum spaa_coding c, size_t max_window, struct spaa_dstream **out,
                     struct spaa_err *err);
/* NULL-safe. */
void spaa_dstream_free(struct spaa_dstream *d);

/* Decode from in[0..in_len) into out[0..out_cap): *in_used and *out_made say how much was
 * consumed and produced (deflate consumes nothing until the first step sees two bytes, which
 * tell a zlib header from raw deflate). Returns 1 when a gzip member, deflate stream, zstd
 * frame or brotli stream just ended with all its output given (a further call starts the next one); 0 when
 * it needs more input or more room (a step that makes no progress once all the input was
 * given means the input has ended: call finish); or a negative code, SPAA_E_BAD_COMPRESSION,
 * SPAA_E_TOO_LARGE (zstd window) or SPAA_E_NOMEM, with err's offset the input byte at fault. */
int spaa_dstream_step(struct spaa_dstream *d, const void *in, size_t in_len, size_t *in_used,
                      void *out, size_t out_cap, size_t *out_made, struct spaa_err *err);

/* At the end of the input: 0 when at least one member or frame ended and no other began,
 * else SPAA_E_BAD_COMPRESSION ("corrupt zstd input: the stream is truncated after N bytes";
 * an empty input counts as truncated). */
int spaa_dstream_finish(struct spaa_dstream *d, struct spaa_err *err);

/* ---- decompression, pulled from memory -------------------------------------------------- */

/* A decoder over an encoded input held in memory, read a piece at a time into the caller's
 * buffer, with the checks of spaa_decompress: for a reader whose decoded bytes need not be
 * held all at once (a pprof read field by field, twice). */
struct spaa_dreader;

/* Start reading `len` bytes of `in` (borrowed: they must outlive the reader) encoded with
 * `c`, refusing more than `max_out` decoded bytes. 0 or an error as spaa_decompress
 * (SPAA_E_USAGE for snappy and lz4: spaa_decompress only). */
int spaa_dreader_new(enum spaa_coding c, const void *in, size_t len, size_t max_out,
                     struct spaa_dreader **out, struct spaa_err *err);
/* Decode up to `cap` bytes into out: 0 with *made set (less than cap only at the end of the
 * input; 0 once everything was given), or an error as spaa_decompress (the cap passed, the
 * data corrupt, truncated or followed by garbage). */
int spaa_dreader_read(struct spaa_dreader *r, void *out, size_t cap, size_t *made,
                      struct spaa_err *err);
/* NULL-safe. */
void spaa_dreader_free(struct spaa_dreader *r);

/* ---- compression ----------------------------------------------------------------------- */

/* A sink that compresses what is written to it and passes the compressed bytes on to a
 * downstream sink, in pieces of at most 64 KiB: memory stays constant whatever the size. */
struct spaa_csink;

/* Start compressing with `c` (gzip, deflate = zlib-wrapped, or zstd) at `level` (zstd: its
 * levels, 1 to 22 and the negative fast ones, 0 = its default; gzip and deflate: 0 to 9,
 * -1 = zlib's default) into `down(down_ctx, ...)`. *out is owned by the caller
 * (spaa_csink_free). 0, SPAA_E_NOMEM, or SPAA_E_USAGE for a bad level or a coding with no
 * encoder (br, snappy, lz4). */
int spaa_csink_open(enum spaa_coding c, int level, spaa_sink_cb down, void *down_ctx,
                    struct spaa_csink **out, struct spaa_err *err);
/* A spaa_sink_cb: `ctx` is the struct spaa_csink. 0, the downstream sink's error, or
 * SPAA_E_INTERNAL when the compressor fails. */
int spaa_csink_write(void *ctx, const void *data, size_t len);
/* End the stream (trailer, last frame) and pass the rest on. 0, or the error with err set.
 * Nothing may be written after it. */
int spaa_csink_finish(struct spaa_csink *s, struct spaa_err *err);
/* NULL-safe; frees without finishing. */
void spaa_csink_free(struct spaa_csink *s);

/* Compress `len` bytes of `in` at once as one zstd frame (its content size recorded) at
 * `level`, appending to `out` (whose cap applies). 0, SPAA_E_TOO_LARGE (past out's cap or
 * zstd's input limit), SPAA_E_NOMEM, SPAA_E_INTERNAL; err set. */
int spaa_zstd_compress(const void *in, size_t len, int level, struct spaa_buf *out,
                       struct spaa_err *err);

#endif
