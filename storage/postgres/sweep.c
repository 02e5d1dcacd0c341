/* The sweep after a delete on PostgreSQL: the stacks, frames, dsos and block dictionaries no
 * remaining block names go while the puts of every relay go on. Shared rows carry no
 * reference count, so the sweep reads what the remaining blocks name, into bitmaps in memory,
 * without any lock; it takes the sweep lock (PG_LOCK_SWEEP, which every put holds shared for
 * its whole transaction) exclusively only for short steps: one to begin, one per SWEEP_ROWS
 * candidates deleted, one to end. A put waits for one step at most. What keeps the rows a put
 * takes meanwhile, on any relay:
 * - the first step notes the highest row of each kind and the newest block, and no put runs
 *   during it: rows above are newer than the sweep and never candidates, and the blocks up to
 *   the newest are all committed; they are read without the lock (no delete runs beside this
 *   one, PG_LOCK_DELETE, so none of them goes away);
 * - a put's transaction lies between two steps, and its block names every row it took (found
 *   by content id, hit in its writer's cache, or new). Each later step first marks the blocks
 *   committed since the step before, so a row a put found is marked before any step could
 *   delete it; a candidate marked so is kept, with what it names (a stack's frames, a frame's
 *   dso). Most such blocks are read without the lock just before the step takes it, so the
 *   step itself reads only those of the last moments;
 * - the first step bumps the sweep generation: each writer empties its content-id cache at
 *   its next batch, so a cache hit names a row found or inserted since the sweep began (whose
 *   block is marked as above), never one deleted.
 * Candidates go children first: stacks, then frames, then dsos, then dictionaries, so a kept
 * stack never names a deleted frame nor a kept frame a deleted dso. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/idmap.h"
#include "storage/postgres/pg_int.h"

#define SWEEP_BLOCKS 32 /* blocks read per query */
#define SWEEP_ROWS 4096 /* shared rows read per query, and candidates deleted per step */
#define PAGE_BITS 16    /* a bitmap page covers 2^16 row ids (8 KiB) */
#define SWEEP_LIST 4096 /* blocks listed per query, then read grouped by dictionary */
#define SWEEP_DICTS 4   /* block dictionaries kept decompressed (a service's is read once for
                           all its blocks in a list) */
/* A step asks for the lock for at most LOCK_WAIT_MS: puts asking after it wait behind it, so
 * when a long batch of puts holds it up (big profiles after their writer's cache was
 * emptied), it lets them go on, pauses, and asks again; after LOCK_TRIES it waits as long as
 * it takes (puts that never pause). */
#define LOCK_WAIT_MS 100
#define LOCK_TRIES 50

enum { K_STACK, K_FRAME, K_DSO, K_DICT, K__N }; /* the first three as storage__blk_rows */

/* A set of row ids 1..max whose pages are allocated as ids fall in them: its size follows the
 * rows that exist, not the highest id a long-lived sequence reached. */
struct bits {
  uint8_t **page; /* n pages of 2^PAGE_BITS bits, NULL until one is set */
  size_t n;
  int64_t max;    /* ids above are not held (newer than the sweep) */
};

static int bits_init(struct bits *b, int64_t max)
{
  b->max = max > 0 ? max : 0;
  b->n = (size_t)(b->max >> PAGE_BITS) + 1;
  b->page = calloc(b->n, sizeof(*b->page));
  return b->page ? 0 : SPAA_E_NOMEM;
}

static void bits_free(struct bits *b)
{
  size_t i;
  for (i = 0; b->page && i < b->n; i++)
    free(b->page[i]);
  free(b->page);
  memset(b, 0, sizeof(*b));
}

/* 0 or SPAA_E_NOMEM; an id outside 1..max is not held (never a candidate anyway). */
static int bits_set(struct bits *b, int64_t row)
{
  uint8_t **pg;
  uint64_t off;
  if (row <= 0 || row > b->max)
    return 0;
  pg = &b->page[(uint64_t)row >> PAGE_BITS];
  if (!*pg && !(*pg = calloc(1, (size_t)1 << (PAGE_BITS - 3))))
    return SPAA_E_NOMEM;
  off = (uint64_t)row & ((1u << PAGE_BITS) - 1);
  (*pg)[off >> 3] |= (uint8_t)(1u << (off & 7));
  return 0;
}

