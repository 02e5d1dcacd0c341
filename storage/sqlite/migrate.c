/* Schema version 3: every profile's rows of the version 2 tables (profile_dso,
 * profile_frame, profile_thread, profile_stack, sample, and the profile's header, strings
 * and windows columns) become one block in profile_block; then those tables and columns go.
 * Runs inside the migration's transaction (schema.c). */
#include <stdlib.h>
#include <string.h>

#include "storage/sqlite/sqlite_int.h"

static const char *const OLD_SQL[] = {
  "SELECT num, header, strings, windows FROM profile ORDER BY num",
  "SELECT local_id, dso, inst FROM profile_dso WHERE profile = ?1 ORDER BY seq",
  ("SELECT local_id, frame, dso_local, ip, flags, func, symoff, srcline, extra"
   " FROM profile_frame WHERE profile = ?1 ORDER BY seq"),
  "SELECT pid, tid, comm, extra FROM profile_thread WHERE profile = ?1 ORDER BY seq",
  "SELECT stack, weights, x FROM profile_stack WHERE profile = ?1 ORDER BY seq",
  "SELECT ts, tid, stack, rest FROM sample WHERE profile = ?1 ORDER BY seq",
};
enum { Q_PROFILES, Q_DSOS, Q_FRAMES, Q_THREADS, Q_STACKS, Q_SAMPLES, Q__N };

static const char DROP_OLD[] =
  "DROP TABLE sample; DROP TABLE profile_stack; DROP TABLE profile_thread;"
  " DROP TABLE profile_frame; DROP TABLE profile_dso;"
  " ALTER TABLE profile DROP COLUMN header; ALTER TABLE profile DROP COLUMN strings;"
  " ALTER TABLE profile DROP COLUMN windows;";

static const char *text_or_null(sqlite3_stmt *st, int i)
{
  return sqlite3_column_type(st, i) == SQLITE_NULL ? NULL : (const char *)sqlite3_column_text(st, i);
}

/* One old row into the block under construction. */
static int add_row(struct storage__blk *b, int q, sqlite3_stmt *st)
{
  struct storage__blk_frame f;
  struct storage__blk_sample sm;
  switch (q) {
  case Q_DSOS:
    return storage__blk_dso(b, (uint64_t)sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                            sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2));
  case Q_FRAMES:
    memset(&f, 0, sizeof(f));
    f.local_id = (uint64_t)sqlite3_column_int64(st, 0);
    f.row = sqlite3_column_int64(st, 1);
    f.has_dso = sqlite3_column_type(st, 2) != SQLITE_NULL;
    f.dso_local = (uint64_t)sqlite3_column_int64(st, 2);
    f.has_ip = sqlite3_column_type(st, 3) != SQLITE_NULL;
    f.ip = (uint64_t)sqlite3_column_int64(st, 3);
    f.flags = (unsigned)sqlite3_column_int64(st, 4) & 31u;
    f.func = text_or_null(st, 5);
    f.symoff = text_or_null(st, 6);
    f.srcline = text_or_null(st, 7);
    f.extra = text_or_null(st, 8);
    return storage__blk_frame(b, &f);
  case Q_THREADS:
    return storage__blk_thread(b, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                               text_or_null(st, 2), text_or_null(st, 3));
  case Q_STACKS:
    return storage__blk_stack(b, sqlite3_column_int64(st, 0), sqlite3_column_blob(st, 1),
                              (size_t)sqlite3_column_bytes(st, 1), sqlite3_column_blob(st, 2),
                              (size_t)sqlite3_column_bytes(st, 2));
  default:
    memset(&sm, 0, sizeof(sm));
    if (sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
      sm.ts_kind = BT_INT;
      sm.ts = spaa_int(sqlite3_column_int64(st, 0));
    } else if (sqlite3_column_type(st, 0) == SQLITE_FLOAT) {
      sm.ts_kind = BT_FLOAT;
      sm.ts = spaa_float(sqlite3_column_double(st, 0));
    }
    sm.has_tid = sqlite3_column_type(st, 1) != SQLITE_NULL;
    sm.tid = sqlite3_column_int64(st, 1);
    sm.has_stack = sqlite3_column_type(st, 2) != SQLITE_NULL;
    sm.stack_row = sqlite3_column_int64(st, 2);
    sm.rest = sqlite3_column_blob(st, 3);
    sm.rest_len = (size_t)sqlite3_column_bytes(st, 3);
    return storage__blk_sample(b, &sm);
  }
}

