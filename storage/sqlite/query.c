/* Metadata queries on reader connections: one profile's summary, the filtered newest-first
 * list with keyset pagination, and row counts. Answers are plain structs (storage.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/limits.h"
#include "base/rfc3339.h"
#include "storage/sqlite/sqlite_int.h"

#define DEFAULT_LIMIT 100   /* when the query gives none */

/* ---- one row into a struct ------------------------------------------------------------------ */

/* A copy of text column i into *out (NULL for SQL NULL). 0 or SPAA_E_NOMEM. */
static int col_dup(sqlite3_stmt *st, int i, char **out)
{
  const char *t = (const char *)sqlite3_column_text(st, i);
  size_t n = (size_t)sqlite3_column_bytes(st, i);
  *out = NULL;
  if (!t)
    return sqlite3_column_type(st, i) == SQLITE_NULL ? 0 : SPAA_E_NOMEM;
  if (!(*out = malloc(n + 1)))
    return SPAA_E_NOMEM;
  memcpy(*out, t, n);
  (*out)[n] = 0;
  return 0;
}

/* The labels / totals column i as select.c reads it. 0 or SPAA_E_NOMEM. */
static int labels_of_col(sqlite3_stmt *st, int i, struct spaa_store_profile_info *pi)
{
  if (sqlite3_column_type(st, i) == SQLITE_NULL)
    return 0;
  return storage__labels_of((const char *)sqlite3_column_text(st, i),
                            (size_t)sqlite3_column_bytes(st, i), pi);
}

static int totals_of_col(sqlite3_stmt *st, int i, struct spaa_store_event *e)
{
  if (sqlite3_column_type(st, i) == SQLITE_NULL)
    return 0;
  return storage__totals_of((const char *)sqlite3_column_text(st, i),
                            (size_t)sqlite3_column_bytes(st, i), e);
}

/* The events of profile row `num`, in their stored order, into pi. */
static int events_of_profile(struct storage__conn *c, int64_t num,
                             struct spaa_store_profile_info *pi, struct spaa_err *err)
{
  sqlite3_stmt *ev = storage__stmt(c, ST_R_EVENTS, err);
  size_t cap = 0;
  int rc, step;
  if (!ev)
    return SPAA_E_STORE;
  sqlite3_bind_int64(ev, 1, num);
  while ((step = sqlite3_step(ev)) == SQLITE_ROW) {
    struct spaa_store_event *e;
    if (pi->n_events == cap) {
      size_t nc = cap ? 2 * cap : 4;
      struct spaa_store_event *nv = realloc(pi->events, nc * sizeof(*nv));
      if (!nv) {
        rc = SPAA_E_NOMEM;
        goto out;
      }
      pi->events = nv;
      cap = nc;
    }
    e = &pi->events[pi->n_events++];
    memset(e, 0, sizeof(*e));
    if ((rc = col_dup(ev, 0, &e->name)) || (rc = totals_of_col(ev, 1, e)))
      goto out;
  }
  rc = step == SQLITE_DONE ? 0 : storage__db_err(c, err, "reading event totals");
out:
  if (rc == SPAA_E_NOMEM)
    spaa_err_set(err, rc, 0, 0, "out of memory reading event totals");
  sqlite3_reset(ev);
  return rc;
}

/* The current row of `st`, whose columns are those of ST_R_META (num, id, service, source,
 * received_ns, start_ns, end_ns, samples, payload_bytes, labels, attrs), into *pi (zeroed
 * first). */
static int info_of_row(struct storage__conn *c, sqlite3_stmt *st,
                       struct spaa_store_profile_info *pi, struct spaa_err *err)
{
  memset(pi, 0, sizeof(*pi));
  pi->received_ns = sqlite3_column_int64(st, 4);
  pi->start_ns = sqlite3_column_int64(st, 5); /* NULL reads as 0: put stores 0 as NULL */
  pi->end_ns = sqlite3_column_int64(st, 6);
  pi->samples = sqlite3_column_int64(st, 7);
  pi->payload_bytes = (uint64_t)sqlite3_column_int64(st, 8);
  if (col_dup(st, 1, &pi->id) || col_dup(st, 2, &pi->service) || col_dup(st, 3, &pi->source) ||
      labels_of_col(st, 9, pi) || col_dup(st, 10, &pi->attrs_json))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "out of memory reading a profile's metadata");
  return events_of_profile(c, sqlite3_column_int64(st, 0), pi, err);
}

