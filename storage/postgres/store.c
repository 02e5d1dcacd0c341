/* The PostgreSQL store: a pool of connections shared by the callers' threads (no writer
 * thread: PostgreSQL serializes what needs it), puts grouped per transaction and answered
 * after COMMIT, a lost connection answered SPAA_E_BUSY (503 + Retry-After) and reconnected
 * on next use, and the backend's table of operations. */
#include <stdlib.h>
#include <string.h>

#include "storage/postgres/pg_int.h"

#define PG_EXTRA_CONNS 2 /* connections beyond the readers asked for: puts */
#define PG_ATTEMPTS 5    /* a batch re-run after a deadlock or a stale connection */

struct pg__conn *pg__get(struct storage__pg *s, struct spaa_err *err)
{
  struct pg__conn *c = NULL;
  size_t i;
  int rc;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    for (i = 0; i < s->n_conns && s->cbusy[i]; i++)
      ;
    if (i < s->n_conns)
      break;
    pthread_cond_wait(&s->cv, &s->mu);
  }
  s->cbusy[i] = 1;
  c = &s->conns[i];
  pthread_mutex_unlock(&s->mu);
  if (c->db && PQstatus(c->db) == CONNECTION_OK)
    return c;
  rc = pg__connect(c, s->conninfo, 0, err);
  pthread_mutex_lock(&s->mu);
  s->healthy = rc == 0;
  pthread_mutex_unlock(&s->mu);
  if (!rc)
    return c;
  pg__put(s, c);
  return NULL;
}

void pg__put(struct storage__pg *s, struct pg__conn *c)
{
  pthread_mutex_lock(&s->mu);
  if (c->lost)
    s->healthy = 0;
  s->cbusy[c - s->conns] = 0;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static void pg_close(struct spaa_store *base)
{
  struct storage__pg *s = (struct storage__pg *)base;
  size_t i;
  pthread_mutex_lock(&s->mu);
  s->stopping = 1;
  s->paused = 0;
  pthread_cond_broadcast(&s->cv);
  while (s->inflight)
    pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
  for (i = 0; i < s->n_conns; i++) {
    pg__disconnect(&s->conns[i]);
    storage__cache_free(&s->conns[i].cache);
  }
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s->conns);
  free(s->cbusy);
  free(s->conninfo);
  free(s);
}

