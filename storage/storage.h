/* The profile store: profiles in, profiles, lists and stack weights out, dsos/frames/stacks
 * deduplicated by content id. One interface over interchangeable engines (storage/backend.h;
 * SQLite in storage/sqlite/ is the embedded default). Knows SPAA, nothing of HTTP or wire
 * formats; nothing outside storage/ knows the engine's query language. */
#ifndef SPAA_STORAGE_H
#define SPAA_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "spaa/spaa.h"

struct spaa_store;

/* When an acknowledged put is safe (docs/storage.md). */
enum spaa_durability {
  SPAA_DURABILITY_FULL = 0, /* committed and synced (synchronous=FULL): survives power loss */
  SPAA_DURABILITY_NORMAL    /* committed, synced at checkpoints (synchronous=NORMAL): survives
                               a process crash, may lose the last commits on power loss */
};

/* The store's messages for the operator's log: a schema migrated at open, a database
 * connection lost, still down, or back. */
enum spaa_store_log_level {
  SPAA_STORE_LOG_INFO = 0,
  SPAA_STORE_LOG_WARN,
  SPAA_STORE_LOG_ERROR
};
/* One message: msg a fixed phrase ("schema migrated"), kv its fields as `key=value` pairs
 * separated by spaces, a value that may hold spaces in double quotes with '"' and '\'
 * escaped (server/log.h's kv form; control characters are left to the logger). Called from
 * the thread opening the store or from the store's own threads, possibly holding the
 * store's locks: it must be thread-safe and must not call the store. */
typedef void (*spaa_store_log_cb)(void *ctx, enum spaa_store_log_level level, const char *msg,
                                  const char *kv);

struct spaa_store_opts {
  const char *path;       /* where: "sqlite:FILE" or a plain FILE path (the directory must
                             exist); the scheme picks the backend (storage/backend.h) */
  size_t queue_depth;     /* pending inserts before spaa_store_put answers SPAA_E_BUSY */
  size_t batch_max;       /* most profiles grouped into one transaction */
  size_t readers;         /* reader connections kept open (>= 1) */
  enum spaa_durability durability; /* zeroed (or left out of an initializer) = full */
  spaa_store_log_cb log;  /* where the store's messages go; NULL (zeroed): nowhere */
  void *log_ctx;          /* log's first argument */
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
  int take_records;         /* 1: the store frees the profile's sample and stack records
                               once it has read them (spaa_profile_drop_samples, _stacks),
                               before it writes the profile: the model is then fit only to
                               be freed, never to be stored again */
};

/* Open (creating and migrating forward as needed) and start the writer thread.
 * 0, or SPAA_E_STORE / SPAA_E_IO / SPAA_E_NOMEM with err filled. */
int spaa_store_open(const struct spaa_store_opts *opts, struct spaa_store **out,
                    struct spaa_err *err);
/* The store location loc with its password (URI user information "user:PASS@", a
 * "password=PASS" parameter) replaced by "***", into out (cap bytes, always
 * NUL-terminated, cut short when it does not fit): what a log line or an error message may
 * show. Every message the store makes names its location this way. */
#define SPAA_STORE_MAX_LOCATION 512 /* the redacted location's size in messages */
void spaa_store_redact(const char *loc, char *out, size_t cap);
/* Drain the queue (every queued profile is committed or failed), stop the writer, close
 * every connection, free. NULL-safe. */
void spaa_store_close(struct spaa_store *s);
/* 1 when the database is open and the writer thread alive, else 0. */
int spaa_store_ready(struct spaa_store *s);
/* The same, with why filled when 0: SPAA_E_SHUTDOWN (closing), SPAA_E_BUSY (the database
 * cannot be reached, or its disk was found full in the last seconds: a client may retry),
 * SPAA_E_STORE (the writer stopped). */
