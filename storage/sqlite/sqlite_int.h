/* Internals of the SQLite backend (storage/sqlite/): connections with cached statements, the
 * schema migrations, the writer and the store itself. The block, its packing, the
 * preparation and the content-id cache are shared with the other engine (engine_int.h). */
#ifndef SPAA_STORAGE_SQLITE_INT_H
#define SPAA_STORAGE_SQLITE_INT_H

#include <pthread.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "storage/backend.h"
#include "storage/engine_int.h"
#include "storage/log_int.h"

#define STORAGE_RELEASE_STACKS 10000 /* a batch of as many stacks gives the writer's page
                                        cache back once committed */
#define STORAGE_BUSY_MS 5000   /* how long a connection waits for a lock it needs */
#define STORAGE_STEP_NS 2000000 /* how long one maintenance step (a delete's, a sweep's) may
                                 * hold the write lock before it commits and lets puts in */
#define STORAGE_SWEEP_SCAN 64   /* blocks (or 64 times as many rows) a sweep reads per read
                                 * transaction */

/* ---- statements (schema.c) ------------------------------------------------------------
 * Every statement the store runs with fixed text; prepared lazily, once per connection. */
enum storage__st {
  ST_BEGIN_IMM, ST_BEGIN, ST_COMMIT, ST_ROLLBACK, ST_SAVEPOINT, ST_RELEASE, ST_ROLLBACK_TO,
  ST_DSO_GET, ST_DSO_ADD, ST_FRAME_GET, ST_FRAME_ADD, ST_STACK_GET, ST_STACK_ADD,
  ST_PROFILE_EXISTS, ST_PROFILE_ADD, ST_LABEL_ADD, ST_EVENT_ADD, ST_BLOCK_ADD,
  ST_DICT_GET, ST_DICT_ADD, ST_R_DICT,
  ST_R_PROFILE, ST_R_FRAME, ST_R_STACK, ST_R_META, ST_R_EVENTS,
  ST_C_PROFILES, ST_C_DSOS, ST_C_FRAMES, ST_C_STACKS, ST_C_PSTACKS, ST_C_SAMPLES,
  ST__N
};

struct storage__conn {
  sqlite3 *db;                  /* the connection, used by one thread at a time */
  sqlite3_stmt *st[ST__N];      /* cached statements, NULL until first use */
  uint64_t full_ns;             /* when a write last found the disk full (storage__mono_ns),
                                   0 once a commit went through; read by other threads
                                   (__atomic) for readiness */
};

/* How long after a write found the disk full the store reports itself not ready. */
#define STORAGE_FULL_READY_NS (30ull * 1000000000ull)

/* The migrations, applied in order, one transaction each; version N = first N applied. */
extern const char *const storage__migrations[];
extern const size_t storage__n_migrations;

/* Open `path` with the store's pragmas (WAL, synchronous=FULL, foreign keys, busy timeout).
 * `writer` 1 also creates the file and migrates the schema forward, a migration logged to
 * `log` (may be NULL) in one info line "schema migrated" with the versions and the time it
 * took. 0 or SPAA_E_STORE. */
int storage__conn_open(struct storage__conn *c, const char *path, int writer,
                       enum spaa_durability durability, const struct storage__log *log,
                       struct spaa_err *err);
void storage__conn_close(struct storage__conn *c); /* NULL-safe, idempotent */
/* The cached statement `id`, reset and with bindings cleared; NULL with err filled. */
sqlite3_stmt *storage__stmt(struct storage__conn *c, enum storage__st id, struct spaa_err *err);
/* Fill err with SPAA_E_STORE and the connection's message; returns SPAA_E_STORE. */
int storage__db_err(struct storage__conn *c, struct spaa_err *err, const char *what);
/* Run a cached statement that returns no rows. 0 or SPAA_E_STORE. */
int storage__exec(struct storage__conn *c, enum storage__st id, struct spaa_err *err);

