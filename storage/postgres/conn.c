/* PostgreSQL connections: binary parameters and results, the statements every connection
 * prepares once, errors classified (connection lost vs retryable vs other), and the schema
 * with its forward migrations, taken under an advisory lock so that relays starting
 * together migrate once. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/postgres/pg_int.h"

/* Model strings are bytea, not text: they may hold bytes that are not UTF-8, and bytea
 * compares bytewise as SQLite does (the list's id order). Shared rows are keyed by content
 * id; per-profile rows cascade from profile. */
static const char MIGRATION_1[] =
  "CREATE TABLE spaa_meta(k text PRIMARY KEY, v bigint NOT NULL);"
  "INSERT INTO spaa_meta VALUES('sweep', 0);"
  "CREATE TABLE dso(id bigserial PRIMARY KEY, cid bytea NOT NULL UNIQUE, key bytea NOT NULL);"
  "CREATE TABLE frame(id bigserial PRIMARY KEY, cid bytea NOT NULL UNIQUE, dso bigint,"
  " func bytea NOT NULL, srcline bytea, inline_depth bigint NOT NULL, kind bytea NOT NULL,"
  " addr bigint);"
  "CREATE TABLE stack(id bigserial PRIMARY KEY, cid bytea NOT NULL UNIQUE,"
  " event bytea NOT NULL, stack_type bytea NOT NULL, frames bytea NOT NULL, context bytea);"
  "CREATE TABLE block_dict(id bigserial PRIMARY KEY, service bytea NOT NULL UNIQUE,"
  " data bytea NOT NULL);"
  "CREATE TABLE profile(num bigserial PRIMARY KEY, id bytea NOT NULL UNIQUE,"
  " service bytea NOT NULL, source bytea NOT NULL, received_ns bigint NOT NULL,"
  " start_ns bigint, end_ns bigint, samples bigint NOT NULL, payload_bytes bigint NOT NULL,"
  " labels bytea, attrs bytea, original bytea);"
  "CREATE TABLE profile_label(profile bigint NOT NULL REFERENCES profile(num)"
  " ON DELETE CASCADE, key bytea NOT NULL, value bytea NOT NULL, PRIMARY KEY(profile, key));"
  "CREATE TABLE profile_event(profile bigint NOT NULL REFERENCES profile(num)"
  " ON DELETE CASCADE, seq bigint NOT NULL, name bytea NOT NULL, totals bytea NOT NULL,"
  " PRIMARY KEY(profile, seq));"
  "CREATE TABLE profile_block(profile bigint PRIMARY KEY REFERENCES profile(num)"
  " ON DELETE CASCADE, dict bigint REFERENCES block_dict(id), stacks bigint NOT NULL,"
  " samples bigint NOT NULL, data bytea NOT NULL);"
  "CREATE INDEX profile_received ON profile(received_ns, id);"
  "CREATE INDEX profile_service ON profile(service, received_ns, id);"
  "CREATE INDEX profile_source ON profile(source, received_ns, id);"
  "CREATE INDEX profile_time ON profile(start_ns, end_ns);"
  "CREATE INDEX profile_label_kv ON profile_label(key, value);"
  "CREATE INDEX profile_event_name ON profile_event(name);"
  "CREATE INDEX profile_block_dict ON profile_block(dict);";

static const char *const MIGRATIONS[] = {MIGRATION_1};
const size_t pg__n_migrations = sizeof(MIGRATIONS) / sizeof(MIGRATIONS[0]);

/* What the store's tables take (heap, indexes, TOAST): every table a migration makes. */
#define TABLE_BYTES                                                                          \
  "SELECT coalesce(sum(pg_total_relation_size(t::regclass)), 0)::int8 FROM unnest(ARRAY["    \
  "'spaa_schema', 'spaa_meta', 'dso', 'frame', 'stack', 'block_dict', 'profile',"            \
  " 'profile_label', 'profile_event', 'profile_block']) t"