int spaa_store_ready_why(struct spaa_store *s, struct spaa_err *why);

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
 * what was put. The id is looked up as given, then (found under none) in its other forms
 * when it is 32 hex digits or a dashed UUID (spaa_hex_id_forms: either case, dashed or not).
 * SPAA_E_NOT_FOUND when there is no such id. */
int spaa_store_get(struct spaa_store *s, const char *id, struct spaa_profile **out,
                   struct spaa_err *err);
/* The same, the model reporting to meter (NULL: none, as spaa_store_get): a refusal by the
 * meter fails the read with SPAA_E_NOMEM, the meter saying why. */
int spaa_store_get_metered(struct spaa_store *s, const char *id, struct spaa_meter *meter,
                           struct spaa_profile **out, struct spaa_err *err);

/* ---- what list and meta return: plain structs, owned by the result ---------------------- */

/* One metric's sum over a profile's stacks of one event. */
struct spaa_store_total {
  char *metric;           /* the weight's metric name (owned) */
  struct spaa_num value;  /* an integer while the sum fits in 64 bits, else a double */
};

/* One event of a profile and its totals. */
struct spaa_store_event {
  char *name;                      /* the event's name (owned; "" for stacks naming none) */
  struct spaa_store_total *totals; /* n_totals sums, in bytewise metric order (owned) */
  size_t n_totals;
};

/* One label as it was put. */
struct spaa_store_label {
  char *key;        /* owned, NUL-terminated */
  char *value;      /* owned, NUL-terminated after value_len bytes (which may hold NULs) */
  size_t value_len; /* bytes of value */
};

/* What the store knows of a profile without reading its stacks: the put's metadata and the
 * summary computed at put. Fill with spaa_store_meta or spaa_store_list; release with
 * spaa_store_profile_info_free. */
struct spaa_store_profile_info {
  char *id;                        /* profile id (owned) */
  char *service;                   /* service or project (owned) */
  char *source;                    /* "sentry" | "otlp" | "pprof" | "spaa" (owned) */
  int64_t received_ns;             /* unix time the upload arrived, ns */
  int64_t start_ns, end_ns;        /* profile time range, unix ns; 0 when unknown */
  struct spaa_store_event *events; /* header events in order, then any other event a stack
                                      names, in order of appearance (owned) */
  size_t n_events;
  int64_t samples;                 /* sample records, or without any the sum of the stacks'
                                      "samples" weights */
  uint64_t payload_bytes;          /* size of the upload as received */
  struct spaa_store_label *labels; /* n_labels, in bytewise key order (owned) */
  size_t n_labels;
  char *attrs_json;                /* the put's attrs as canonical JSON text (any JSON value,
                                      as given), or NULL when none were given (owned) */
};

/* Release what `pi` owns and zero it. NULL-safe. */
void spaa_store_profile_info_free(struct spaa_store_profile_info *pi);

/* A profile's metadata into *out (zeroed first; the caller frees it with
 * spaa_store_profile_info_free, also after a failure); the id looked up as by
 * spaa_store_get. SPAA_E_NOT_FOUND when there is no such id, SPAA_E_STORE on a database
 * error, SPAA_E_NOMEM. */
int spaa_store_meta(struct spaa_store *s, const char *id, struct spaa_store_profile_info *out,
                    struct spaa_err *err);

/* A place in the list order (received_ns descending, then id descending). */
struct spaa_store_cursor {
  int64_t received_ns; /* the received time of the last entry seen */
  const char *id;      /* its id; never NULL in a cursor in use (borrowed, see below) */
};

/* A label filter: the profile must have this key with exactly this value. */
struct spaa_store_label_filter {
  const char *key;   /* never NULL (borrowed) */
  const char *value; /* never NULL (borrowed) */
};


