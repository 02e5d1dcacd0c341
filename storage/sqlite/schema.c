/* The schema and its forward migrations, opening connections with the store's pragmas, and
 * the one table of SQL statements every connection prepares lazily and keeps. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "storage/sqlite/sqlite_int.h"

/* Shared rows (dso, frame, stack) are keyed by content id and referenced by row id. The
 * per-profile tables cascade from profile only: deleting a profile never touches shared
 * rows, and a shared row still referenced cannot be deleted (foreign keys, NO ACTION).
 * Retention deletes profiles, then stacks no profile_stack names, then frames no
 * profile_frame names, then dsos no profile_dso and no frame names (each has an index). */
static const char MIGRATION_1[] =
  "CREATE TABLE dso("
  " id INTEGER PRIMARY KEY,"
  " cid BLOB NOT NULL UNIQUE,"       /* spaa_dso_cid */
  " key TEXT NOT NULL);"             /* spaa_dso_key: \"b:\"+build_id or \"n:\"+name */
  "CREATE TABLE frame("
  " id INTEGER PRIMARY KEY,"
  " cid BLOB NOT NULL UNIQUE,"       /* spaa_frame_cid */
  " dso INTEGER REFERENCES dso(id),"
  " func TEXT NOT NULL,"             /* resolved symbol, '' when unresolved */
  " srcline TEXT,"                   /* resolved source line, NULL when none */
  " inline_depth INTEGER NOT NULL,"
  " kind TEXT NOT NULL,"
  " addr INTEGER);"                  /* dso-relative address of an unresolved frame */
  "CREATE INDEX frame_dso ON frame(dso);"
  "CREATE TABLE stack("
  " id INTEGER PRIMARY KEY,"
  " cid BLOB NOT NULL UNIQUE,"       /* the stack id, 16 bytes */
  " event TEXT NOT NULL,"
  " stack_type TEXT NOT NULL,"       /* 'unified' when absent */
  " frames BLOB NOT NULL,"           /* frame row ids, leaf first, as varints */
  " context TEXT);"                  /* context minus event, canonical JSON, or NULL */
  "CREATE TABLE profile("
  " num INTEGER PRIMARY KEY,"
  " id TEXT NOT NULL UNIQUE,"
  " service TEXT NOT NULL,"
  " source TEXT NOT NULL,"
  " received_ns INTEGER NOT NULL,"
  " start_ns INTEGER,"               /* NULL when unknown */
  " end_ns INTEGER,"
  " samples INTEGER NOT NULL,"       /* sample records, else the sum of 'samples' weights */
  " payload_bytes INTEGER NOT NULL,"
  " header BLOB NOT NULL,"           /* packed header record */
  " strings BLOB NOT NULL,"          /* packed string table (metrics, units, events) */
  " windows BLOB,"                   /* packed window records, NULL when none */
  " labels TEXT,"                    /* canonical JSON object, or NULL */
  " attrs TEXT,"                     /* canonical JSON, or NULL */
  " original BLOB);"                 /* the upload, zstd-compressed, or NULL */
  "CREATE TABLE profile_label("
  " profile INTEGER NOT NULL REFERENCES profile(num) ON DELETE CASCADE,"
  " key TEXT NOT NULL, value TEXT NOT NULL,"
  " PRIMARY KEY(profile, key)) WITHOUT ROWID;"
  "CREATE TABLE profile_event("
  " profile INTEGER NOT NULL REFERENCES profile(num) ON DELETE CASCADE,"
  " seq INTEGER NOT NULL, name TEXT NOT NULL,"
  " totals TEXT NOT NULL,"           /* {metric: sum over the profile's stacks} */
  " PRIMARY KEY(profile, seq)) WITHOUT ROWID;"
  "CREATE TABLE profile_dso("
  " profile INTEGER NOT NULL REFERENCES profile(num) ON DELETE CASCADE,"
  " seq INTEGER NOT NULL, local_id INTEGER NOT NULL,"
  " dso INTEGER NOT NULL REFERENCES dso(id),"
  " inst BLOB NOT NULL,"             /* packed: name, build_id, is_kernel, mapping, extra */
  " PRIMARY KEY(profile, seq)) WITHOUT ROWID;"
  "CREATE INDEX profile_dso_dso ON profile_dso(dso);"
  "CREATE TABLE profile_frame("
  " profile INTEGER NOT NULL REFERENCES profile(num) ON DELETE CASCADE,"
  " seq INTEGER NOT NULL, local_id INTEGER NOT NULL,"
  " frame INTEGER NOT NULL REFERENCES frame(id),"
  " dso_local INTEGER,"              /* local dso id, NULL without a dso */
  " ip INTEGER,"                     /* as recorded, NULL when absent */
  " flags INTEGER NOT NULL,"         /* PF_* in sqlite_int.h */
  " func TEXT,"                      /* the raw text of an unresolved func */
  " symoff TEXT, srcline TEXT,"      /* srcline only with PF_SRC_HERE */
  " extra TEXT,"                     /* canonical JSON of other keys, or NULL */
  " PRIMARY KEY(profile, seq)) WITHOUT ROWID;"
  "CREATE INDEX profile_frame_frame ON profile_frame(frame);"
  "CREATE TABLE profile_thread("
  " profile INTEGER NOT NULL REFERENCES profile(num) ON DELETE CASCADE,"
  " seq INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER NOT NULL,"
  " comm TEXT, extra TEXT,"
  " PRIMARY KEY(profile, seq)) WITHOUT ROWID;"
  "CREATE TABLE profile_stack("
  " profile INTEGER NOT NULL REFERENCES profile(num) ON DELETE CASCADE,"
  " seq INTEGER NOT NULL,"
  " stack INTEGER NOT NULL REFERENCES stack(id),"
  " weights BLOB NOT NULL,"          /* packed weights (string table indexes) */
  " x BLOB,"                         /* packed PS_* extras, NULL when none */
  " PRIMARY KEY(profile, seq)) WITHOUT ROWID;"
  "CREATE INDEX profile_stack_stack ON profile_stack(stack);"
  "CREATE TABLE sample("
  " profile INTEGER NOT NULL REFERENCES profile(num) ON DELETE CASCADE,"
  " seq INTEGER NOT NULL,"
  " ts,"                             /* no affinity: keeps integer vs real */
  " tid INTEGER,"
  " stack INTEGER,"                  /* stack row id (also in profile_stack), or NULL */
  " rest BLOB,"                      /* packed SR_* fields, NULL when none */
  " PRIMARY KEY(profile, seq)) WITHOUT ROWID;";

