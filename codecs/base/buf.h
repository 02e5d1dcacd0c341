/* A growable byte buffer with a hard cap set at init: growing past the cap fails with
 * SPAA_E_TOO_LARGE instead of eating memory. */
#ifndef SPAA_BUF_H
#define SPAA_BUF_H

#include <stddef.h>
#include <stdint.h>

struct spaa_buf {
  char *p;     /* the bytes, NUL-terminated when len < cap (owned) */
  size_t len;  /* bytes in use */
  size_t cap;  /* bytes allocated */
  size_t max;  /* the cap: len never exceeds it; 0 means SIZE_MAX */
};

/* Start empty with a cap of `max` bytes (0: unlimited). Allocates nothing. */
void spaa_buf_init(struct spaa_buf *b, size_t max);
/* NULL-safe; releases the bytes and leaves an empty buffer with the same cap. */
void spaa_buf_free(struct spaa_buf *b);
/* Make room for `extra` more bytes: 0, SPAA_E_TOO_LARGE past the cap, SPAA_E_NOMEM. */
int spaa_buf_reserve(struct spaa_buf *b, size_t extra);
/* Room for `total` bytes in all (and a NUL) in one allocation of that size, for a length
 * known in advance (a declared Content-Length): no doubling past it. A buffer already that
 * large is left alone. Same returns as reserve. */
int spaa_buf_presize(struct spaa_buf *b, size_t total);
/* Append bytes / a string / a printf-formatted string; same returns as reserve. */
int spaa_buf_add(struct spaa_buf *b, const void *data, size_t len);
int spaa_buf_adds(struct spaa_buf *b, const char *s);
int spaa_buf_addf(struct spaa_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hand the bytes to the caller (who frees them with free()); the buffer becomes empty. An
 * allocation much larger than the bytes is shrunk to them plus a NUL after them. */
char *spaa_buf_steal(struct spaa_buf *b, size_t *len);

/* Bytes [p, p + len) of memory the caller owns and will neither read nor write again before
 * freeing it: the whole pages among them are given back to the OS now (what they hold
 * becomes zeros). For a large input read once, part by part. A range under
 * SPAA_MEM_DISCARD_MIN is left: below it the system call costs more than the pages are worth
 * (a madvise of 64 KiB takes microseconds; with a floor of 1 MiB, the samples of an OTLP
 * Profile under 1 MiB stayed resident for the rest of their request). */
#define SPAA_MEM_DISCARD_MIN ((size_t)64 << 10)
void spaa_mem_discard(const void *p, size_t len);

/* A destination for streamed output: returns 0 or a negative SPAA_E_* code. */
typedef int (*spaa_sink_cb)(void *ctx, const void *data, size_t len);
/* A sink that appends to a struct spaa_buf passed as ctx. */
int spaa_buf_sink(void *ctx, const void *data, size_t len);

#endif