struct spaa_list_query {
  const char *service;      /* exact match, or NULL */
  const char *source;       /* exact match, or NULL */
  const char *event;        /* profiles having this event, or NULL */
  const char *metric;       /* profiles with this metric in one of their events, or NULL */
  int64_t from_ns, to_ns;   /* profiles overlapping [from, to] in profile time; 0 = open */
  int64_t received_from_ns, received_to_ns; /* received in [from, to]; 0 = open */
  int64_t received_before_ns; /* profiles received before this unix time (ns); 0 = open */
  const struct spaa_store_label_filter *labels; /* n_labels filters, all must match */
  size_t n_labels;
  const struct spaa_store_label_filter *attrs; /* n_attrs filters on the profile's attrs (the
                                                  string members the codec kept, e.g. Sentry's
                                                  release, environment, transaction, trace_id);
                                                  keys of [A-Za-z0-9_], at most
                                                  SPAA_QUERY_MAX_ATTRS */
  size_t n_attrs;
  size_t limit;             /* page size, 1..1000 (0 = 100) */
  const struct spaa_store_cursor *after; /* entries after this one only, or NULL */
};

/* One page of a list answer. Release with spaa_store_page_free. */
struct spaa_store_page {
  struct spaa_store_profile_info *profiles; /* n entries, newest first (owned) */
  size_t n;
  int has_next;                  /* 1 when more entries follow this page */
  struct spaa_store_cursor next; /* when has_next: the last entry's place, to pass as the next
                                    query's `after`; next.id points into profiles[n - 1] */
};

/* Release what `pg` owns and zero it. NULL-safe. */
void spaa_store_page_free(struct spaa_store_page *pg);

/* The profiles matching q, newest first (received desc, then id desc), at most q->limit,
 * into *out (zeroed first; the caller frees it with spaa_store_page_free, also after a
 * failure). Time filters need a known time range. SPAA_E_BAD_REQUEST for a limit over 1000,
 * more than SPAA_QUERY_MAX_LABELS label filters, a filter or cursor with a NULL
 * string; SPAA_E_STORE on a database error; SPAA_E_NOMEM. */
int spaa_store_list(struct spaa_store *s, const struct spaa_list_query *q,
                    struct spaa_store_page *out, struct spaa_err *err);

/* ---- scanning stack weights -------------------------------------------------------------- */

/* One weight of a scanned stack. */
struct spaa_store_scan_weight {
  const char *metric;     /* the metric name (borrowed for the callback) */
  const char *unit;       /* its unit, or NULL when the stack gave none (borrowed) */
  struct spaa_num value;  /* as stored: integer or double */
};

/* One stack of one stored profile, as a scan hands it over. Everything is borrowed for the
 * duration of the callback. */
struct spaa_store_scan_stack {
  int64_t profile;        /* the profile's number in this store (stable, unique) */
  const char *profile_id; /* the profile's id */
  int64_t stack;          /* the stack's number in this store: equal numbers = the same stack
                             (same content id) in whatever profile */
  const struct spaa_store_scan_weight *weights; /* n_weights, in the stack's order */
  size_t n_weights;
};

/* Called once per stack; a non-zero return stops the scan, which then returns that value. */
typedef int (*spaa_store_scan_cb)(void *ctx, const struct spaa_store_scan_stack *st);

/* Iterate the stack weights of every profile `sel` selects (its filters as for
 * spaa_store_list; sel->after honoured; sel->limit 0 = every profile, else at most that
 * many), newest profile first, stacks in stored order, without building profiles: one
 * decompressed block in memory at a time. 0 when all were visited, the callback's value
 * when it stopped, SPAA_E_BAD_REQUEST (as list), SPAA_E_STORE (database error or a corrupt
 * block), SPAA_E_NOMEM. */
int spaa_store_scan(struct spaa_store *s, const struct spaa_list_query *sel,
                    spaa_store_scan_cb cb, void *ctx, struct spaa_err *err);
/* The same, the decompressed block reporting to meter (NULL: none) at the largest size the
 * scan has held: a refusal stops the scan with SPAA_E_NOMEM, the meter saying why. */
int spaa_store_scan_metered(struct spaa_store *s, const struct spaa_list_query *sel,
                            struct spaa_meter *meter, spaa_store_scan_cb cb, void *ctx,
                            struct spaa_err *err);

