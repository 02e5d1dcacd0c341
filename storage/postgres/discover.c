/* Discovery on PostgreSQL: stacks by number or content id with their frames, services with
 * their sources, times and metrics, label keys and values with counts. Each call runs in one
 * read-only snapshot on a pooled connection; stacks and frames are fetched a chunk of rows per
 * query (id = ANY($1)), each frame once per call. Answers match storage/sqlite/discover.c. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "storage/postgres/pg_int.h"

#define DISCOVER_MAX_ROWS 100000 /* rows one name answer may hold (as on SQLite) */
#define STACK_CHUNK 2048         /* stack numbers per query */

/* Keys of a canonical totals object ({"metric":number,...}): every quoted string followed by
 * a colon is a key, since the values are numbers. Matched still escaped, as JSON text. */
#define TOTALS_KEYS "'\"((?:[^\"\\\\]|\\\\.)*)\":'"

struct disc {
  struct storage__pg *s;
  struct pg__conn *c;
  struct spaa_idmap frame_ix;           /* frame row -> index in frames */
  struct spaa_store_frame_info *frames; /* frame rows read so far (owned strings) */
  size_t n_frames, cap_frames;
  struct spaa_store_frame_info *path;   /* the current stack's frames */
  size_t cap_path;
  struct spaa_err *err;
};

static const struct pg__params no_params; /* (with parameters, answers come in binary) */

static int busy_or_store(const struct pg__conn *c)
{
  return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
}

static int disc_open(struct disc *d, struct storage__pg *s, struct spaa_err *err)
{
  memset(d, 0, sizeof(*d));
  d->s = s;
  d->err = err;
  spaa_idmap_init(&d->frame_ix);
  if (!(d->c = pg__get(s, err)))
    return err && err->code ? err->code : SPAA_E_BUSY;
  return pg__exec(d->c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err);
}

static void disc_close(struct disc *d)
{
  size_t i;
  if (d->c) {
    if (d->c->db && PQstatus(d->c->db) == CONNECTION_OK)
      pg__exec(d->c, "COMMIT", NULL);
    pg__put(d->s, d->c);
  }
  for (i = 0; i < d->n_frames; i++) {
    free((char *)d->frames[i].func);
    free((char *)d->frames[i].srcline);
    free((char *)d->frames[i].dso);
    free((char *)d->frames[i].kind);
  }
  free(d->frames);
  free(d->path);
  spaa_idmap_free(&d->frame_ix);
}

/* Column i of row k as a new NUL-terminated string, skipping `skip` leading bytes; NULL for
 * SQL NULL (*bad untouched) or when out of memory (*bad set). */
static char *dup_col(const PGresult *r, int k, int i, size_t skip, int *bad)
{
  size_t n = (size_t)PQgetlength(r, k, i);
  char *s;
  if (PQgetisnull(r, k, i))
    return NULL;
  skip = skip < n ? skip : n;
  if (!(s = malloc(n - skip + 1))) {
    *bad = 1;
    return NULL;
  }
  memcpy(s, PQgetvalue(r, k, i) + skip, n - skip);
  s[n - skip] = 0;
  return s;
}

/* Row k of a frame answer (id, func, srcline, inline_depth, kind, addr, dso key) into the
 * cache. */
static int add_frame(struct disc *d, const PGresult *r, int k)
{
  struct spaa_store_frame_info *f;
  int bad = 0;
  if (d->n_frames == d->cap_frames) {
    size_t cap = d->cap_frames ? d->cap_frames * 2 : 256;
    struct spaa_store_frame_info *a = realloc(d->frames, cap * sizeof(*a));
    if (!a)
      return spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
    d->frames = a;
    d->cap_frames = cap;
  }
  f = &d->frames[d->n_frames];
  memset(f, 0, sizeof(*f));
  f->func = dup_col(r, k, 1, 0, &bad);
  f->srcline = dup_col(r, k, 2, 0, &bad);
  f->inline_depth = (int)pg__int(r, k, 3);
  f->kind = dup_col(r, k, 4, 0, &bad);
  f->has_addr = !pg__null(r, k, 5);
  f->addr = pg__int(r, k, 5);
  f->dso = dup_col(r, k, 6, 2, &bad); /* the key's "b:" / "n:" prefix dropped */
  d->n_frames++; /* owned from here: freed by disc_close */
  if (bad || !f->func || !f->kind ||
      spaa_idmap_put(&d->frame_ix, (uint64_t)pg__int(r, k, 0), d->n_frames - 1, NULL) < 0)
    return spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
  return 0;
}

