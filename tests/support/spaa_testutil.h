/* A read callback for the streaming SPAA readers that hands out input in small pieces, so
 * that tests can feed the same bytes whole and split at any size. Header-only. */
#ifndef SPAA_TESTS_SPAA_TESTUTIL_H
#define SPAA_TESTS_SPAA_TESTUTIL_H

#include <string.h>
#include <sys/types.h>

/* The input of spaa_test_read: `len` bytes at `p`, `pos` of them handed out so far, at most
 * `step` per call. */
struct spaa_test_src {
  const char *p;
  size_t len, pos, step;
};

/* A read callback over memory (ctx is a struct spaa_test_src) that returns at most `step`
 * bytes per call, and 0 at the end. */
static inline ssize_t spaa_test_read(void *ctx, void *buf, size_t cap)
{
  struct spaa_test_src *s = ctx;
  size_t n = s->len - s->pos;
  if (n > cap)
    n = cap;
  if (n > s->step)
    n = s->step;
  memcpy(buf, s->p + s->pos, n);
  s->pos += n;
  return (ssize_t)n;
}

#endif
