/* The store: open and close, the bounded queue and the one writer thread that inserts
 * whatever is queued in one transaction (a savepoint per profile), and the reader pool. */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "storage/sqlite/sqlite_int.h"

/* Run one batch of jobs in one transaction. Jobs get rc 0/1/error; nothing is reported
 * as stored unless COMMIT succeeded. A savepoint per job lets one profile fail while the
 * others of the batch go in; a job alone in its batch has none, as its failure rolls the
 * whole transaction back. The savepoint is not free: with temp_store=MEMORY SQLite keeps the
 * first image of every page the job changes in an in-memory sub-journal, about 12 MB for a
 * profile of 62 k stacks, which is why a large profile is batched alone (writer_main). */
static void run_batch(struct storage__sqlite *s, struct storage__job *jobs)
{
  struct storage__conn *c = &s->wconn;
  struct storage__job *j;
  struct spaa_err err;
  size_t mark, stacks = 0;
  int rc, broken = 0, alone = !jobs->next;
  uint64_t t0 = storage__mono_ns();

  spaa_err_clear(&err);
  if ((rc = storage__exec(c, ST_BEGIN_IMM, &err))) {
    for (j = jobs; j; j = j->next) {
      j->rc = rc;
      j->err = err;
    }
    return;
  }
  for (j = jobs; j; j = j->next) {
    if (broken) {
      j->rc = spaa_err_set(&j->err, SPAA_E_STORE, 0, 0, "the batch transaction was aborted");
      continue;
    }
    if (!alone && (rc = storage__exec(c, ST_SAVEPOINT, &j->err))) {
      j->rc = rc;
      broken = 1;
      continue;
    }
    mark = s->cache.n_pending;
    stacks += j->prep->n_stacks;
    j->rc = storage__insert(c, &s->cache, &s->sweep, j->prep, &j->err);
    if (j->rc < 0) {
      /* undo this profile only; the others in the batch go on */
      storage__cache_rollback(&s->cache, mark);
      if (alone || sqlite3_get_autocommit(c->db) || storage__exec(c, ST_ROLLBACK_TO, NULL) ||
          storage__exec(c, ST_RELEASE, NULL))
        broken = 1;
    } else if (!alone && (rc = storage__exec(c, ST_RELEASE, &j->err))) {
      j->rc = rc;
      broken = 1;
    }
  }
  if (broken) {
    int full = __atomic_load_n(&c->full_ns, __ATOMIC_RELAXED) >= t0;
    storage__cache_rollback(&s->cache, 0);
    if (!sqlite3_get_autocommit(c->db))
      storage__exec(c, ST_ROLLBACK, NULL);
    for (j = jobs; j; j = j->next)
      if (j->rc >= 0)
        j->rc = full ? spaa_err_set(&j->err, SPAA_E_BUSY, 0, 0, "the disk holding the store is "
                                    "full: the batch was rolled back; retry later")
                     : spaa_err_set(&j->err, SPAA_E_STORE, 0, 0,
                                    "the batch transaction was aborted");
    return;
  }
  if ((rc = storage__exec(c, ST_COMMIT, &err))) {
    storage__cache_rollback(&s->cache, 0);
    if (!sqlite3_get_autocommit(c->db))
      storage__exec(c, ST_ROLLBACK, NULL);
    for (j = jobs; j; j = j->next)
      if (j->rc >= 0) {
        j->rc = rc;
        j->err = err;
      }
    return;
  }
  storage__cache_commit(&s->cache);
  /* A large profile filled the page cache with its own rows, of little use to the next
   * batch (the content-id cache answers its lookups): the pages go back now instead of
   * being held beside the next large conversion. A batch of small ones keeps the cache
   * warm. */
  if (stacks >= STORAGE_RELEASE_STACKS) {
    sqlite3_db_release_memory(c->db);
    malloc_trim(0); /* free pages amid malloc's arenas, which the next one may not reuse */
  }
  __atomic_store_n(&c->full_ns, 0, __ATOMIC_RELAXED); /* written: there is room again */
  pthread_mutex_lock(&s->mu);
  s->stats.transactions++;
  s->stats.cache_hits = s->cache.hits;
  s->stats.cache_misses = s->cache.misses;
  pthread_mutex_unlock(&s->mu);
}