static const char *const SQL[PS__N] = {
  /* the lock alone: a generation read in the same statement would come from the snapshot
   * taken before the lock was granted, i.e. from before the sweep it waited for */
  [PS_LOCK_SHARED] = "SELECT pg_advisory_xact_lock_shared($1::int8)",
  [PS_SWEEP_GEN] = "SELECT v FROM spaa_meta WHERE k = 'sweep'",
  [PS_DSO_GET] = "SELECT id FROM dso WHERE cid = $1::bytea",
  [PS_DSO_ADD] = "INSERT INTO dso(cid, key) VALUES($1::bytea, $2::bytea)"
                 " ON CONFLICT (cid) DO NOTHING RETURNING id",
  [PS_FRAME_GET] = "SELECT id FROM frame WHERE cid = $1::bytea",
  [PS_FRAME_ADD] = "INSERT INTO frame(cid, dso, func, srcline, inline_depth, kind, addr)"
                   " VALUES($1::bytea, $2::int8, $3::bytea, $4::bytea, $5::int8, $6::bytea,"
                   " $7::int8) ON CONFLICT (cid) DO NOTHING RETURNING id",
  [PS_STACK_GET] = "SELECT id FROM stack WHERE cid = $1::bytea",
  [PS_STACK_ADD] = "INSERT INTO stack(cid, event, stack_type, frames, context)"
                   " VALUES($1::bytea, $2::bytea, $3::bytea, $4::bytea, $5::bytea)"
                   " ON CONFLICT (cid) DO NOTHING RETURNING id",
  [PS_PROFILE_ADD] = "INSERT INTO profile(id, service, source, received_ns, start_ns, end_ns,"
                     " samples, payload_bytes, labels, attrs, original)"
                     " VALUES($1::bytea, $2::bytea, $3::bytea, $4::int8, $5::int8, $6::int8,"
                     " $7::int8, $8::int8, $9::bytea, $10::bytea, $11::bytea)"
                     " ON CONFLICT (id) DO NOTHING RETURNING num",
  [PS_LABEL_ADD] = "INSERT INTO profile_label(profile, key, value)"
                   " VALUES($1::int8, $2::bytea, $3::bytea)"
                   " ON CONFLICT (profile, key) DO UPDATE SET value = EXCLUDED.value",
  [PS_EVENT_ADD] = "INSERT INTO profile_event(profile, seq, name, totals)"
                   " VALUES($1::int8, $2::int8, $3::bytea, $4::bytea)",
  [PS_BLOCK_ADD] = "INSERT INTO profile_block(profile, dict, stacks, samples, data)"
                   " VALUES($1::int8, $2::int8, $3::int8, $4::int8, $5::bytea)",
  [PS_DICT_GET] = "SELECT id, data FROM block_dict WHERE service = $1::bytea",
  [PS_DICT_ADD] = "INSERT INTO block_dict(service, data) VALUES($1::bytea, $2::bytea)"
                  " ON CONFLICT (service) DO NOTHING RETURNING id",
  [PS_R_DICT] = "SELECT data FROM block_dict WHERE id = $1::int8",
  [PS_R_PROFILE] = "SELECT b.dict, b.data FROM profile p JOIN profile_block b"
                   " ON b.profile = p.num WHERE p.id = $1::bytea",
  [PS_R_FRAMES] = "SELECT id, func, srcline, inline_depth, kind FROM frame"
                  " WHERE id = ANY($1::int8[])",
  [PS_R_STACKS] = "SELECT id, cid, event, stack_type, frames, context FROM stack"
                  " WHERE id = ANY($1::int8[])",
  [PS_R_META] = "SELECT num, id, service, source, received_ns, start_ns, end_ns, samples,"
                " payload_bytes, labels, attrs FROM profile WHERE id = $1::bytea",
  [PS_R_EVENTS] = "SELECT name, totals FROM profile_event WHERE profile = $1::int8"
                  " ORDER BY seq",
  [PS_COUNTS] = "SELECT (SELECT count(*) FROM profile), (SELECT count(*) FROM dso),"
                " (SELECT count(*) FROM frame), (SELECT count(*) FROM stack),"
                " (SELECT coalesce(sum(stacks), 0)::int8 FROM profile_block),"
                " (SELECT coalesce(sum(samples), 0)::int8 FROM profile_block),"
                " (" TABLE_BYTES ")",
  [PS_BYTES] = TABLE_BYTES,
};

