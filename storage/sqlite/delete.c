/* Deleting a selection on the writer thread: the selected profiles in short transactions
 * (their labels, totals and blocks cascade), then a sweep of the shared rows nothing left
 * references. Shared rows carry no reference count: the sweep marks what the remaining
 * blocks name (their stack, frame and dso sections, their samples' stacks, the frames of
 * kept stacks, the dsos of kept frames) in temporary tables and deletes the rest, in one
 * transaction. It runs where puts run, so no put can take a row being swept, and it empties
 * the writer's content-id cache, whose rows may be gone. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/sqlite/sqlite_int.h"

/* Run fixed SQL text on c. 0 or SPAA_E_STORE. */
static int run(struct storage__conn *c, const char *sql, struct spaa_err *err)
{
  if (sqlite3_exec(c->db, sql, NULL, NULL, NULL) != SQLITE_OK)
    return storage__db_err(c, err, "deleting");
  return 0;
}

/* The row numbers of the selected profiles, newest first, into *nums (n of them).
 * 0, SPAA_E_STORE, SPAA_E_NOMEM. */
static int select_nums(struct storage__conn *c, const struct spaa_list_query *sel,
                       int64_t **nums, size_t *n, struct spaa_err *err)
{
  struct spaa_buf sql;
  sqlite3_stmt *st = NULL;
  size_t cap = 0;
  int rc = 0, step;
  *nums = NULL;
  *n = 0;
  spaa_buf_init(&sql, 4096);
  if (storage__select_sql(sel, &sql, 0)) {
    spaa_buf_free(&sql);
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
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
  return rc;
}

/* Delete nums[0..n) in transactions of SPAA_STORE_DELETE_BATCH, counting into *done. */
static int delete_profiles(struct storage__conn *c, const int64_t *nums, size_t n,
                           uint64_t *done, struct spaa_err *err)
{
  sqlite3_stmt *st = NULL;
  size_t i = 0, k;
  int rc = 0;
  if (sqlite3_prepare_v2(c->db, "DELETE FROM profile WHERE num = ?1", -1, &st, NULL) !=
      SQLITE_OK)
    return storage__db_err(c, err, "preparing the delete");
  while (i < n && !rc) {
    if ((rc = storage__exec(c, ST_BEGIN_IMM, err)))
      break;
    for (k = 0; k < SPAA_STORE_DELETE_BATCH && i + k < n && !rc; k++) {
      sqlite3_reset(st);
      sqlite3_bind_int64(st, 1, nums[i + k]);
      if (sqlite3_step(st) != SQLITE_DONE)
        rc = storage__db_err(c, err, "deleting a profile");
    }
    if (!rc && !(rc = storage__exec(c, ST_COMMIT, err))) {
      *done += k;
      i += k;
    } else if (!sqlite3_get_autocommit(c->db)) {
      storage__exec(c, ST_ROLLBACK, NULL);
    }
  }
  sqlite3_finalize(st);
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

/* ---- the sweep ---------------------------------------------------------------------------- */

struct mark {
  struct storage__conn *c;
  sqlite3_stmt *ins[3];        /* INSERT OR IGNORE into keep_stack, keep_frame, keep_dso */
  struct storage__rdict dict;
  struct spaa_buf raw;
  struct spaa_err *err;
};

static int keep(struct mark *m, int which, int64_t row)
{
  sqlite3_stmt *st = m->ins[which];
  sqlite3_reset(st);
  sqlite3_bind_int64(st, 1, row);
  return sqlite3_step(st) == SQLITE_DONE ? 0 : storage__db_err(m->c, m->err, "marking rows");
}

static int keep_cb(void *m, int which, int64_t row) { return keep(m, which, row); }

/* Mark what the block in m->raw names (storage__blk_rows: 0 stacks, 1 frames, 2 dsos).
 * 0, SPAA_E_STORE (corrupt or database), NOMEM. */
static int mark_block(struct mark *m)
{
  struct storage__blk_rd b;
  if (storage__blk_open(&b, m->raw.p, m->raw.len))
    return SPAA_E_STORE;
  return storage__blk_rows(&b, 1, keep_cb, m);
}

/* Mark from every remaining block. */
static int mark_blocks(struct mark *m)
{
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  if (sqlite3_prepare_v2(m->c->db, "SELECT p.id, b.dict, b.data FROM profile_block b"
                                   " JOIN profile p ON p.num = b.profile", -1, &st, NULL) !=
      SQLITE_OK)
    return storage__db_err(m->c, m->err, "preparing the sweep");
  while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
    const char *id = (const char *)sqlite3_column_text(st, 0);
    rc = storage__sq_block_raw(m->c, &m->dict, sqlite3_column_int64(st, 1),
                               sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2),
                               &m->raw, m->err);
    if (!rc)
      rc = mark_block(m);
    if (rc == SPAA_E_STORE && !m->err->code)
      spaa_err_set(m->err, rc, 0, 0, "stored profile %.64s is corrupt: block", id ? id : "");
    else if (rc == SPAA_E_NOMEM)
      spaa_err_set(m->err, rc, 0, 0, NULL);
  }
  if (!rc && step != SQLITE_DONE)
    rc = storage__db_err(m->c, m->err, "reading blocks to sweep");
  sqlite3_finalize(st);
  return rc;
}

