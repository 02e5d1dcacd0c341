/* Chunked line splitting over plain or zstd input (see spaa_lines.h). */
#include "spaa/spaa_lines.h"

#include <stdlib.h>
#include <string.h>

#include "base/limits.h"

#define IN_CHUNK (256u * 1024) /* compressed bytes read at a time */

void spaa_lines_init(struct spaa_lines *l, spaa_read_cb rd, void *rd_ctx)
{
  memset(l, 0, sizeof(*l));
  l->rd = rd;
  l->rd_ctx = rd_ctx;
  l->max_line = SPAA_MAX_LINE;
}

void spaa_lines_free(struct spaa_lines *l)
{
  if (!l)
    return;
  spaa_dstream_free(l->z);
  free(l->in);
  free(l->win);
  l->z = NULL;
  l->in = l->win = NULL;
}

ssize_t spaa_mem_read(void *ctx, void *buf, size_t cap)
{
  struct spaa_mem_src *m = ctx;
  size_t n = m->len - m->pos;
  if (n > cap)
    n = cap;
  if (n)
    memcpy(buf, m->p + m->pos, n);
  m->pos += n;
  return (ssize_t)n;
}

/* Read into dst (cap bytes) until `want` bytes or the end; returns bytes read or -1. */
static ssize_t read_some(struct spaa_lines *l, char *dst, size_t cap, size_t want)
{
  size_t got = 0;
  while (got < want) {
    ssize_t n = l->rd(l->rd_ctx, dst + got, cap - got);
    if (n < 0)
      return -1;
    if (n == 0) {
      l->in_eof = 1;
      break;
    }
    got += (size_t)n;
    l->raw_bytes += (size_t)n;
  }
  return (ssize_t)got;
}

/* First call: allocate, read the first bytes and decide between plain and zstd. */
static int start(struct spaa_lines *l, struct spaa_err *err)
{
  ssize_t n;
  l->started = 1;
  l->win_cap = SPAA_LINES_CHUNK;
  if (l->win_cap > l->max_line + 1)
    l->win_cap = l->max_line + 1;
  if (l->win_cap < 64)
    l->win_cap = 64;
  if (!(l->win = malloc(l->win_cap)))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  /* the first 4 bytes tell the format; read them into the window */
  n = read_some(l, l->win, 4, 4);
  if (n < 0)
    return spaa_err_set(err, SPAA_E_IO, 0, 0, "read failed");
  if (spaa_is_zstd(l->win, (size_t)n)) {
    int rc;
    if (!(l->in = malloc(IN_CHUNK)))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    if ((rc = spaa_dstream_new(SPAA_CODING_ZSTD, 0, &l->z, err)))
      return rc;
    memcpy(l->in, l->win, (size_t)n);
    l->in_len = (size_t)n;
    l->in_pos = 0;
  } else {
    l->end = (size_t)n;
  }
  return 0;
}

/* Append more decoded bytes at win[end] (the caller leaves room). Returns the number of bytes
 * added, 0 at the true end of the input, or a negative SPAA_E_*. */
static ssize_t fill(struct spaa_lines *l, struct spaa_err *err)
{
  if (!l->z) {
    ssize_t n;
    if (l->in_eof)
      return 0;
    n = l->rd(l->rd_ctx, l->win + l->end, l->win_cap - l->end);
    if (n < 0)
      return spaa_err_set(err, SPAA_E_IO, l->lineno + 1, l->bytes, "read failed");
    if (n == 0)
      l->in_eof = 1;
    l->raw_bytes += (size_t)n;
    l->end += (size_t)n;
    return n;
  }
  for (;;) {
    size_t used, made;
    int rc;
    if (l->in_pos == l->in_len && !l->in_eof) {
      ssize_t n = read_some(l, l->in, IN_CHUNK, 1);
      if (n < 0)
        return spaa_err_set(err, SPAA_E_IO, l->lineno + 1, l->bytes, "read failed");
      l->in_len = (size_t)n;
      l->in_pos = 0;
    }
    /* with no input left this only flushes what the decoder still holds */
    rc = spaa_dstream_step(l->z, l->in + l->in_pos, l->in_len - l->in_pos, &used,
                           l->win + l->end, l->win_cap - l->end, &made, err);
    l->in_pos += used;
    l->end += made;
    if (rc >= 0 && made)
      return (ssize_t)made;
    /* at the end of the input: a frame left open means the input was cut short */
    if (rc >= 0 && !used && l->in_pos == l->in_len && l->in_eof &&
        (rc = spaa_dstream_finish(l->z, err)) == 0)
      return 0;
    if (rc < 0) {
      err->line = l->lineno + 1; /* where in the decoded text */
      err->offset = l->bytes;
      return rc;
    }
  }
}

int spaa_lines_next(struct spaa_lines *l, const char **line, size_t *len, struct spaa_err *err)
{
  int rc;
  if (!l->started && (rc = start(l, err)))
    return rc;
  for (;;) {
    const char *nl;
    ssize_t n;
    nl = l->end > l->scan ? memchr(l->win + l->scan, '\n', l->end - l->scan) : NULL;
    if (nl || (l->done && l->beg < l->end)) {
      size_t at = nl ? (size_t)(nl - l->win) : l->end;
      *line = l->win + l->beg;
      *len = at - l->beg;
      if (*len > l->max_line)
        return spaa_err_set(err, SPAA_E_TOO_LARGE, l->lineno + 1, l->bytes,
                            "line %zu is longer than %zu bytes", l->lineno + 1, l->max_line);
      l->bytes += *len + (nl ? 1 : 0);
      l->beg = l->scan = nl ? at + 1 : at;
      l->lineno++;
      return 1;
    }
    if (l->done)
      return 0;
    l->scan = l->end;
    /* make room: slide the partial line to the front, or grow the window for a long line */
    if (l->beg > 0 && (l->beg >= l->win_cap / 2 || l->end == l->win_cap)) {
      memmove(l->win, l->win + l->beg, l->end - l->beg);
      l->end -= l->beg;
      l->scan -= l->beg;
      l->beg = 0;
    }
    if (l->end == l->win_cap) {
      size_t nc;
      char *nw;
      if (l->win_cap > l->max_line)
        return spaa_err_set(err, SPAA_E_TOO_LARGE, l->lineno + 1, l->bytes,
                            "line %zu is longer than %zu bytes", l->lineno + 1, l->max_line);
      nc = l->win_cap * 2;
      if (nc > l->max_line + 1)
        nc = l->max_line + 1;
      if (!(nw = realloc(l->win, nc)))
        return spaa_err_set(err, SPAA_E_NOMEM, l->lineno + 1, l->bytes, NULL);
      l->win = nw;
      l->win_cap = nc;
    }
    n = fill(l, err);
    if (n < 0)
      return (int)n;
    if (n == 0)
      l->done = 1;
  }
}