static int bits_has(const struct bits *b, int64_t row)
{
  const uint8_t *pg;
  uint64_t off;
  if (row <= 0 || row > b->max || !(pg = b->page[(uint64_t)row >> PAGE_BITS]))
    return 0;
  off = (uint64_t)row & ((1u << PAGE_BITS) - 1);
  return pg[off >> 3] >> (off & 7) & 1;
}

struct sweep {
  struct storage__pg *s;
  struct pg__conn *c;          /* the delete's connection */
  int64_t max[K__N];           /* the highest row of each kind when the sweep began */
  int64_t safe;                /* every block up to this profile number is marked */
  struct spaa_idmap seen;      /* blocks above `safe` marked already (their numbers) */
  struct bits keep[K_DICT];    /* rows the remaining blocks name, and what those name */
  struct storage__rdict dict[SWEEP_DICTS]; /* the dictionaries of the last blocks read */
  uint64_t dict_used[SWEEP_DICTS], dict_tick; /* when each was last used */
  struct spaa_buf raw;         /* one decompressed block */
  struct pg__ids ids;          /* an int8[] literal being built */
  int64_t cand[SWEEP_ROWS];    /* candidates of the rows read last */
  size_t n_cand;
  uint64_t deleted[K__N];      /* rows deleted by the steps that committed */
  uint64_t blocks, later;      /* blocks marked; of them, committed after the sweep began */
  int bumped;                  /* the generation was bumped (at the first step deleting) */
  uint64_t t_lock;             /* when the step holding the lock asked for it */
  uint64_t steps, lock_max_ns; /* steps holding the lock; the longest, lock asked to COMMIT */
  struct spaa_err *err;
};

static int lost_or_store(const struct sweep *w)
{
  return w->c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
}

static int nomem(struct sweep *w, int rc)
{
  return rc == SPAA_E_NOMEM ? spaa_err_set(w->err, rc, 0, 0, NULL) : rc;
}

static int keep_cb(void *ctx, int kind, int64_t row)
{
  struct sweep *w = ctx;
  return kind >= 0 && kind < K_DICT ? bits_set(&w->keep[kind], row) : 0;
}

/* A block to read: its profile number and its dictionary (0: none). */
struct blk {
  int64_t profile, dict;
};

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int by_dict_up(const void *a, const void *b)
{
  const struct blk *x = a, *y = b;
  int c = cmp_i64(x->dict, y->dict);
  return c ? c : cmp_i64(x->profile, y->profile);
}

static int by_dict_down(const void *a, const void *b)
{
  const struct blk *x = a, *y = b;
  int c = cmp_i64(y->dict, x->dict);
  return c ? c : cmp_i64(x->profile, y->profile);
}

/* Mark what the block of row k of a (profile, dict, data) answer names. */
static int mark_block(struct sweep *w, const PGresult *r, int k)
{
  struct storage__blk_rd b;
  int64_t dict = pg__int(r, k, 1);
  unsigned d, lru = 0;
  int rc;
  for (d = 0; d < SWEEP_DICTS && w->dict[d].id != dict; d++)
    if (w->dict_used[d] < w->dict_used[lru])
      lru = d;
  if (d == SWEEP_DICTS) /* not held: in place of the least recently used */
    d = lru;
  w->dict_used[d] = ++w->dict_tick;
  rc = pg__block_raw(w->c, &w->dict[d], dict, PQgetvalue(r, k, 2), (size_t)PQgetlength(r, k, 2),
                     &w->raw, w->err);
  if (!rc)
    rc = storage__blk_open(&b, w->raw.p, w->raw.len) ? SPAA_E_STORE
                                                      : storage__blk_rows(&b, 1, keep_cb, w);
  if (rc == SPAA_E_STORE && !w->err->code)
    spaa_err_set(w->err, rc, 0, 0, "the stored block of profile number %" PRId64 " is corrupt",
                 pg__int(r, k, 0));
  w->blocks++;
  return nomem(w, rc);
}

/* Read and mark the blocks whose numbers are in w->ids (emptied); `later`: blocks committed
 * since the sweep began, noted in `seen`. */
