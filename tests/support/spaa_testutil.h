/* Helpers shared by the SPAA codec tests: the path of tests/data, reading a file whole, and
 * a read callback that hands out input in small pieces. Header-only, static functions. */
#ifndef SPAA_TESTS_SPAA_TESTUTIL_H
#define SPAA_TESTS_SPAA_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* tests/data/<name>, found from this source file's own path. */
static inline void spaa_test_data_path(char *out, size_t cap, const char *name)
{
  const char *f = __FILE__, *t = strstr(f, "/tests/");
  if (t)
    snprintf(out, cap, "%.*s/tests/data/%s", (int)(t - f), f, name);
  else
    snprintf(out, cap, "tests/data/%s", name);
}

/* The whole file, malloc'd and NUL-terminated; NULL when it cannot be read. */
static inline char *spaa_test_slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  char *p = NULL;
  long n;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (p = malloc((size_t)n + 1)) && fread(p, 1, (size_t)n, f) == (size_t)n) {
    p[n] = 0;
    *len = (size_t)n;
  } else {
    free(p);
    p = NULL;
  }
  fclose(f);
  return p;
}

/* A read callback over memory that returns at most `step` bytes per call. */
struct spaa_test_src {
  const char *p;
  size_t len, pos, step;
};

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