/* ---- deleting ---------------------------------------------------------------------------- */

/* What a delete removed. */
struct spaa_store_deleted {
  uint64_t profiles;             /* profiles deleted, with their labels, totals and blocks */
  uint64_t dsos, frames, stacks; /* shared rows that no remaining profile referenced */
  uint64_t dicts;                /* block dictionaries no remaining block used */
  int64_t bytes_before, bytes_after; /* the store on disk (as counts.bytes) before the
                                        delete and after its space was given back (on
                                        PostgreSQL, where it is not, about the same) */
};

/* Delete the profiles `sel` selects (its filters as for spaa_store_list; sel->after must be
 * NULL; sel->limit 0 = every match, else at most that many, the oldest received first), in
 * short transactions, then the dsos, frames, stacks and dictionaries nothing left
 * references, then gives the freed space back to the file system in short steps. Puts go
 * on meanwhile (on SQLite between steps of a few ms; docs/storage.md), and a row a put takes
 * while the sweep runs is kept. One delete runs at a time; the call waits for the one
 * running. *out (zeroed first) says what went.
 * 0, SPAA_E_BAD_REQUEST (as list, or a cursor given), SPAA_E_SHUTDOWN, SPAA_E_STORE,
 * SPAA_E_NOMEM. A failure after some transactions committed leaves those deletions done
 * (out counts them) and nothing half-deleted: a profile goes with all its rows or not. */
int spaa_store_delete(struct spaa_store *s, const struct spaa_list_query *sel,
                      struct spaa_store_deleted *out, struct spaa_err *err);

/* ---- discovery (storage/sqlite/discover.c) --------------------------------------------- */

/* One frame of a stored stack, from the shared frame dictionary (what identifies it). */
struct spaa_store_frame_info {
  const char *func;     /* resolved function name; "" for an unresolved frame */
  const char *srcline;  /* "file:line", or NULL */
  const char *dso;      /* the dso's build id, else its name; NULL without a dso */
  const char *kind;     /* user | kernel | unknown */
  int inline_depth;     /* 0 physical, 1+ inlined */
  int has_addr;         /* 1 when addr is set (unresolved frames) */
  int64_t addr;         /* dso-relative address of an unresolved frame */
};

/* A stored stack with its frames. Borrowed for the duration of the callback. */
struct spaa_store_stack_info {
  int64_t number;        /* the stack's number in this store (as scans give it) */
  char id[48];           /* its content id, "0x" + 32 hex digits */
  const char *event;     /* the event it belongs to */
  const char *stack_type;/* unified | user | kernel */
  const char *context;   /* its context minus the event, canonical JSON, or NULL */
  const struct spaa_store_frame_info *frames; /* n_frames, leaf first */
  size_t n_frames;
};

/* Called once per stack found; a non-zero return stops and is returned. */
typedef int (*spaa_store_stack_cb)(void *ctx, const struct spaa_store_stack_info *st);

/* The stacks numbered numbers[0..n) (as spaa_store_scan names them), in that order, each
 * with its frames, in one read transaction (frames read once per call). A number that names
 * no stack is skipped. 0, the callback's value, SPAA_E_STORE, SPAA_E_NOMEM. */
int spaa_store_stacks(struct spaa_store *s, const int64_t *numbers, size_t n,
                      spaa_store_stack_cb cb, void *ctx, struct spaa_err *err);

/* The stack whose content id is `id` ("0x" + 32 hex digits) to cb. SPAA_E_NOT_FOUND when the
 * text is not such an id or no stack has it; else as spaa_store_stacks. */
int spaa_store_stack_by_id(struct spaa_store *s, const char *id, spaa_store_stack_cb cb,
                           void *ctx, struct spaa_err *err);