int storage__sq_meta(struct storage__sqlite *s, const char *id, struct spaa_store_profile_info *out,
                    struct spaa_err *err)
{
  struct storage__conn *c;
  sqlite3_stmt *st;
  int rc;
  if (out)
    memset(out, 0, sizeof(*out));
  if (!s || !id || !out)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store, no id or no answer");
  if (!(c = storage__reader_get(s, err)))
    return SPAA_E_STORE;
  if ((rc = storage__exec(c, ST_BEGIN, err)))
    goto out;
  if (!(st = storage__stmt(c, ST_R_META, err))) {
    rc = SPAA_E_STORE;
    goto end;
  }
  sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    rc = info_of_row(c, st, out, err);
  else if (rc == SQLITE_DONE)
    rc = spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no profile with id %.64s", id);
  else
    rc = storage__db_err(c, err, "reading a profile");
  sqlite3_reset(st);
end:
  storage__exec(c, ST_COMMIT, NULL);
out:
  storage__reader_put(s, c);
  return rc;
}

/* ---- the list -------------------------------------------------------------------------------- */

/* The list query's SQL into sql, from fixed fragments only: every value is bound (bind_list
 * binds them in the same order). 0 or SPAA_E_NOMEM. */
int storage__select_sql(const struct spaa_list_query *q, struct spaa_buf *sql, int blocks)
{
  size_t i;
  int rc = spaa_buf_adds(sql, blocks ? "SELECT p.num, p.id, b.dict, b.data FROM profile p"
                                       " JOIN profile_block b ON b.profile = p.num WHERE 1"
                                     : "SELECT num, id, service, source, received_ns, start_ns,"
                                       " end_ns, samples, payload_bytes, labels, attrs"
                                       " FROM profile p WHERE 1");
  if (!rc && q->service)
    rc = spaa_buf_adds(sql, " AND p.service = ?");
  if (!rc && q->source)
    rc = spaa_buf_adds(sql, " AND p.source = ?");
  if (!rc && q->event)
    rc = spaa_buf_adds(sql, " AND EXISTS(SELECT 1 FROM profile_event e"
                            " WHERE e.profile = p.num AND e.name = ?)");
  if (!rc && q->metric)
    rc = spaa_buf_adds(sql, " AND EXISTS(SELECT 1 FROM profile_event e, json_each(e.totals) j"
                            " WHERE e.profile = p.num AND j.key = ?)");
  if (!rc && q->from_ns)
    rc = spaa_buf_adds(sql, " AND p.end_ns >= ?");
  if (!rc && q->to_ns)
    rc = spaa_buf_adds(sql, " AND p.start_ns <= ?");
  if (!rc && q->received_from_ns)
    rc = spaa_buf_adds(sql, " AND p.received_ns >= ?");
  if (!rc && q->received_to_ns)
    rc = spaa_buf_adds(sql, " AND p.received_ns <= ?");
  if (!rc && q->received_before_ns)
    rc = spaa_buf_adds(sql, " AND p.received_ns < ?");
  for (i = 0; !rc && i < q->n_labels; i++)
    rc = spaa_buf_adds(sql, " AND EXISTS(SELECT 1 FROM profile_label l"
                            " WHERE l.profile = p.num AND l.key = ? AND l.value = ?)");
  /* the JSON path is bound too ("$.key", keys checked to be [A-Za-z0-9_]) */
  for (i = 0; !rc && i < q->n_attrs; i++)
    rc = spaa_buf_adds(sql, " AND json_extract(p.attrs, ?) = ?");
  if (!rc && q->after)
    rc = spaa_buf_adds(sql, " AND (p.received_ns, p.id) < (?, ?)");
  if (!rc)
    rc = spaa_buf_adds(sql, " ORDER BY p.received_ns DESC, p.id DESC LIMIT ?");
  return rc;
}

void storage__select_bind(sqlite3_stmt *st, const struct spaa_list_query *q, size_t limit)
{
  size_t i;
  int bi = 1;
  if (q->service)
    sqlite3_bind_text(st, bi++, q->service, -1, SQLITE_TRANSIENT);
  if (q->source)
    sqlite3_bind_text(st, bi++, q->source, -1, SQLITE_TRANSIENT);
  if (q->event)
    sqlite3_bind_text(st, bi++, q->event, -1, SQLITE_TRANSIENT);
  if (q->metric)
    sqlite3_bind_text(st, bi++, q->metric, -1, SQLITE_TRANSIENT);
  if (q->from_ns)
    sqlite3_bind_int64(st, bi++, q->from_ns);
  if (q->to_ns)
    sqlite3_bind_int64(st, bi++, q->to_ns);
  if (q->received_from_ns)
    sqlite3_bind_int64(st, bi++, q->received_from_ns);
  if (q->received_to_ns)
    sqlite3_bind_int64(st, bi++, q->received_to_ns);
  if (q->received_before_ns)
    sqlite3_bind_int64(st, bi++, q->received_before_ns);
  for (i = 0; i < q->n_labels; i++) {
    sqlite3_bind_text(st, bi++, q->labels[i].key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, bi++, q->labels[i].value, -1, SQLITE_TRANSIENT);
  }
  for (i = 0; i < q->n_attrs; i++) {
    char path[SPAA_QUERY_MAX_ATTR_KEY + 3];
    snprintf(path, sizeof(path), "$.%s", q->attrs[i].key);
    sqlite3_bind_text(st, bi++, path, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, bi++, q->attrs[i].value, -1, SQLITE_TRANSIENT);
  }
  if (q->after) {
    sqlite3_bind_int64(st, bi++, q->after->received_ns);
    sqlite3_bind_text(st, bi++, q->after->id, -1, SQLITE_TRANSIENT);
  }
  sqlite3_bind_int64(st, bi++, (int64_t)limit + 1); /* one more: is there a next page? */
}

