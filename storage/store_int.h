/* Internals shared by the storage/ files: connections with cached statements, the schema
 * migrations, the compact binary packing of per-profile rows, and the store itself. */
#ifndef SPAA_STORE_INT_H
#define SPAA_STORE_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "base/buf.h"
#include "spaa/cid.h"
#include "base/err.h"
#include "spaa/spaa.h"
#include "storage/storage.h"

/* ---- statements (schema.c) ------------------------------------------------------------
 * Every statement the store runs with fixed text; prepared lazily, once per connection. */
enum storage__st {
  ST_BEGIN_IMM, ST_BEGIN, ST_COMMIT, ST_ROLLBACK, ST_SAVEPOINT, ST_RELEASE, ST_ROLLBACK_TO,
  ST_DSO_GET, ST_DSO_ADD, ST_FRAME_GET, ST_FRAME_ADD, ST_STACK_GET, ST_STACK_ADD,
  ST_PROFILE_EXISTS, ST_PROFILE_ADD, ST_LABEL_ADD, ST_EVENT_ADD, ST_PDSO_ADD, ST_PFRAME_ADD,
  ST_THREAD_ADD, ST_PSTACK_ADD, ST_SAMPLE_ADD,
  ST_R_PROFILE, ST_R_DSOS, ST_R_FRAMES, ST_R_THREADS, ST_R_STACKS, ST_R_SAMPLES, ST_R_META,
  ST_R_EVENTS,
  ST_C_PROFILES, ST_C_DSOS, ST_C_FRAMES, ST_C_STACKS, ST_C_PSTACKS, ST_C_SAMPLES,
  ST__N
};

struct storage__conn {
  sqlite3 *db;                  /* the connection, used by one thread at a time */
  sqlite3_stmt *st[ST__N];      /* cached statements, NULL until first use */
};

/* The migrations, applied in order, one transaction each; version N = first N applied. */
extern const char *const storage__migrations[];
extern const size_t storage__n_migrations;

/* Open `path` with the store's pragmas (WAL, synchronous=FULL, foreign keys, busy timeout).
 * `writer` 1 also creates the file and migrates the schema forward. 0 or SPAA_E_STORE. */
int storage__conn_open(struct storage__conn *c, const char *path, int writer, int sync_normal,
                       struct spaa_err *err);
void storage__conn_close(struct storage__conn *c); /* NULL-safe, idempotent */
/* The cached statement `id`, reset and with bindings cleared; NULL with err filled. */
sqlite3_stmt *storage__stmt(struct storage__conn *c, enum storage__st id, struct spaa_err *err);
/* Fill err with SPAA_E_STORE and the connection's message; returns SPAA_E_STORE. */
int storage__db_err(struct storage__conn *c, struct spaa_err *err, const char *what);
/* Run a cached statement that returns no rows. 0 or SPAA_E_STORE. */
int storage__exec(struct storage__conn *c, enum storage__st id, struct spaa_err *err);

/* ---- packing (pack.c) -----------------------------------------------------------------
 * Per-profile rows keep what is not in a record's identity as compact blobs: unsigned
 * LEB128 varints, zigzag varints for signed values, numbers as a tag byte (0 integer +
 * zigzag varint, 1 double + 8 bytes little-endian), strings as varint (length + 1, 0 for
 * NULL) and bytes, JSON values as strings of canonical JSON text. */
int storage__put_uv(struct spaa_buf *b, uint64_t v);
int storage__put_sv(struct spaa_buf *b, int64_t v);
int storage__put_num(struct spaa_buf *b, struct spaa_num n);
int storage__put_str(struct spaa_buf *b, const char *s);
int storage__put_json(struct spaa_buf *b, const json_t *v);

/* A bounds-checked reader: any overrun or malformed value sets `bad` and yields zeros. */
struct storage__rd {
  const uint8_t *p; /* the bytes (borrowed) */
  size_t len;       /* their count */
  size_t pos;       /* next byte */
  int bad;          /* 1 once anything failed */
};
void storage__rd_init(struct storage__rd *r, const void *p, size_t len);
uint64_t storage__get_uv(struct storage__rd *r);
int64_t storage__get_sv(struct storage__rd *r);
struct spaa_num storage__get_num(struct storage__rd *r);
/* The string interned in `p` (NULL when it was NULL, or on error with r->bad set). */
const char *storage__get_str(struct storage__rd *r, struct spaa_profile *p);
/* A new JSON value, NULL when it was NULL (or on error with r->bad set). */
json_t *storage__get_json(struct storage__rd *r);
/* Parse canonical JSON text (any value, NULs allowed); NULL on error. */
json_t *storage__json_parse(const char *s, size_t len);
/* Canonical JSON text of v into a new NUL-terminated malloc'ed string; NULL on OOM. */
char *storage__json_text(const json_t *v, size_t *len);

/* ---- preparation (prep.c) -------------------------------------------------------------
 * Everything about a profile that does not depend on row ids, computed in the caller's
 * thread before it is queued, so that the writer thread only runs SQL. */