/* The frames of every kept stack (a stack row lists frame rows, leaf first, as varints). */
static int mark_stack_frames(struct mark *m)
{
  sqlite3_stmt *st = NULL;
  int rc = 0, step;
  if (sqlite3_prepare_v2(m->c->db, "SELECT s.frames FROM stack s JOIN keep_stack k"
                                   " ON k.id = s.id", -1, &st, NULL) != SQLITE_OK)
    return storage__db_err(m->c, m->err, "preparing the sweep");
  while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
    struct storage__rd r;
    storage__rd_init(&r, sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0));
    while (!rc && r.pos < r.len) {
      uint64_t row = storage__get_uv(&r);
      rc = r.bad || row > INT64_MAX
               ? spaa_err_set(m->err, SPAA_E_STORE, 0, 0, "a stack row is corrupt")
               : keep(m, 1, (int64_t)row);
    }
  }
  if (!rc && step != SQLITE_DONE)
    rc = storage__db_err(m->c, m->err, "reading stacks to sweep");
  sqlite3_finalize(st);
  return rc;
}

static const char SWEEP_TABLES[] =
  "CREATE TEMP TABLE IF NOT EXISTS keep_stack(id INTEGER PRIMARY KEY);"
  "CREATE TEMP TABLE IF NOT EXISTS keep_frame(id INTEGER PRIMARY KEY);"
  "CREATE TEMP TABLE IF NOT EXISTS keep_dso(id INTEGER PRIMARY KEY);"
  "DELETE FROM keep_stack; DELETE FROM keep_frame; DELETE FROM keep_dso;";

/* Children before parents: a frame names its dso, a block its dictionary. */
static const char *const SWEEP_DELETE[4] = {
  "DELETE FROM stack WHERE id NOT IN (SELECT id FROM keep_stack)",
  "DELETE FROM frame WHERE id NOT IN (SELECT id FROM keep_frame)",
  "DELETE FROM dso WHERE id NOT IN (SELECT id FROM keep_dso)",
  ("DELETE FROM block_dict WHERE id NOT IN"
   " (SELECT dict FROM profile_block WHERE dict IS NOT NULL)"),
};

/* Mark and delete inside the open transaction; the counts into out. */
static int sweep_in(struct mark *m, struct spaa_store_deleted *out)
{
  static const char *const ins[3] = {"INSERT OR IGNORE INTO keep_stack VALUES(?1)",
                                     "INSERT OR IGNORE INTO keep_frame VALUES(?1)",
                                     "INSERT OR IGNORE INTO keep_dso VALUES(?1)"};
  uint64_t *count[4] = {&out->stacks, &out->frames, &out->dsos, &out->dicts};
  int i, rc;
  if ((rc = run(m->c, SWEEP_TABLES, m->err)))
    return rc;
  for (i = 0; i < 3; i++)
    if (sqlite3_prepare_v2(m->c->db, ins[i], -1, &m->ins[i], NULL) != SQLITE_OK)
      return storage__db_err(m->c, m->err, "preparing the sweep");
  if ((rc = mark_blocks(m)) || (rc = mark_stack_frames(m)) ||
      (rc = run(m->c, "INSERT OR IGNORE INTO keep_dso SELECT f.dso FROM frame f"
                      " JOIN keep_frame k ON k.id = f.id WHERE f.dso IS NOT NULL", m->err)))
    return rc;
  for (i = 0; i < 4; i++) {
    if ((rc = run(m->c, SWEEP_DELETE[i], m->err)))
      return rc;
    *count[i] = (uint64_t)sqlite3_changes64(m->c->db);
  }
  return run(m->c, "DELETE FROM keep_stack; DELETE FROM keep_frame; DELETE FROM keep_dso;",
             m->err);
}

