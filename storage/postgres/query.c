/* Metadata queries, the filtered list with keyset pagination, scanning stack weights from the
 * blocks, and row counts, each on a pooled connection inside one read-only transaction. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "storage/postgres/pg_int.h"

#define DEFAULT_LIMIT 100 /* when the query gives none */


/* ---- one row into a struct ------------------------------------------------------------- */

static int col_dup(const PGresult *r, int row, int i, char **out)
{
  size_t n = (size_t)PQgetlength(r, row, i);
  *out = NULL;
  if (PQgetisnull(r, row, i))
    return 0;
  if (!(*out = malloc(n + 1)))
    return SPAA_E_NOMEM;
  memcpy(*out, PQgetvalue(r, row, i), n);
  (*out)[n] = 0;
  return 0;
}

/* The labels / totals column i as select.c reads it. 0 or SPAA_E_NOMEM. */
static int labels_of_col(const PGresult *r, int row, int i, struct spaa_store_profile_info *pi)
{
  if (PQgetisnull(r, row, i))
    return 0;
  return storage__labels_of(PQgetvalue(r, row, i), (size_t)PQgetlength(r, row, i), pi);
}

static int totals_of_col(const PGresult *r, int row, int i, struct spaa_store_event *e)
{
  if (PQgetisnull(r, row, i))
    return 0;
  return storage__totals_of(PQgetvalue(r, row, i), (size_t)PQgetlength(r, row, i), e);
}

static int events_of_profile(struct pg__conn *c, int64_t num, struct spaa_store_profile_info *pi,
                             struct spaa_err *err)
{
  struct pg__params p;
  PGresult *r;
  int k, n, rc = 0;
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, num);
  if (!(r = pg__run(c, PS_R_EVENTS, &p, err)))
    return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  n = PQntuples(r);
  if (n && !(pi->events = calloc((size_t)n, sizeof(*pi->events))))
    rc = SPAA_E_NOMEM;
  for (k = 0; k < n && !rc; k++) {
    struct spaa_store_event *e = &pi->events[pi->n_events++];
    rc = col_dup(r, k, 0, &e->name) || totals_of_col(r, k, 1, e) ? SPAA_E_NOMEM : 0;
  }
  PQclear(r);
  return rc ? spaa_err_set(err, rc, 0, 0, "out of memory reading event totals") : 0;
}

/* Row `row` of r, columns as PS_R_META, into *pi (zeroed first). */
static int info_of_row(struct pg__conn *c, const PGresult *r, int row,
                       struct spaa_store_profile_info *pi, struct spaa_err *err)
{
  memset(pi, 0, sizeof(*pi));
  pi->received_ns = pg__int(r, row, 4);
  pi->start_ns = pg__int(r, row, 5);
  pi->end_ns = pg__int(r, row, 6);
  pi->samples = pg__int(r, row, 7);
  pi->payload_bytes = (uint64_t)pg__int(r, row, 8);
  if (col_dup(r, row, 1, &pi->id) || col_dup(r, row, 2, &pi->service) ||
      col_dup(r, row, 3, &pi->source) || labels_of_col(r, row, 9, pi) ||
      col_dup(r, row, 10, &pi->attrs_json))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "out of memory reading a profile's metadata");
  return events_of_profile(c, pg__int(r, row, 0), pi, err);
}

/* BEGIN a read-only snapshot on a pooled connection. */
static struct pg__conn *begin_read(struct storage__pg *s, struct spaa_err *err)
{
  struct pg__conn *c = pg__get(s, err);
  if (c && pg__exec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err)) {
    pg__put(s, c);
    return NULL;
  }
  return c;
}

static void end_read(struct storage__pg *s, struct pg__conn *c)
{
  if (c->db && PQstatus(c->db) == CONNECTION_OK)
    pg__exec(c, "COMMIT", NULL);
  pg__put(s, c);
}