/* ---- parameters ----------------------------------------------------------------------------- */

void pg__p_int(struct pg__params *p, int64_t v)
{
  int i = p->n++, k;
  uint64_t u = (uint64_t)v;
  for (k = 7; k >= 0; k--, u >>= 8)
    p->ib[i][k] = (unsigned char)(u & 0xff);
  p->v[i] = (const char *)p->ib[i];
  p->len[i] = 8;
  p->fmt[i] = 1;
}

void pg__p_bytes(struct pg__params *p, const void *b, size_t len)
{
  int i = p->n++;
  p->v[i] = b ? (const char *)b : "";
  p->len[i] = (int)len;
  p->fmt[i] = 1;
}

void pg__p_str(struct pg__params *p, const char *s)
{
  if (s)
    pg__p_bytes(p, s, strlen(s));
  else
    pg__p_null(p);
}

void pg__p_null(struct pg__params *p)
{
  int i = p->n++;
  p->v[i] = NULL;
  p->len[i] = 0;
  p->fmt[i] = 1;
}

void pg__p_text(struct pg__params *p, const char *s)
{
  int i = p->n++;
  p->v[i] = s;
  p->len[i] = 0;
  p->fmt[i] = 0;
}

void pg__ids_init(struct pg__ids *v)
{
  spaa_buf_init(&v->a, 0);
  v->n = 0;
}

void pg__ids_free(struct pg__ids *v)
{
  spaa_buf_free(&v->a);
  v->n = 0;
}

void pg__ids_reset(struct pg__ids *v)
{
  v->a.len = 0;
  v->n = 0;
}

int pg__ids_add(struct pg__ids *v, int64_t id)
{
  v->n++;
  return spaa_buf_addf(&v->a, "%s%" PRId64, v->n > 1 ? "," : "{", id) ? SPAA_E_NOMEM : 0;
}

PGresult *pg__ids_run(struct pg__conn *c, const char *sql, struct pg__ids *v, int *rc,
                      struct spaa_err *err)
{
  struct pg__params p;
  PGresult *r;
  *rc = 0;
  if (!v->n)
    return NULL;
  if (spaa_buf_add(&v->a, "}", 2)) {
    pg__ids_reset(v);
    *rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    return NULL;
  }
  memset(&p, 0, sizeof(p));
  pg__p_text(&p, v->a.p);
  r = pg__sql(c, sql, &p, err);
  pg__ids_reset(v);
  if (!r)
    *rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  return r;
}

int64_t pg__int(const PGresult *r, int row, int col)
{
  const unsigned char *b = (const unsigned char *)PQgetvalue(r, row, col);
  int n = PQgetlength(r, row, col), i;
  uint64_t u = 0;
  if (PQgetisnull(r, row, col))
    return 0;
  for (i = 0; i < n && i < 8; i++)
    u = (u << 8) | b[i];
  if (n == 4)
    return (int32_t)(uint32_t)u;
  return (int64_t)u;
}

int pg__null(const PGresult *r, int row, int col)
{
  return PQgetisnull(r, row, col);
}

/* ---- running statements ---------------------------------------------------------------------- */

/* Replace every occurrence of the connection's password in err->msg by "***" (a server's
 * or libpq's message may quote a connection string). */
static void scrub(struct pg__conn *c, struct spaa_err *err)
{
  const char *pw = c->db ? PQpass(c->db) : NULL;
  char out[sizeof(err->msg)], *at, *from = err->msg;
  size_t n = pw ? strlen(pw) : 0, len = 0, k;
  if (!err || !n || !strstr(err->msg, pw))
    return;
  while ((at = strstr(from, pw))) {
    k = (size_t)(at - from);
    if (len + k + 3 >= sizeof(out)) { /* no room: cut the message short here */
      from = "";
      break;
    }
    memcpy(out + len, from, k);
    memcpy(out + len + k, "***", 3);
    len += k + 3;
    from = at + n;
  }
  k = strlen(from);
  if (len + k >= sizeof(out))
    k = sizeof(out) - len - 1;
  memcpy(out + len, from, k);
  out[len + k] = 0;
  memcpy(err->msg, out, len + k + 1);
}

