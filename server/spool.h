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

#endif