static int no_conn(struct spaa_err *err)
{
  return err && err->code ? err->code : SPAA_E_BUSY;
}

int pg__meta(struct storage__pg *s, const char *id, struct spaa_store_profile_info *out,
             struct spaa_err *err)
{
  struct pg__conn *c;
  struct pg__params p;
  PGresult *r;
  int rc;
  memset(out, 0, sizeof(*out));
  if (!(c = begin_read(s, err)))
    return no_conn(err);
  memset(&p, 0, sizeof(p));
  pg__p_str(&p, id);
  if (!(r = pg__run(c, PS_R_META, &p, err)))
    rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  else if (!PQntuples(r))
    rc = spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no profile with id %.64s", id);
  else
    rc = info_of_row(c, r, 0, out, err);
  PQclear(r);
  end_read(s, c);
  return rc;
}

/* ---- selections -------------------------------------------------------------------------- */

int pg__select(const struct spaa_list_query *q, int blocks, size_t limit, struct spaa_buf *sql,
               struct pg__params *p)
{
  size_t i;
  int rc = spaa_buf_adds(sql, blocks ? "SELECT p.num, p.id, b.dict, b.data FROM profile p"
                                       " JOIN profile_block b ON b.profile = p.num WHERE true"
                                     : "SELECT num, id, service, source, received_ns, start_ns,"
                                       " end_ns, samples, payload_bytes, labels, attrs"
                                       " FROM profile p WHERE true");
  memset(p, 0, sizeof(*p));
  if (!rc && q->service) {
    pg__p_str(p, q->service);
    rc = spaa_buf_addf(sql, " AND p.service = $%d::bytea", p->n);
  }
  if (!rc && q->source) {
    pg__p_str(p, q->source);
    rc = spaa_buf_addf(sql, " AND p.source = $%d::bytea", p->n);
  }
  if (!rc && q->event) {
    pg__p_str(p, q->event);
    rc = spaa_buf_addf(sql, " AND EXISTS(SELECT 1 FROM profile_event e"
                            " WHERE e.profile = p.num AND e.name = $%d::bytea)", p->n);
  }
  if (!rc && q->metric) {
    pg__p_str(p, q->metric);
    rc = spaa_buf_addf(sql, " AND EXISTS(SELECT 1 FROM profile_event e WHERE e.profile = p.num"
                            " AND convert_from(e.totals, 'UTF8')::jsonb ? $%d::text)", p->n);
  }
  if (!rc && q->received_from_ns) {
    pg__p_int(p, q->received_from_ns);
    rc = spaa_buf_addf(sql, " AND p.received_ns >= $%d::int8", p->n);
  }
  if (!rc && q->received_to_ns) {
    pg__p_int(p, q->received_to_ns);
    rc = spaa_buf_addf(sql, " AND p.received_ns <= $%d::int8", p->n);
  }
  /* at most SPAA_QUERY_MAX_ATTRS (checked) */
  for (i = 0; !rc && i < q->n_attrs; i++) {
    pg__p_str(p, q->attrs[i].key);
    pg__p_str(p, q->attrs[i].value);
    /* compared as JSON strings: a number 3 is not the string "3" (as on SQLite) */
    rc = spaa_buf_addf(sql, " AND (convert_from(p.attrs, 'UTF8')::jsonb -> $%d::text)"
                            " = to_jsonb($%d::text)", p->n - 1, p->n);
  }
  if (!rc && q->from_ns) {
    pg__p_int(p, q->from_ns);
    rc = spaa_buf_addf(sql, " AND p.end_ns >= $%d::int8", p->n);
  }
  if (!rc && q->to_ns) {
    pg__p_int(p, q->to_ns);
    rc = spaa_buf_addf(sql, " AND p.start_ns <= $%d::int8", p->n);
  }
  if (!rc && q->received_before_ns) {
    pg__p_int(p, q->received_before_ns);
    rc = spaa_buf_addf(sql, " AND p.received_ns < $%d::int8", p->n);
  }
  /* at most SPAA_QUERY_MAX_LABELS pairs (checked): PG_MAXP has room for them all */
  for (i = 0; !rc && i < q->n_labels; i++) {
    if (p->n + 5 > PG_MAXP)
      return SPAA_E_TOO_LARGE;
    pg__p_str(p, q->labels[i].key);
    pg__p_str(p, q->labels[i].value);
    rc = spaa_buf_addf(sql, " AND EXISTS(SELECT 1 FROM profile_label l WHERE l.profile = p.num"
                            " AND l.key = $%d::bytea AND l.value = $%d::bytea)", p->n - 1, p->n);
  }
  if (!rc && q->after) {
    pg__p_int(p, q->after->received_ns);
    pg__p_str(p, q->after->id);
    rc = spaa_buf_addf(sql, " AND (p.received_ns, p.id) < ($%d::int8, $%d::bytea)", p->n - 1,
                       p->n);
  }
  if (!rc) {
    pg__p_int(p, limit > INT64_MAX ? INT64_MAX : (int64_t)limit);
    rc = spaa_buf_addf(sql, " ORDER BY p.received_ns DESC, p.id DESC LIMIT $%d::int8", p->n);
  }
  return rc ? SPAA_E_NOMEM : 0;
}