/* Indexes for the list queries. */
static const char MIGRATION_2[] =
  "CREATE INDEX profile_received ON profile(received_ns, id);"
  "CREATE INDEX profile_service ON profile(service, received_ns, id);"
  "CREATE INDEX profile_source ON profile(source, received_ns, id);"
  "CREATE INDEX profile_time ON profile(start_ns, end_ns);"
  "CREATE INDEX profile_label_kv ON profile_label(key, value);"
  "CREATE INDEX profile_event_name ON profile_event(name);";

/* Per-profile data as one block (docs/storage.md): the rows of profile_dso, profile_frame,
 * profile_thread, profile_stack and sample, and the profile's header, string table and
 * windows, move into profile_block; migrate.c converts what is there and drops the old
 * tables and columns. block_dict holds each service's zstd dictionary (raw content: the
 * first block stored for the service, at most SPAA_STORE_MAX_DICT bytes), itself
 * zstd-compressed. Shared rows are no longer protected by foreign keys from per-profile
 * rows: what still references a stack is found by scanning blocks. */
static const char MIGRATION_3[] =
  "CREATE TABLE block_dict("
  " id INTEGER PRIMARY KEY,"
  " service TEXT NOT NULL UNIQUE,"
  " data BLOB NOT NULL);"
  "CREATE TABLE profile_block("
  " profile INTEGER PRIMARY KEY REFERENCES profile(num) ON DELETE CASCADE,"
  " dict INTEGER REFERENCES block_dict(id),"  /* NULL: compressed without a dictionary */
  " stacks INTEGER NOT NULL,"                 /* stack records in the block */
  " samples INTEGER NOT NULL,"                /* sample records in the block */
  " data BLOB NOT NULL);";                    /* the zstd-compressed block */

/* The source filter goes by profile_received instead (four sources, most lists filter by
 * service or time): its index cost a tenth of a small profile's stored bytes. */
static const char MIGRATION_4[] = "DROP INDEX IF EXISTS profile_source;";