/* ---- the sweep's side on the writer (sweep.c) ------------------------------------------
 * A sweep finds the shared rows nothing references while puts go on (delete.c, sweep.c).
 * What it must not delete are the rows a put takes while it runs: from the sweep's start the
 * writer notes every existing row (at or below the highest of its kind at the start) that a
 * put finds by content id, and the sweep keeps those whatever its scan of the blocks found. */
enum storage__sweep_kind { SW_STACK, SW_FRAME, SW_DSO, SW_DICT, SW__N }; /* blk_rows' order */

struct storage__sweep {
  int on;                   /* a sweep runs: puts note the rows they find */
  int64_t max[SW__N];       /* the highest row of each kind when it began */
  uint8_t *used[SW__N];     /* bitmaps of max + 1 bits: rows puts found since (owned) */
};

/* A put found row `row` of kind k by its content id: noted when a sweep runs and the row
 * is old enough to be swept. Writer thread only; sw may be NULL. */
void storage__sweep_used(struct storage__sweep *sw, enum storage__sweep_kind k, int64_t row);
/* Stop noting and free the bitmaps. NULL-safe, idempotent. */
void storage__sweep_off(struct storage__sweep *sw);

/* ---- insertion (writer.c) ------------------------------------------------------------ */
/* Insert one prepared profile on the writer connection inside the open transaction.
 * 0 stored, 1 already stored, or SPAA_E_STORE with err filled. A job is inserted once (a
 * failed one is not run again): pr's stack frames are freed once its stacks are in
 * (storage__prep_drop_frames), before its block is built and compressed, and its
 * per-stack and per-sample arrays as the block is built (storage__blk_build_once). */
int storage__insert(struct storage__conn *c, struct storage__cache *cache,
                    struct storage__sweep *sw, struct storage__prep *pr,
                    struct spaa_err *err);

/* Schema version 3's data step: version 2 rows into blocks (migrate.c). 0 or SPAA_E_STORE. */
int storage__migrate_blocks(struct storage__conn *c, struct spaa_err *err);

/* ---- reading (read.c) ------------------------------------------------------------------ */
/* storage__block_raw (engine_int.h) reading dictionaries on connection c. */
int storage__sq_block_raw(struct storage__conn *c, struct storage__rdict *dict, int64_t dict_id,
                          const void *z, size_t len, struct spaa_buf *raw,
                          struct spaa_err *err);

/* ---- selections (query.c) ------------------------------------------------------------- */
/* The query text of a selection: list columns (blocks 0) or "num, id, dict, data" of the
 * blocks (blocks 1), newest first, with one LIMIT parameter. 0 or SPAA_E_NOMEM. */
int storage__select_sql(const struct spaa_list_query *q, struct spaa_buf *sql, int blocks);
/* Bind q's filters, then limit + 1, in storage__select_sql's order. */
void storage__select_bind(sqlite3_stmt *st, const struct spaa_list_query *q, size_t limit);

/* ---- the store (storage.c) ----------------------------------------------------------- */
struct storage__sqlite;
struct storage__job;
/* A maintenance step run by the writer alone, between batches of puts: 0 or SPAA_E_*
 * (j->err filled). Each one holds the write lock for about STORAGE_STEP_NS at most. */
typedef int (*storage__step_cb)(struct storage__sqlite *s, struct storage__job *j);

struct storage__job {
  struct storage__prep *prep;       /* what to insert (owned by the waiting caller, which
                                       only frees it after), or NULL for a step: */
  storage__step_cb step;            /* the step to run (never batched with puts) */
  void *arg;                        /* its argument (owned by the waiting caller) */
  int rc;                           /* 0, 1 or SPAA_E_* once done */
  int done;                         /* set by the writer under the store mutex */
  struct spaa_err err;              /* the failure, when rc < 0 */
  struct storage__job *next;        /* queue link */
};