/* Delete the shared rows nothing references, in one transaction. */
static int sweep(struct storage__sqlite *s, struct spaa_store_deleted *out, struct spaa_err *err)
{
  struct mark m;
  int i, rc;
  memset(&m, 0, sizeof(m));
  m.c = &s->wconn;
  m.err = err;
  spaa_buf_init(&m.dict.raw, 0);
  spaa_buf_init(&m.raw, 0);
  if (!(rc = storage__exec(m.c, ST_BEGIN_IMM, err))) {
    rc = sweep_in(&m, out);
    if (!rc)
      rc = storage__exec(m.c, ST_COMMIT, err);
    if (rc && !sqlite3_get_autocommit(m.c->db))
      storage__exec(m.c, ST_ROLLBACK, NULL);
  }
  if (rc)
    out->stacks = out->frames = out->dsos = out->dicts = 0;
  for (i = 0; i < 3; i++)
    sqlite3_finalize(m.ins[i]);
  spaa_buf_free(&m.dict.raw);
  spaa_buf_free(&m.raw);
  /* rows the cache names may be gone (even after a failure: rows a rolled-back sweep kept
   * are there, but an emptied cache only costs lookups) */
  storage__cache_free(&s->cache);
  return rc;
}

/* Give free pages back to the file system, STORAGE_VACUUM_STEP pages per transaction so
 * that puts wait at most one step, then checkpoint the log and truncate it (a passive
 * checkpoint when readers hold it). Databases created before auto_vacuum=INCREMENTAL was
 * set keep their free pages for reuse: nothing to give back then. */
static int reclaim(struct storage__conn *c, struct spaa_err *err)
{
  char sql[64];
  int64_t free_pages;
  int rc = 0, guard;
  snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%d)", STORAGE_VACUUM_STEP);
  for (guard = 0; guard < 1 << 20 && !rc; guard++) {
    sqlite3_stmt *st = NULL;
    free_pages = 0;
    if (sqlite3_prepare_v2(c->db, "PRAGMA freelist_count", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      free_pages = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (free_pages <= 0 || !auto_vacuum_on(c))
      break;
    rc = run(c, sql, err);
  }
  if (!rc && sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) !=
                 SQLITE_OK)
    sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
  return rc;
}

void storage__run_delete(struct storage__sqlite *s, struct storage__job *j)
{
  const struct spaa_list_query *sel = j->del;
  struct spaa_store_deleted *out = j->deleted;
  int64_t *nums = NULL;
  size_t n = 0, skip = 0;
  j->rc = select_nums(&s->wconn, sel, &nums, &n, &j->err);
  /* newest first: a limit keeps the oldest, at the end */
  if (!j->rc && sel->limit && n > sel->limit)
    skip = n - sel->limit;
  if (!j->rc)
    j->rc = delete_profiles(&s->wconn, nums + skip, n - skip, &out->profiles, &j->err);
  out->bytes_before = storage__disk_bytes(s->path);
  if (!j->rc && out->profiles)
    j->rc = sweep(s, out, &j->err);
  if (!j->rc && out->profiles)
    j->rc = reclaim(&s->wconn, &j->err);
  out->bytes_after = storage__disk_bytes(s->path);
  free(nums);
}

int storage__sq_delete(struct storage__sqlite *s, const struct spaa_list_query *sel,
                       struct spaa_store_deleted *out, struct spaa_err *err)
{
  struct storage__job job;
  struct spaa_list_query q = *sel;
  int rc;
  q.limit = 0; /* a delete's limit is not a page size */
  if ((rc = storage__check_query(&q, err)))
    return rc;
  memset(&job, 0, sizeof(job));
  job.del = sel;
  job.deleted = out;
  rc = storage__sq_submit(s, &job);
  if (rc)
    return spaa_err_set(err, rc, 0, 0, NULL);
  if (job.rc < 0) {
    if (job.err.code)
      *err = job.err;
    else
      spaa_err_set(err, job.rc, 0, 0, NULL);
  }
  return job.rc;
}