/* A sweep deletes a block dictionary only when no block uses it (and the foreign key checks
 * the same when it goes): without an index each of those questions reads every block. */
static const char MIGRATION_5[] =
  "CREATE INDEX IF NOT EXISTS profile_block_dict ON profile_block(dict);";

const char *const storage__migrations[] = {MIGRATION_1, MIGRATION_2, MIGRATION_3, MIGRATION_4,
                                           MIGRATION_5};
const size_t storage__n_migrations = sizeof(storage__migrations) / sizeof(storage__migrations[0]);

static const char *const SQL[ST__N] = {
  [ST_BEGIN_IMM] = "BEGIN IMMEDIATE",
  [ST_BEGIN] = "BEGIN",
  [ST_COMMIT] = "COMMIT",
  [ST_ROLLBACK] = "ROLLBACK",
  [ST_SAVEPOINT] = "SAVEPOINT one_profile",
  [ST_RELEASE] = "RELEASE one_profile",
  [ST_ROLLBACK_TO] = "ROLLBACK TO one_profile",
  [ST_DSO_GET] = "SELECT id FROM dso WHERE cid = ?1",
  [ST_DSO_ADD] = "INSERT INTO dso(cid, key) VALUES(?1, ?2)",
  [ST_FRAME_GET] = "SELECT id FROM frame WHERE cid = ?1",
  [ST_FRAME_ADD] = "INSERT INTO frame(cid, dso, func, srcline, inline_depth, kind, addr)"
                   " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
  [ST_STACK_GET] = "SELECT id FROM stack WHERE cid = ?1",
  [ST_STACK_ADD] = "INSERT INTO stack(cid, event, stack_type, frames, context)"
                   " VALUES(?1, ?2, ?3, ?4, ?5)",
  [ST_PROFILE_EXISTS] = "SELECT 1 FROM profile WHERE id = ?1",
  [ST_PROFILE_ADD] = "INSERT INTO profile(id, service, source, received_ns, start_ns, end_ns,"
                     " samples, payload_bytes, labels, attrs, original)"
                     " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
  [ST_LABEL_ADD] = "INSERT OR REPLACE INTO profile_label(profile, key, value) VALUES(?1, ?2, ?3)",
  [ST_EVENT_ADD] = "INSERT INTO profile_event(profile, seq, name, totals) VALUES(?1, ?2, ?3, ?4)",
  [ST_BLOCK_ADD] = "INSERT INTO profile_block(profile, dict, stacks, samples, data)"
                   " VALUES(?1, ?2, ?3, ?4, ?5)",
  [ST_DICT_GET] = "SELECT id, data FROM block_dict WHERE service = ?1",
  [ST_DICT_ADD] = "INSERT INTO block_dict(service, data) VALUES(?1, ?2)",
  [ST_R_DICT] = "SELECT data FROM block_dict WHERE id = ?1",
  [ST_R_PROFILE] = "SELECT b.dict, b.data FROM profile p JOIN profile_block b ON b.profile = p.num"
                   " WHERE p.id = ?1",
  [ST_R_FRAME] = "SELECT func, srcline, inline_depth, kind FROM frame WHERE id = ?1",
  [ST_R_STACK] = "SELECT cid, event, stack_type, frames, context FROM stack WHERE id = ?1",
  [ST_R_META] = "SELECT num, id, service, source, received_ns, start_ns, end_ns, samples,"
                " payload_bytes, labels, attrs FROM profile WHERE id = ?1",
  [ST_R_EVENTS] = "SELECT name, totals FROM profile_event WHERE profile = ?1 ORDER BY seq",
  [ST_C_PROFILES] = "SELECT count(*) FROM profile",
  [ST_C_DSOS] = "SELECT count(*) FROM dso",
  [ST_C_FRAMES] = "SELECT count(*) FROM frame",
  [ST_C_STACKS] = "SELECT count(*) FROM stack",
  [ST_C_PSTACKS] = "SELECT coalesce(sum(stacks), 0) FROM profile_block",
  [ST_C_SAMPLES] = "SELECT coalesce(sum(samples), 0) FROM profile_block",
};

/* 1 when the connection's last error was a full disk (SQLite's SQLITE_FULL, or an I/O error
 * whose errno is ENOSPC). */
