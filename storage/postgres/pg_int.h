/* Internals of the PostgreSQL backend (storage/postgres/): a pool of libpq connections, the
 * statements every connection prepares lazily, the schema and its migrations, and the store.
 * The per-profile block, its packing, the preparation, the block reader and the content-id
 * cache are shared with the SQLite engine (storage/engine_int.h), so that both engines write
 * the same blocks and read back the same SPAA. docs/storage.md has the design. */
#ifndef SPAA_STORAGE_PG_INT_H
#define SPAA_STORAGE_PG_INT_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/backend.h"
#include "storage/engine_int.h"
#include "storage/log_int.h"

/* ---- statements (conn.c) -------------------------------------------------------------
 * Fixed SQL text, prepared once per connection. Parameters are sent in binary with their
 * type cast in the text; results come back in binary (int8 big-endian, bytea raw). */
enum pg__st {
  PS_LOCK_SHARED, PS_DSO_GET, PS_DSO_ADD, PS_FRAME_GET, PS_FRAME_ADD, PS_STACK_GET,
  PS_STACK_ADD, PS_PROFILE_ADD, PS_LABEL_ADD, PS_EVENT_ADD, PS_BLOCK_ADD, PS_DICT_GET,
  PS_DICT_ADD, PS_R_DICT, PS_R_PROFILE, PS_R_FRAMES, PS_R_STACKS, PS_R_META, PS_R_EVENTS,
  PS_COUNTS, PS_SWEEP_GEN, PS_BYTES, PS__N
};

/* The advisory lock keys: migrations, puts (shared) vs the sweep's steps (exclusive),
 * leadership, deletes (one at a time over every relay, session-long while one runs). */
#define PG_LOCK_MIGRATE 0x73706161001LL
#define PG_LOCK_SWEEP 0x73706161002LL
#define PG_LOCK_LEAD 0x73706161003LL /* held by the relay leading retention (session-long) */
#define PG_LOCK_DELETE 0x73706161004LL
#define PG_WRITERS 2 /* writer threads per store: 1 was ~2x slower than parallel per-call
                        transactions on bench/store_engines.c; 2 matched or beat them */
#define PG_MAXP 192 /* parameters of one statement: 2 per label or attribute filter, and a few */

struct pg__params {
  int n;
  const char *v[PG_MAXP];
  int len[PG_MAXP];
  int fmt[PG_MAXP];
  unsigned char ib[PG_MAXP][8]; /* big-endian integers */
};
void pg__p_int(struct pg__params *p, int64_t v);
/* Bytes (b may be NULL with len 0: the empty value); NULL-valued with pg__p_null. */
void pg__p_bytes(struct pg__params *p, const void *b, size_t len);
void pg__p_str(struct pg__params *p, const char *s); /* NULL -> SQL NULL */
void pg__p_null(struct pg__params *p);
/* Text format (for int8[] literals "{1,2}"). */
void pg__p_text(struct pg__params *p, const char *s);

/* Where libpq's notices go (a server's WARNING, such as the one it sends each client as it
 * shuts down): the store's log, one line per distinct message and PG_LOG_INTERVAL_S, the
 * same message again within it counted and said on its next line (repeated=N). */
struct pg__notices {
  pthread_mutex_t mu;          /* guards what follows (libpq calls the receiver on the thread
                                  using the connection) */
  const struct storage__log *log; /* NULL: dropped */
  char last[256];              /* the last message logged */
  int64_t last_ns;             /* when (storage__mono_ns) */
  uint64_t repeated;           /* the same message since, not logged */
};

struct pg__conn {
  PGconn *db;                 /* NULL or broken until (re)connected */
  struct pg__notices *notices; /* where its notices go (NULL: dropped, never to stderr) */
  uint64_t prepared;          /* bit per pg__st prepared on this connection */
  struct storage__cache cache; /* content id -> row, rows committed through this connection */
  int64_t gen;                /* the sweep generation the cache belongs to (-1: none) */
  int lost;                   /* the last failure was the connection (down, restarting) */
  int retry;                  /* the last failure was a deadlock or serialization failure */
  int timeout;                /* the last failure was a lock wait past lock_timeout */
  unsigned seed;              /* rand_r state: the wait before a batch is re-run */
  int sync_off;               /* durability = normal: synchronous_commit off */
  int64_t connected_ns;       /* when it last connected (storage__mono_ns), 0: not now */
  int64_t began_ns;           /* when its current use began (storage__mono_ns) */
  char why[256];              /* what the last lost connection said (pg__err), redacted, on
                                 one line */
};

/* Run a prepared statement / fixed text. The result (PGRES_COMMAND_OK or PGRES_TUPLES_OK,
 * caller PQclear()s it), or NULL with err filled (SPAA_E_BUSY when the connection is lost,
 * else SPAA_E_STORE) and c->lost / c->retry set. */
PGresult *pg__run(struct pg__conn *c, enum pg__st id, const struct pg__params *p,
                  struct spaa_err *err);
PGresult *pg__sql(struct pg__conn *c, const char *sql, const struct pg__params *p,
                  struct spaa_err *err);