/* The query of a selection into sql/p, with its failure in err. */
static int selection(const struct spaa_list_query *q, int blocks, size_t limit,
                     struct spaa_buf *sql, struct pg__params *p, struct spaa_err *err)
{
  int rc = pg__select(q, blocks, limit, sql, p);
  if (rc == SPAA_E_TOO_LARGE)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "too many label filters");
  return rc ? spaa_err_set(err, rc, 0, 0, NULL) : 0;
}

int pg__list(struct storage__pg *s, const struct spaa_list_query *q, struct spaa_store_page *out,
             struct spaa_err *err)
{
  struct pg__conn *c = NULL;
  struct pg__params p;
  struct spaa_buf sql;
  PGresult *r = NULL;
  size_t limit;
  int rc, k, n;
  memset(out, 0, sizeof(*out));
  if ((rc = storage__check_query(q, err)))
    return rc;
  limit = q->limit ? q->limit : DEFAULT_LIMIT;
  spaa_buf_init(&sql, 16 * 1024);
  if ((rc = selection(q, 0, limit + 1, &sql, &p, err)) || (rc = spaa_buf_add(&sql, "", 1)))
    goto out;
  if (!(c = begin_read(s, err))) {
    rc = no_conn(err);
    goto out;
  }
  if (!(r = pg__sql(c, sql.p, &p, err)))
    rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  else if (!(out->profiles = calloc(limit, sizeof(*out->profiles))))
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  n = r ? PQntuples(r) : 0;
  for (k = 0; !rc && k < n; k++) {
    if (out->n == limit) {
      out->has_next = 1;
      out->next.received_ns = out->profiles[out->n - 1].received_ns;
      out->next.id = out->profiles[out->n - 1].id;
      break;
    }
    rc = info_of_row(c, r, k, &out->profiles[out->n++], err);
  }
  PQclear(r);
  end_read(s, c);
out:
  spaa_buf_free(&sql);
  return rc;
}

int pg__counts(struct storage__pg *s, struct spaa_store_counts *out, struct spaa_err *err)
{
  struct pg__conn *c;
  PGresult *r;
  int rc = 0;
  memset(out, 0, sizeof(*out));
  if (!(c = begin_read(s, err)))
    return no_conn(err);
  if (!(r = pg__run(c, PS_COUNTS, NULL, err))) {
    rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  } else {
    out->profiles = pg__int(r, 0, 0);
    out->dsos = pg__int(r, 0, 1);
    out->frames = pg__int(r, 0, 2);
    out->stacks = pg__int(r, 0, 3);
    out->profile_stacks = pg__int(r, 0, 4);
    out->samples = pg__int(r, 0, 5);
    out->bytes = pg__int(r, 0, 6);
    out->keeps_size = 1;
  }
  PQclear(r);
  end_read(s, c);
  return rc;
}