/* The block of profile `num` (whose profile row `prow` is current) into profile_block. */
static int migrate_one(struct storage__conn *c, sqlite3_stmt **q, sqlite3_stmt *prow,
                       struct spaa_buf *raw, struct spaa_buf *z, struct spaa_err *err)
{
  int64_t num = sqlite3_column_int64(prow, 0);
  struct storage__blk_tables t;
  struct storage__blk b;
  sqlite3_stmt *ins;
  int i, rc = 0, step;
  storage__blk_init(&b);
  for (i = Q_DSOS; i < Q__N && !rc; i++) {
    sqlite3_reset(q[i]);
    sqlite3_bind_int64(q[i], 1, num);
    while (!rc && (step = sqlite3_step(q[i])) == SQLITE_ROW)
      rc = add_row(&b, i, q[i]);
    if (!rc && step != SQLITE_DONE)
      rc = storage__db_err(c, err, "reading a profile to migrate");
  }
  memset(&t, 0, sizeof(t));
  t.header = sqlite3_column_blob(prow, 1);
  t.header_len = (size_t)sqlite3_column_bytes(prow, 1);
  t.strings = sqlite3_column_blob(prow, 2);
  t.strings_len = (size_t)sqlite3_column_bytes(prow, 2);
  t.windows = sqlite3_column_blob(prow, 3);
  t.windows_len = (size_t)sqlite3_column_bytes(prow, 3);
  raw->len = z->len = 0;
  if (!rc && ((rc = storage__blk_finish(&b, &t, raw)) ||
              (rc = storage__blk_compress(raw->p, raw->len, NULL, 0, NULL, z))))
    rc = spaa_err_set(err, rc, 0, 0, "packing profile %lld into a block failed", (long long)num);
  if (!rc && (ins = storage__stmt(c, ST_BLOCK_ADD, err))) {
    sqlite3_bind_int64(ins, 1, num);
    sqlite3_bind_int64(ins, 3, (int64_t)b.n[BN_STACKS]);
    sqlite3_bind_int64(ins, 4, (int64_t)b.n[BN_SAMPLES]);
    sqlite3_bind_blob(ins, 5, z->p, (int)z->len, SQLITE_STATIC);
    if (sqlite3_step(ins) != SQLITE_DONE)
      rc = storage__db_err(c, err, "writing a migrated block");
    sqlite3_reset(ins);
  } else if (!rc) {
    rc = SPAA_E_STORE;
  }
  storage__blk_free(&b);
  return rc;
}

int storage__migrate_blocks(struct storage__conn *c, struct spaa_err *err)
{
  sqlite3_stmt *q[Q__N] = {0};
  struct spaa_buf raw, z;
  int i, rc = 0, step = SQLITE_DONE;
  spaa_buf_init(&raw, 0);
  spaa_buf_init(&z, 0);
  for (i = 0; i < Q__N; i++)
    if (sqlite3_prepare_v2(c->db, OLD_SQL[i], -1, &q[i], NULL) != SQLITE_OK) {
      rc = storage__db_err(c, err, "migrating to blocks");
      goto out;
    }
  while (!rc && (step = sqlite3_step(q[Q_PROFILES])) == SQLITE_ROW)
    rc = migrate_one(c, q, q[Q_PROFILES], &raw, &z, err);
  if (!rc && step != SQLITE_DONE)
    rc = storage__db_err(c, err, "migrating to blocks");
out:
  for (i = 0; i < Q__N; i++)
    sqlite3_finalize(q[i]);
  spaa_buf_free(&raw);
  spaa_buf_free(&z);
  if (!rc && sqlite3_exec(c->db, DROP_OLD, NULL, NULL, NULL) != SQLITE_OK)
    rc = storage__db_err(c, err, "dropping the version 2 tables");
  return rc;
}
