/* Capped growable buffer (see buf.h). */
#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/err.h"

void spaa_buf_init(struct spaa_buf *b, size_t max)
{
  b->p = NULL;
  b->len = 0;
  b->cap = 0;
  b->max = max ? max : SIZE_MAX;
}

void spaa_buf_free(struct spaa_buf *b)
{
  if (!b)
    return;
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

int spaa_buf_reserve(struct spaa_buf *b, size_t extra)
{
  size_t need, nc;
  char *np;
  if (extra > b->max - b->len)
    return SPAA_E_TOO_LARGE;
  need = b->len + extra + 1; /* room for a terminating NUL */
  if (need <= b->cap)
    return 0;
  nc = b->cap ? b->cap : 256;
  while (nc < need)
    nc = nc > SIZE_MAX / 2 ? need : nc * 2;
  if (b->max != SIZE_MAX && nc > b->max + 1)
    nc = b->max + 1;
  np = realloc(b->p, nc);
  if (!np)
    return SPAA_E_NOMEM;
  b->p = np;
  b->cap = nc;
  return 0;
}

int spaa_buf_presize(struct spaa_buf *b, size_t total)
{
  char *np;
  if (total > b->max)
    return SPAA_E_TOO_LARGE;
  if (total < b->len || total + 1 <= b->cap)
    return 0;
  if (!(np = realloc(b->p, total + 1)))
    return SPAA_E_NOMEM;
  b->p = np;
  b->cap = total + 1;
  return 0;
}

int spaa_buf_add(struct spaa_buf *b, const void *data, size_t len)
{
  int rc = spaa_buf_reserve(b, len);
  if (rc)
    return rc;
  if (len)
    memcpy(b->p + b->len, data, len);
  b->len += len;
  b->p[b->len] = 0;
  return 0;
}

int spaa_buf_adds(struct spaa_buf *b, const char *s) { return spaa_buf_add(b, s, strlen(s)); }

int spaa_buf_addf(struct spaa_buf *b, const char *fmt, ...)
{
  va_list ap;
  int n, rc;
  char small[256];
  va_start(ap, fmt);
  n = vsnprintf(small, sizeof(small), fmt, ap);
  va_end(ap);
  if (n < 0)
    return SPAA_E_INTERNAL;
  if ((size_t)n < sizeof(small))
    return spaa_buf_add(b, small, (size_t)n);
  rc = spaa_buf_reserve(b, (size_t)n);
  if (rc)
    return rc;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

char *spaa_buf_steal(struct spaa_buf *b, size_t *len)
{
  char *r = b->p;
  if (len)
    *len = b->len;
  if (r && b->cap > b->len + 64) { /* many small texts kept: no slack kept with each */
    char *s;
    r[b->len] = 0;
    if ((s = realloc(r, b->len + 1)))
      r = s;
  }
  b->p = NULL;
  b->len = b->cap = 0;
  return r;
}

int spaa_buf_sink(void *ctx, const void *data, size_t len)
{
  return spaa_buf_add(ctx, data, len);
}

void spaa_mem_discard(const void *p, size_t len)
{
  static size_t page;
  uintptr_t from, to;
  if (len < SPAA_MEM_DISCARD_MIN || !p)
    return;
  if (!page) {
    long ps = sysconf(_SC_PAGESIZE);
    page = ps > 0 ? (size_t)ps : 4096;
  }
  /* whole pages only: the allocator's own words before and after the range stay untouched */
  from = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
  to = ((uintptr_t)p + len) & ~(uintptr_t)(page - 1);
  if (to > from)
    (void)madvise((void *)from, to - from, MADV_DONTNEED);
}