struct storage__prep {
  const struct spaa_profile *p;   /* borrowed, as given to spaa_store_put */
  const struct spaa_meta *m;      /* borrowed */
  struct spaa_cid *dso_cid;       /* n_dsos */
  struct spaa_cid *frame_cid;     /* n_frames */
  size_t *frame_dso;              /* n_frames: index in p->dsos, SIZE_MAX without a dso */
  struct spaa_cid *stack_cid;     /* n_stacks */
  size_t *stack_frames;           /* every stack's frames as indexes in p->frames, leaf first */
  size_t *stack_frames_off;       /* n_stacks + 1 offsets into stack_frames */
  size_t *sample_stack;           /* n_samples: index in p->stacks, SIZE_MAX when unknown */
  struct spaa_buf blobs;          /* every packed blob below, back to back */
  size_t *dso_inst;               /* n_dsos + 1 offsets into blobs */
  size_t *pstack_w;               /* 2 * n_stacks + 1 offsets: weights, x, weights, x... */
  size_t *sample_rest;            /* n_samples + 1 offsets */
  size_t header_off[2];           /* the packed header */
  size_t strings_off[2];          /* the string table */
  size_t windows_off[2];          /* the packed windows */
  char **frame_extra;             /* n_frames canonical JSON texts or NULL */
  char **thread_extra;            /* n_threads */
  char **stack_ctx;               /* n_stacks: context minus event, canonical, or NULL */
  char *labels_text, *attrs_text; /* canonical JSON or NULL */
  const char **event_names;       /* n_events_out names (borrowed from the profile) */
  char **event_totals;            /* n_events_out canonical JSON objects */
  size_t n_events_out;
  int64_t samples;                /* the "samples" number of the meta answer */
  void *original;                 /* zstd-compressed original payload, or NULL */
  size_t original_len;
};

/* 0, or SPAA_E_INVALID (not in canonical form, a dangling reference...) / SPAA_E_NOMEM. */
int storage__prep_build(struct storage__prep *pr, const struct spaa_profile *p,
                        const struct spaa_meta *m, struct spaa_err *err);
void storage__prep_free(struct storage__prep *pr); /* NULL-safe */

/* Flags of profile_frame.flags. */
#define PF_UNRESOLVED 1u      /* func is not resolved: the raw text is in profile_frame.func */
#define PF_SRC_UNRESOLVED 2u  /* srcline_resolved false */
#define PF_INLINED 4u         /* inlined true */
#define PF_NO_DEPTH 8u        /* inline_depth absent */
#define PF_SRC_HERE 16u       /* srcline comes from profile_frame.srcline (even when NULL) */

/* Flags at the start of a profile_stack.x blob. */
#define PS_EXCLUSIVE 1u       /* exclusive frame (uv) and weights follow */
#define PS_NO_TYPE 2u         /* stack_type absent (stored as "unified") */
#define PS_FRAMES 4u          /* explicit local frame ids follow (uv count, uv ids) */
#define PS_RELATED 8u         /* related stack ids follow (uv count, strings) */
#define PS_EXTRA 16u          /* extra JSON follows */

/* Flags at the start of a sample.rest blob. */
#define SR_PID 1u
#define SR_CPU 2u
#define SR_EVENT 4u           /* string table index */
#define SR_PERIOD 8u
#define SR_WEIGHTS 16u
#define SR_CONTEXT 32u
#define SR_EXTRA 64u
#define SR_STACK_ID 128u      /* the stack id as text: it names no stack of the profile */

/* ---- insertion (writer.c) ------------------------------------------------------------ */
/* Insert one prepared profile on the writer connection inside the open transaction.
 * 0 stored, 1 already stored, or SPAA_E_STORE with err filled. */
int storage__insert(struct storage__conn *c, const struct storage__prep *pr,
                    struct spaa_err *err);

/* ---- the store (storage.c) ----------------------------------------------------------- */
struct storage__job {
  const struct storage__prep *prep; /* what to insert (owned by the waiting caller) */
  int rc;                           /* 0, 1 or SPAA_E_* once done */
  int done;                         /* set by the writer under the store mutex */
  struct spaa_err err;              /* the failure, when rc < 0 */
  struct storage__job *next;        /* queue link */
};

struct spaa_store {
  char *path;                       /* the database file */
  size_t queue_depth, batch_max;    /* from the options */
  int sync_normal;                  /* from the options: synchronous=NORMAL */
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
  struct spaa_store_stats stats;    /* counters (under mu) */
  pthread_mutex_t rmu;              /* guards the reader pool */
  pthread_cond_t rcv;               /* signalled when a reader is returned */
  struct storage__conn *readers;    /* n_readers connections */
  char *rbusy;                      /* 1 while a reader is lent out */
  size_t n_readers;
};

/* Borrow a reader connection (waits for a free one, never for the writer); give it back
 * with storage__reader_put. NULL with err filled when none could be opened. */
struct storage__conn *storage__reader_get(struct spaa_store *s, struct spaa_err *err);
void storage__reader_put(struct spaa_store *s, struct storage__conn *c);

#endif