static int pg_open(const struct spaa_store_opts *opts, struct spaa_store **out,
                   struct spaa_err *err)
{
  struct storage__pg *s = calloc(1, sizeof(*s));
  size_t n = (opts->readers ? opts->readers : 1) + PG_EXTRA_CONNS, i;
  int rc;
  if (!s)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  s->base.be = &storage__postgres_backend;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->queue_depth = opts->queue_depth ? opts->queue_depth : 256;
  s->stats.synchronous = opts->durability == SPAA_DURABILITY_NORMAL ? 1 : 2;
  /* the location lost its scheme in store.c: a URI again, which libpq parses */
  if ((s->conninfo = malloc(strlen(opts->path) + 16)))
    strcpy(s->conninfo, "postgresql:"), strcat(s->conninfo, opts->path);
  s->conns = calloc(n, sizeof(*s->conns));
  s->cbusy = calloc(n, 1);
  if (!s->conninfo || !s->conns || !s->cbusy) {
    pg_close(&s->base);
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  s->n_conns = n;
  for (i = 0; i < n; i++) {
    s->conns[i].gen = -1;
    s->conns[i].sync_off = opts->durability == SPAA_DURABILITY_NORMAL;
  }
  if ((rc = pg__connect(&s->conns[0], s->conninfo, 1, err))) {
    pg_close(&s->base);
    return rc == SPAA_E_BUSY ? SPAA_E_STORE : rc;
  }
  s->healthy = 1;
  *out = &s->base;
  return 0;
}

/* Ready when a connection answers now (a broken one is reconnected). */
static int pg_ready(struct spaa_store *base)
{
  struct storage__pg *s = (struct storage__pg *)base;
  struct pg__conn *c;
  PGresult *r;
  int ok;
  pthread_mutex_lock(&s->mu);
  ok = !s->stopping;
  pthread_mutex_unlock(&s->mu);
  if (!ok || !(c = pg__get(s, NULL)))
    return 0;
  r = pg__sql(c, "SELECT 1", NULL, NULL);
  ok = r != NULL;
  PQclear(r);
  pg__put(s, c);
  pthread_mutex_lock(&s->mu);
  s->healthy = ok;
  pthread_mutex_unlock(&s->mu);
  return ok;
}

/* Savepoint one profile: 0 / 1 as pg__insert, a profile-only failure rolled back to the
 * savepoint, or a batch-wide failure (the connection, a deadlock) returned as -1. */
static int put_one(struct pg__conn *c, const struct storage__prep *pr, int *rc,
                   struct spaa_err *err)
{
  size_t mark = c->cache.n_pending;
  if (pg__exec(c, "SAVEPOINT one_profile", err))
    return -1;
  *rc = pg__insert(c, pr, err);
  if (*rc < 0 && (c->lost || c->retry))
    return -1;
  if (*rc == 0)
    return pg__exec(c, "RELEASE SAVEPOINT one_profile", err) ? -1 : 0;
  storage__cache_rollback(&c->cache, mark);
  return pg__exec(c, "ROLLBACK TO SAVEPOINT one_profile", err) ? -1 : 0;
}

/* One transaction over the prepared profiles of a batch (rcs[i] already < 0 are skipped).
 * 0 committed (each rcs[i] says what became of its profile), or a batch-wide error with
 * *berr filled: nothing of the batch is stored. */
static int run_batch(struct pg__conn *c, size_t n, struct storage__prep *preps, int *rcs,
                     struct spaa_err *errs, struct spaa_err *berr)
{
  struct pg__params p;
  PGresult *r;
  size_t i;
  int64_t gen;
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, PG_LOCK_SWEEP);
  if (pg__exec(c, "BEGIN", berr))
    return -1;
  if (!(r = pg__run(c, PS_LOCK_SHARED, &p, berr)))
    goto fail;
  gen = pg__int(r, 0, 1);
  PQclear(r);
  if (gen != c->gen) { /* a sweep ran since the cache was filled: its rows may be gone */
    storage__cache_free(&c->cache);
    c->gen = gen;
  }
  for (i = 0; i < n; i++)
    if (rcs[i] >= 0 && put_one(c, &preps[i], &rcs[i], &errs[i]) < 0) {
      *berr = errs[i];
      goto fail;
    }
  if (pg__exec(c, "COMMIT", berr))
    goto fail;
  storage__cache_commit(&c->cache);
  return 0;
fail:
  storage__cache_rollback(&c->cache, 0);
  if (c->db && PQstatus(c->db) == CONNECTION_OK)
    pg__exec(c, "ROLLBACK", NULL);
  return -1;
}