static int disk_full(sqlite3 *db)
{
  return db && ((sqlite3_errcode(db) & 0xff) == SQLITE_FULL || sqlite3_system_errno(db) == ENOSPC);
}

int storage__db_err(struct storage__conn *c, struct spaa_err *err, const char *what)
{
  if (c && disk_full(c->db)) { /* a client may retry once space is freed: 503, not 500 */
    __atomic_store_n(&c->full_ns, storage__mono_ns(), __ATOMIC_RELAXED);
    return spaa_err_set(err, SPAA_E_BUSY, 0, 0, "the disk holding the store is full (%s: %s): "
                        "retry later", what, sqlite3_errmsg(c->db));
  }
  return spaa_err_set(err, SPAA_E_STORE, 0, 0, "%s: %s", what,
                      c && c->db ? sqlite3_errmsg(c->db) : "no database");
}

sqlite3_stmt *storage__stmt(struct storage__conn *c, enum storage__st id, struct spaa_err *err)
{
  sqlite3_stmt *st = c->st[id];
  if (st) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
  }
  if (sqlite3_prepare_v3(c->db, SQL[id], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
    storage__db_err(c, err, "preparing a statement");
    return NULL;
  }
  c->st[id] = st;
  return st;
}

int storage__exec(struct storage__conn *c, enum storage__st id, struct spaa_err *err)
{
  sqlite3_stmt *st = storage__stmt(c, id, err);
  int rc;
  if (!st)
    return SPAA_E_STORE;
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    return storage__db_err(c, err, SQL[id]);
  return 0;
}