/* pg__sql without a result. 0, SPAA_E_BUSY or SPAA_E_STORE. */
int pg__exec(struct pg__conn *c, const char *sql, struct spaa_err *err);
/* Fill err from the connection and classify. Returns SPAA_E_BUSY or SPAA_E_STORE. */
int pg__err(struct pg__conn *c, const PGresult *r, struct spaa_err *err, const char *what);
/* An int8/int4 column in binary (0 for NULL). */
int64_t pg__int(const PGresult *r, int row, int col);
int pg__null(const PGresult *r, int row, int col);

/* An int8[] literal being built ("{1,2,3}"), for `id = ANY($1::int8[])`. */
struct pg__ids {
  struct spaa_buf a;          /* the literal so far */
  size_t n;                   /* ids in it */
};
void pg__ids_init(struct pg__ids *v);
void pg__ids_free(struct pg__ids *v);
void pg__ids_reset(struct pg__ids *v); /* empty again */
int pg__ids_add(struct pg__ids *v, int64_t id); /* 0 or SPAA_E_NOMEM */
/* Run sql with the ids as $1 (int8[]; nothing when there are none) and empty v: the result
 * (its rows in binary; the caller PQclear()s it, NULL when v was empty, with *rc 0), or NULL
 * with *rc SPAA_E_BUSY (connection lost), SPAA_E_STORE or SPAA_E_NOMEM and err filled. */
PGresult *pg__ids_run(struct pg__conn *c, const char *sql, struct pg__ids *v, int *rc,
                      struct spaa_err *err);

/* Connect (or reconnect) c and migrate when `migrate`, a migration that ran logged to `log`
 * (may be NULL) in one info line "schema migrated" with the versions and the time it took.
 * 0, SPAA_E_BUSY (unreachable), SPAA_E_STORE. */
int pg__connect(struct pg__conn *c, const char *conninfo, int migrate,
                const struct storage__log *log, struct spaa_err *err);
void pg__disconnect(struct pg__conn *c);

/* The schema version this build writes. */
extern const size_t pg__n_migrations;

/* ---- the store (store.c) ---------------------------------------------------------------- */
/* One spaa_store_put_many call waiting for the writer. */
struct pg__job {
  size_t n;                    /* its profiles */
  struct storage__prep *preps; /* prepared by the caller (owned by the caller) */
  int *rcs;                    /* per profile: < 0 already failed, else the outcome */
  struct spaa_err *errs;
  int *keep;                   /* rcs as queued (a re-run starts from them) */
  int done;                    /* set by the writer under mu */
  struct pg__job *next;        /* queue link */
};

struct storage__pg {
  struct spaa_store base;
  char *conninfo;              /* "postgresql://..." */
  char where[SPAA_STORE_MAX_LOCATION]; /* the location with its password redacted */
  size_t queue_depth;          /* profiles queued or being stored before SPAA_E_BUSY */
  size_t batch_max;            /* most profiles in one transaction */
  pthread_mutex_t mu;          /* guards what follows */
  pthread_cond_t cv;           /* a connection returned, unpaused, stopping */
  pthread_cond_t cv_work;      /* a job queued, unpaused, stopping */
  pthread_cond_t cv_done;      /* a batch finished */
  struct pg__conn *conns;      /* the pool (reads, deletes) */
  char *cbusy;                 /* 1 while lent out */
  size_t n_conns;
  struct pg__writer {          /* writer threads: each takes queued puts in batches */
    struct storage__pg *s;
    struct pg__conn conn;      /* its own connection (and content-id cache) */
    pthread_t th;
    int idx;                   /* 0 also reaches a database absent at start */
  } w[PG_WRITERS];
  size_t writers_started;
  struct pg__job *head, *tail; /* queued jobs */
  size_t inflight;             /* profiles queued or being stored */
  int paused, stopping;
  int db_ready;                /* connected and migrated once: until then every call is BUSY */
  int healthy;                 /* the last use of a connection worked */
  char why[256];               /* why the database could not be reached when it last could not
                                  (libpq's reason, for the not-ready message) */
  struct storage__log log;     /* where the store's messages go (opts.log) */
  int down;                    /* a connection was lost and none has worked since (logged) */
  int64_t down_ns;             /* when it was lost (storage__mono_ns) */
  int64_t up_ns;               /* when the database last came back (0: never lost) */
  int64_t summary_ns;          /* the last line about this outage (lost, still down) */
  uint64_t down_failed;        /* operations failed since it was lost */
  uint64_t down_unsaid;        /* ... of them not in a line yet */
  struct spaa_store_stats stats;
  pthread_mutex_t lead_mu;     /* guards the two fields below (one asker at a time) */
  struct pg__conn lead;        /* its own session: holds PG_LOCK_LEAD while leading */
  int leading;                 /* 1 while that session holds the lock */
  struct pg__notices notices;  /* libpq's notices of every connection, into log */
  void (*sweep_hook)(void *ctx); /* test hook (spaa_store__sweep_hook): run by a sweep between
                                    reading the blocks and its first delete */
  void *sweep_hook_ctx;
};