/* A put large enough to go alone in its batch: its savepoint would cost more than batching
 * it with others saves */
static int big_put(const struct storage__job *j)
{
  return j->prep && j->prep->n_stacks >= STORAGE_RELEASE_STACKS;
}

static void *writer_main(void *arg)
{
  struct storage__sqlite *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    struct storage__job *batch, *last, *j;
    uint64_t t0;
    size_t n;
    while (!s->stopping && (!s->head || s->paused))
      pthread_cond_wait(&s->cv_work, &s->mu);
    if (!s->head)
      break; /* stopping and drained */
    /* take up to batch_max puts, or one step alone, or one large put alone (no savepoint) */
    batch = last = s->head;
    for (n = 1; !batch->step && !big_put(batch) && n < s->batch_max && last->next &&
                !last->next->step && !big_put(last->next);
         n++)
      last = last->next;
    s->head = last->next;
    if (!s->head)
      s->tail = NULL;
    last->next = NULL;
    s->queued -= n;
    pthread_mutex_unlock(&s->mu);

    t0 = storage__mono_ns();
    if (batch->step)
      batch->rc = batch->step(s, batch);
    else
      run_batch(s, batch);

    pthread_mutex_lock(&s->mu);
    t0 = storage__mono_ns() - t0;
    if (!batch->step) { /* the batch figures are the puts' */
      s->stats.batch_ns += t0;
    } else {
      s->stats.steps++;
      s->stats.step_ns += t0;
      if (t0 > s->stats.step_max_ns)
        s->stats.step_max_ns = t0;
    }
    for (j = batch; j;) {
      struct storage__job *next = j->next;
      if (j->step)
        ; /* not a put */
      else if (j->rc == 0)
        s->stats.stored++;
      else if (j->rc == 1)
        s->stats.duplicates++;
      else
        s->stats.failed++;
      j->done = 1; /* j belongs to its caller from here on */
      j = next;
    }
    pthread_cond_broadcast(&s->cv_done);
  }
  s->writer_alive = 0;
  pthread_cond_broadcast(&s->cv_done);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

int64_t storage__disk_bytes(const char *path)
{
  static const char *const suffix[] = {"", "-wal", "-shm"};
  char name[4096];
  struct stat st;
  int64_t total = 0;
  size_t i;
  for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
    if ((size_t)snprintf(name, sizeof(name), "%s%s", path, suffix[i]) >= sizeof(name))
      continue;
    if (stat(name, &st) == 0)
      total += (int64_t)st.st_blocks * 512;
  }
  return total;
}