/* Run SQL text without parameters (pragmas, migrations). */
static int exec_text(struct storage__conn *c, const char *sql, struct spaa_err *err)
{
  char *msg = NULL;
  if (sqlite3_exec(c->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
    spaa_err_set(err, SPAA_E_STORE, 0, 0, "%s%s", msg ? msg : sqlite3_errmsg(c->db),
                 disk_full(c->db) ? " (the disk is full)" : "");
    sqlite3_free(msg);
    return SPAA_E_STORE;
  }
  return 0;
}

/* The integer a one-row query answers, or -1 on error. */
static int64_t query_int(struct storage__conn *c, const char *sql)
{
  sqlite3_stmt *st;
  int64_t v = -1;
  if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK)
    return -1;
  if (sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* Bring the schema to the newest version, one transaction per step; a migration that ran
 * (every step committed) is logged once with both versions and the time it took. */
static int migrate(struct storage__conn *c, const char *path, const struct storage__log *log,
                   struct spaa_err *err)
{
  int64_t have;
  uint64_t t0 = storage__mono_ns();
  size_t v;
  int rc;
  if ((rc = exec_text(c, "CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL);",
                      err)))
    return rc;
  have = query_int(c, "SELECT coalesce(max(version), 0) FROM schema_version");
  if (have < 0)
    return storage__db_err(c, err, "reading the schema version");
  if ((uint64_t)have > storage__n_migrations)
    return spaa_err_set(err, SPAA_E_STORE, 0, 0,
                        "database schema version %lld is newer than this build knows (%zu)",
                        (long long)have, storage__n_migrations);
  for (v = (size_t)have; v < storage__n_migrations; v++) {
    sqlite3_stmt *st;
    if ((rc = exec_text(c, "BEGIN IMMEDIATE", err)))
      return rc;
    if ((rc = exec_text(c, storage__migrations[v], err)))
      goto fail;
    if (v + 1 == 3 && (rc = storage__migrate_blocks(c, err)))
      goto fail;
    if ((rc = exec_text(c, "DELETE FROM schema_version", err)))
      goto fail;
    if (sqlite3_prepare_v2(c->db, "INSERT INTO schema_version(version) VALUES(?1)", -1, &st,
                           NULL) != SQLITE_OK) {
      rc = storage__db_err(c, err, "updating the schema version");
      goto fail;
    }
    sqlite3_bind_int64(st, 1, (sqlite3_int64)(v + 1));
    sqlite3_step(st);
    if (sqlite3_finalize(st) != SQLITE_OK) {
      rc = storage__db_err(c, err, "updating the schema version");
      goto fail;
    }
    if ((rc = exec_text(c, "COMMIT", err)))
      goto fail;
    continue;
  fail:
    exec_text(c, "ROLLBACK", NULL);
    spaa_err_set(err, SPAA_E_STORE, 0, 0, "migrating the schema to version %zu failed", v + 1);
    return rc;
  }
  if ((size_t)have < storage__n_migrations) {
    char q[SPAA_STORE_MAX_LOCATION];
    uint64_t ns = storage__mono_ns() - t0;
    storage__log(log, SPAA_STORE_LOG_INFO, "schema migrated",
                 "from=%lld to=%zu took_ms=%llu.%03llu database=\"%s\"", (long long)have,
                 storage__n_migrations, (unsigned long long)(ns / 1000000),
                 (unsigned long long)(ns / 1000 % 1000), storage__log_q(q, sizeof(q), path));
  }
  return 0;
}

int storage__conn_open(struct storage__conn *c, const char *path, int writer,
                       enum spaa_durability durability, const struct storage__log *log,
                       struct spaa_err *err)
{
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (writer ? SQLITE_OPEN_CREATE : 0);
  sqlite3_stmt *st = NULL;
  int rc;
  memset(c, 0, sizeof(*c));
  if (sqlite3_open_v2(path, &c->db, flags, NULL) != SQLITE_OK) {
    rc = spaa_err_set(err, SPAA_E_STORE, 0, 0, "opening %s: %s", path,
                      c->db ? sqlite3_errmsg(c->db) : "out of memory");
    goto fail;
  }
  sqlite3_extended_result_codes(c->db, 1);
  sqlite3_busy_timeout(c->db, STORAGE_BUSY_MS);
  /* SQLite opens a file it may not write read-only, and every upload would then fail */
  if (writer && sqlite3_db_readonly(c->db, "main") == 1) {
    rc = spaa_err_set(err, SPAA_E_STORE, 0, 0, "the database %s cannot be written by this "
                      "process (user id %ld): give it the file, its directory and its -wal and "
                      "-shm files", path, (long)geteuid());
    goto fail;
  }
  /* a new database gives the pages deletes free back to the file system on request
   * (storage/sqlite/delete.c); the mode can only be chosen before the file is first written (WAL mode writes it) */
  if (writer && query_int(c, "SELECT count(*) FROM sqlite_master") == 0 &&
      (rc = exec_text(c, "PRAGMA auto_vacuum=INCREMENTAL;", err)))
    goto fail;
  /* WAL: readers never block the writer nor wait for it. synchronous=FULL syncs the WAL
   * at every commit, so a profile acknowledged after COMMIT survives a power loss; with
   * durability = normal, synchronous=NORMAL syncs only at checkpoints: a process crash loses
   * nothing, a power loss may lose the last commits. */
  if (sqlite3_prepare_v2(c->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK ||
      sqlite3_step(st) != SQLITE_ROW ||
      strcmp((const char *)sqlite3_column_text(st, 0), "wal") != 0) {
    rc = spaa_err_set(err, SPAA_E_STORE, 0, 0, "%s: cannot switch to WAL mode: %s%s", path,
                      sqlite3_errmsg(c->db), disk_full(c->db) ? " (the disk is full)" : "");
    goto fail;
  }
  sqlite3_finalize(st);
  st = NULL;
  if ((rc = exec_text(c, durability == SPAA_DURABILITY_NORMAL ? "PRAGMA synchronous=NORMAL;"
                                                                : "PRAGMA synchronous=FULL;", err)) ||
      (rc = exec_text(c, writer ? "PRAGMA foreign_keys=ON; PRAGMA cache_size=-8192;"
                                : "PRAGMA foreign_keys=ON; PRAGMA cache_size=-16384;", err)) ||
      (rc = exec_text(c, "PRAGMA temp_store=MEMORY; PRAGMA journal_size_limit=67108864;", err)))
    goto fail;
  if (writer && (rc = migrate(c, path, log, err)))
    goto fail;
  if (!writer && (rc = exec_text(c, "PRAGMA query_only=ON;", err)))
    goto fail;
  return 0;
fail:
  sqlite3_finalize(st);
  storage__conn_close(c);
  return rc;
}

void storage__conn_close(struct storage__conn *c)
{
  size_t i;
  if (!c)
    return;
  for (i = 0; i < ST__N; i++) {
    sqlite3_finalize(c->st[i]);
    c->st[i] = NULL;
  }
  if (c->db)
    sqlite3_close(c->db);
  c->db = NULL;
}