/* Run a fixed query with an int8[] literal (the text in a) as $1. */
static PGresult *with_array(struct disc *d, const char *sql, struct spaa_buf *a)
{
  struct pg__params p;
  if (spaa_buf_adds(a, "}") || spaa_buf_add(a, "", 1)) {
    spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
    return NULL;
  }
  memset(&p, 0, sizeof(p));
  pg__p_text(&p, a->p);
  return pg__sql(d->c, sql, &p, d->err);
}

/* Read every frame the stack rows of r name that is not cached yet, in one query. */
static int fetch_frames(struct disc *d, const PGresult *r)
{
  struct spaa_buf a;
  PGresult *fr = NULL;
  size_t ix, wanted = 0;
  int k, rc = 0;
  spaa_buf_init(&a, 0);
  rc = spaa_buf_adds(&a, "{") ? spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL) : 0;
  for (k = 0; !rc && k < PQntuples(r); k++) {
    struct storage__rd rd;
    storage__rd_init(&rd, PQgetvalue(r, k, 4), (size_t)PQgetlength(r, k, 4));
    while (!rc && rd.pos < rd.len) {
      uint64_t row = storage__get_uv(&rd);
      if (rd.bad || row > INT64_MAX)
        rc = spaa_err_set(d->err, SPAA_E_STORE, 0, 0, "stack row %" PRId64 ": bad frame list",
                          pg__int(r, k, 0));
      else if (!spaa_idmap_get(&d->frame_ix, row, &ix) &&
               spaa_buf_addf(&a, "%s%" PRIu64, wanted++ ? "," : "", row))
        rc = spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
    }
  }
  if (!rc && wanted) {
    fr = with_array(d, "SELECT f.id, f.func, f.srcline, f.inline_depth, f.kind, f.addr, d.key"
                       " FROM frame f LEFT JOIN dso d ON d.id = f.dso"
                       " WHERE f.id = ANY($1::int8[])", &a);
    if (!fr)
      rc = d->err && d->err->code ? d->err->code : busy_or_store(d->c);
    for (k = 0; fr && !rc && k < PQntuples(fr); k++)
      if (!spaa_idmap_get(&d->frame_ix, (uint64_t)pg__int(fr, k, 0), &ix))
        rc = add_frame(d, fr, k);
  }
  PQclear(fr);
  spaa_buf_free(&a);
  return rc;
}

/* Row k of a stack answer (id, cid, event, stack_type, frames, context) to the callback. */
static int emit(struct disc *d, const PGresult *r, int k, spaa_store_stack_cb cb, void *ctx)
{
  struct spaa_store_stack_info si;
  struct storage__rd rd;
  struct spaa_cid cid;
  size_t n = 0, ix;
  memset(&si, 0, sizeof(si));
  si.number = pg__int(r, k, 0);
  if (PQgetlength(r, k, 1) != SPAA_CID_LEN)
    return spaa_err_set(d->err, SPAA_E_STORE, 0, 0, "stack row %" PRId64 ": bad id", si.number);
  memcpy(cid.b, PQgetvalue(r, k, 1), SPAA_CID_LEN);
  spaa_cid_hex(&cid, si.id);
  si.event = PQgetvalue(r, k, 2); /* libpq ends every value with a zero byte */
  si.stack_type = PQgetvalue(r, k, 3);
  si.context = PQgetisnull(r, k, 5) ? NULL : PQgetvalue(r, k, 5);
  storage__rd_init(&rd, PQgetvalue(r, k, 4), (size_t)PQgetlength(r, k, 4));
  while (rd.pos < rd.len) {
    uint64_t row = storage__get_uv(&rd);
    if (rd.bad || !spaa_idmap_get(&d->frame_ix, row, &ix))
      return spaa_err_set(d->err, SPAA_E_STORE, 0, 0, "stack row %" PRId64 ": %s", si.number,
                          rd.bad ? "bad frame list" : "a frame row is missing");
    if (n == d->cap_path) {
      size_t cap = d->cap_path ? d->cap_path * 2 : 64;
      struct spaa_store_frame_info *a = realloc(d->path, cap * sizeof(*a));
      if (!a)
        return spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
      d->path = a;
      d->cap_path = cap;
    }
    d->path[n++] = d->frames[ix];
  }
  si.frames = d->path;
  si.n_frames = n;
  return cb(ctx, &si);
}

#define STACK_COLS "SELECT id, cid, event, stack_type, frames, context FROM stack"