/* What the connection really runs with, for the stats (-1 when it cannot be read). */
static int read_synchronous(sqlite3 *db)
{
  sqlite3_stmt *st = NULL;
  int v = -1;
  if (sqlite3_prepare_v2(db, "PRAGMA synchronous", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* Take the database's lock file, PATH.lock (its pid written in it), for as long as the store
 * is open. Two processes writing one file each keep a content-id cache of the rows they
 * believe stored; one's sweep deletes rows the other then references, and the other's
 * acknowledged profiles read back as corrupt. So a second server on the same data directory
 * (an overlapping restart, two containers on one volume) is refused at start. The lock is
 * the kernel's (flock): it goes with the process, however it ends. */
int storage__side_path(const struct storage__sqlite *s, const char *suffix, char *out,
                       size_t cap, struct spaa_err *err)
{
  if ((size_t)snprintf(out, cap, "%s%s", s->path, suffix) >= cap)
    return spaa_err_set(err, SPAA_E_STORE, 0, 0, "the database path is too long");
  return 0;
}

static int take_lock(struct storage__sqlite *s, struct spaa_err *err)
{
  char name[4096], pid[32];
  ssize_t n;
  int fd, rc;
  if ((rc = storage__side_path(s, ".lock", name, sizeof(name), err)))
    return rc;
  if ((fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 && errno == EACCES)
    fd = open(name, O_RDONLY | O_CLOEXEC); /* another user's file: flock needs no write */
  if (fd < 0)
    return spaa_err_set(err, SPAA_E_STORE, 0, 0, "opening the lock file %s: %s", name,
                        strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    n = pread(fd, pid, sizeof(pid) - 1, 0);
    pid[n > 0 ? n : 0] = 0;
    pid[strcspn(pid, "\n")] = 0;
    close(fd);
    if (e == EWOULDBLOCK)
      return spaa_err_set(err, SPAA_E_STORE, 0, 0, "one server per database file: %s is in "
                          "use by another process%s%s (stop it first, or use another "
                          "--data-dir)", s->path, pid[0] ? ", pid " : "", pid);
    return spaa_err_set(err, SPAA_E_STORE, 0, 0, "locking %s: %s", name, strerror(e));
  }
  n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
    /* the pid is for the message above only: the lock holds without it */
  }
  s->lock_fd = fd;
  /* a delete cut short (kill -9) before its sweep finished left rows nothing references */
  if (!storage__side_path(s, STORAGE_SWEEP_SUFFIX, name, sizeof(name), NULL))
    s->sweep_owed = access(name, F_OK) == 0;
  return 0;
}

int storage__sq_open(const struct spaa_store_opts *opts, struct storage__sqlite **out,
                    struct spaa_err *err)
{
  struct storage__sqlite *s;
  struct storage__log log;
  int rc;
  *out = NULL;
  if (!opts || !opts->path)
    return spaa_err_set(err, SPAA_E_STORE, 0, 0, "no database path given");
  if (!sqlite3_threadsafe())
    return spaa_err_set(err, SPAA_E_STORE, 0, 0, "SQLite was built without thread support");
  if (!(s = calloc(1, sizeof(*s))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  s->lock_fd = -1;
  s->queue_depth = opts->queue_depth ? opts->queue_depth : 64;
  s->durability = opts->durability;
  s->batch_max = opts->batch_max ? opts->batch_max : 32;
  s->n_readers = opts->readers ? opts->readers : 1;
  log.cb = opts->log;
  log.ctx = opts->log_ctx;
  s->log = log;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv_work, NULL);
  pthread_cond_init(&s->cv_done, NULL);
  pthread_mutex_init(&s->rmu, NULL);
  pthread_cond_init(&s->rcv, NULL);
  pthread_mutex_init(&s->del_mu, NULL);
  if (!(s->path = strdup(opts->path)) ||
      !(s->readers = calloc(s->n_readers, sizeof(*s->readers))) ||
      !(s->rbusy = calloc(s->n_readers, 1))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto fail;
  }
  /* the writer connection creates and migrates the database before any reader opens */
  if ((rc = take_lock(s, err)) ||
      (rc = storage__conn_open(&s->wconn, s->path, 1, s->durability, &log, err)))
    goto fail;
  {
    struct stat st;
    if (stat(s->path, &st) == 0) {
      s->db_known = 1;
      s->db_dev = st.st_dev;
      s->db_ino = st.st_ino;
    }
  }
  s->stats.synchronous = read_synchronous(s->wconn.db);
  s->writer_alive = 1;
  if (pthread_create(&s->writer, NULL, writer_main, s) != 0) {
    s->writer_alive = 0;
    rc = spaa_err_set(err, SPAA_E_STORE, 0, 0, "cannot start the writer thread");
    goto fail;
  }
  s->writer_started = 1;
  s->base.be = &storage__sqlite_backend;
  *out = s;
  return 0;
fail:
  storage__sq_close(s);
  return rc;
}

void storage__sq_close(struct storage__sqlite *s)
{
  size_t i;
  if (!s)
    return;
  pthread_mutex_lock(&s->mu);
  s->stopping = 1;
  s->paused = 0;
  pthread_cond_broadcast(&s->cv_work);
  pthread_mutex_unlock(&s->mu);
  if (s->writer_started)
    pthread_join(s->writer, NULL);
  /* callers woken by the last batch may still be on their way out of spaa_store_put */
  pthread_mutex_lock(&s->mu);
  while (s->inflight)
    pthread_cond_wait(&s->cv_done, &s->mu);
  pthread_mutex_unlock(&s->mu);
  storage__conn_close(&s->wconn);
  storage__cache_free(&s->cache);
  storage__sweep_off(&s->sweep); /* a sweep cut short by the close */
  for (i = 0; s->readers && i < s->n_readers; i++)
    storage__conn_close(&s->readers[i]);
  free(s->readers);
  free(s->rbusy);
  free(s->path);
  if (s->lock_fd >= 0)
    close(s->lock_fd); /* the lock goes with it; the file stays (removing it would race) */
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv_work);
  pthread_cond_destroy(&s->cv_done);
  pthread_mutex_destroy(&s->rmu);
  pthread_cond_destroy(&s->rcv);
  pthread_mutex_destroy(&s->del_mu);
  free(s);
}

/* 1 (and why filled) when the database file opened at start is no longer at its path:
 * removed (rm -rf of the data directory) or replaced. Writes would then go to a deleted
 * file and be lost at the next start, so the store refuses them, and says so once. */
static int db_gone(struct storage__sqlite *s, struct spaa_err *why)
{
  struct stat st;
  if (!s->db_known ||
      (stat(s->path, &st) == 0 && st.st_dev == s->db_dev && st.st_ino == s->db_ino))
    return 0;
  spaa_err_set(why, SPAA_E_UNAVAILABLE, 0, 0, "the database file %.160s was removed or "
               "replaced while the server ran: restart the server (uploads are refused, so "
               "that none is acknowledged into a deleted file)", s->path);
  if (!__atomic_exchange_n(&s->db_gone_logged, 1, __ATOMIC_RELAXED))
    storage__log(&s->log, SPAA_STORE_LOG_WARN, "database file removed or replaced",
                  "path=\"%s\" uploads=refused action=\"restart the server\"", s->path);
  return 1;
}

int storage__sq_ready(struct storage__sqlite *s, struct spaa_err *why)
{
  int open, alive, stopping;
  uint64_t full, now;
  if (!s)
    return spaa_err_set(why, SPAA_E_SHUTDOWN, 0, 0, "the store is closed"), 0;
  pthread_mutex_lock(&s->mu);
  open = s->wconn.db != NULL;
  alive = s->writer_alive;
  stopping = s->stopping;
  pthread_mutex_unlock(&s->mu);
  if (stopping || !open) {
    spaa_err_set(why, SPAA_E_SHUTDOWN, 0, 0, "the store is closing");
    return 0;
  }
  if (!alive) {
    spaa_err_set(why, SPAA_E_STORE, 0, 0, "the store's writer stopped");
    return 0;
  }
  if (db_gone(s, why))
    return 0;
  full = __atomic_load_n(&s->wconn.full_ns, __ATOMIC_RELAXED);
  now = storage__mono_ns();
  if (full && now - full < STORAGE_FULL_READY_NS) {
    spaa_err_set(why, SPAA_E_BUSY, 0, 0, "the disk holding the store is full: a write failed "
                 "%llu s ago (uploads are answered 503 until one goes through; free space, or "
                 "delete profiles)", (unsigned long long)((now - full) / 1000000000ull));
    return 0;
  }
  return 1;
}

/* Queue jobs[0..n) (their preps built) at once and wait until every one is done. The
 * caller holds s->mu; returns with it held. */
static void queue_and_wait(struct storage__sqlite *s, struct storage__job *jobs, size_t n)
{
  size_t i, done;
  for (i = 0; i < n; i++) {
    if (s->tail)
      s->tail->next = &jobs[i];
    else
      s->head = &jobs[i];
    s->tail = &jobs[i];
  }
  s->queued += n;
  pthread_cond_signal(&s->cv_work);
  /* the writer drains the queue before it exits, so this always ends */
  for (;;) {
    for (i = done = 0; i < n; i++)
      done += jobs[i].done != 0;
    if (done == n)
      break;
    pthread_cond_wait(&s->cv_done, &s->mu);
  }
}

int storage__sq_submit(struct storage__sqlite *s, struct storage__job *j)
{
  int rc = 0;
  pthread_mutex_lock(&s->mu);
  if (s->stopping || !s->writer_alive)
    rc = SPAA_E_SHUTDOWN;
  else if (!j->step && s->queued >= s->queue_depth)
    rc = SPAA_E_BUSY;
  if (!rc) {
    s->inflight++;
    queue_and_wait(s, j, 1);
    s->inflight--;
    pthread_cond_broadcast(&s->cv_done);
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

int storage__sq_step(struct storage__sqlite *s, storage__step_cb fn, void *arg,
                     struct spaa_err *err)
{
  struct storage__job job;
  int rc;
  memset(&job, 0, sizeof(job));
  job.step = fn;
  job.arg = arg;
  if ((rc = storage__sq_submit(s, &job)))
    return spaa_err_set(err, rc, 0, 0, NULL);
  if (job.rc < 0) {
    if (job.err.code)
      *err = job.err;
    else
      spaa_err_set(err, job.rc, 0, 0, NULL);
  }
  return job.rc;
}

/* One piece of spaa_store_put_many: n is at most the queue depth. */
static int put_batch(struct storage__sqlite *s, size_t n, const struct spaa_profile *const *p,
                     const struct spaa_meta *meta, int *rcs, struct spaa_err *errs)
{
  struct storage__prep *pr = NULL;
  struct storage__job *jobs = NULL;
  size_t i, built = 0;
  int rc = 0;

  for (i = 0; i < n; i++)
    rcs[i] = SPAA_E_INTERNAL;
  /* refuse early, before the work of preparing, when the answer is already known */
  pthread_mutex_lock(&s->mu);
  rc = s->stopping ? SPAA_E_SHUTDOWN : 0;
  if (!rc && (n > s->queue_depth || s->queued > s->queue_depth - n)) {
    s->stats.busy += n;
    rc = SPAA_E_BUSY;
  }
  if (!rc)
    s->inflight++;
  pthread_mutex_unlock(&s->mu);
  if (!rc) {
    struct spaa_err gone;
    if (db_gone(s, &gone)) {
      pthread_mutex_lock(&s->mu);
      s->inflight--;
      pthread_cond_broadcast(&s->cv_done);
      pthread_mutex_unlock(&s->mu);
      for (i = 0; i < n; i++) {
        errs[i] = gone;
        rcs[i] = gone.code;
      }
      return gone.code;
    }
  }
  if (rc) {
    for (i = 0; i < n; i++)
      rcs[i] = spaa_err_set(&errs[i], rc, 0, 0, NULL);
    return rc;
  }
  if (!(pr = calloc(n, sizeof(*pr))) || !(jobs = calloc(n, sizeof(*jobs)))) {
    for (i = 0; i < n; i++)
      rcs[i] = spaa_err_set(&errs[i], SPAA_E_NOMEM, 0, 0, NULL);
    rc = SPAA_E_NOMEM;
    goto out;
  }
  /* prepare every profile; those that fail are answered at once and not queued */
  for (i = 0; i < n; i++) {
    spaa_err_clear(&errs[i]);
    if ((rcs[i] = storage__prep_build(&pr[i], p[i], &meta[i], &errs[i])) == 0)
      jobs[built++].prep = &pr[i];
  }
  pthread_mutex_lock(&s->mu);
  if (s->stopping || !s->writer_alive) {
    rc = SPAA_E_SHUTDOWN;
  } else if (built > s->queue_depth || s->queued > s->queue_depth - built) {
    s->stats.busy += built;
    rc = SPAA_E_BUSY;
  } else if (built) {
    queue_and_wait(s, jobs, built);
  }
  pthread_mutex_unlock(&s->mu);
  /* hand each job's outcome back to its profile */
  for (i = built = 0; i < n; i++) {
    struct storage__job *j;
    if (rcs[i] != 0)
      continue; /* failed in preparation */
    j = &jobs[built++];
    if (rc) {
      rcs[i] = spaa_err_set(&errs[i], rc, 0, 0, NULL);
    } else {
      rcs[i] = j->rc;
      if (j->rc < 0) {
        if (j->err.code)
          errs[i] = j->err;
        else
          spaa_err_set(&errs[i], j->rc, 0, 0, NULL);
      }
    }
  }
  rc = 0;
out:
  for (i = 0; pr && i < n; i++)
    storage__prep_free(&pr[i]);
  free(pr);
  free(jobs);
  pthread_mutex_lock(&s->mu);
  s->inflight--;
  pthread_cond_broadcast(&s->cv_done);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

int storage__sq_put_many(struct storage__sqlite *s, size_t n, const struct spaa_profile *const *p,
                        const struct spaa_meta *meta, int *rcs, struct spaa_err *errs)
{
  size_t from, chunk;
  int rc = 0;
  if (!s || !p || !meta || !rcs || !errs)
    return SPAA_E_INTERNAL;
  /* in pieces of half the queue at most, so that one large upload cannot fill it */
  chunk = s->queue_depth / 2 ? s->queue_depth / 2 : 1;
  for (from = 0; from < n; from += chunk) {
    size_t k = n - from < chunk ? n - from : chunk;
    int r = put_batch(s, k, p + from, meta + from, rcs + from, errs + from);
    if (r && !rc)
      rc = r;
  }
  return rc;
}

void storage__sq_stats(struct storage__sqlite *s, struct spaa_store_stats *out)
{
  memset(out, 0, sizeof(*out));
  if (!s)
    return;
  pthread_mutex_lock(&s->mu);
  *out = s->stats;
  out->queued = s->queued;
  pthread_mutex_unlock(&s->mu);
}

void storage__sq_pause(struct storage__sqlite *s, int on)
{
  pthread_mutex_lock(&s->mu);
  s->paused = on ? 1 : 0;
  pthread_cond_broadcast(&s->cv_work);
  pthread_mutex_unlock(&s->mu);
}

struct storage__conn *storage__reader_get(struct storage__sqlite *s, struct spaa_err *err)
{
  struct storage__conn *c = NULL;
  size_t i;
  pthread_mutex_lock(&s->rmu);
  for (;;) {
    for (i = 0; i < s->n_readers; i++)
      if (!s->rbusy[i])
        break;
    if (i < s->n_readers)
      break;
    pthread_cond_wait(&s->rcv, &s->rmu);
  }
  s->rbusy[i] = 1;
  pthread_mutex_unlock(&s->rmu);
  c = &s->readers[i];
  /* opened on first use; the slot is ours alone while it is marked busy */
  if (!c->db && storage__conn_open(c, s->path, 0, s->durability, NULL, err)) {
    storage__reader_put(s, c);
    return NULL;
  }
  return c;
}

void storage__reader_put(struct storage__sqlite *s, struct storage__conn *c)
{
  size_t i = (size_t)(c - s->readers);
  pthread_mutex_lock(&s->rmu);
  s->rbusy[i] = 0;
  pthread_cond_signal(&s->rcv);
  pthread_mutex_unlock(&s->rmu);
}
