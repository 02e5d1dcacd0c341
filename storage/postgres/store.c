/* The PostgreSQL store: one writer thread per relay grouping queued puts into transactions
 * (acknowledged after COMMIT), a pool of connections for reads and deletes, a lost
 * connection answered SPAA_E_BUSY (503 + Retry-After) and reconnected on next use, a
 * database unreachable at start answered the same until the writer has connected and
 * migrated, and the backend's table of operations. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "storage/postgres/pg_int.h"

#define PG_EXTRA_CONNS 1 /* pool connections beyond the readers asked for (deletes) */
#define PG_ATTEMPTS 5    /* a batch re-run after a deadlock or a stale connection */
#define PG_RETRY_MS 500  /* between attempts to reach a database that was not there at start */

/* A length of time in ns as seconds with milliseconds, "12.345", into buf. */
static const char *secs(char *buf, size_t n, int64_t ns)
{
  if (ns < 0)
    ns = 0;
  snprintf(buf, n, "%lld.%03lld", (long long)(ns / 1000000000), (long long)(ns / 1000000 % 1000));
  return buf;
}

void pg__health(struct storage__pg *s, const struct pg__conn *c, int ok, uint64_t failed)
{
  int64_t now = (int64_t)storage__mono_ns();
  char where[2 * sizeof(s->where)], q[2 * sizeof(c->why)], t[32], t2[32];
  const char *why = c && c->why[0] ? c->why : "the connection is down";
  pthread_mutex_lock(&s->mu);
  if (ok && s->down && c && c->began_ns && c->began_ns < s->down_ns) {
    pthread_mutex_unlock(&s->mu); /* it worked before the outage: no news of the database */
    return;
  }
  s->healthy = ok;
  storage__log_q(where, sizeof(where), s->where);
  if (ok && s->down) {
    storage__log(&s->log, SPAA_STORE_LOG_INFO, "PostgreSQL reconnected",
                 "database=\"%s\" down_s=%s failed=%llu", where,
                 secs(t, sizeof(t), now - s->down_ns), (unsigned long long)s->down_failed);
    s->down = 0;
    s->up_ns = now;
  } else if (!ok && !s->down && c && c->lost &&
             !(c->connected_ns && c->connected_ns < s->up_ns)) {
    s->down = 1;
    s->down_ns = s->summary_ns = now;
    s->down_failed = failed;
    s->down_unsaid = 0;
    storage__log(&s->log, SPAA_STORE_LOG_WARN, "PostgreSQL connection lost",
                 "database=\"%s\" reason=\"%s\"", where, storage__log_q(q, sizeof(q), why));
  } else if (!ok && s->down) {
    s->down_failed += failed;
    s->down_unsaid += failed;
    if (s->down_unsaid && now - s->summary_ns >= PG_LOG_INTERVAL_S * 1000000000LL) {
      storage__log(&s->log, SPAA_STORE_LOG_WARN, "PostgreSQL still unavailable",
                   "database=\"%s\" failed=%llu in_s=%s down_s=%s failed_total=%llu "
                   "reason=\"%s\"", where, (unsigned long long)s->down_unsaid,
                   secs(t, sizeof(t), now - s->summary_ns), secs(t2, sizeof(t2), now - s->down_ns),
                   (unsigned long long)s->down_failed, storage__log_q(q, sizeof(q), why));
      s->summary_ns = now;
      s->down_unsaid = 0;
    }
  }
  pthread_mutex_unlock(&s->mu);
}

int pg__not_ready(struct storage__pg *s, struct spaa_err *err)
{
  /* the same words before the first connection and after an outage */
  return spaa_err_set(err, SPAA_E_BUSY, 0, 0, "the store is not ready: PostgreSQL at '%.96s' "
                      "cannot be reached%s%.140s", s->where, s->why[0] ? ": " : "", s->why);
}

void pg__note_why(struct storage__pg *s, const struct pg__conn *c, const struct spaa_err *err)
{
  const char *why = c && c->why[0] ? c->why : err && err->msg[0] ? err->msg : NULL;
  if (!why)
    return;
  pthread_mutex_lock(&s->mu);
  snprintf(s->why, sizeof(s->why), "%s", why);
  pthread_mutex_unlock(&s->mu);
}

