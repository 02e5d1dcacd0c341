/* Lines out of a byte stream that is plain or zstd-compressed (detected by its magic number),
 * read in fixed chunks through a spaa_read_cb: memory is one window of about 1 MiB, growing
 * only for a longer line, up to SPAA_MAX_LINE. Shared by the SPAA reader and validator. */
#ifndef SPAA_SPAA_LINES_H
#define SPAA_SPAA_LINES_H

#include <stddef.h>

#include "base/compress.h"
#include "spaa/spaa_io.h"

#define SPAA_LINES_CHUNK (1024u * 1024) /* bytes asked of the read callback at a time */

struct spaa_lines {
  spaa_read_cb rd;       /* the source */
  void *rd_ctx;
  struct spaa_dstream *z; /* non-NULL once the input proved to be zstd */
  char *in;              /* raw (compressed) input chunk */
  size_t in_len, in_pos; /* bytes in `in`, bytes consumed */
  int in_eof;            /* the callback said end of input */
  char *win;             /* decoded bytes; [beg, end) not yet handed out */
  size_t win_cap;        /* bytes allocated for win */
  size_t beg, end;       /* unread range of win */
  size_t scan;           /* where the search for '\n' resumes */
  int started;           /* the format has been detected */
  int done;              /* everything was handed out */
  size_t max_line;       /* longest line accepted (SPAA_MAX_LINE unless changed) */
  size_t lineno;         /* 1-based number of the last line handed out */
  size_t bytes;          /* decoded bytes handed out, newlines included */
  size_t raw_bytes;      /* bytes read from the callback */
};

/* Prepare to read from rd. Allocates nothing yet. */
void spaa_lines_init(struct spaa_lines *l, spaa_read_cb rd, void *rd_ctx);
/* NULL-safe; frees the buffers and the zstd stream. */
void spaa_lines_free(struct spaa_lines *l);

/* The next line, without its '\n' (a trailing '\r' is left in place). *line points into the
 * window and stays valid until the next call. Returns 1 with a line, 0 at the end, or a
 * negative SPAA_E_* with err filled: SPAA_E_IO (callback failed), SPAA_E_BAD_COMPRESSION,
 * SPAA_E_TOO_LARGE (a line over max_line), SPAA_E_NOMEM. */
int spaa_lines_next(struct spaa_lines *l, const char **line, size_t *len, struct spaa_err *err);

/* A read callback over a memory buffer: ctx is a struct spaa_mem_src. */
struct spaa_mem_src {
  const char *p;  /* the bytes (borrowed) */
  size_t len;     /* their number */
  size_t pos;     /* bytes handed out so far */
};
ssize_t spaa_mem_read(void *ctx, void *buf, size_t cap);

#endif