static int mark_ids(struct sweep *w, int later)
{
  PGresult *r;
  int k, rc;
  r = pg__ids_run(w->c, "SELECT profile, dict, data FROM profile_block"
                        " WHERE profile = ANY($1::int8[])", &w->ids, &rc, w->err);
  for (k = 0; r && k < PQntuples(r) && !rc; k++) {
    rc = mark_block(w, r, k);
    if (!rc && later) {
      w->later++;
      if (spaa_idmap_put(&w->seen, (uint64_t)pg__int(r, k, 0), 0, NULL) < 0)
        rc = spaa_err_set(w->err, SPAA_E_NOMEM, 0, 0, NULL);
    }
  }
  PQclear(r);
  return rc;
}

/* Mark the blocks v[0..n), sorted by dictionary: each query reads at most SWEEP_BLOCKS blocks
 * of one dictionary, so a dictionary is read once for all its blocks among them. */
static int mark_list(struct sweep *w, const struct blk *v, size_t n, int later)
{
  size_t i = 0, j;
  int rc = 0;
  while (i < n && !rc) {
    for (j = i; j < n && j - i < SWEEP_BLOCKS && v[j].dict == v[i].dict && !rc; j++)
      rc = nomem(w, pg__ids_add(&w->ids, v[j].profile));
    if (!rc)
      rc = mark_ids(w, later);
    i = j;
  }
  pg__ids_reset(&w->ids);
  return rc;
}

/* The blocks put before the sweep began (up to w->safe), listed SWEEP_LIST at a time and read
 * by dictionary (each list in the other direction than the last, so that the dictionaries
 * read last are read first again); every query its own snapshot: no transaction stays open,
 * no lock is held. */
static int mark_old(struct sweep *w)
{
  struct blk *v = malloc(SWEEP_LIST * sizeof(*v));
  int64_t after = 0;
  int n = SWEEP_LIST, k, rc = 0, down = 0;
  if (!v)
    return spaa_err_set(w->err, SPAA_E_NOMEM, 0, 0, NULL);
  while (!rc && n == SWEEP_LIST) {
    struct pg__params p;
    PGresult *r;
    memset(&p, 0, sizeof(p));
    pg__p_int(&p, after);
    pg__p_int(&p, w->safe);
    pg__p_int(&p, SWEEP_LIST);
    if (!(r = pg__sql(w->c, "SELECT profile, dict FROM profile_block WHERE profile > $1::int8"
                            " AND profile <= $2::int8 ORDER BY profile LIMIT $3::int8", &p,
                      w->err))) {
      rc = lost_or_store(w);
      break;
    }
    n = PQntuples(r);
    for (k = 0; k < n; k++) {
      v[k].profile = after = pg__int(r, k, 0);
      v[k].dict = pg__int(r, k, 1);
    }
    PQclear(r);
    qsort(v, (size_t)n, sizeof(*v), down ? by_dict_down : by_dict_up);
    down = !down;
    rc = mark_list(w, v, (size_t)n, 0);
  }
  free(v);
  return rc;
}

/* Mark the blocks committed since the sweep began that are not marked yet. Without the lock
 * (locked 0): those committed so far, noted in `seen`, as a put still running may commit a
 * lower number later. Under it (locked 1), no put runs: every one, and `safe` becomes the
 * newest. */
static int mark_new(struct sweep *w, int locked)
{
  struct pg__params p;
  struct blk *v = NULL;
  PGresult *r;
  int64_t top = w->safe;
  size_t m = 0;
  int k, n, rc = 0;
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, w->safe);
  if (!(r = pg__sql(w->c, "SELECT profile, dict FROM profile_block WHERE profile > $1::int8"
                          " ORDER BY profile", &p, w->err)))
    return lost_or_store(w);
  n = PQntuples(r);
  if (n && !(v = malloc((size_t)n * sizeof(*v))))
    rc = spaa_err_set(w->err, SPAA_E_NOMEM, 0, 0, NULL);
  for (k = 0; k < n && !rc; k++) {
    top = pg__int(r, k, 0);
    if (!spaa_idmap_get(&w->seen, (uint64_t)top, NULL)) {
      v[m].profile = top;
      v[m++].dict = pg__int(r, k, 1);
    }
  }
  PQclear(r);
  if (!rc && m) {
    qsort(v, m, sizeof(*v), by_dict_up);
    rc = mark_list(w, v, m, 1);
  }
  free(v);
  if (!rc && locked) {
    w->safe = top;
    spaa_idmap_free(&w->seen);
    spaa_idmap_init(&w->seen);
  }
  return rc;
}