/* Wait for room; 0, SPAA_E_BUSY or SPAA_E_SHUTDOWN. */
static int admit(struct storage__pg *s, size_t n)
{
  int rc = 0;
  pthread_mutex_lock(&s->mu);
  if (s->stopping)
    rc = SPAA_E_SHUTDOWN;
  else if (s->inflight + n > s->queue_depth && s->inflight)
    rc = SPAA_E_BUSY;
  if (rc == SPAA_E_BUSY)
    s->stats.busy += n;
  if (!rc) {
    s->inflight += n;
    s->stats.queued = s->inflight;
    while (s->paused && !s->stopping)
      pthread_cond_wait(&s->cv, &s->mu);
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

static void finish(struct storage__pg *s, size_t n, const int *rcs)
{
  size_t i;
  pthread_mutex_lock(&s->mu);
  s->inflight -= n;
  s->stats.queued = s->inflight;
  for (i = 0; i < n; i++) {
    if (rcs[i] == 0)
      s->stats.stored++;
    else if (rcs[i] == 1)
      s->stats.duplicates++;
    else if (rcs[i] != SPAA_E_INVALID)
      s->stats.failed++;
  }
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/* Store preps[0..n) in one transaction, re-run after a deadlock or a stale connection. */
static void store_batch(struct storage__pg *s, size_t n, struct storage__prep *preps, int *rcs,
                        struct spaa_err *errs)
{
  struct spaa_err berr;
  struct pg__conn *c;
  int *keep = malloc((n ? n : 1) * sizeof(int)), attempt, rc = -1;
  size_t i;
  memset(&berr, 0, sizeof(berr));
  if (!keep) {
    spaa_err_set(&berr, SPAA_E_NOMEM, 0, 0, NULL);
    goto fail;
  }
  memcpy(keep, rcs, n * sizeof(int));
  for (attempt = 0; attempt < PG_ATTEMPTS && rc; attempt++) {
    if (!(c = pg__get(s, &berr)))
      break;
    memcpy(rcs, keep, n * sizeof(int));
    rc = run_batch(c, n, preps, rcs, errs, &berr);
    if (rc && c->lost)
      pg__disconnect(c);
    pg__put(s, c);
    if (rc && !c->retry && !(c->lost && attempt == 0))
      break;
  }
  if (!rc) {
    pthread_mutex_lock(&s->mu);
    s->stats.transactions++;
    pthread_mutex_unlock(&s->mu);
  }
fail:
  if (rc)
    for (i = 0; i < n; i++)
      if (!keep || keep[i] >= 0) {
        rcs[i] = berr.code ? berr.code : SPAA_E_STORE;
        errs[i] = berr;
      }
  free(keep);
}

static int pg_put_many(struct spaa_store *base, size_t n, const struct spaa_profile *const *p,
                       const struct spaa_meta *meta, int *rcs, struct spaa_err *errs)
{
  struct storage__pg *s = (struct storage__pg *)base;
  struct storage__prep *preps = calloc(n ? n : 1, sizeof(*preps));
  size_t i;
  int rc;
  if (!preps) {
    for (i = 0; i < n; i++)
      rcs[i] = spaa_err_set(&errs[i], SPAA_E_NOMEM, 0, 0, NULL);
    return SPAA_E_NOMEM;
  }
  for (i = 0; i < n; i++) {
    memset(&errs[i], 0, sizeof(errs[i]));
    rcs[i] = storage__prep_build(&preps[i], p[i], &meta[i], &errs[i]);
  }
  if ((rc = admit(s, n))) {
    for (i = 0; i < n; i++)
      if (rcs[i] >= 0)
        rcs[i] = spaa_err_set(&errs[i], rc, 0, 0, rc == SPAA_E_BUSY ? "the store queue is "
                              "full" : "the store is closing");
  } else {
    store_batch(s, n, preps, rcs, errs);
    finish(s, n, rcs);
  }
  for (i = 0; i < n; i++)
    storage__prep_free(&preps[i]);
  free(preps);
  return rc;
}

static void pg_stats(struct spaa_store *base, struct spaa_store_stats *out)
{
  struct storage__pg *s = (struct storage__pg *)base;
  pthread_mutex_lock(&s->mu);
  *out = s->stats;
  pthread_mutex_unlock(&s->mu);
}

static void pg_pause(struct spaa_store *base, int on)
{
  struct storage__pg *s = (struct storage__pg *)base;
  pthread_mutex_lock(&s->mu);
  s->paused = on;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static int pg_get(struct spaa_store *s, const char *id, struct spaa_profile **out,
                  struct spaa_err *err)
{
  return pg__get_profile((struct storage__pg *)s, id, out, err);
}

static int pg_meta(struct spaa_store *s, const char *id, struct spaa_store_profile_info *out,
                   struct spaa_err *err)
{
  return pg__meta((struct storage__pg *)s, id, out, err);
}

static int pg_list(struct spaa_store *s, const struct spaa_list_query *q,
                   struct spaa_store_page *out, struct spaa_err *err)
{
  return pg__list((struct storage__pg *)s, q, out, err);
}

static int pg_scan(struct spaa_store *s, const struct spaa_list_query *sel,
                   spaa_store_scan_cb cb, void *ctx, struct spaa_err *err)
{
  return pg__scan((struct storage__pg *)s, sel, cb, ctx, err);
}

static int pg_remove(struct spaa_store *s, const struct spaa_list_query *sel,
                     struct spaa_store_deleted *out, struct spaa_err *err)
{
  return pg__delete((struct storage__pg *)s, sel, out, err);
}

static int pg_counts(struct spaa_store *s, struct spaa_store_counts *out, struct spaa_err *err)
{
  return pg__counts((struct storage__pg *)s, out, err);
}

#define PG_OPS                                                                               \
  .open = pg_open, .close = pg_close, .ready = pg_ready, .put_many = pg_put_many,            \
  .get = pg_get, .meta = pg_meta, .list = pg_list, .scan = pg_scan, .remove = pg_remove,     \
  .counts = pg_counts, .stats = pg_stats, .pause = pg_pause

const struct spaa_store_backend storage__postgres_backend = {.name = "postgres", PG_OPS};
const struct spaa_store_backend storage__postgresql_backend = {.name = "postgresql", PG_OPS};
