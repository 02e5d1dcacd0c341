/* The profile store: SQLite in WAL mode, dsos/frames/stacks deduplicated by content id,
 * one writer thread fed by a bounded queue, readers on their own connections.
 * Knows SPAA and SQL, nothing of HTTP or wire formats. */
#ifndef SPAA_STORAGE_H
#define SPAA_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "spaa/spaa.h"

struct spaa_store;

struct spaa_store_opts {
  const char *path;       /* the SQLite file; its directory must exist */
  size_t queue_depth;     /* pending inserts before spaa_store_put answers SPAA_E_BUSY */
  size_t batch_max;       /* most profiles grouped into one transaction */
  size_t readers;         /* reader connections kept open (>= 1) */
};

/* What the ingest side knows of a profile besides its SPAA model. Borrowed by the store
 * for the duration of the call. */
struct spaa_meta {
  const char *id;           /* profile id (lowercase hex or uuid text); unique */
  const char *service;      /* project id (Sentry) or service name; never NULL */
  const char *source;       /* "sentry" | "otlp" | "pprof" | "spaa" */
  int64_t received_ns;      /* unix time the upload arrived, ns */
  int64_t start_ns;         /* profile time range, unix ns (0 when unknown) */
  int64_t end_ns;
  uint64_t payload_bytes;   /* size of the upload as received */
  const json_t *labels;     /* object of string -> string, queryable; may be NULL */
  const json_t *attrs;      /* other metadata (release, environment, platform...); may be NULL */
  const void *original;     /* the original payload, kept zstd-compressed; may be NULL */
  size_t original_len;
};

/* Open (creating and migrating forward as needed) and start the writer thread.
 * 0, or SPAA_E_STORE / SPAA_E_IO / SPAA_E_NOMEM with err filled. */
int spaa_store_open(const struct spaa_store_opts *opts, struct spaa_store **out,
                    struct spaa_err *err);
/* Drain the queue (every queued profile is committed or failed), stop the writer, close
 * every connection, free. NULL-safe. */
void spaa_store_close(struct spaa_store *s);
/* 1 when the database is open and the writer thread alive, else 0. */
int spaa_store_ready(struct spaa_store *s);

/* Store a profile: queue it for the writer and wait until its transaction COMMITted.
 * Dsos, frames and stacks are inserted once per content id. The profile must be in
 * canonical form (spaa_normalize). Returns 0 stored; 1 already stored (a profile with this
 * id exists: nothing written); SPAA_E_BUSY when the queue is full (nothing queued: the
 * caller answers 503); SPAA_E_SHUTDOWN when closing; SPAA_E_STORE on a database error. */
int spaa_store_put(struct spaa_store *s, const struct spaa_profile *p,
                   const struct spaa_meta *meta, struct spaa_err *err);

/* Store n profiles at once: each is prepared, then they are queued together (in pieces of
 * at most half the queue depth) and the call waits until every one is committed or failed,
 * so they share few transactions. Each profile gets its own outcome in rcs[i] (0 stored,
 * 1 already stored, or a negative SPAA_E_* with errs[i] filled), as spaa_store_put would
 * give it; a piece the queue has no room for gets SPAA_E_BUSY for each of its profiles.
 * Returns 0 when every piece was queued, else the first piece-wide error (SPAA_E_BUSY,
 * SPAA_E_SHUTDOWN, SPAA_E_NOMEM), with each rcs[i] filled all the same. */
int spaa_store_put_many(struct spaa_store *s, size_t n, const struct spaa_profile *const *p,
                        const struct spaa_meta *meta, int *rcs, struct spaa_err *errs);

/* Read a stored profile back into a new model (*out, caller frees): the same SPAA text as
 * what was put. SPAA_E_NOT_FOUND when there is no such id. */
int spaa_store_get(struct spaa_store *s, const char *id, struct spaa_profile **out,
                   struct spaa_err *err);

/* A profile's metadata as the JSON object the list answer uses for each entry:
 * {"id","service","source","received_at"(RFC 3339),"start","end","events":[{"name",
 * "totals":{metric:N}}],"samples":N,"payload_bytes":N,"labels":{},"attrs":{}}.
 * received_at is UTC with nanoseconds ("2023-11-14T22:13:20.123456789Z"); start and end
 * are unix ns, null when unknown (0 at put); events lists the header's events in order,
 * then any other event a stack names, each with the sum of every weight metric over the
 * profile's stacks; samples is the number of sample records, or, when the profile has
 * none, the sum of the stacks' "samples" weights. *out is a new reference.
 * SPAA_E_NOT_FOUND when absent. */
int spaa_store_meta(struct spaa_store *s, const char *id, json_t **out, struct spaa_err *err);

struct spaa_list_query {
  const char *service;      /* exact match, or NULL */
  const char *source;       /* exact match, or NULL */
  const char *event;        /* profiles having this event, or NULL */
  int64_t from_ns, to_ns;   /* profiles overlapping [from, to]; 0 = open */
  const json_t *labels;     /* every key must match its value; NULL = any */
  size_t limit;             /* page size, 1..1000 (0 = 100) */
  const char *cursor;       /* from a previous answer's next_cursor, or NULL */
};

/* Newest first (received desc, then id desc). *out = {"profiles":[meta...],
 * "next_cursor":"..."|null} (new reference). Time filters need a known time range.
 * SPAA_E_BAD_REQUEST for a malformed cursor, a limit over 1000, more than 16 label filters
 * or a label value that is not a string. */
int spaa_store_list(struct spaa_store *s, const struct spaa_list_query *q, json_t **out,
                    struct spaa_err *err);

/* Row counts, for tests and /metrics. */
struct spaa_store_counts {
  int64_t profiles, dsos, frames, stacks, profile_stacks, samples;
};
int spaa_store_counts(struct spaa_store *s, struct spaa_store_counts *out, struct spaa_err *err);

/* Writer counters since open, for tests and /metrics (a consistent snapshot). */
struct spaa_store_stats {
  uint64_t transactions; /* write transactions committed (one per batch) */
  uint64_t stored;       /* profiles committed */
  uint64_t duplicates;   /* puts answered 1 (id already stored) */
  uint64_t failed;       /* puts that failed inside the writer */
  uint64_t busy;         /* puts refused with SPAA_E_BUSY */
  size_t queued;         /* profiles waiting in the queue now */
};
/* Fill *out. Never fails; NULL-safe on s (zeros). */
void spaa_store_stats(struct spaa_store *s, struct spaa_store_stats *out);

/* Test hook: while paused (on = 1) the writer takes nothing from the queue, so tests can
 * fill it deterministically; on = 0 resumes. Closing the store resumes it. */
void spaa_store__pause(struct spaa_store *s, int on);

#endif