/* numbers[0..n) (n <= STACK_CHUNK): one query for the stacks, one for their new frames, then
 * each found stack to cb in the order asked. */
static int stacks_chunk(struct disc *d, const int64_t *numbers, size_t n, spaa_store_stack_cb cb,
                        void *ctx)
{
  struct spaa_idmap at;
  struct spaa_buf a;
  PGresult *r = NULL;
  size_t i, k;
  int rc = 0;
  spaa_idmap_init(&at);
  spaa_buf_init(&a, 0);
  if (spaa_buf_adds(&a, "{"))
    rc = spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
  for (i = 0; !rc && i < n; i++)
    if (spaa_buf_addf(&a, "%s%" PRId64, i ? "," : "", numbers[i]))
      rc = spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
  if (!rc && !(r = with_array(d, STACK_COLS " WHERE id = ANY($1::int8[])", &a)))
    rc = d->err && d->err->code ? d->err->code : busy_or_store(d->c);
  for (k = 0; !rc && r && k < (size_t)PQntuples(r); k++)
    if (spaa_idmap_put(&at, (uint64_t)pg__int(r, (int)k, 0), k, NULL) < 0)
      rc = spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
  if (!rc)
    rc = fetch_frames(d, r);
  for (i = 0; !rc && i < n; i++)
    if (spaa_idmap_get(&at, (uint64_t)numbers[i], &k)) /* a number naming no stack: skipped */
      rc = emit(d, r, (int)k, cb, ctx);
  PQclear(r);
  spaa_buf_free(&a);
  spaa_idmap_free(&at);
  return rc;
}

int pg__stacks(struct storage__pg *s, const int64_t *numbers, size_t n, spaa_store_stack_cb cb,
               void *ctx, struct spaa_err *err)
{
  struct disc d;
  size_t i;
  int rc = disc_open(&d, s, err);
  for (i = 0; !rc && i < n; i += STACK_CHUNK)
    rc = stacks_chunk(&d, numbers + i, n - i < STACK_CHUNK ? n - i : STACK_CHUNK, cb, ctx);
  disc_close(&d);
  return rc;
}

int pg__stack_by_id(struct storage__pg *s, const char *id, spaa_store_stack_cb cb, void *ctx,
                    struct spaa_err *err)
{
  struct spaa_cid cid;
  struct pg__params p;
  struct disc d;
  PGresult *r = NULL;
  int rc;
  if (spaa_cid_parse(id, &cid))
    return spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no stack with id '%.64s'", id);
  if (!(rc = disc_open(&d, s, err))) {
    memset(&p, 0, sizeof(p));
    pg__p_bytes(&p, cid.b, SPAA_CID_LEN);
    if (!(r = pg__sql(d.c, STACK_COLS " WHERE cid = $1::bytea", &p, err)))
      rc = busy_or_store(d.c);
    else if (!PQntuples(r))
      rc = spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no stack with id '%.64s'", id);
    else if (!(rc = fetch_frames(&d, r)))
      rc = emit(&d, r, 0, cb, ctx);
  }
  PQclear(r);
  disc_close(&d);
  return rc;
}

/* ---- names with counts ---------------------------------------------------------------------- */

/* Rows of sql (name, count[, sources, first, last]) into out[0..*n). */
static int name_rows(struct disc *d, const char *sql, const struct pg__params *p,
                     struct spaa_store_name_count **out, size_t *n)
{
  PGresult *r = pg__sql(d->c, sql, p ? p : &no_params, d->err);
  int k, rows, cols, bad = 0;
  if (!r)
    return busy_or_store(d->c);
  rows = PQntuples(r) < DISCOVER_MAX_ROWS ? PQntuples(r) : DISCOVER_MAX_ROWS;
  cols = PQnfields(r);
  if (rows && !(*out = calloc((size_t)rows, sizeof(**out))))
    bad = 1;
  for (k = 0; !bad && k < rows; k++) {
    struct spaa_store_name_count *e = &(*out)[(*n)++];
    e->name = dup_col(r, k, 0, 0, &bad);
    e->count = pg__int(r, k, 1);
    if (cols >= 5) {
      e->sources = dup_col(r, k, 2, 0, &bad);
      e->first_ns = pg__int(r, k, 3);
      e->last_ns = pg__int(r, k, 4);
    }
    bad |= !e->name;
  }
  PQclear(r);
  return bad ? spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL) : 0;
}