/* The frame rows of a stack row's `frames` (varints) into keep. */
static int keep_frames(struct sweep *w, int64_t stack, const char *v, size_t len)
{
  struct storage__rd rd;
  int rc = 0;
  storage__rd_init(&rd, v, len);
  while (!rc && rd.pos < rd.len) {
    uint64_t row = storage__get_uv(&rd);
    if (rd.bad || row > INT64_MAX)
      return spaa_err_set(w->err, SPAA_E_STORE, 0, 0, "stack row %" PRId64 " is corrupt",
                          stack);
    rc = nomem(w, bits_set(&w->keep[K_FRAME], (int64_t)row));
  }
  return rc;
}

/* Candidates of `kind` that a block marked since they were read stay, and so does what they
 * name: a stack's frames, a frame's dso. */
static int keep_revived(struct sweep *w, int kind)
{
  PGresult *r;
  size_t i;
  int k, rc = 0;
  if (kind != K_STACK && kind != K_FRAME)
    return 0;
  for (i = 0; i < w->n_cand && !rc; i++)
    if (bits_has(&w->keep[kind], w->cand[i]))
      rc = nomem(w, pg__ids_add(&w->ids, w->cand[i]));
  if (rc)
    return rc;
  r = pg__ids_run(w->c, kind == K_STACK ? "SELECT id, frames FROM stack WHERE id = ANY($1::int8[])"
                                        : "SELECT id, dso FROM frame WHERE id = ANY($1::int8[])"
                                          " AND dso IS NOT NULL", &w->ids, &rc, w->err);
  for (k = 0; r && k < PQntuples(r) && !rc; k++)
    rc = kind == K_STACK ? keep_frames(w, pg__int(r, k, 0), PQgetvalue(r, k, 1),
                                       (size_t)PQgetlength(r, k, 1))
                         : nomem(w, bits_set(&w->keep[K_DSO], pg__int(r, k, 1)));
  PQclear(r);
  return rc;
}

static int exec_params(struct sweep *w, const char *sql, const struct pg__params *p,
                       uint64_t *affected)
{
  PGresult *r = pg__sql(w->c, sql, p, w->err);
  if (!r)
    return lost_or_store(w);
  if (affected)
    *affected = strtoull(PQcmdTuples(r), NULL, 10);
  PQclear(r);
  return 0;
}

/* The time since t0 as the longest puts may have waited for the sweep, if it is. */
static void waited(struct sweep *w, uint64_t t0)
{
  uint64_t ns = storage__mono_ns() - t0;
  if (ns > w->lock_max_ns)
    w->lock_max_ns = ns;
  pthread_mutex_lock(&w->s->mu);
  if (ns > w->s->stats.step_max_ns)
    w->s->stats.step_max_ns = ns;
  pthread_mutex_unlock(&w->s->mu);
}

/* BEGIN and take the sweep lock exclusively: the puts running finish first, later ones wait
 * until COMMIT (unlock). */
static int lock(struct sweep *w)
{
  struct pg__params p;
  struct timespec pause = {0, LOCK_WAIT_MS * 1000000L};
  char sql[64];
  int attempt, rc = 0;
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, PG_LOCK_SWEEP);
  for (attempt = 0; attempt <= LOCK_TRIES; attempt++) {
    snprintf(sql, sizeof(sql), "SET LOCAL lock_timeout = %d",
             attempt < LOCK_TRIES ? LOCK_WAIT_MS : 0);
    w->t_lock = storage__mono_ns();
    if ((rc = pg__exec(w->c, "BEGIN", w->err)) || (rc = pg__exec(w->c, sql, w->err)))
      break;
    if (!(rc = exec_params(w, "SELECT pg_advisory_xact_lock($1::int8)", &p, NULL)))
      return pg__exec(w->c, "SET LOCAL lock_timeout = 0", w->err);
    if (!w->c->timeout)
      break;
    /* puts held it past LOCK_WAIT_MS: let them on, ask again after a while */
    waited(w, w->t_lock);
    pg__exec(w->c, "ROLLBACK", NULL);
    spaa_err_clear(w->err);
    nanosleep(&pause, NULL);
  }
  return rc;
}

