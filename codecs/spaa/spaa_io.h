/* SPAA NDJSON in and out: the deterministic writer, the one-pass reader, the validator and
 * normalization to canonical form. Pure functions over buffers and callbacks. */
#ifndef SPAA_SPAA_IO_H
#define SPAA_SPAA_IO_H

#include <stddef.h>
#include <sys/types.h>

#include "base/buf.h"
#include "base/limits.h"
#include "spaa/spaa.h"

/* ---- writer (spaa_write.c) ------------------------------------------------------------
 * Record order: header; dso, frame, thread records in model order; stack, sample, window
 * records in model order. Field order within a record is fixed (docs/spaa-output.md);
 * unknown keys follow the known ones in bytewise key order. The same model always gives
 * the same bytes. Call spaa_normalize() first for the canonical order. */
int spaa_write(const struct spaa_profile *p, spaa_sink_cb sink, void *ctx, struct spaa_err *err);
/* Write into `out` (appending), zstd-compressed at `zstd_level` when > 0, else plain. */
int spaa_write_buf(const struct spaa_profile *p, int zstd_level, struct spaa_buf *out,
                   struct spaa_err *err);

/* ---- normalization (normalize.c) ------------------------------------------------------
 * Canonical form: content ids for every stack (see cid.h), stacks with equal ids merged
 * (weights of the same metric summed), dsos and frames sorted by id, threads by tid, stacks
 * by (event position in the header, primary metric descending, id), samples and windows
 * kept in order; the record arrays then fitted (spaa_profile_fit). 0, SPAA_E_INVALID (a
 * stack naming a missing frame...) or SPAA_E_NOMEM. */
int spaa_normalize(struct spaa_profile *p, struct spaa_err *err);

/* ---- reader (spaa_read.c) -------------------------------------------------------------
 * One pass over NDJSON, plain or zstd (detected by its magic number). Input arrives through
 * a read callback returning bytes read, 0 at end, or -1 on error. Lines are capped at
 * SPAA_MAX_LINE bytes. */
typedef ssize_t (*spaa_read_cb)(void *ctx, void *buf, size_t cap);

/* Read a whole SPAA file into a new profile (*out, owned by the caller). Fails with
 * SPAA_E_BAD_JSON or SPAA_E_INVALID (err names the line and field) on malformed records;
 * it does not apply the validator's rules. */
int spaa_read(spaa_read_cb rd, void *rd_ctx, struct spaa_profile **out, struct spaa_err *err);
int spaa_read_buf(const void *buf, size_t len, struct spaa_profile **out, struct spaa_err *err);

/* ---- validator (validate.c) -----------------------------------------------------------
 * Every MUST of SPAA v1.0 §7 and the house rules (duplicate ids, undeclared events, the
 * exclusive frame not being the leaf, unknown stack references, references before their
 * definition, bad format/version) are errors; SHOULD rules are warnings. Memory is bounded
 * by the dictionaries (dso, frame, stack ids), not by the file. */
struct spaa_diag {
  int is_error;        /* 1 error, 0 warning */
  size_t line;         /* 1-based line */
  const char *rule;    /* short rule name, e.g. "frame-dso-missing" */
  const char *field;   /* the field at fault, e.g. "dso" or "weights" */
  const char *msg;     /* one line: what was wrong */
};
typedef void (*spaa_diag_cb)(void *ctx, const struct spaa_diag *d);

struct spaa_validate_stats {
  size_t lines, dsos, frames, threads, stacks, samples, windows; /* records seen */
  size_t errors, warnings;
  size_t bytes;        /* uncompressed bytes read */
};

/* 0 valid (warnings allowed), SPAA_E_INVALID when there was at least one error, or
 * SPAA_E_IO / SPAA_E_BAD_COMPRESSION when the input could not be read. `cb` may be NULL;
 * `max_errors` stops reporting (not counting) after that many errors (0 = no limit). */
int spaa_validate(spaa_read_cb rd, void *rd_ctx, spaa_diag_cb cb, void *cb_ctx, size_t max_errors,
                  struct spaa_validate_stats *st);
int spaa_validate_buf(const void *buf, size_t len, spaa_diag_cb cb, void *cb_ctx,
                      size_t max_errors, struct spaa_validate_stats *st);

/* ---- reader and validator in one pass (spaa_read.c) ------------------------------------
 * What an upload and `convert --from spaa` need: every line parsed once, checked as
 * spaa_validate checks it (the same diagnostics through `cb`, `max_errors` and `st` as
 * there), and added to a new profile while no error has been found. Returns what
 * spaa_validate returns and then *out owned by the caller on 0 (NULL otherwise), or
 * SPAA_E_NOMEM. On failure err holds the first error: for SPAA_E_INVALID
 * "line N: <message> (rule R, field F)", else its message with the line in err->line. */
int spaa_read_checked(spaa_read_cb rd, void *rd_ctx, spaa_diag_cb cb, void *cb_ctx,
                      size_t max_errors, struct spaa_validate_stats *st, struct spaa_profile **out,
                      struct spaa_err *err);
int spaa_read_checked_buf(const void *buf, size_t len, spaa_diag_cb cb, void *cb_ctx,
                          size_t max_errors, struct spaa_validate_stats *st,
                          struct spaa_profile **out, struct spaa_err *err);

#endif