/* Step the prepared list query into pg: up to `limit` entries, has_next when one more row
 * came. */
static int collect_page(struct storage__conn *c, sqlite3_stmt *st, size_t limit,
                        struct spaa_store_page *pg, struct spaa_err *err)
{
  int rc;
  if (!(pg->profiles = calloc(limit, sizeof(*pg->profiles))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (pg->n == limit) {
      pg->has_next = 1;
      pg->next.received_ns = pg->profiles[pg->n - 1].received_ns;
      pg->next.id = pg->profiles[pg->n - 1].id;
      return 0;
    }
    if ((rc = info_of_row(c, st, &pg->profiles[pg->n++], err)))
      return rc;
  }
  if (rc != SQLITE_DONE)
    return storage__db_err(c, err, "listing profiles");
  return 0;
}

int storage__sq_list(struct storage__sqlite *s, const struct spaa_list_query *q,
                    struct spaa_store_page *out, struct spaa_err *err)
{
  struct storage__conn *c = NULL;
  struct spaa_buf sql;
  sqlite3_stmt *st = NULL;
  size_t limit;
  int rc;
  if (out)
    memset(out, 0, sizeof(*out));
  if (!s || !q || !out)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store, no query or no answer");
  if ((rc = storage__check_query(q, err)))
    return rc;
  limit = q->limit ? q->limit : DEFAULT_LIMIT;
  spaa_buf_init(&sql, 16 * 1024);
  if (storage__select_sql(q, &sql, 0)) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  if (!(c = storage__reader_get(s, err))) {
    rc = SPAA_E_STORE;
    goto out;
  }
  if ((rc = storage__exec(c, ST_BEGIN, err)))
    goto out;
  if (sqlite3_prepare_v2(c->db, sql.p, (int)sql.len, &st, NULL) != SQLITE_OK)
    rc = storage__db_err(c, err, "preparing the list query");
  if (!rc) {
    storage__select_bind(st, q, limit);
    rc = collect_page(c, st, limit, out, err);
  }
  sqlite3_finalize(st);
  storage__exec(c, ST_COMMIT, NULL);
out:
  if (c)
    storage__reader_put(s, c);
  spaa_buf_free(&sql);
  return rc;
}

int storage__sq_counts(struct storage__sqlite *s, struct spaa_store_counts *out, struct spaa_err *err)
{
  static const enum storage__st q[6] = {ST_C_PROFILES, ST_C_DSOS, ST_C_FRAMES,
                                        ST_C_STACKS, ST_C_PSTACKS, ST_C_SAMPLES};
  int64_t *dst[6];
  struct storage__conn *c;
  int rc = 0, i;
  memset(out, 0, sizeof(*out));
  if (!s)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store");
  dst[0] = &out->profiles;
  dst[1] = &out->dsos;
  dst[2] = &out->frames;
  dst[3] = &out->stacks;
  dst[4] = &out->profile_stacks;
  dst[5] = &out->samples;
  if (!(c = storage__reader_get(s, err)))
    return SPAA_E_STORE;
  if ((rc = storage__exec(c, ST_BEGIN, err)))
    goto out;
  for (i = 0; i < 6 && !rc; i++) {
    sqlite3_stmt *st = storage__stmt(c, q[i], err);
    if (!st) {
      rc = SPAA_E_STORE;
      break;
    }
    if (sqlite3_step(st) == SQLITE_ROW)
      *dst[i] = sqlite3_column_int64(st, 0);
    else
      rc = storage__db_err(c, err, "counting rows");
    sqlite3_reset(st);
  }
  storage__exec(c, ST_COMMIT, NULL);
  out->bytes = storage__disk_bytes(s->path);
out:
  storage__reader_put(s, c);
  return rc;
}