/* COMMIT (rc 0) or ROLLBACK; the step's time, from asking for the lock, into the figures. */
static int unlock(struct sweep *w, int rc)
{
  if (!rc)
    rc = pg__exec(w->c, "COMMIT", w->err);
  if (rc && w->c->db && PQstatus(w->c->db) == CONNECTION_OK)
    pg__exec(w->c, "ROLLBACK", NULL);
  waited(w, w->t_lock);
  w->steps++;
  pthread_mutex_lock(&w->s->mu);
  w->s->stats.steps++;
  w->s->stats.step_ns += storage__mono_ns() - w->t_lock;
  pthread_mutex_unlock(&w->s->mu);
  return rc;
}

/* Bump the generation inside the first step that deletes (and the one deleting
 * dictionaries): each writer empties its content-id cache at its next batch, so none hits a
 * row deleted. Rows found or inserted after it are named by blocks the next steps mark. */
static int bump_generation(struct sweep *w)
{
  w->bumped = 1;
  return pg__exec(w->c, "UPDATE spaa_meta SET v = v + 1 WHERE k = 'sweep'", w->err);
}

/* First step: the highest row of each kind and the newest block. */
static int begin(struct sweep *w)
{
  static const struct pg__params none;
  PGresult *r = NULL;
  int k, rc = lock(w);
  if (!rc && !(r = pg__sql(w->c, "SELECT (SELECT max(id) FROM stack),"
                                 " (SELECT max(id) FROM frame), (SELECT max(id) FROM dso),"
                                 " (SELECT max(id) FROM block_dict),"
                                 " (SELECT max(profile) FROM profile_block)", &none, w->err)))
    rc = lost_or_store(w);
  if (!rc) {
    for (k = 0; k < K__N; k++)
      w->max[k] = pg__int(r, 0, k);
    w->safe = pg__int(r, 0, K__N);
  }
  PQclear(r);
  return unlock(w, rc);
}

/* A step: the candidates w->cand of `kind` go, but for those a block committed since they
 * were read names. */
static int step(struct sweep *w, int kind)
{
  static const char *const del[K_DICT] = {
    "DELETE FROM stack WHERE id = ANY($1::int8[])",
    "DELETE FROM frame WHERE id = ANY($1::int8[])",
    "DELETE FROM dso WHERE id = ANY($1::int8[])",
  };
  uint64_t n = 0;
  PGresult *r;
  size_t i;
  int rc = mark_new(w, 0), bumped = w->bumped; /* most of the new blocks, without the lock */
  if (rc)
    return rc;
  if (!(rc = lock(w)) && !(rc = mark_new(w, 1)) && !(rc = keep_revived(w, kind))) {
    for (i = 0; i < w->n_cand && !rc; i++)
      if (!bits_has(&w->keep[kind], w->cand[i]))
        rc = nomem(w, pg__ids_add(&w->ids, w->cand[i]));
    if (!rc && (r = pg__ids_run(w->c, del[kind], &w->ids, &rc, w->err))) {
      n = strtoull(PQcmdTuples(r), NULL, 10);
      PQclear(r);
    }
    if (!rc && n && !w->bumped)
      rc = bump_generation(w);
  }
  pg__ids_reset(&w->ids);
  if (!(rc = unlock(w, rc)))
    w->deleted[kind] += n;
  else
    w->bumped = bumped; /* rolled back */
  w->n_cand = 0;
  return rc;
}

/* Every row of `kind` up to its noted highest, SWEEP_ROWS per query (columns id, then what a
 * kept one names: a stack's frames, a frame's dso): a kept row keeps what it names, the
 * others are candidates, deleted by a step after each query. */
static int scan(struct sweep *w, int kind)
{
  static const char *const sql[K_DICT] = {
    "SELECT id, frames FROM stack WHERE id > $1::int8 AND id <= $2::int8 ORDER BY id"
    " LIMIT $3::int8",
    "SELECT id, dso FROM frame WHERE id > $1::int8 AND id <= $2::int8 ORDER BY id"
    " LIMIT $3::int8",
    "SELECT id FROM dso WHERE id > $1::int8 AND id <= $2::int8 ORDER BY id LIMIT $3::int8",
  };
  int64_t after = 0, id;
  int n = SWEEP_ROWS, k, rc = 0;
  while (!rc && n == SWEEP_ROWS) {
    struct pg__params p;
    PGresult *r;
    memset(&p, 0, sizeof(p));
    pg__p_int(&p, after);
    pg__p_int(&p, w->max[kind]);
    pg__p_int(&p, SWEEP_ROWS);
    if (!(r = pg__sql(w->c, sql[kind], &p, w->err)))
      return lost_or_store(w);
    n = PQntuples(r);
    w->n_cand = 0;
    for (k = 0; k < n && !rc; k++) {
      after = id = pg__int(r, k, 0);
      if (!bits_has(&w->keep[kind], id))
        w->cand[w->n_cand++] = id; /* at most SWEEP_ROWS: the query's limit */
      else if (kind == K_STACK)
        rc = keep_frames(w, id, PQgetvalue(r, k, 1), (size_t)PQgetlength(r, k, 1));
      else if (kind == K_FRAME && !pg__null(r, k, 1))
        rc = nomem(w, bits_set(&w->keep[K_DSO], pg__int(r, k, 1)));
    }
    PQclear(r);
    if (!rc && w->n_cand)
      rc = step(w, kind);
  }
  return rc;
}