/* s into out (size n) with every run of spaces, tabs and line breaks as one space (libpq's
 * messages span lines: "...failed: No such file\n\tIs the server running...") */
static void one_line(char *out, size_t n, const char *s)
{
  size_t o = 0;
  for (; *s && o + 1 < n; s++) {
    int space = *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r';
    if (space && (!o || out[o - 1] == ' '))
      continue;
    out[o++] = space ? ' ' : *s;
  }
  while (o && out[o - 1] == ' ')
    o--;
  out[o] = 0;
}

int pg__err(struct pg__conn *c, const PGresult *r, struct spaa_err *err, const char *what)
{
  const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
  const char *msg = r ? PQresultErrorMessage(r) : NULL;
  size_t n;
  if (!msg || !*msg)
    msg = c->db ? PQerrorMessage(c->db) : "not connected";
  n = strlen(msg);
  while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
    n--;
  c->retry = state && (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0);
  c->timeout = state && strcmp(state, "55P03") == 0;
  /* class 08 (connection), 57P0x (shutdown, crash), a dead connection, or an error libpq
   * made itself (no SQLSTATE: the server closed the connection, a timeout) */
  c->lost = !c->db || PQstatus(c->db) != CONNECTION_OK || !state ||
            strncmp(state, "08", 2) == 0 || strncmp(state, "57P0", 4) == 0;
  spaa_err_set(err, c->lost ? SPAA_E_BUSY : SPAA_E_STORE, 0, 0, "%s: %s%.*s", what,
               c->lost ? "the database is unavailable: " : "", (int)n, msg);
  if (err)
    scrub(c, err);
  if (c->lost) { /* kept for the log line of an outage (pg__health) and /readyz */
    struct spaa_err w;
    spaa_err_set(&w, SPAA_E_BUSY, 0, 0, "%s: %.*s", what, (int)n, msg);
    scrub(c, &w);
    one_line(c->why, sizeof(c->why), w.msg);
  }
  return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
}

static PGresult *check(struct pg__conn *c, PGresult *r, struct spaa_err *err, const char *what)
{
  ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
    c->lost = c->retry = c->timeout = 0;
    return r;
  }
  pg__err(c, r, err, what);
  PQclear(r);
  return NULL;
}

PGresult *pg__run(struct pg__conn *c, enum pg__st id, const struct pg__params *p,
                  struct spaa_err *err)
{
  static const struct pg__params none;
  char name[16];
  if (!p)
    p = &none;
  if (!c->db) {
    pg__err(c, NULL, err, "running a statement");
    return NULL;
  }
  snprintf(name, sizeof(name), "s%d", (int)id);
  if (!(c->prepared & (1ull << id))) {
    PGresult *r = check(c, PQprepare(c->db, name, SQL[id], 0, NULL), err,
                        "preparing a statement");
    if (!r)
      return NULL;
    PQclear(r);
    c->prepared |= 1ull << id;
  }
  /* the SQL text stays out of the message: it reaches clients in 500 answers */
  return check(c, PQexecPrepared(c->db, name, p->n, p->v, p->len, p->fmt, 1), err,
               "a database statement failed");
}

PGresult *pg__sql(struct pg__conn *c, const char *sql, const struct pg__params *p,
                  struct spaa_err *err)
{
  if (!c->db) {
    pg__err(c, NULL, err, "running a statement");
    return NULL;
  }
  if (!p)
    return check(c, PQexec(c->db, sql), err, "running a statement");
  return check(c, PQexecParams(c->db, sql, p->n, NULL, p->v, p->len, p->fmt, 1), err,
               "running a statement");
}

int pg__exec(struct pg__conn *c, const char *sql, struct spaa_err *err)
{
  PGresult *r = pg__sql(c, sql, NULL, err);
  if (!r)
    return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  PQclear(r);
  return 0;
}

