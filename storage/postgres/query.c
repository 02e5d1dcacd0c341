/* Metadata queries, the filtered list with keyset pagination, scanning stack weights from the
 * blocks, and row counts, each on a pooled connection inside one read-only transaction. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "storage/postgres/pg_int.h"

#define DEFAULT_LIMIT 100 /* when the query gives none */

/* Same checks as the SQLite engine's (storage__check_query), so both refuse alike. */
#define check_query storage__check_query

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

static json_t *col_json(const PGresult *r, int row, int i)
{
  if (PQgetisnull(r, row, i))
    return NULL;
  return storage__json_parse(PQgetvalue(r, row, i), (size_t)PQgetlength(r, row, i));
}

static int labels_of_col(const PGresult *r, int row, int i, struct spaa_store_profile_info *pi)
{
  json_t *o = col_json(r, row, i), *v;
  const char *k;
  int rc = 0;
  if (!json_is_object(o) || !json_object_size(o))
    goto out;
  if (!(pi->labels = calloc(json_object_size(o), sizeof(*pi->labels)))) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  json_object_foreach(o, k, v) {
    struct spaa_store_label *l = &pi->labels[pi->n_labels];
    size_t n = json_string_length(v);
    if (!json_is_string(v))
      continue;
    pi->n_labels++;
    if (!(l->key = strdup(k)) || !(l->value = malloc(n + 1))) {
      rc = SPAA_E_NOMEM;
      goto out;
    }
    memcpy(l->value, json_string_value(v), n);
    l->value[n] = 0;
    l->value_len = n;
  }
out:
  json_decref(o);
  return rc;
}

static int totals_of_col(const PGresult *r, int row, int i, struct spaa_store_event *e)
{
  json_t *o = col_json(r, row, i), *v;
  const char *k;
  int rc = 0;
  if (!json_is_object(o) || !json_object_size(o))
    goto out;
  if (!(e->totals = calloc(json_object_size(o), sizeof(*e->totals)))) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  json_object_foreach(o, k, v) {
    struct spaa_store_total *t = &e->totals[e->n_totals];
    if (!json_is_number(v))
      continue;
    t->value = json_is_integer(v) ? spaa_int(json_integer_value(v))
                                  : spaa_float(json_real_value(v));
    e->n_totals++;
    if (!(t->metric = strdup(k))) {
      rc = SPAA_E_NOMEM;
      goto out;
    }
  }
out:
  json_decref(o);
  return rc;
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
  if (!rc && q->from_ns) {
    pg__p_int(p, q->from_ns);
    rc = spaa_buf_addf(sql, " AND p.end_ns >= $%d::int8", p->n);
  }
  if (!rc && q->to_ns) {
    pg__p_int(p, q->to_ns);
    rc = spaa_buf_addf(sql, " AND p.start_ns <= $%d::int8", p->n);
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
  if ((rc = check_query(q, err)))
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
  }
  PQclear(r);
  end_read(s, c);
  return rc;
}

/* ---- scanning ------------------------------------------------------------------------------ */

struct scan {
  spaa_store_scan_cb cb;
  void *ctx;
  struct spaa_buf raw;
  char **strs;
  size_t n_strs;
  struct storage__blk_weight *w;
  struct spaa_store_scan_weight *out;
  size_t cap_w;
};

static void strs_free(struct scan *x)
{
  size_t i;
  for (i = 0; i < x->n_strs; i++)
    free(x->strs[i]);
  free(x->strs);
  x->strs = NULL;
  x->n_strs = 0;
}

static int load_strs(struct scan *x, struct storage__rd *r)
{
  uint64_t n = storage__get_uv(r), i, len;
  strs_free(x);
  if (r->bad || n > r->len - r->pos)
    return SPAA_E_STORE;
  if (!(x->strs = calloc(n ? (size_t)n : 1, sizeof(*x->strs))))
    return SPAA_E_NOMEM;
  for (i = 0; i < n; i++, x->n_strs++) {
    len = storage__get_uv(r);
    if (r->bad || !len || len - 1 > r->len - r->pos)
      return SPAA_E_STORE;
    if (!(x->strs[i] = malloc((size_t)len)))
      return SPAA_E_NOMEM;
    memcpy(x->strs[i], r->p + r->pos, (size_t)len - 1);
    x->strs[i][len - 1] = 0;
    r->pos += (size_t)len - 1;
  }
  return 0;
}

static int weights_room(struct scan *x, size_t n)
{
  void *a, *b;
  if (n <= x->cap_w)
    return 0;
  if (!(a = realloc(x->w, n * sizeof(*x->w))))
    return SPAA_E_NOMEM;
  x->w = a;
  if (!(b = realloc(x->out, n * sizeof(*x->out))))
    return SPAA_E_NOMEM;
  x->out = b;
  x->cap_w = n;
  return 0;
}

static int scan_block(struct scan *x, int64_t num, const char *id)
{
  struct storage__blk_rd b;
  struct spaa_store_scan_stack st;
  uint64_t i;
  size_t k, n;
  int rc;
  if (storage__blk_open(&b, x->raw.p, x->raw.len))
    return SPAA_E_STORE;
  if ((rc = load_strs(x, &b.sec[BS_STRINGS])))
    return rc;
  st.profile = num;
  st.profile_id = id;
  for (i = 0; i < b.n[BN_STACKS]; i++) {
    struct storage__rd xr;
    size_t cap = b.sec[BS_WSHAPE].len - b.sec[BS_WSHAPE].pos;
    if (storage__blk_next_stack(&b, &st.stack, &xr))
      return SPAA_E_STORE;
    if ((rc = weights_room(x, cap ? cap : 1)))
      return rc;
    if (storage__blk_next_weights(&b, x->w, x->cap_w, &n))
      return SPAA_E_STORE;
    for (k = 0; k < n; k++) {
      if (!x->w[k].metric || x->w[k].metric > x->n_strs)
        return SPAA_E_STORE;
      x->out[k].metric = x->strs[x->w[k].metric - 1];
      x->out[k].value = x->w[k].value;
    }
    st.weights = x->out;
    st.n_weights = n;
    if ((rc = x->cb(x->ctx, &st)))
      return rc;
  }
  return 0;
}

/* Blocks are fetched a page at a time through a cursor: one block in memory at a time. */
static int scan_rows(struct scan *x, struct pg__conn *c, struct spaa_err *err)
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
      rc = pg__block_raw(c, &dict, pg__int(r, k, 2), PQgetvalue(r, k, 3),
                         (size_t)PQgetlength(r, k, 3), &x->raw, err);
      if (!rc)
        rc = scan_block(x, pg__int(r, k, 0), id);
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

int pg__scan(struct storage__pg *s, const struct spaa_list_query *sel, spaa_store_scan_cb cb,
             void *ctx, struct spaa_err *err)
{
  struct pg__conn *c = NULL;
  struct pg__params p;
  struct spaa_buf sql;
  struct scan x;
  PGresult *r;
  int rc;
  if ((rc = check_query(sel, err)))
    return rc;
  memset(&x, 0, sizeof(x));
  x.cb = cb;
  x.ctx = ctx;
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
  spaa_buf_free(&x.raw);
  strs_free(&x);
  free(x.w);
  free(x.out);
  return rc;
}
