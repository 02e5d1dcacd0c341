/* Metadata queries on reader connections: one profile's summary, the filtered newest-first
 * list with keyset pagination, and row counts. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/limits.h"
#include "base/rfc3339.h"
#include "storage/store_int.h"

static json_t *col_int_or_null(sqlite3_stmt *st, int i)
{
  if (sqlite3_column_type(st, i) == SQLITE_NULL)
    return json_null();
  return json_integer(sqlite3_column_int64(st, i));
}

static json_t *col_json_or_empty(sqlite3_stmt *st, int i)
{
  json_t *v = NULL;
  if (sqlite3_column_type(st, i) != SQLITE_NULL)
    v = storage__json_parse((const char *)sqlite3_column_text(st, i),
                            (size_t)sqlite3_column_bytes(st, i));
  return v ? v : json_object();
}

/* The meta object of the current row of `st`, whose columns are those of ST_R_META:
 * num, id, service, source, received_ns, start_ns, end_ns, samples, payload_bytes, labels,
 * attrs. */
static int meta_of_row(struct storage__conn *c, sqlite3_stmt *st, json_t **out,
                       struct spaa_err *err)
{
  sqlite3_stmt *ev;
  json_t *o, *events;
  char when[SPAA_RFC3339_SIZE];
  int rc;
  *out = NULL;
  spaa_rfc3339_format_ns(when, sqlite3_column_int64(st, 4), 9);
  o = json_object();
  events = json_array();
  if (!o || !events) {
    json_decref(o);
    json_decref(events);
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  json_object_set_new(o, "id", json_string((const char *)sqlite3_column_text(st, 1)));
  json_object_set_new(o, "service", json_string((const char *)sqlite3_column_text(st, 2)));
  json_object_set_new(o, "source", json_string((const char *)sqlite3_column_text(st, 3)));
  json_object_set_new(o, "received_at", json_string(when));
  json_object_set_new(o, "start", col_int_or_null(st, 5));
  json_object_set_new(o, "end", col_int_or_null(st, 6));
  json_object_set_new(o, "events", events);
  json_object_set_new(o, "samples", json_integer(sqlite3_column_int64(st, 7)));
  json_object_set_new(o, "payload_bytes", json_integer(sqlite3_column_int64(st, 8)));
  json_object_set_new(o, "labels", col_json_or_empty(st, 9));
  json_object_set_new(o, "attrs", col_json_or_empty(st, 10));
  if (!(ev = storage__stmt(c, ST_R_EVENTS, err))) {
    json_decref(o);
    return SPAA_E_STORE;
  }
  sqlite3_bind_int64(ev, 1, sqlite3_column_int64(st, 0));
  while ((rc = sqlite3_step(ev)) == SQLITE_ROW) {
    json_t *e = json_object();
    json_object_set_new(e, "name", json_string((const char *)sqlite3_column_text(ev, 0)));
    json_object_set_new(e, "totals", col_json_or_empty(ev, 1));
    json_array_append_new(events, e);
  }
  if (rc != SQLITE_DONE) {
    storage__db_err(c, err, "reading event totals");
    sqlite3_reset(ev);
    json_decref(o);
    return SPAA_E_STORE;
  }
  sqlite3_reset(ev);
  *out = o;
  return 0;
}

int spaa_store_meta(struct spaa_store *s, const char *id, json_t **out, struct spaa_err *err)
{
  struct storage__conn *c;
  sqlite3_stmt *st;
  int rc;
  *out = NULL;
  if (!s || !id)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store or no id");
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
    rc = meta_of_row(c, st, out, err);
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

/* Cursor = lowercase hex of "<received_ns>:<id>". 0, or SPAA_E_BAD_REQUEST. `id` gets the
 * id (cap SPAA_STORE_MAX_CURSOR / 2 + 1 bytes). */
static int cursor_parse(const char *cur, int64_t *received, char *id, struct spaa_err *err)
{
  char raw[SPAA_STORE_MAX_CURSOR / 2 + 1], *colon, *end;
  size_t len = strlen(cur);
  long long v;
  if (!len || len > SPAA_STORE_MAX_CURSOR || spaa_hex_decode(raw, cur, len, 1) ||
      memchr(raw, 0, len / 2))
    goto bad;
  raw[len / 2] = 0;
  colon = strchr(raw, ':');
  if (!colon || colon == raw || !colon[1])
    goto bad;
  *colon = 0;
  if (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9'))
    goto bad;
  errno = 0;
  v = strtoll(raw, &end, 10);
  if (errno || *end)
    goto bad;
  *received = (int64_t)v;
  strcpy(id, colon + 1);
  return 0;
bad:
  return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "malformed cursor: pass next_cursor from "
                      "a previous answer as it was");
}

static int cursor_make(int64_t received, const char *id, json_t **out)
{
  char raw[SPAA_STORE_MAX_CURSOR / 2 + 32], enc[2 * sizeof(raw) + 1];
  int n = snprintf(raw, sizeof(raw), "%" PRId64 ":%s", received, id);
  if (n < 0 || (size_t)n >= sizeof(raw) || 2 * n > SPAA_STORE_MAX_CURSOR)
    return SPAA_E_INTERNAL;
  spaa_hex_encode(enc, raw, (size_t)n);
  *out = json_string(enc);
  return *out ? 0 : SPAA_E_NOMEM;
}

int spaa_store_list(struct spaa_store *s, const struct spaa_list_query *q, json_t **out,
                    struct spaa_err *err)
{
  struct storage__conn *c = NULL;
  struct spaa_buf sql;
  sqlite3_stmt *st = NULL;
  json_t *res = NULL, *arr, *next = NULL;
  char cur_id[SPAA_STORE_MAX_CURSOR / 2 + 1];
  int64_t cur_recv = 0, last_recv = 0;
  char last_id[SPAA_STORE_MAX_CURSOR / 2 + 1];
  size_t limit, n = 0;
  const char *k;
  json_t *v;
  int rc = 0, bi = 1;

  *out = NULL;
  if (!s || !q)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store or no query");
  spaa_buf_init(&sql, 16 * 1024);
  limit = q->limit ? q->limit : 100;
  if (limit > SPAA_QUERY_MAX_PAGE)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "limit %zu is over %d", q->limit,
                        SPAA_QUERY_MAX_PAGE);
  if (q->labels) {
    if (!json_is_object(q->labels) || json_object_size(q->labels) > SPAA_QUERY_MAX_LABELS)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "label filters must be an object of "
                          "at most %d strings", SPAA_QUERY_MAX_LABELS);
    json_object_foreach((json_t *)q->labels, k, v) if (!json_is_string(v)) return spaa_err_set(
        err, SPAA_E_BAD_REQUEST, 0, 0, "label filter \"%.64s\" is not a string", k);
  }
  if (q->cursor && (rc = cursor_parse(q->cursor, &cur_recv, cur_id, err)))
    return rc;

