/* gRPC's wire rules that need no socket: the 5-byte message prefix, grpc-timeout values,
 * grpc-encoding names, percent-encoded grpc-message values, status codes, and the two
 * fields of a google.rpc.Status. Pure: bytes in, values out (fuzzed by tests/fuzz/). */
#ifndef SPAA_SERVER_GRPC_WIRE_H
#define SPAA_SERVER_GRPC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* The status codes of gRPC (the google.rpc.Code numbers): XX(NAME, number). */
#define SPAA_GRPC_STATUS_MAP(XX)                                                             \
  XX(OK, 0)                                                                                  \
  XX(CANCELLED, 1)                                                                           \
  XX(UNKNOWN, 2)                                                                             \
  XX(INVALID_ARGUMENT, 3)                                                                    \
  XX(DEADLINE_EXCEEDED, 4)                                                                   \
  XX(NOT_FOUND, 5)                                                                           \
  XX(ALREADY_EXISTS, 6)                                                                      \
  XX(PERMISSION_DENIED, 7)                                                                   \
  XX(RESOURCE_EXHAUSTED, 8)                                                                  \
  XX(FAILED_PRECONDITION, 9)                                                                 \
  XX(ABORTED, 10)                                                                            \
  XX(OUT_OF_RANGE, 11)                                                                       \
  XX(UNIMPLEMENTED, 12)                                                                      \
  XX(INTERNAL, 13)                                                                           \
  XX(UNAVAILABLE, 14)                                                                        \
  XX(DATA_LOSS, 15)                                                                          \
  XX(UNAUTHENTICATED, 16)

#define SPAA__GRPC_ENUM(name, n) SPAA_GRPC_##name = n,
enum spaa_grpc_status { SPAA_GRPC_STATUS_MAP(SPAA__GRPC_ENUM) };
#undef SPAA__GRPC_ENUM

/* "OK", "INVALID_ARGUMENT"...; "UNKNOWN" for a number outside the list. */
const char *spaa_grpc_status_name(int code);

#define SPAA_GRPC_PREFIX 5       /* compressed flag (1 byte) + length (4 bytes, big endian) */
#define SPAA_GRPC_MORE 1         /* spaa_grpc_frame: a valid start, more bytes to come */

/* One length-prefixed message of a unary call. */
struct spaa_grpc_msg {
  int compressed;            /* the flag byte: 1 when grpc-encoding applies to it */
  uint32_t len;              /* the length the prefix declares */
  const uint8_t *data;       /* the message bytes (borrowed from the buffer), when complete */
};

/* Read the message at the start of `buf` (len bytes so far) of a unary call, whose body is
 * exactly one message. Returns 0 when buf holds the whole message and nothing after it;
 * SPAA_GRPC_MORE when the bytes so far are a valid beginning (fewer than 5, or fewer than
 * the prefix declares; m->len is set once the prefix is complete); or, with err saying
 * where: SPAA_E_TOO_LARGE (the declared length is over max_msg, known from the prefix
 * alone, and checked before the flag byte as grpc-go checks it), SPAA_E_BAD_REQUEST (a flag
 * byte other than 0 or 1; bytes after the message: a unary call carries one). Call it again
 * with more bytes after SPAA_GRPC_MORE. The caller answers SPAA_E_BAD_REQUEST, and a body
 * that ends while SPAA_GRPC_MORE, as a broken stream, not as a bad request message. */
int spaa_grpc_frame(const uint8_t *buf, size_t len, size_t max_msg, struct spaa_grpc_msg *m,
                    struct spaa_err *err);

/* The content-subtype of a content-type value, read as grpc-go reads it: a gRPC request's
 * value is "application/grpc" (compared byte for byte), alone or followed by '+' or ';' and
 * the subtype, which is what follows (possibly ""). Returns 1 with *sub set (pointing into
 * ct), or 0 for anything else, NULL included (not a gRPC request: HTTP 415). */
int spaa_grpc_content_subtype(const char *ct, const char **sub);

/* Write the prefix of an uncompressed message of `len` bytes into out[5]. */
void spaa_grpc_prefix(uint8_t out[SPAA_GRPC_PREFIX], uint32_t len);

/* A grpc-timeout value (1 to 8 ASCII digits, then H, M, S, m, u or n) in nanoseconds
 * (saturating at INT64_MAX). 0, or -1 for anything else. */
int spaa_grpc_timeout(const char *v, int64_t *ns);

/* The encodings a message may carry (grpc-encoding). */
enum spaa_grpc_coding {
  SPAA_GRPC_IDENTITY = 0,
  SPAA_GRPC_GZIP,
  SPAA_GRPC_DEFLATE,
  SPAA_GRPC_ZSTD,
  SPAA_GRPC_SNAPPY, /* the Collector's gRPC exporter with `compression: snappy`: a framed
                      snappy stream (a bare block is read too, as over HTTP) */
};
/* The coding named by a grpc-encoding value (NULL or "" = identity; case-sensitive as the
 * protocol says); -1 when it is none of those. */
int spaa_grpc_coding(const char *v);
/* What this server accepts, for grpc-accept-encoding. */
#define SPAA_GRPC_ACCEPT_ENCODING "identity,gzip,deflate,zstd,snappy"

/* Percent-encode `msg` for grpc-message (bytes outside 0x20..0x7e and '%' as %XX) into out
 * (size n, always NUL-terminated; a %XX is never cut). Returns the length written. */
size_t spaa_grpc_pct_encode(char *out, size_t n, const char *msg);

/* Read code (field 1) and message (field 2) of a google.rpc.Status; other fields are skipped.
 * msg (size n) is NUL-terminated, cut at n - 1 bytes. 0, or -1 when buf is not a well-formed
 * protobuf message (*code is 0 and msg "" when a field is absent). */
int spaa_grpc_status_read(const uint8_t *buf, size_t len, int32_t *code, char *msg, size_t n);

#endif
