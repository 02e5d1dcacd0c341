/* An answer written in pieces: kept in memory while small, spilled to an unlinked file in
 * the data directory once it outgrows SPAA_SPOOL_MEM, so that a large export (a 13 MB SPAA
 * file, a big collapsed text) costs the process a fixed buffer, not the whole answer; the
 * core then sends the file (sendfile where MHD can) and closes it. */
#ifndef SPAA_SERVER_SPOOL_H
#define SPAA_SERVER_SPOOL_H

#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

#define SPAA_SPOOL_MEM ((size_t)256 << 10) /* bytes kept in memory before spilling */

struct spaa_resp;

struct spaa_spool {
  struct spaa_buf mem; /* the answer while small; then the write buffer of the file */
  int fd;              /* the spill file, or -1 */
  uint64_t len;        /* bytes written in all */
  uint64_t cap;        /* most bytes an answer may have */
  const char *dir;     /* where a spill file is made (borrowed) */
  int failed;          /* a write failed: errno_saved says why */
  int errno_saved;
};

/* Start an empty spool spilling into dir (NULL: $TMPDIR or /tmp). */
void spaa_spool_init(struct spaa_spool *s, const char *dir, uint64_t cap);
/* A spaa_sink_cb: 0, or SPAA_E_TOO_LARGE past the cap, SPAA_E_IO/NOMEM when a write fails. */
int spaa_spool_sink(void *ctx, const void *data, size_t len);
/* Hand what was written to resp as its body (memory or file), leaving s empty. 0 or
 * SPAA_E_IO with err set. */
int spaa_spool_to_resp(struct spaa_spool *s, struct spaa_resp *resp, struct spaa_err *err);
/* Release what s still holds. */
void spaa_spool_free(struct spaa_spool *s);

/* A request body kept in an unlinked file once large, and read back through a private
 * mapping of that file: its bytes are resident in the process only while they are read
 * (and until spaa_mem_discard gives them back), where a heap buffer keeps the whole body
 * resident until the request ends; the rest waits in the kernel's page cache. An OTLP
 * request of many profiles is read one profile at a time: its unread profiles cost the
 * process nothing. */
struct spaa_bodyfile {
  int fd;              /* the file, or -1 */
  uint64_t len;        /* bytes written */
  char *map;           /* the mapping once made (len + 1 bytes, a NUL last), or NULL */
  int errno_saved;     /* why a write or the mapping failed */
};

void spaa_bodyfile_init(struct spaa_bodyfile *f);
/* Append n bytes, making the file in dir (NULL: $TMPDIR or /tmp) on the first. 0, or -1
 * with errno_saved set. */
int spaa_bodyfile_add(struct spaa_bodyfile *f, const char *dir, const void *data, size_t n);
/* Map what was written, read-only to the file (a write makes a private copy of its page):
 * the bytes, NUL-terminated, or NULL with errno_saved set. */
char *spaa_bodyfile_map(struct spaa_bodyfile *f);
/* Unmap and close; f is empty again. */
void spaa_bodyfile_free(struct spaa_bodyfile *f);

#endif