struct storage__sqlite {
  struct spaa_store base;           /* the interface's head: names the backend */
  char *path;                       /* the database file */
  int lock_fd;                      /* PATH.lock, flock()ed for as long as the store is open
                                       (-1: none): one process writes a database file */
  int db_known;                     /* 1: db_dev/db_ino name the file opened at start */
  dev_t db_dev;                     /* the database file opened (a path that later names */
  ino_t db_ino;                     /* no file, or another one, stops the store) */
  int db_gone_logged;               /* the removal was logged (once) */
  struct storage__log log;          /* the options' log callback */
  int sweep_owed;                   /* profiles were deleted and their sweep has not finished
                                       (PATH.sweep exists): the next delete sweeps, even one
                                       that deletes nothing (under del_mu) */
  size_t queue_depth, batch_max;    /* from the options */
  enum spaa_durability durability;  /* from the options */
  pthread_mutex_t mu;               /* guards the queue, flags and stats */
  pthread_cond_t cv_work;           /* signalled when a job is queued or on stop/unpause */
  pthread_cond_t cv_done;           /* broadcast when a batch finished */
  struct storage__job *head, *tail; /* queued jobs */
  size_t queued;                    /* jobs in the queue */
  size_t inflight;                  /* callers inside spaa_store_put (close waits for 0) */
  int stopping;                     /* close has begun: no new puts */
  int paused;                       /* test hook: the writer takes nothing */
  int writer_alive;                 /* the writer thread runs */
  int writer_started;               /* pthread_create succeeded */
  pthread_t writer;                 /* the writer thread */
  struct storage__conn wconn;       /* the writer's connection */
  struct storage__cache cache;      /* the writer's content-id cache (writer thread only) */
  struct storage__sweep sweep;      /* the sweep in progress, if any (writer thread only) */
  pthread_mutex_t del_mu;           /* one delete (with its sweep) at a time */
  void (*sweep_hook)(void *ctx);    /* test hook: run by a sweep between its scan and its
                                       deletes, on the deleting thread (NULL: none) */
  void *sweep_hook_ctx;
  struct spaa_store_stats stats;    /* counters (under mu) */
  pthread_mutex_t rmu;              /* guards the reader pool */
  pthread_cond_t rcv;               /* signalled when a reader is returned */
  struct storage__conn *readers;    /* n_readers connections */
  char *rbusy;                      /* 1 while a reader is lent out */
  size_t n_readers;
};

/* Queue one job and wait until the writer ran it. 0, or SPAA_E_SHUTDOWN / SPAA_E_BUSY
 * (not queued; a step is queued whatever the queue holds). */
int storage__sq_submit(struct storage__sqlite *s, struct storage__job *j);
/* Run `fn` with `arg` as a step on the writer and wait: its result (SPAA_E_SHUTDOWN when it
 * could not be queued), err filled on failure. */
int storage__sq_step(struct storage__sqlite *s, storage__step_cb fn, void *arg,
                     struct spaa_err *err);
/* Bytes the database, its WAL and shared-memory files take on disk (as du counts them). */
int64_t storage__disk_bytes(const char *path);

/* How much one maintenance step of a kind does (rows, profiles, pages), adapted from step to
 * step so that a step costs about what a bare commit costs (its sync) plus STORAGE_STEP_NS:
 * the time puts wait for it. Owned by the deleting thread, read and updated by the steps. */
struct storage__pace {
  size_t n;            /* units the next step may do (0: not started, taken as 16) */
  uint64_t commit_min; /* the cheapest commit seen, ns: what a transaction costs anyway */
};
/* After a step did `units` of pace->n in work_ns, then committed in commit_ns: the next n. */
void storage__pace_update(struct storage__pace *pace, size_t units, uint64_t work_ns,
                          uint64_t commit_ns);
/* End a writer step begun at t0 that did `units` (rc: its outcome so far): commit it, or
 * roll it back on error; after a commit, the pace updated from the step's work and commit
 * times (also after a failed commit that ended the transaction). Returns rc, or the
 * commit's error. */
