/* The one list of error codes of spaa-relay: enum, name, HTTP status and default message.
 * Every layer returns 0 or a negative SPAA_E_* code and fills a caller-owned struct spaa_err. */
#ifndef SPAA_ERR_H
#define SPAA_ERR_H

#include <stddef.h>

/* XX(NAME, http_status, "default message") */
#define SPAA_ERR_MAP(XX)                                                        \
  XX(NOMEM, 503, "out of memory")                                               \
  XX(IO, 500, "I/O error")                                                      \
  XX(INTERNAL, 500, "internal error")                                           \
  XX(USAGE, 400, "bad usage")                                                   \
  XX(BAD_JSON, 400, "malformed JSON")                                           \
  XX(BAD_PROTOBUF, 400, "malformed protobuf")                                   \
  XX(BAD_ENVELOPE, 400, "malformed envelope")                                   \
  XX(BAD_REQUEST, 400, "bad request")                                           \
  XX(BAD_COMPRESSION, 400, "corrupt compressed body")                           \
  XX(INVALID, 422, "invalid profile")                                           \
  XX(UNSUPPORTED, 400, "unsupported format or version")                         \
  XX(UNAUTHORIZED, 401, "missing or invalid credentials")                       \
  XX(FORBIDDEN, 403, "credentials not valid for this resource")                 \
  XX(NOT_FOUND, 404, "not found")                                               \
  XX(METHOD, 405, "method not allowed")                                         \
  XX(TOO_LARGE, 413, "payload too large")                                       \
  XX(OVER_BUDGET, 422, "the answer needs more memory than one request may hold")  \
  XX(MEDIA_TYPE, 415, "unsupported media type or encoding")                     \
  XX(BUSY, 503, "store queue is full, retry later")                             \
  XX(STORE, 500, "storage error")                                               \
  XX(SHUTDOWN, 503, "server is shutting down")                                 \
  XX(UNAVAILABLE, 503, "not ready")

enum spaa_errcode {
  SPAA_OK = 0,
#define SPAA__ERR_ENUM(name, status, msg) SPAA_E_##name,
  SPAA__ERR_FIRST = -1000,
  SPAA_ERR_MAP(SPAA__ERR_ENUM)
#undef SPAA__ERR_ENUM
  SPAA__ERR_LAST
};

/* Caller-owned, fixed size; never allocated. `line` is 1-based where the input is
 * line-oriented (0 when not applicable); `offset` is the byte offset of the fault. */
struct spaa_err {
  int code;       /* SPAA_E_* or 0 */
  size_t line;    /* 1-based line of the fault, 0 if none */
  size_t offset;  /* byte offset of the fault in the input */
  char msg[256];  /* one line, no newline: what was wrong and where */
};

/* The short machine name of a code ("bad_json"), never NULL. */
const char *spaa_err_name(int code);
/* The HTTP status a code maps to (500 for unknown codes). */
int spaa_err_status(int code);
/* The default message of a code, never NULL. */
const char *spaa_err_default(int code);

/* Fill `err` (if not NULL) with code, line, offset and a printf-formatted message;
 * returns `code` so that callers can `return spaa_err_set(...)`. */
int spaa_err_set(struct spaa_err *err, int code, size_t line, size_t offset,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Reset `err` to "no error". NULL-safe. */
void spaa_err_clear(struct spaa_err *err);

#endif