/* A name with a count (and, for services, what else the answer knows of it). */
struct spaa_store_name_count {
  char *name;          /* service, label key or label value (owned) */
  int64_t count;       /* profiles */
  char *sources;       /* services: the sources, comma-separated, sorted (owned), else NULL */
  int64_t first_ns, last_ns; /* services: first and last received time */
  char *events_json;   /* services: {"event":["metric",...]} as JSON text (owned), else NULL */
};
/* Free n entries and the array. NULL-safe. */
void spaa_store_names_free(struct spaa_store_name_count *v, size_t n);

/* Every service, sorted by name, into *out (n entries; the caller frees them with
 * spaa_store_names_free, also after a failure). 0, SPAA_E_STORE, SPAA_E_NOMEM. */
int spaa_store_services(struct spaa_store *s, struct spaa_store_name_count **out, size_t *n,
                        struct spaa_err *err);
/* Every label key with the count of profiles carrying it, sorted; as spaa_store_services. */
int spaa_store_label_keys(struct spaa_store *s, struct spaa_store_name_count **out, size_t *n,
                          struct spaa_err *err);
/* Every value of label `key` with its count of profiles, sorted; as spaa_store_services. */
int spaa_store_label_values(struct spaa_store *s, const char *key,
                            struct spaa_store_name_count **out, size_t *n, struct spaa_err *err);

/* Row counts, for tests and /metrics. */
struct spaa_store_counts {
  int64_t profiles, dsos, frames, stacks, profile_stacks, samples;
  int64_t bytes;          /* what the store takes on disk now: SQLite's database and its
                             log; PostgreSQL's tables with their indexes and TOAST */
  int keeps_size;         /* 1 when deleting does not make `bytes` fall (PostgreSQL: the space
                             of deleted rows is reused by later ones, its files keep their
                             size), so a cap on `bytes` cannot be met by deleting; 0 (SQLite)
                             when a delete gives its space back */
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
  int synchronous;       /* the writer connection's PRAGMA synchronous, read back at open
                            (2 FULL, 1 NORMAL) */
  uint64_t batch_ns;     /* time spent running batches, BEGIN to COMMIT, in all */
  uint64_t cache_hits;   /* dsos, frames and stacks found in the writer's content-id cache */
  uint64_t cache_misses; /* ... looked up or inserted in the database */
  uint64_t steps;        /* maintenance steps the writer ran between batches (a delete's
                            profiles, its sweep, giving space back); on PostgreSQL the steps
                            of this store's sweeps that held the lock puts wait for */
  uint64_t step_ns;      /* time spent in them, in all (PostgreSQL: from asking the lock) */
  uint64_t step_max_ns;  /* the longest one: what a put waited for it at most */
};
/* Fill *out. Never fails; NULL-safe on s (zeros). */
void spaa_store_stats(struct spaa_store *s, struct spaa_store_stats *out);

/* Whether this process leads the store's upkeep (retention deletes and their sweep) now:
 * several relays sharing one database run it one at a time. 1 leads (and keeps leading until
 * it closes the store or loses the database), 0 another process leads, or a negative
 * SPAA_E_* with err filled when it cannot be known now (the database is unreachable). Ask
 * before each pass: a leader that dies hands leadership to the next one asking. An engine
 * written by one process (SQLite) always answers 1. */
int spaa_store_lead(struct spaa_store *s, struct spaa_err *err);

/* Test hook: while paused (on = 1) the writer takes nothing from the queue, so tests can
 * fill it deterministically; on = 0 resumes. Closing the store resumes it. */
void spaa_store__pause(struct spaa_store *s, int on);
/* Test hook: every sweep of s (spaa_store_delete) runs fn(ctx) on the deleting thread once it
 * has read what the remaining profiles name and before it deletes anything, so that a test
 * can put profiles there, as uploads racing the sweep do (from this store or another one on
 * the same database). fn NULL: none. Set it while no delete runs. */
void spaa_store__sweep_hook(struct spaa_store *s, void (*fn)(void *ctx), void *ctx);

#endif
