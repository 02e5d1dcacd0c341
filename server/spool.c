/* Answers kept in memory while small, in an unlinked file once large, and request bodies
 * kept in such a file (see spool.h). */
#include "server/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "server/http.h"

void spaa_spool_init(struct spaa_spool *s, const char *dir, uint64_t cap)
{
  memset(s, 0, sizeof(*s));
  spaa_buf_init(&s->mem, SPAA_SPOOL_MEM);
  s->fd = -1;
  s->cap = cap;
  s->dir = dir;
}

/* A file nobody else can open and that disappears with its last descriptor. */
static int open_unlinked(const char *dir)
{
  char path[4096];
  int fd;
  if (!dir || !dir[0])
    dir = getenv("TMPDIR");
  if (!dir || !dir[0])
    dir = "/tmp";
#ifdef O_TMPFILE
  fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != ENOENT))
    return fd;
#endif
  if ((size_t)snprintf(path, sizeof(path), "%s/.spaa-spool-XXXXXX", dir) >= sizeof(path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  if ((fd = mkostemp(path, O_CLOEXEC)) >= 0)
    unlink(path);
  return fd;
}

static int write_all(int fd, const char *p, size_t n)
{
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Write the memory buffer to the file and empty it. 0 or -1 (errno saved). */
static int flush(struct spaa_spool *s)
{
  if (s->mem.len && write_all(s->fd, s->mem.p, s->mem.len)) {
    s->failed = 1;
    s->errno_saved = errno;
    return -1;
  }
  s->mem.len = 0;
  return 0;
}

int spaa_spool_sink(void *ctx, const void *data, size_t len)
{
  struct spaa_spool *s = ctx;
  if (s->failed)
    return SPAA_E_IO;
  if (len > s->cap - s->len)
    return SPAA_E_TOO_LARGE;
  s->len += len;
  if (s->mem.len + len <= SPAA_SPOOL_MEM)
    return spaa_buf_add(&s->mem, data, len) ? SPAA_E_NOMEM : 0;
  if (s->fd < 0 && (s->fd = open_unlinked(s->dir)) < 0) {
    s->failed = 1;
    s->errno_saved = errno;
    return SPAA_E_IO;
  }
  if (flush(s))
    return SPAA_E_IO;
  if (len >= SPAA_SPOOL_MEM / 2) { /* a big piece goes straight to the file */
    if (write_all(s->fd, data, len)) {
      s->failed = 1;
      s->errno_saved = errno;
      return SPAA_E_IO;
    }
    return 0;
  }
  return spaa_buf_add(&s->mem, data, len) ? SPAA_E_NOMEM : 0;
}

int spaa_spool_to_resp(struct spaa_spool *s, struct spaa_resp *resp, struct spaa_err *err)
{
  spaa_resp_body_release(resp);
  if (s->fd < 0) {
    resp->body = s->mem;
    spaa_buf_init(&s->mem, SPAA_SPOOL_MEM);
    s->len = 0;
    return 0;
  }
  if (s->failed || flush(s))
    return spaa_err_set(err, SPAA_E_IO, 0, 0, "cannot write the answer to a file in %s: %s",
                        s->dir ? s->dir : "the temporary directory", strerror(s->errno_saved));
  resp->file_fd = s->fd;
  resp->file_len = s->len;
  resp->has_file = 1;
  s->fd = -1;
  s->len = 0;
  return 0;
}

void spaa_spool_free(struct spaa_spool *s)
{
  spaa_buf_free(&s->mem);
  if (s->fd >= 0)
    close(s->fd);
  s->fd = -1;
}

void spaa_bodyfile_init(struct spaa_bodyfile *f)
{
  f->fd = -1;
  f->len = 0;
  f->map = NULL;
  f->errno_saved = 0;
}

/* A body file is written in pieces of at most this: the page cache may give a write of n
 * bytes folios of up to n bytes, and a read fault maps the whole folio it falls in (measured
 * here: one touch mapped 512 pages after a 4 MiB write, 16 after writes of 64 KiB). The
 * body's pages are given back as they are read (spaa_mem_discard); a fault on an edge page a
 * reader shares with bytes it gave back would map those again. */
#define BODYFILE_PIECE ((size_t)64 << 10)

int spaa_bodyfile_add(struct spaa_bodyfile *f, const char *dir, const void *data, size_t n)
{
  const char *p = data;
  if (f->map || (f->fd < 0 && (f->fd = open_unlinked(dir)) < 0)) {
    f->errno_saved = f->map ? EINVAL : errno;
    return -1;
  }
  while (n) {
    size_t k = n < BODYFILE_PIECE ? n : BODYFILE_PIECE;
    if (write_all(f->fd, p, k)) {
      f->errno_saved = errno;
      return -1;
    }
    f->len += k;
    p += k;
    n -= k;
  }
  return 0;
}

char *spaa_bodyfile_map(struct spaa_bodyfile *f)
{
  void *m;
  if (f->map)
    return f->map;
  if (f->fd < 0 || f->len >= SIZE_MAX) {
    f->errno_saved = EINVAL;
    return NULL;
  }
  /* one byte more, a zero the file is extended by: the bytes end with a NUL as a buffer's */
  if (ftruncate(f->fd, (off_t)(f->len + 1)) ||
      (m = mmap(NULL, (size_t)f->len + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE, f->fd, 0)) ==
          MAP_FAILED) {
    f->errno_saved = errno;
    return NULL;
  }
  return f->map = m;
}

void spaa_bodyfile_free(struct spaa_bodyfile *f)
{
  if (f->map)
    munmap(f->map, (size_t)f->len + 1);
  if (f->fd >= 0)
    close(f->fd);
  spaa_bodyfile_init(f);
}