/* Give c back to the pool, recording what its use told when `record` (a lost connection:
 * one failed operation, pg__health). */
static void put_back(struct storage__pg *s, struct pg__conn *c, int record)
{
  if (record && c->lost)
    pg__health(s, c, 0, 1);
  else if (record && c->db && PQstatus(c->db) == CONNECTION_OK)
    pg__health(s, c, 1, 0);
  pthread_mutex_lock(&s->mu);
  s->cbusy[c - s->conns] = 0;
  pthread_cond_signal(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/* pg__get, a failure to reconnect counted as `failed` operations (0: a readiness probe). */
static struct pg__conn *get_conn(struct storage__pg *s, uint64_t failed, struct spaa_err *err)
{
  struct pg__conn *c = NULL;
  size_t i;
  int rc;
  pthread_mutex_lock(&s->mu);
  if (!s->db_ready) {
    pg__not_ready(s, err);
    pthread_mutex_unlock(&s->mu);
    return NULL;
  }
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
  c->began_ns = (int64_t)storage__mono_ns();
  if (c->db && PQstatus(c->db) == CONNECTION_OK)
    return c;
  rc = pg__connect(c, s->conninfo, 0, NULL, err);
  pg__health(s, c, rc == 0, failed);
  if (!rc)
    return c;
  pg__note_why(s, c, err);
  put_back(s, c, 0);
  return NULL;
}

struct pg__conn *pg__get(struct storage__pg *s, struct spaa_err *err)
{
  return get_conn(s, 1, err);
}

void pg__put(struct storage__pg *s, struct pg__conn *c)
{
  put_back(s, c, 1);
}

static void pg_close(struct spaa_store *base)
{
  struct storage__pg *s = (struct storage__pg *)base;
  size_t i;
  pthread_mutex_lock(&s->mu);
  s->stopping = 1;
  s->paused = 0;
  pthread_cond_broadcast(&s->cv);
  pthread_cond_broadcast(&s->cv_work);
  while (s->inflight && s->writers_started)
    pthread_cond_wait(&s->cv_done, &s->mu);
  pthread_mutex_unlock(&s->mu);
  for (i = 0; i < s->writers_started; i++)
    pthread_join(s->w[i].th, NULL);
  pg__lead_end(s);
  for (i = 0; i < PG_WRITERS; i++) {
    pg__disconnect(&s->w[i].conn);
    storage__cache_free(&s->w[i].conn.cache);
  }
  for (i = 0; s->conns && i < s->n_conns; i++) {
    pg__disconnect(&s->conns[i]);
    storage__cache_free(&s->conns[i].cache);
  }
  pthread_mutex_destroy(&s->notices.mu);
  pthread_mutex_destroy(&s->mu);
  pthread_mutex_destroy(&s->lead_mu);
  pthread_cond_destroy(&s->cv);
  pthread_cond_destroy(&s->cv_work);
  pthread_cond_destroy(&s->cv_done);
  free(s->conns);
  free(s->cbusy);
  free(s->conninfo);
  free(s);
}

/* Ready when a connection answers now (a stale one, left from before an outage, is
 * reconnected and asked again once). */
static int pg_ready(struct spaa_store *base, struct spaa_err *why)
{
  struct storage__pg *s = (struct storage__pg *)base;
  struct pg__conn *c;
  struct spaa_err e;
  PGresult *r = NULL;
  int ok, attempt;
  memset(&e, 0, sizeof(e));
  pthread_mutex_lock(&s->mu);
  ok = !s->stopping && s->db_ready;
  pthread_mutex_unlock(&s->mu);
  for (attempt = 0; ok && attempt < 2 && !r; attempt++) {
    if (!(c = get_conn(s, 0, &e))) /* (it noted why) */
      break;
    r = pg__sql(c, "SELECT 1", NULL, &e);
    /* recorded before the disconnect, which forgets when c connected: a probe, not a
     * failed operation */
    pg__health(s, c, r != NULL, 0);
    if (!r)
      pg__note_why(s, c->lost ? c : NULL, &e);
    if (!r && c->lost)
      pg__disconnect(c);
    put_back(s, c, 0);
  }
  ok = r != NULL;
  PQclear(r);
  pthread_mutex_lock(&s->mu);
  if (!ok && s->stopping)
    spaa_err_set(why, SPAA_E_SHUTDOWN, 0, 0, "the store is closing");
  else if (!ok)
    pg__not_ready(s, why);
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

/* One transaction over the queued jobs' prepared profiles (rcs[i] already < 0 are skipped).
 * 0 committed (each rcs[i] says what became of its profile), or a batch-wide error with
 * *berr filled: nothing of the batch is stored. */
static int run_batch(struct pg__conn *c, struct pg__job *jobs, struct spaa_err *berr)
{
  struct pg__params p;
  struct pg__job *j;
  PGresult *r;
  size_t i;
  int64_t gen;
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, PG_LOCK_SWEEP);
  if (pg__exec(c, "BEGIN", berr))
    return -1;
  if (!(r = pg__run(c, PS_LOCK_SHARED, &p, berr)))
    goto fail;
  PQclear(r);
  if (!(r = pg__run(c, PS_SWEEP_GEN, NULL, berr)))
    goto fail;
  gen = PQntuples(r) ? pg__int(r, 0, 0) : 0;
  PQclear(r);
  if (gen != c->gen) { /* a sweep ran since the cache was filled: its rows may be gone */
    storage__cache_free(&c->cache);
    c->gen = gen;
  }
  for (j = jobs; j; j = j->next)
    for (i = 0; i < j->n; i++)
      if (j->rcs[i] >= 0 && put_one(c, &j->preps[i], &j->rcs[i], &j->errs[i]) < 0) {
        *berr = j->errs[i];
        goto fail;
      }
  if (pg__exec(c, "COMMIT", berr))
    goto fail;
  storage__cache_commit(&c->cache);
  return 0;
fail:
  storage__cache_rollback(&c->cache, 0);
  if (c->db && PQstatus(c->db) == CONNECTION_OK) {
    int retry = c->retry; /* what store_batch decides on, which the ROLLBACK's success clears */
    pg__exec(c, "ROLLBACK", NULL);
    c->retry = retry;
  }
  return -1;
}

/* Store a batch of jobs in one transaction on the writer's connection, re-run after a
 * deadlock or a stale connection; a batch-wide failure fails every profile of it. */
static void store_batch(struct storage__pg *s, struct pg__conn *c, struct pg__job *jobs)
{
  struct spaa_err berr;
  struct pg__job *j;
  int attempt, rc = -1;
  uint64_t failed = 0;
  size_t i;
  memset(&berr, 0, sizeof(berr));
  for (attempt = 0; attempt < PG_ATTEMPTS && rc; attempt++) {
    c->began_ns = (int64_t)storage__mono_ns();
    if ((!c->db || PQstatus(c->db) != CONNECTION_OK) &&
        pg__connect(c, s->conninfo, 0, NULL, &berr))
      break;
    for (j = jobs; j; j = j->next)
      memcpy(j->rcs, j->keep, j->n * sizeof(int));
    rc = run_batch(c, jobs, &berr);
    if (rc && c->lost)
      pg__disconnect(c);
    if (rc && !c->retry && !(c->lost && attempt == 0))
      break;
    if (rc && c->retry && attempt + 1 < PG_ATTEMPTS) {
      /* a deadlock: writers that crossed would cross again if they re-ran at once, so each
       * waits a random while, longer at each attempt, before re-running its batch */
      struct timespec t, now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      if (!c->seed) /* each connection its own sequence */
        c->seed = (unsigned)((uintptr_t)c >> 4) ^ (unsigned)now.tv_nsec;
      t.tv_sec = 0;
      t.tv_nsec = (long)(20 + rand_r(&c->seed) % 80) * (attempt + 1) * 1000000L;
      nanosleep(&t, NULL);
    }
  }
  if (rc)
    for (j = jobs; j; j = j->next)
      for (i = 0; i < j->n; i++)
        if (j->keep[i] >= 0) {
          j->rcs[i] = berr.code ? berr.code : SPAA_E_STORE;
          j->errs[i] = berr;
          failed++;
        }
  pg__health(s, c, rc == 0, failed);
  if (!rc) {
    pthread_mutex_lock(&s->mu);
    s->stats.transactions++;
    pthread_mutex_unlock(&s->mu);
  }
}

/* Connect the writer and migrate: the store becomes ready, or s->why says why not. */
static void try_connect(struct storage__pg *s)
{
  struct spaa_err e;
  int rc;
  memset(&e, 0, sizeof(e));
  rc = pg__connect(&s->w[0].conn, s->conninfo, 1, &s->log, &e);
  if (rc)
    pg__note_why(s, s->w[0].conn.lost ? &s->w[0].conn : NULL, &e);
  pthread_mutex_lock(&s->mu);
  if (!rc)
    s->db_ready = s->healthy = 1;
  pthread_mutex_unlock(&s->mu);
}

/* Jobs from the head of the queue, whole, up to batch_max profiles (at least one job). */
static struct pg__job *take_batch(struct storage__pg *s)
{
  struct pg__job *first = s->head, *last = s->head;
  size_t n = first->n;
  while (last->next && n + last->next->n <= s->batch_max) {
    last = last->next;
    n += last->n;
  }
  s->head = last->next;
  if (!s->head)
    s->tail = NULL;
  last->next = NULL;
  return first;
}

/* A writer thread: (writer 0) reach the database when it was not there at start, then take
 * queued jobs in batches until the store closes with an empty queue. */
static void *writer_main(void *arg)
{
  struct pg__writer *w = arg;
  struct storage__pg *s = w->s;
  struct pg__job *batch, *j;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    if (!s->db_ready && !s->stopping && w->idx == 0) {
      struct timespec t;
      pthread_mutex_unlock(&s->mu);
      try_connect(s);
      pthread_mutex_lock(&s->mu);
      clock_gettime(CLOCK_REALTIME, &t);
      t.tv_nsec += PG_RETRY_MS * 1000000L;
      t.tv_sec += t.tv_nsec / 1000000000L;
      t.tv_nsec %= 1000000000L;
      if (!s->db_ready && !s->stopping)
        pthread_cond_timedwait(&s->cv_work, &s->mu, &t);
      continue;
    }
    if (s->head && !s->paused && s->db_ready) {
      batch = take_batch(s);
      pthread_mutex_unlock(&s->mu);
      store_batch(s, &w->conn, batch);
      pthread_mutex_lock(&s->mu);
      for (j = batch; j; j = j->next)
        j->done = 1;
      pthread_cond_broadcast(&s->cv_done);
      continue;
    }
    if (s->stopping && !s->head)
      break;
    pthread_cond_wait(&s->cv_work, &s->mu);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

static int pg_open(const struct spaa_store_opts *opts, struct spaa_store **out,
                   struct spaa_err *err)
{
  struct storage__pg *s = calloc(1, sizeof(*s));
  size_t n = (opts->readers ? opts->readers : 1) + PG_EXTRA_CONNS, i;
  struct spaa_err e;
  int rc;
  if (!s)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  s->base.be = &storage__postgres_backend;
  pthread_mutex_init(&s->mu, NULL);
  pthread_mutex_init(&s->lead_mu, NULL);
  pthread_mutex_init(&s->notices.mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  pthread_cond_init(&s->cv_work, NULL);
  pthread_cond_init(&s->cv_done, NULL);
  s->queue_depth = opts->queue_depth ? opts->queue_depth : 256;
  s->batch_max = opts->batch_max ? opts->batch_max : 64;
  s->stats.synchronous = opts->durability == SPAA_DURABILITY_NORMAL ? 1 : 2;
  s->log.cb = opts->log;
  s->log.ctx = opts->log_ctx;
  s->notices.log = &s->log;
  s->lead.notices = &s->notices;
  /* the location lost its scheme in store.c: a URI again, which libpq parses */
  if ((s->conninfo = malloc(strlen(opts->path) + 16)))
    strcpy(s->conninfo, "postgresql:"), strcat(s->conninfo, opts->path);
  s->conns = calloc(n, sizeof(*s->conns));
  s->cbusy = calloc(n, 1);
  if (!s->conninfo || !s->conns || !s->cbusy) {
    pg_close(&s->base);
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  spaa_store_redact(s->conninfo, s->where, sizeof(s->where));
  s->n_conns = n;
  for (i = 0; i < n; i++) {
    s->conns[i].gen = -1;
    s->conns[i].sync_off = opts->durability == SPAA_DURABILITY_NORMAL;
    s->conns[i].notices = &s->notices;
  }
  for (i = 0; i < PG_WRITERS; i++) {
    s->w[i].s = s;
    s->w[i].idx = (int)i;
    s->w[i].conn.gen = -1;
    s->w[i].conn.sync_off = opts->durability == SPAA_DURABILITY_NORMAL;
    s->w[i].conn.notices = &s->notices;
  }
  /* unreachable now: opened not ready, the writer thread connects (and migrates) later */
  memset(&e, 0, sizeof(e));
  rc = pg__connect(&s->w[0].conn, s->conninfo, 1, &s->log, &e);
  s->db_ready = s->healthy = rc == 0;
  if (rc && rc != SPAA_E_BUSY) {
    *err = e;
    pg_close(&s->base);
    return rc;
  }
  if (rc)
    pg__note_why(s, s->w[0].conn.lost ? &s->w[0].conn : NULL, &e);
  for (i = 0; i < PG_WRITERS; i++) {
    if (pthread_create(&s->w[i].th, NULL, writer_main, &s->w[i])) {
      pg_close(&s->base);
      return spaa_err_set(err, SPAA_E_STORE, 0, 0, "cannot start the writer threads");
    }
    s->writers_started = i + 1;
  }
  *out = &s->base;
  return 0;
}

/* Room for n more profiles (under mu): 0, SPAA_E_BUSY (queue full, or not ready) or
 * SPAA_E_SHUTDOWN. */
static int admit(struct storage__pg *s, size_t n)
{
  int rc = 0;
  if (s->stopping)
    rc = SPAA_E_SHUTDOWN;
  else if (!s->db_ready || (s->inflight + n > s->queue_depth && s->inflight))
    rc = SPAA_E_BUSY;
  if (rc == SPAA_E_BUSY)
    s->stats.busy += n;
  if (!rc) {
    s->inflight += n;
    s->stats.queued = s->inflight;
  }
  return rc;
}

static void finish(struct storage__pg *s, size_t n, const int *rcs)
{
  size_t i;
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
  pthread_cond_broadcast(&s->cv_done);
}

/* Queue the job and wait until the writer committed (or failed) it. 0 or the refusal, with
 * the message of each profile not refused before filled. */
static int submit(struct storage__pg *s, struct pg__job *j)
{
  size_t i;
  int rc;
  pthread_mutex_lock(&s->mu);
  if (!(rc = admit(s, j->n))) {
    if (s->tail)
      s->tail->next = j;
    else
      s->head = j;
    s->tail = j;
    pthread_cond_signal(&s->cv_work);
    while (!j->done)
      pthread_cond_wait(&s->cv_done, &s->mu);
    finish(s, j->n, j->rcs);
  } else {
    for (i = 0; i < j->n; i++)
      if (j->rcs[i] >= 0) {
        if (rc == SPAA_E_BUSY && !s->db_ready)
          pg__not_ready(s, &j->errs[i]);
        else
          spaa_err_set(&j->errs[i], rc, 0, 0, rc == SPAA_E_BUSY ? "the store queue is full"
                                                               : "the store is closing");
        j->rcs[i] = rc;
      }
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

static int pg_put_many(struct spaa_store *base, size_t n, const struct spaa_profile *const *p,
                       const struct spaa_meta *meta, int *rcs, struct spaa_err *errs)
{
  struct storage__pg *s = (struct storage__pg *)base;
  struct storage__prep *preps = calloc(n ? n : 1, sizeof(*preps));
  int *keep = malloc((n ? n : 1) * sizeof(int));
  struct pg__job j;
  size_t i;
  int rc;
  if (!preps || !keep) {
    for (i = 0; i < n; i++)
      rcs[i] = spaa_err_set(&errs[i], SPAA_E_NOMEM, 0, 0, NULL);
    free(preps);
    free(keep);
    return SPAA_E_NOMEM;
  }
  for (i = 0; i < n; i++) {
    memset(&errs[i], 0, sizeof(errs[i]));
    keep[i] = rcs[i] = storage__prep_build(&preps[i], p[i], &meta[i], &errs[i]);
  }
  memset(&j, 0, sizeof(j));
  j.n = n;
  j.preps = preps;
  j.rcs = rcs;
  j.errs = errs;
  j.keep = keep;
  rc = submit(s, &j);
  for (i = 0; i < n; i++)
    storage__prep_free(&preps[i]);
  free(preps);
  free(keep);
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
  pthread_cond_broadcast(&s->cv_work);
  pthread_mutex_unlock(&s->mu);
}

static int pg_get(struct spaa_store *s, const char *id, struct spaa_meter *meter,
                  struct spaa_profile **out, struct spaa_err *err)
{
  return pg__get_profile((struct storage__pg *)s, id, meter, out, err);
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
                   struct spaa_meter *meter, spaa_store_scan_cb cb, void *ctx,
                   struct spaa_err *err)
{
  return pg__scan((struct storage__pg *)s, sel, meter, cb, ctx, err);
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

static int pg_stacks(struct spaa_store *s, const int64_t *numbers, size_t n,
                     spaa_store_stack_cb cb, void *ctx, struct spaa_err *err)
{
  return pg__stacks((struct storage__pg *)s, numbers, n, cb, ctx, err);
}

static int pg_stack_by_id(struct spaa_store *s, const char *id, spaa_store_stack_cb cb,
                          void *ctx, struct spaa_err *err)
{
  return pg__stack_by_id((struct storage__pg *)s, id, cb, ctx, err);
}

static int pg_services(struct spaa_store *s, struct spaa_store_name_count **out, size_t *n,
                       struct spaa_err *err)
{
  return pg__services((struct storage__pg *)s, out, n, err);
}

static int pg_label_keys(struct spaa_store *s, struct spaa_store_name_count **out, size_t *n,
                         struct spaa_err *err)
{
  return pg__label_keys((struct storage__pg *)s, out, n, err);
}

static int pg_label_values(struct spaa_store *s, const char *key,
                           struct spaa_store_name_count **out, size_t *n, struct spaa_err *err)
{
  return pg__label_values((struct storage__pg *)s, key, out, n, err);
}

static int pg_lead(struct spaa_store *s, struct spaa_err *err)
{
  return pg__lead((struct storage__pg *)s, err);
}

static void pg_sweep_hook(struct spaa_store *s, void (*fn)(void *ctx), void *ctx)
{
  ((struct storage__pg *)s)->sweep_hook = fn;
  ((struct storage__pg *)s)->sweep_hook_ctx = ctx;
}

#define PG_OPS                                                                               \
  .open = pg_open, .close = pg_close, .ready = pg_ready, .put_many = pg_put_many,            \
  .get = pg_get, .meta = pg_meta, .list = pg_list, .scan = pg_scan, .remove = pg_remove,     \
  .counts = pg_counts, .stats = pg_stats, .pause = pg_pause, .stacks = pg_stacks,          \
  .stack_by_id = pg_stack_by_id, .services = pg_services, .label_keys = pg_label_keys,       \
  .label_values = pg_label_values, .lead = pg_lead, .sweep_hook = pg_sweep_hook

const struct spaa_store_backend storage__postgres_backend = {.name = "postgres", PG_OPS};
const struct spaa_store_backend storage__postgresql_backend = {.name = "postgresql", PG_OPS};