  /* the query, from fixed fragments only; every value is bound */
  rc = spaa_buf_adds(&sql, "SELECT num, id, service, source, received_ns, start_ns, end_ns,"
                     " samples, payload_bytes, labels, attrs FROM profile p WHERE 1");
  if (!rc && q->service)
    rc = spaa_buf_adds(&sql, " AND p.service = ?");
  if (!rc && q->source)
    rc = spaa_buf_adds(&sql, " AND p.source = ?");
  if (!rc && q->event)
    rc = spaa_buf_adds(&sql, " AND EXISTS(SELECT 1 FROM profile_event e"
                             " WHERE e.profile = p.num AND e.name = ?)");
  if (!rc && q->from_ns)
    rc = spaa_buf_adds(&sql, " AND p.end_ns >= ?");
  if (!rc && q->to_ns)
    rc = spaa_buf_adds(&sql, " AND p.start_ns <= ?");
  for (size_t i = 0; !rc && i < json_object_size(q->labels); i++)
    rc = spaa_buf_adds(&sql, " AND EXISTS(SELECT 1 FROM profile_label l"
                             " WHERE l.profile = p.num AND l.key = ? AND l.value = ?)");
  if (!rc && q->cursor)
    rc = spaa_buf_adds(&sql, " AND (p.received_ns, p.id) < (?, ?)");
  if (!rc)
    rc = spaa_buf_adds(&sql, " ORDER BY p.received_ns DESC, p.id DESC LIMIT ?");
  if (rc) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }

  if (!(c = storage__reader_get(s, err))) {
    rc = SPAA_E_STORE;
    goto out;
  }
  if ((rc = storage__exec(c, ST_BEGIN, err)))
    goto out;
  if (sqlite3_prepare_v2(c->db, sql.p, (int)sql.len, &st, NULL) != SQLITE_OK) {
    rc = storage__db_err(c, err, "preparing the list query");
    goto end;
  }
  if (q->service)
    sqlite3_bind_text(st, bi++, q->service, -1, SQLITE_TRANSIENT);
  if (q->source)
    sqlite3_bind_text(st, bi++, q->source, -1, SQLITE_TRANSIENT);
  if (q->event)
    sqlite3_bind_text(st, bi++, q->event, -1, SQLITE_TRANSIENT);
  if (q->from_ns)
    sqlite3_bind_int64(st, bi++, q->from_ns);
  if (q->to_ns)
    sqlite3_bind_int64(st, bi++, q->to_ns);
  if (q->labels) {
    json_object_foreach((json_t *)q->labels, k, v) {
      sqlite3_bind_text(st, bi++, k, -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(st, bi++, json_string_value(v), (int)json_string_length(v),
                        SQLITE_TRANSIENT);
    }
  }
  if (q->cursor) {
    sqlite3_bind_int64(st, bi++, cur_recv);
    sqlite3_bind_text(st, bi++, cur_id, -1, SQLITE_TRANSIENT);
  }
  sqlite3_bind_int64(st, bi++, (int64_t)limit + 1); /* one more: is there a next page? */

  if (!(res = json_object()) || !(arr = json_array()) ||
      json_object_set_new(res, "profiles", arr)) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto end;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *m;
    if (n == limit) {
      int crc = cursor_make(last_recv, last_id, &next);
      if (crc) {
        rc = spaa_err_set(err, crc, 0, 0, "making the next cursor");
        goto end;
      }
      break;
    }
    if ((rc = meta_of_row(c, st, &m, err)))
      goto end;
    json_array_append_new(arr, m);
    last_recv = sqlite3_column_int64(st, 4);
    snprintf(last_id, sizeof(last_id), "%s", (const char *)sqlite3_column_text(st, 1));
    n++;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    rc = storage__db_err(c, err, "listing profiles");
    goto end;
  }
  rc = 0;
  json_object_set_new(res, "next_cursor", next ? next : json_null());
  next = NULL;
end:
  sqlite3_finalize(st);
  storage__exec(c, ST_COMMIT, NULL);
out:
  if (c)
    storage__reader_put(s, c);
  spaa_buf_free(&sql);
  json_decref(next);
  if (rc) {
    json_decref(res);
    return rc;
  }
  *out = res;
  return 0;
}

int spaa_store_counts(struct spaa_store *s, struct spaa_store_counts *out, struct spaa_err *err)
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
out:
  storage__reader_put(s, c);
  return rc;
}