/* ---- connecting and migrating ------------------------------------------------------------- */

/* Apply the migrations this database lacks, in one transaction under the migration lock;
 * when some ran, one info line to `log` with both versions and the time they took. */
static int migrate(struct pg__conn *c, const char *conninfo, const struct storage__log *log,
                   struct spaa_err *err)
{
  int64_t t0 = (int64_t)storage__mono_ns(), ns;
  char where[SPAA_STORE_MAX_LOCATION], q[2 * SPAA_STORE_MAX_LOCATION];
  PGresult *r;
  int64_t v;
  size_t i;
  int rc;
  struct pg__params p;
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, PG_LOCK_MIGRATE);
  if ((rc = pg__exec(c, "BEGIN", err)))
    return rc;
  if (!(r = pg__sql(c, "SELECT pg_advisory_xact_lock($1::int8)", &p, err))) {
    rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
    goto fail;
  }
  PQclear(r);
  if ((rc = pg__exec(c, "CREATE TABLE IF NOT EXISTS spaa_schema(version bigint NOT NULL);"
                        "INSERT INTO spaa_schema SELECT 0 WHERE NOT EXISTS"
                        " (SELECT 1 FROM spaa_schema)", err)))
    goto fail;
  if (!(r = pg__sql(c, "SELECT version::text FROM spaa_schema", NULL, err))) {
    rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
    goto fail;
  }
  v = PQntuples(r) ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : 0;
  PQclear(r);
  if (v < 0 || (uint64_t)v > pg__n_migrations) {
    rc = spaa_err_set(err, SPAA_E_STORE, 0, 0, "database schema version %lld is newer than "
                      "this build knows (%zu)", (long long)v, pg__n_migrations);
    goto fail;
  }
  for (i = (size_t)v; i < pg__n_migrations; i++) {
    char up[64];
    snprintf(up, sizeof(up), "UPDATE spaa_schema SET version = %zu", i + 1);
    if ((rc = pg__exec(c, MIGRATIONS[i], err)) || (rc = pg__exec(c, up, err)))
      goto fail;
  }
  if ((rc = pg__exec(c, "COMMIT", err)))
    return rc;
  if ((uint64_t)v < pg__n_migrations) {
    ns = (int64_t)storage__mono_ns() - t0;
    spaa_store_redact(conninfo, where, sizeof(where));
    storage__log(log, SPAA_STORE_LOG_INFO, "schema migrated",
                 "from=%lld to=%zu took_ms=%lld.%03lld database=\"%s\"", (long long)v,
                 pg__n_migrations, (long long)(ns / 1000000), (long long)(ns / 1000 % 1000),
                 storage__log_q(q, sizeof(q), where));
  }
  return 0;
fail:
  if (c->db && PQstatus(c->db) == CONNECTION_OK)
    pg__exec(c, "ROLLBACK", NULL);
  return rc ? rc : SPAA_E_STORE;
}

/* libpq's notice receiver: a notice of the server (or of libpq) as a line of the store's log
 * instead of libpq's default, a bare line on stderr. */
static void on_notice(void *arg, const PGresult *r)
{
  struct pg__notices *n = arg;
  const char *sev = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
  const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
  char text[sizeof(n->last)], q[2 * sizeof(n->last)];
  int64_t now = (int64_t)storage__mono_ns();
  uint64_t repeated = 0;
  int say;
  if (!n)
    return;
  if (!sev)
    sev = PQresultErrorField(r, PG_DIAG_SEVERITY);
  if (!msg)
    msg = PQresultErrorMessage(r);
  one_line(text, sizeof(text), msg ? msg : "");
  pthread_mutex_lock(&n->mu);
  say = strcmp(text, n->last) != 0 || now - n->last_ns >= PG_LOG_INTERVAL_S * 1000000000LL;
  if (say) {
    repeated = strcmp(text, n->last) == 0 ? n->repeated : 0;
    memcpy(n->last, text, sizeof(text));
    n->last_ns = now;
    n->repeated = 0;
  } else {
    n->repeated++;
  }
  /* logged under mu: lines of two threads come out in the order they were counted */
  if (say)
    storage__log(n->log, sev && (strcmp(sev, "WARNING") == 0 || strcmp(sev, "ERROR") == 0 ||
                                 strcmp(sev, "FATAL") == 0 || strcmp(sev, "PANIC") == 0)
                             ? SPAA_STORE_LOG_WARN : SPAA_STORE_LOG_INFO,
                 "PostgreSQL notice", "severity=%s message=\"%s\" repeated=%llu",
                 sev ? sev : "NOTICE", storage__log_q(q, sizeof(q), text),
                 (unsigned long long)repeated);
  pthread_mutex_unlock(&n->mu);
}

