/* Deleting a selection, from the calling thread: the selection is read on a reader, the
 * profiles deleted (their labels, totals and blocks cascade) in writer steps of about
 * STORAGE_STEP_NS each, then the shared rows nothing references are swept (sweep.c) and the
 * free pages given back, again in short steps. Puts run between the steps: a delete never
 * holds the write lock for long. One delete runs at a time (s->del_mu). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/sqlite/sqlite_int.h"

/* The row numbers of the selected profiles, newest first, into *nums (n of them), read on a
 * reader. 0, SPAA_E_STORE, SPAA_E_NOMEM. */
static int select_nums(struct storage__sqlite *s, const struct spaa_list_query *sel,
                       int64_t **nums, size_t *n, struct spaa_err *err)
{
  struct storage__conn *c;
  struct spaa_buf sql;
  sqlite3_stmt *st = NULL;
  size_t cap = 0;
  int rc = 0, step;
  *nums = NULL;
  *n = 0;
  if (!(c = storage__reader_get(s, err)))
    return SPAA_E_STORE;
  spaa_buf_init(&sql, 4096);
  if (storage__select_sql(sel, &sql, 0)) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  if (sqlite3_prepare_v2(c->db, sql.p, (int)sql.len, &st, NULL) != SQLITE_OK) {
    rc = storage__db_err(c, err, "preparing the delete selection");
    goto out;
  }
  storage__select_bind(st, sel, (size_t)INT64_MAX - 1);
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      int64_t *a = realloc(*nums, (cap ? cap * 2 : 256) * sizeof(**nums));
      if (!a) {
        rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
        goto out;
      }
      *nums = a;
      cap = cap ? cap * 2 : 256;
    }
    (*nums)[(*n)++] = sqlite3_column_int64(st, 0);
  }
  if (step != SQLITE_DONE)
    rc = storage__db_err(c, err, "selecting profiles to delete");
out:
  sqlite3_finalize(st);
  spaa_buf_free(&sql);
  storage__reader_put(s, c);
  return rc;
}

#define PACE_FIRST 16   /* units of a kind's first step */
#define PACE_MAX 65536  /* units of one step at most */

void storage__pace_update(struct storage__pace *pace, size_t units, uint64_t work_ns,
                          uint64_t commit_ns)
{
  uint64_t extra;
  if (!pace->n)
    pace->n = PACE_FIRST;
  if (!pace->commit_min || commit_ns < pace->commit_min)
    pace->commit_min = commit_ns;
  /* what the step cost beyond a bare commit: its work and the pages it gave the commit */
  extra = work_ns + (commit_ns - pace->commit_min);
  if (extra > STORAGE_STEP_NS)
    pace->n = (size_t)((double)pace->n * STORAGE_STEP_NS / (double)extra);
  else if (extra < STORAGE_STEP_NS / 2 && units >= pace->n)
    pace->n *= 2;
  if (pace->n < 1)
    pace->n = 1;
  if (pace->n > PACE_MAX)
    pace->n = PACE_MAX;
}

int storage__step_end(struct storage__conn *c, int rc, struct spaa_err *err,
                      struct storage__pace *pace, size_t units, uint64_t t0)
{
  uint64_t t1 = storage__mono_ns();
  if (!rc)
    rc = storage__exec(c, ST_COMMIT, err);
  if (rc && !sqlite3_get_autocommit(c->db))
    storage__exec(c, ST_ROLLBACK, NULL);
  else
    storage__pace_update(pace, units, t1 - t0, storage__mono_ns() - t1);
  return rc;
}

/* A delete's profiles: nums[done..n). */
struct nums {
  const int64_t *v;
  size_t n, done;
  struct storage__pace pace;
};

/* Step: delete up to pace.n profiles (for STORAGE_STEP_NS at most) in one transaction. */
static int step_profiles(struct storage__sqlite *s, struct storage__job *j)
{
  struct nums *p = j->arg;
  struct storage__conn *c = &s->wconn;
  sqlite3_stmt *st = NULL;
  uint64_t t0 = storage__mono_ns();
  size_t i = p->done, max = p->pace.n ? p->pace.n : PACE_FIRST;
  int rc;
  if (sqlite3_prepare_v2(c->db, "DELETE FROM profile WHERE num = ?1", -1, &st, NULL) !=
      SQLITE_OK)
    return storage__db_err(c, &j->err, "preparing the delete");
  if (!(rc = storage__exec(c, ST_BEGIN_IMM, &j->err))) {
    for (; i < p->n && i - p->done < max && !rc &&
           (i == p->done || storage__mono_ns() - t0 < STORAGE_STEP_NS);
         i++) {
      sqlite3_reset(st);
      sqlite3_bind_int64(st, 1, p->v[i]);
      if (sqlite3_step(st) != SQLITE_DONE)
        rc = storage__db_err(c, &j->err, "deleting a profile");
    }
    rc = storage__step_end(c, rc, &j->err, &p->pace, i - p->done, t0);
  }
  sqlite3_finalize(st);
  if (!rc)
    p->done = i;
  return rc;
}