/* Borrow a connected connection (waits for a free one; reconnects a broken one). NULL with
 * err filled (SPAA_E_BUSY when the database cannot be reached). */
struct pg__conn *pg__get(struct storage__pg *s, struct spaa_err *err);
void pg__put(struct storage__pg *s, struct pg__conn *c);

/* What a use of connection c tells of the database (takes s->mu): ok 1 it answered (c may
 * be NULL), else it failed, `failed` operations with it (0: a readiness probe). A lost
 * connection starts an outage, logged once at warn ("PostgreSQL connection lost", with
 * c->why); failures during it are counted and summarized at most every
 * PG_LOG_INTERVAL_S ("PostgreSQL still unavailable"); the first use that works ends it
 * ("PostgreSQL reconnected", at info, with its length and failures). A connection made
 * before the database last came back that fails is a stale leftover of that outage, not a
 * new one; a use that began before the outage and worked (a commit that finished as the
 * database went down) says nothing of the database now and does not end it. */
#define PG_LOG_INTERVAL_S 10
/* how long making a connection may take before the database counts as unavailable */
#define PG_CONNECT_TIMEOUT_S 5
void pg__health(struct storage__pg *s, const struct pg__conn *c, int ok, uint64_t failed);

/* Fill err with SPAA_E_BUSY "the store is not ready" naming the (redacted) location and
 * s->why (under s->mu). Returns SPAA_E_BUSY. */
int pg__not_ready(struct storage__pg *s, struct spaa_err *err);
/* Note why the database could not be reached (c->why, else err's message) in s->why for the
 * not-ready message (takes s->mu). */
void pg__note_why(struct storage__pg *s, const struct pg__conn *c, const struct spaa_err *err);

/* Insert one prepared profile inside the open transaction (writer.c). 0 stored, 1 already
 * stored, or an error with err filled. */
int pg__insert(struct pg__conn *c, const struct storage__prep *pr, struct spaa_err *err);

/* Decompress a stored block with dictionary dict_id (0 none) into raw (read.c). */
int pg__block_raw(struct pg__conn *c, struct storage__rdict *dict, int64_t dict_id,
                  const void *z, size_t len, struct spaa_buf *raw, struct spaa_err *err);

/* A selection's query (query.c): list columns (blocks 0) or "num, id, dict, data" (blocks 1),
 * with its parameters, newest first, at most `limit` rows. */
int pg__select(const struct spaa_list_query *q, int blocks, size_t limit, struct spaa_buf *sql,
               struct pg__params *p);

int pg__get_profile(struct storage__pg *s, const char *id, struct spaa_meter *meter,
                    struct spaa_profile **out, struct spaa_err *err);
int pg__meta(struct storage__pg *s, const char *id, struct spaa_store_profile_info *out,
             struct spaa_err *err);
int pg__list(struct storage__pg *s, const struct spaa_list_query *q,
             struct spaa_store_page *out, struct spaa_err *err);
int pg__scan(struct storage__pg *s, const struct spaa_list_query *sel, struct spaa_meter *meter,
             spaa_store_scan_cb cb, void *ctx, struct spaa_err *err);
int pg__delete(struct storage__pg *s, const struct spaa_list_query *sel,
               struct spaa_store_deleted *out, struct spaa_err *err);
int pg__counts(struct storage__pg *s, struct spaa_store_counts *out, struct spaa_err *err);
/* What the store's tables take in the database (heap, indexes and TOAST), on c: 0 with *bytes,
 * or an error. */
int pg__bytes(struct pg__conn *c, int64_t *bytes, struct spaa_err *err);

/* The sweep after a delete (sweep.c), on c while it holds PG_LOCK_DELETE: the rows no
 * remaining block names go, out's counts filled; puts of every relay wait only for its short
 * steps. 0 or an error (the steps committed stay done: what is left is swept next time). */
int pg__sweep(struct storage__pg *s, struct pg__conn *c, struct spaa_store_deleted *out,
              struct spaa_err *err);

/* Retention leadership (lead.c), as spaa_store_lead; pg__lead_end closes its session. */
int pg__lead(struct storage__pg *s, struct spaa_err *err);
void pg__lead_end(struct storage__pg *s);

/* Discovery (discover.c), as storage.h's functions of the same names. */
int pg__stacks(struct storage__pg *s, const int64_t *numbers, size_t n, spaa_store_stack_cb cb,
               void *ctx, struct spaa_err *err);
int pg__stack_by_id(struct storage__pg *s, const char *id, spaa_store_stack_cb cb, void *ctx,
                    struct spaa_err *err);
int pg__services(struct storage__pg *s, struct spaa_store_name_count **out, size_t *n,
                 struct spaa_err *err);
int pg__label_keys(struct storage__pg *s, struct spaa_store_name_count **out, size_t *n,
                   struct spaa_err *err);
int pg__label_values(struct storage__pg *s, const char *key, struct spaa_store_name_count **out,
                     size_t *n, struct spaa_err *err);

extern const struct spaa_store_backend storage__postgres_backend;
extern const struct spaa_store_backend storage__postgresql_backend;

#endif
