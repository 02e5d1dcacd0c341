/* The retention pass: a background thread that deletes what the retention settings say must
 * go (profiles received longer ago than `retention`; the oldest profiles while the store is
 * over `max_db_size`), through the store's delete, which also sweeps what nothing references
 * and gives the space back. */
#ifndef SPAA_SERVER_RETENTION_H
#define SPAA_SERVER_RETENTION_H

#include <stdint.h>

#include "storage/storage.h"

struct spaa_retention;

struct spaa_retention_opts {
  uint64_t keep_s;     /* seconds a profile is kept; 0 = forever */
  uint64_t max_bytes;  /* the store's cap on disk; 0 = none */
  uint64_t every_s;    /* seconds between passes (>= 1) */
};

/* What the passes did so far (for logs and /metrics). */
struct spaa_retention_stats {
  uint64_t passes;          /* passes run */
  uint64_t deleted_age;     /* profiles deleted for their age */
  uint64_t deleted_size;    /* profiles deleted to bring the store under its cap */
  uint64_t swept;           /* dso, frame and stack rows swept */
  uint64_t failures;        /* passes that stopped on an error */
};

/* Start the thread when a rule is set (otherwise *out = NULL and nothing runs). 0 or -1. */
int spaa_retention_start(struct spaa_store *store, const struct spaa_retention_opts *o,
                         struct spaa_retention **out);
/* Stop and join the thread (a pass in progress finishes its current delete). NULL-safe. */
void spaa_retention_stop(struct spaa_retention *r);
/* One pass now, in the caller's thread (also what the thread runs). 0 or a SPAA_E_*. */
int spaa_retention_pass(struct spaa_store *store, const struct spaa_retention_opts *o,
                        struct spaa_retention_stats *stats);
void spaa_retention_stats(struct spaa_retention *r, struct spaa_retention_stats *out);
/* New rules for the next passes (a reload). NULL-safe: with no thread running, nothing
 * changes (the rules that would start one need a restart). */
void spaa_retention_set(struct spaa_retention *r, const struct spaa_retention_opts *o);

#endif