/* Last step: the dictionaries no block uses (the step holds the lock: every block there is
 * is committed), the generation bumped again. */
static int end(struct sweep *w)
{
  struct pg__params p;
  int rc = lock(w);
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, w->max[K_DICT]);
  if (!rc)
    rc = mark_new(w, 1); /* (for the figures: nothing is deleted by what it marks) */
  if (!rc)
    rc = exec_params(w, "DELETE FROM block_dict d WHERE d.id <= $1::int8 AND NOT EXISTS"
                        " (SELECT 1 FROM profile_block b WHERE b.dict = d.id)", &p,
                     &w->deleted[K_DICT]);
  if (!rc && w->deleted[K_DICT]) /* a writer may hold one in its cache, whatever was bumped */
    rc = bump_generation(w);
  if ((rc = unlock(w, rc)))
    w->deleted[K_DICT] = 0;
  return rc;
}

static const char *ms(char *buf, size_t n, uint64_t ns)
{
  snprintf(buf, n, "%llu.%03llu", (unsigned long long)(ns / 1000000),
           (unsigned long long)(ns / 1000 % 1000));
  return buf;
}

int pg__sweep(struct storage__pg *s, struct pg__conn *c, struct spaa_store_deleted *out,
              struct spaa_err *err)
{
  struct sweep *w = calloc(1, sizeof(*w));
  uint64_t t0 = storage__mono_ns();
  char t1[32], t2[32];
  int k, rc;
  if (!w)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  w->s = s;
  w->c = c;
  w->err = err;
  spaa_idmap_init(&w->seen);
  for (k = 0; k < SWEEP_DICTS; k++)
    spaa_buf_init(&w->dict[k].raw, 0);
  spaa_buf_init(&w->raw, 0);
  pg__ids_init(&w->ids);
  rc = begin(w);
  for (k = 0; k < K_DICT && !rc; k++)
    rc = nomem(w, bits_init(&w->keep[k], w->max[k]));
  if (!rc)
    rc = mark_old(w);
  if (!rc && s->sweep_hook)
    s->sweep_hook(s->sweep_hook_ctx);
  for (k = K_STACK; k < K_DICT && !rc; k++)
    rc = scan(w, k);
  if (!rc)
    rc = end(w);
  out->stacks = w->deleted[K_STACK];
  out->frames = w->deleted[K_FRAME];
  out->dsos = w->deleted[K_DSO];
  out->dicts = w->deleted[K_DICT];
  if (!rc)
    storage__log(&s->log, SPAA_STORE_LOG_INFO, "PostgreSQL sweep done",
                 "blocks=%llu put_during=%llu stacks=%llu frames=%llu dsos=%llu dicts=%llu "
                 "steps=%llu lock_max_ms=%s took_ms=%s", (unsigned long long)w->blocks,
                 (unsigned long long)w->later, (unsigned long long)out->stacks,
                 (unsigned long long)out->frames, (unsigned long long)out->dsos,
                 (unsigned long long)out->dicts, (unsigned long long)w->steps,
                 ms(t1, sizeof(t1), w->lock_max_ns), ms(t2, sizeof(t2), storage__mono_ns() - t0));
  for (k = 0; k < K_DICT; k++)
    bits_free(&w->keep[k]);
  spaa_idmap_free(&w->seen);
  for (k = 0; k < SWEEP_DICTS; k++)
    spaa_buf_free(&w->dict[k].raw);
  spaa_buf_free(&w->raw);
  pg__ids_free(&w->ids);
  free(w);
  return rc;
}