void pg__disconnect(struct pg__conn *c)
{
  if (c->db)
    PQfinish(c->db);
  c->db = NULL;
  c->prepared = 0;
  c->connected_ns = 0;
}

/* Drive a connection started with PQconnectStartParams to its end, or to the deadline.
 * Returns 0 when libpq ended it (PQstatus says how), -1 when the deadline passed first. */
static int connect_wait(PGconn *db, int64_t deadline_ns)
{
  PostgresPollingStatusType st = PGRES_POLLING_WRITING;
  while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
    struct pollfd p = {PQsocket(db), st == PGRES_POLLING_READING ? POLLIN : POLLOUT, 0};
    int64_t left = deadline_ns - (int64_t)storage__mono_ns();
    int n;
    if (p.fd < 0)
      return 0;
    if (left <= 0)
      return -1;
    n = poll(&p, 1, (int)((left + 999999) / 1000000));
    if (n == 0)
      return -1;
    if (n > 0 || errno != EINTR)
      st = PQconnectPoll(db);
  }
  return 0;
}

int pg__connect(struct pg__conn *c, const char *conninfo, int do_migrate,
                const struct storage__log *log, struct spaa_err *err)
{
  static const char *const keys[] = {"dbname", "application_name", NULL};
  const char *vals[] = {conninfo, "spaa-relay", NULL};
  int64_t deadline = (int64_t)storage__mono_ns() + PG_CONNECT_TIMEOUT_S * 1000000000LL;
  pg__disconnect(c);
  /* started, not made at once: the notice receiver is in place before the first byte, so a
   * notice the server sends while the connection is made (a shutdown's WARNING) is logged
   * as ours, not printed by libpq on stderr */
  c->db = PQconnectStartParams(keys, vals, 1);
  if (!c->db)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "out of memory connecting to PostgreSQL");
  PQsetNoticeReceiver(c->db, on_notice, c->notices);
  if (PQstatus(c->db) != CONNECTION_BAD && connect_wait(c->db, deadline) != 0) {
    spaa_err_set(err, SPAA_E_BUSY, 0, 0, "connecting to PostgreSQL: the database is "
                 "unavailable: no connection within %d s", PG_CONNECT_TIMEOUT_S);
    snprintf(c->why, sizeof(c->why), "connecting to PostgreSQL: no connection within %d s",
             PG_CONNECT_TIMEOUT_S);
    pg__disconnect(c);
    c->lost = 1;
    return SPAA_E_BUSY;
  }
  if (PQstatus(c->db) != CONNECTION_OK) {
    pg__err(c, NULL, err, "connecting to PostgreSQL");
    pg__disconnect(c);
    c->lost = 1;
    return SPAA_E_BUSY;
  }
  c->lost = 0;
  c->connected_ns = (int64_t)storage__mono_ns();
  /* rows other relays inserted while this one was away may have been swept */
  storage__cache_free(&c->cache);
  c->gen = -1;
  if (pg__exec(c, "SET client_min_messages = warning", err) ||
      (c->sync_off && pg__exec(c, "SET synchronous_commit = off", err))) {
    /* not handed out without its settings: the next borrower connects anew */
    int lost = c->lost || PQstatus(c->db) != CONNECTION_OK;
    pg__disconnect(c);
    c->lost = lost;
    return lost ? SPAA_E_BUSY : SPAA_E_STORE;
  }
  return do_migrate ? migrate(c, conninfo, log, err) : 0;
}