int pg__bytes(struct pg__conn *c, int64_t *bytes, struct spaa_err *err)
{
  PGresult *r = pg__run(c, PS_BYTES, NULL, err);
  *bytes = 0;
  if (!r)
    return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  *bytes = PQntuples(r) ? pg__int(r, 0, 0) : 0;
  PQclear(r);
  return 0;
}

/* ---- scanning ------------------------------------------------------------------------------ */

/* Blocks are fetched a page at a time through a cursor: one block in memory at a time. */
static int scan_rows(struct storage__scan *x, struct pg__conn *c, struct spaa_err *err)
{
  struct storage__rdict dict;
  PGresult *r;
  int rc = 0, k;
  memset(&dict, 0, sizeof(dict));
  spaa_buf_init(&dict.raw, 0);
  for (;;) {
    if (!(r = pg__sql(c, "FETCH 16 FROM spaa_scan", NULL, err))) {
      rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
      break;
    }
    for (k = 0; k < PQntuples(r) && !rc; k++) {
      char id[SPAA_STORE_MAX_ID + 1];
      size_t n = (size_t)PQgetlength(r, k, 1);
      n = n > SPAA_STORE_MAX_ID ? SPAA_STORE_MAX_ID : n;
      memcpy(id, PQgetvalue(r, k, 1), n);
      id[n] = 0;
      rc = storage__scan_room(x, PQgetvalue(r, k, 3), (size_t)PQgetlength(r, k, 3));
      if (!rc)
        rc = pg__block_raw(c, &dict, pg__int(r, k, 2), PQgetvalue(r, k, 3),
                           (size_t)PQgetlength(r, k, 3), &x->raw, err);
      if (!rc)
        rc = storage__scan_block(x, pg__int(r, k, 0), id);
      if (rc == SPAA_E_STORE && !err->code)
        spaa_err_set(err, rc, 0, 0, "stored profile %.64s is corrupt: block", id);
      else if (rc == SPAA_E_NOMEM)
        spaa_err_set(err, rc, 0, 0, NULL);
    }
    k = PQntuples(r);
    PQclear(r);
    if (rc || !k)
      break;
  }
  spaa_buf_free(&dict.raw);
  return rc;
}

int pg__scan(struct storage__pg *s, const struct spaa_list_query *sel, struct spaa_meter *meter,
             spaa_store_scan_cb cb, void *ctx, struct spaa_err *err)
{
  struct pg__conn *c = NULL;
  struct pg__params p;
  struct spaa_buf sql;
  struct storage__scan x;
  PGresult *r;
  int rc;
  if ((rc = storage__check_query(sel, err)))
    return rc;
  memset(&x, 0, sizeof(x));
  x.cb = cb;
  x.ctx = ctx;
  x.meter = meter;
  spaa_buf_init(&x.raw, 0);
  spaa_buf_init(&sql, 16 * 1024);
  if ((rc = spaa_buf_adds(&sql, "DECLARE spaa_scan BINARY NO SCROLL CURSOR FOR ")) ||
      (rc = selection(sel, 1, sel->limit ? sel->limit : (size_t)INT64_MAX, &sql, &p, err)) ||
      (rc = spaa_buf_add(&sql, "", 1)))
    goto out;
  if (!(c = begin_read(s, err))) {
    rc = no_conn(err);
    goto out;
  }
  if (!(r = pg__sql(c, sql.p, &p, err)))
    rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  PQclear(r);
  if (!rc)
    rc = scan_rows(&x, c, err);
  end_read(s, c);
out:
  spaa_buf_free(&sql);
  storage__scan_free(&x);
  return rc;
}