/* 1 when the database gives free pages back on request (auto_vacuum = INCREMENTAL). */
static int auto_vacuum_on(struct storage__conn *c)
{
  sqlite3_stmt *st = NULL;
  int on = 0;
  if (sqlite3_prepare_v2(c->db, "PRAGMA auto_vacuum", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    on = sqlite3_column_int(st, 0) == 2;
  sqlite3_finalize(st);
  return on;
}

static int64_t free_pages(struct storage__conn *c)
{
  sqlite3_stmt *st = NULL;
  int64_t n = 0;
  if (sqlite3_prepare_v2(c->db, "PRAGMA freelist_count", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

/* Free pages left to give back. */
struct vacuum {
  int64_t left;     /* after the last step (0 when the database keeps its free pages for
                       reuse: made before auto_vacuum=INCREMENTAL was set) */
  struct storage__pace pace;
};

/* Step: give up to pace.n free pages back in one transaction. */
static int step_vacuum(struct storage__sqlite *s, struct storage__job *j)
{
  struct storage__conn *c = &s->wconn;
  struct vacuum *v = j->arg;
  size_t n = v->pace.n ? v->pace.n : PACE_FIRST;
  uint64_t t0;
  int64_t before;
  char sql[64];
  int rc;
  v->left = 0;
  if (!auto_vacuum_on(c) || (before = free_pages(c)) <= 0)
    return 0;
  snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%zu)", n);
  t0 = storage__mono_ns();
  if ((rc = storage__exec(c, ST_BEGIN_IMM, &j->err)))
    return rc;
  if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK)
    rc = storage__db_err(c, &j->err, "giving free pages back");
  v->left = free_pages(c);
  return storage__step_end(c, rc, &j->err, &v->pace, (size_t)(before - v->left), t0);
}

/* Step: truncate the log, now that a passive checkpoint copied it, when no reader holds it
 * (not waiting for one: the step would keep puts waiting); else leave it to the next
 * checkpoint. */
static int step_truncate(struct storage__sqlite *s, struct storage__job *j)
{
  (void)j;
  sqlite3_busy_timeout(s->wconn.db, 0);
  if (sqlite3_wal_checkpoint_v2(s->wconn.db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) !=
      SQLITE_OK)
    sqlite3_wal_checkpoint_v2(s->wconn.db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
  sqlite3_busy_timeout(s->wconn.db, STORAGE_BUSY_MS);
  return 0;
}

/* Give the free pages back to the file system in steps, then copy the log into the database
 * from a reader (a passive checkpoint waits for no one and no one waits for it) and truncate
 * it on the writer. */
static int reclaim(struct storage__sqlite *s, struct spaa_err *err)
{
  struct storage__conn *c;
  struct vacuum v;
  int64_t before = INT64_MAX;
  int rc;
  memset(&v, 0, sizeof(v));
  while (!(rc = storage__sq_step(s, step_vacuum, &v, err)) && v.left > 0 && v.left < before)
    before = v.left;
  if (rc)
    return rc;
  if ((c = storage__reader_get(s, err))) {
    sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    storage__reader_put(s, c);
  }
  return storage__sq_step(s, step_truncate, NULL, err);
}

/* Delete, sweep, reclaim (see the top of the file); the caller holds s->del_mu. */
/* PATH.sweep: a sweep is owed (on = 1: before profiles are deleted; 0: once it finished).
 * A delete killed between the two leaves the file, and the store opened again sweeps at its
 * first delete (retention's pass makes one), so the rows the killed one orphaned are not kept
 * for good, nor paid for by live profiles under max_db_size. */
static int sweep_owed(struct storage__sqlite *s, int on, struct spaa_err *err)
{
  char name[4096];
  int fd, rc;
  if ((rc = storage__side_path(s, STORAGE_SWEEP_SUFFIX, name, sizeof(name), err)))
    return rc;
  if (!on) {
    if (unlink(name) != 0 && errno != ENOENT)
      return spaa_err_set(err, SPAA_E_STORE, 0, 0, "removing %s: %s", name, strerror(errno));
    s->sweep_owed = 0;
    return 0;
  }
  if (s->sweep_owed)
    return 0;
  if ((fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0 || fsync(fd) != 0) {
    int e = errno;
    if (fd >= 0)
      close(fd);
    return spaa_err_set(err, SPAA_E_STORE, 0, 0, "creating %s: %s", name, strerror(e));
  }
  close(fd);
  s->sweep_owed = 1;
  return 0;
}

static int delete_locked(struct storage__sqlite *s, const struct spaa_list_query *sel,
                         struct spaa_store_deleted *out, struct spaa_err *err)
{
  struct nums p;
  int64_t *nums = NULL;
  size_t n = 0, skip = 0;
  int rc = select_nums(s, sel, &nums, &n, err);
  /* newest first: a limit keeps the oldest, at the end */
  if (!rc && sel->limit && n > sel->limit)
    skip = n - sel->limit;
  memset(&p, 0, sizeof(p));
  p.v = nums + skip;
  p.n = rc ? 0 : n - skip;
  if (!rc && p.n)
    rc = sweep_owed(s, 1, err);
  while (!rc && p.done < p.n)
    rc = storage__sq_step(s, step_profiles, &p, err);
  out->profiles = p.done;
  out->bytes_before = storage__disk_bytes(s->path);
  if (!rc && s->sweep_owed) /* these profiles' rows, and any an earlier delete left */
    rc = storage__sq_sweep(s, out, err);
  if (!rc && s->sweep_owed)
    rc = reclaim(s, err);
  if (!rc && s->sweep_owed)
    rc = sweep_owed(s, 0, err);
  out->bytes_after = storage__disk_bytes(s->path);
  free(nums);
  return rc;
}

int storage__sq_delete(struct storage__sqlite *s, const struct spaa_list_query *sel,
                       struct spaa_store_deleted *out, struct spaa_err *err)
{
  struct spaa_list_query q = *sel;
  int rc;
  q.limit = 0; /* a delete's limit is not a page size */
  if ((rc = storage__check_query(&q, err)))
    return rc;
  pthread_mutex_lock(&s->del_mu);
  rc = delete_locked(s, sel, out, err);
  pthread_mutex_unlock(&s->del_mu);
  return rc;
}