int storage__step_end(struct storage__conn *c, int rc, struct spaa_err *err,
                      struct storage__pace *pace, size_t units, uint64_t t0);

/* ---- the sweep (sweep.c) --------------------------------------------------------------- */
/* Delete the dsos, frames, stacks and block dictionaries nothing references, from the
 * calling thread: the blocks are read in short read transactions on reader connections, the
 * rows deleted in steps on the writer, puts going on between them. The counts into out.
 * 0, SPAA_E_STORE, SPAA_E_NOMEM, SPAA_E_SHUTDOWN; the caller holds s->del_mu. */
int storage__sq_sweep(struct storage__sqlite *s, struct spaa_store_deleted *out,
                      struct spaa_err *err);

/* The backend's operations (storage/backend.h has their contracts). */
int storage__sq_open(const struct spaa_store_opts *opts, struct storage__sqlite **out,
                     struct spaa_err *err);
void storage__sq_close(struct storage__sqlite *s);
int storage__sq_ready(struct storage__sqlite *s, struct spaa_err *why);
/* The name of a file beside the database, PATH + suffix (".lock", ".sweep"), into out (cap
 * bytes): 0, or SPAA_E_STORE with err filled when it does not fit. */
#define STORAGE_SWEEP_SUFFIX ".sweep" /* a sweep is owed (delete.c) */
int storage__side_path(const struct storage__sqlite *s, const char *suffix, char *out,
                       size_t cap, struct spaa_err *err);

int storage__sq_put_many(struct storage__sqlite *s, size_t n,
                         const struct spaa_profile *const *p, const struct spaa_meta *meta,
                         int *rcs, struct spaa_err *errs);
int storage__sq_get(struct storage__sqlite *s, const char *id, struct spaa_meter *meter,
                    struct spaa_profile **out, struct spaa_err *err);
int storage__sq_meta(struct storage__sqlite *s, const char *id,
                     struct spaa_store_profile_info *out, struct spaa_err *err);
int storage__sq_list(struct storage__sqlite *s, const struct spaa_list_query *q,
                     struct spaa_store_page *out, struct spaa_err *err);
int storage__sq_scan(struct storage__sqlite *s, const struct spaa_list_query *sel,
                     struct spaa_meter *meter, spaa_store_scan_cb cb, void *ctx,
                     struct spaa_err *err);
int storage__sq_delete(struct storage__sqlite *s, const struct spaa_list_query *sel,
                       struct spaa_store_deleted *out, struct spaa_err *err);
int storage__sq_stacks(struct storage__sqlite *s, const int64_t *numbers, size_t n,
                       spaa_store_stack_cb cb, void *ctx, struct spaa_err *err);
int storage__sq_stack_by_id(struct storage__sqlite *s, const char *id, spaa_store_stack_cb cb,
                            void *ctx, struct spaa_err *err);
int storage__sq_services(struct storage__sqlite *s, struct spaa_store_name_count **out,
                         size_t *n, struct spaa_err *err);
int storage__sq_label_keys(struct storage__sqlite *s, struct spaa_store_name_count **out,
                           size_t *n, struct spaa_err *err);
int storage__sq_label_values(struct storage__sqlite *s, const char *key,
                             struct spaa_store_name_count **out, size_t *n,
                             struct spaa_err *err);
int storage__sq_counts(struct storage__sqlite *s, struct spaa_store_counts *out,
                       struct spaa_err *err);
void storage__sq_stats(struct storage__sqlite *s, struct spaa_store_stats *out);
void storage__sq_pause(struct storage__sqlite *s, int on);

/* Borrow a reader connection (waits for a free one, never for the writer); give it back
 * with storage__reader_put. NULL with err filled when none could be opened. */
struct storage__conn *storage__reader_get(struct storage__sqlite *s, struct spaa_err *err);
void storage__reader_put(struct storage__sqlite *s, struct storage__conn *c);

#endif