/* The metric of row k (a JSON string body, as the totals hold it) appended to arr. */
static int add_metric(json_t *arr, const PGresult *r, int k)
{
  size_t n = (size_t)PQgetlength(r, k, 2);
  char *t = malloc(n + 3);
  json_t *v;
  if (!t)
    return SPAA_E_NOMEM;
  t[0] = '"';
  memcpy(t + 1, PQgetvalue(r, k, 2), n);
  t[n + 1] = '"';
  t[n + 2] = 0;
  v = json_loadb(t, n + 2, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
  free(t);
  if (!json_is_string(v)) { /* not what a totals column holds: left out */
    json_decref(v);
    return 0;
  }
  return json_array_append_new(arr, v) ? SPAA_E_NOMEM : 0;
}

/* Each service's {"event":["metric",...]} from rows (service, event, metric) sorted by
 * service, event and metric; services in v are sorted by name too: one merge. */
static int events_of(const PGresult *r, struct spaa_store_name_count *v, size_t n)
{
  int k = 0, rows = PQntuples(r), rc = 0;
  size_t i;
  for (i = 0; i < n && !rc; i++) {
    json_t *o = json_object(), *arr = NULL;
    size_t len = strlen(v[i].name);
    if (!o)
      return SPAA_E_NOMEM;
    for (; k < rows && !rc; k++) {
      const char *svc = PQgetvalue(r, k, 0), *ev = PQgetvalue(r, k, 1);
      size_t sl = (size_t)PQgetlength(r, k, 0), el = (size_t)PQgetlength(r, k, 1);
      int cmp = memcmp(svc, v[i].name, sl < len ? sl : len);
      if (cmp > 0 || (cmp == 0 && sl > len))
        break; /* a later service */
      if (cmp < 0 || sl < len)
        continue; /* a service past DISCOVER_MAX_ROWS, or a name holding a NUL */
      if (!(arr = json_object_getn(o, ev, el)) &&
          json_object_setn_new_nocheck(o, ev, el, arr = json_array()))
        rc = SPAA_E_NOMEM;
      if (!rc)
        rc = add_metric(arr, r, k);
    }
    if (!rc && !(v[i].events_json = json_dumps(o, JSON_COMPACT)))
      rc = SPAA_E_NOMEM;
    json_decref(o);
  }
  return rc;
}

int pg__services(struct storage__pg *s, struct spaa_store_name_count **out, size_t *n,
                 struct spaa_err *err)
{
  struct disc d;
  PGresult *r = NULL;
  int rc = disc_open(&d, s, err);
  if (!rc)
    rc = name_rows(&d, "SELECT service, count(*), string_agg(DISTINCT source, ','::bytea"
                       " ORDER BY source), min(received_ns), max(received_ns) FROM profile"
                       " GROUP BY service ORDER BY service", NULL, out, n);
  /* bytea orders bytewise, as SQLite's text; a metric name orders in the C collation */
  if (!rc && !(r = pg__sql(d.c, "SELECT DISTINCT p.service, e.name, m[1] COLLATE \"C\""
                                " FROM profile p JOIN profile_event e ON e.profile = p.num,"
                                " regexp_matches(convert_from(e.totals, 'UTF8'), "
                                TOTALS_KEYS ", 'g') m ORDER BY 1, 2, 3", &no_params, err)))
    rc = busy_or_store(d.c);
  if (!rc && (rc = events_of(r, *out, *n)))
    spaa_err_set(err, rc, 0, 0, NULL);
  PQclear(r);
  disc_close(&d);
  return rc;
}

int pg__label_keys(struct storage__pg *s, struct spaa_store_name_count **out, size_t *n,
                   struct spaa_err *err)
{
  struct disc d;
  int rc = disc_open(&d, s, err);
  if (!rc)
    rc = name_rows(&d, "SELECT key, count(*) FROM profile_label GROUP BY key ORDER BY key",
                   NULL, out, n);
  disc_close(&d);
  return rc;
}

int pg__label_values(struct storage__pg *s, const char *key, struct spaa_store_name_count **out,
                     size_t *n, struct spaa_err *err)
{
  struct pg__params p;
  struct disc d;
  int rc = disc_open(&d, s, err);
  memset(&p, 0, sizeof(p));
  pg__p_str(&p, key);
  if (!rc)
    rc = name_rows(&d, "SELECT value, count(*) FROM profile_label WHERE key = $1::bytea"
                       " GROUP BY value ORDER BY value", &p, out, n);
  disc_close(&d);
  return rc;
}
