/* Discovery queries of the SQLite backend: stacks by number or content id with their
 * frames, services, label keys and values with counts. Each call borrows one reader
 * connection and runs its statements inside one read transaction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "storage/sqlite/sqlite_int.h"

#define DISCOVER_MAX_ROWS 100000 /* rows one discovery answer may hold */

struct disc {
  struct storage__sqlite *s;
  struct storage__conn *c;
  sqlite3_stmt *stack, *frame;            /* prepared for this call */
  struct spaa_idmap frame_ix;             /* frame row -> index in frames */
  struct spaa_store_frame_info *frames;   /* cached frame rows (owned strings) */
  size_t n_frames, cap_frames;
  struct spaa_store_frame_info *path;     /* the current stack's frames */
  size_t cap_path;
  struct spaa_err *err;
};

static int disc_open(struct disc *d, struct storage__sqlite *s, struct spaa_err *err)
{
  memset(d, 0, sizeof(*d));
  d->s = s;
  d->err = err;
  spaa_idmap_init(&d->frame_ix);
  if (!(d->c = storage__reader_get(s, err)))
    return err->code ? err->code : SPAA_E_STORE;
  if (sqlite3_exec(d->c->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
    return storage__db_err(d->c, err, "starting a read");
  return 0;
}

static void disc_close(struct disc *d)
{
  size_t i;
  sqlite3_finalize(d->stack);
  sqlite3_finalize(d->frame);
  if (d->c) {
    sqlite3_exec(d->c->db, "ROLLBACK", NULL, NULL, NULL);
    storage__reader_put(d->s, d->c);
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

static char *col_dup(sqlite3_stmt *st, int i)
{
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? strdup((const char *)t) : NULL;
}

/* The frame row `row` (cached), into *out. */
static int disc_frame(struct disc *d, int64_t row, const struct spaa_store_frame_info **out)
{
  struct spaa_store_frame_info *f;
  size_t ix;
  int rc;
  if (spaa_idmap_get(&d->frame_ix, (uint64_t)row, &ix)) {
    *out = &d->frames[ix];
    return 0;
  }
  if (!d->frame &&
      sqlite3_prepare_v2(d->c->db,
                         "SELECT f.func, f.srcline, f.inline_depth, f.kind, f.addr, d.key"
                         " FROM frame f LEFT JOIN dso d ON d.id = f.dso WHERE f.id = ?1",
                         -1, &d->frame, NULL) != SQLITE_OK)
    return storage__db_err(d->c, d->err, "preparing a frame read");
  if (d->n_frames == d->cap_frames) {
    size_t cap = d->cap_frames ? d->cap_frames * 2 : 256;
    struct spaa_store_frame_info *a = realloc(d->frames, cap * sizeof(*a));
    if (!a)
      return spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
    d->frames = a;
    d->cap_frames = cap;
  }
  sqlite3_reset(d->frame);
  sqlite3_bind_int64(d->frame, 1, row);
  if ((rc = sqlite3_step(d->frame)) != SQLITE_ROW)
    return rc == SQLITE_DONE ? spaa_err_set(d->err, SPAA_E_STORE, 0, 0, "frame row %lld is missing",
                                            (long long)row)
                             : storage__db_err(d->c, d->err, "reading a frame");
  f = &d->frames[d->n_frames];
  memset(f, 0, sizeof(*f));
  f->func = col_dup(d->frame, 0);
  f->srcline = col_dup(d->frame, 1);
  f->inline_depth = sqlite3_column_int(d->frame, 2);
  f->kind = col_dup(d->frame, 3);
  f->has_addr = sqlite3_column_type(d->frame, 4) != SQLITE_NULL;
  f->addr = sqlite3_column_int64(d->frame, 4);
  if (sqlite3_column_type(d->frame, 5) != SQLITE_NULL) {
    const char *k = (const char *)sqlite3_column_text(d->frame, 5);
    f->dso = strdup(k && strlen(k) > 2 ? k + 2 : "");
  }
  d->n_frames++; /* counted before the checks: disc_close frees what it holds */
  if (!f->func || !f->kind ||
      spaa_idmap_put(&d->frame_ix, (uint64_t)row, d->n_frames - 1, NULL) < 0)
    return spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
  *out = f;
  return 0;
}

/* The stack row selected by d->stack (already stepped to its row) to the callback. */
static int disc_emit(struct disc *d, spaa_store_stack_cb cb, void *ctx)
{
  struct spaa_store_stack_info si;
  struct storage__rd r;
  const struct spaa_store_frame_info *f = NULL;
  struct spaa_cid cid;
  size_t n = 0;
  int rc;
  memset(&si, 0, sizeof(si));
  si.number = sqlite3_column_int64(d->stack, 0);
  if (sqlite3_column_bytes(d->stack, 1) != SPAA_CID_LEN)
    return spaa_err_set(d->err, SPAA_E_STORE, 0, 0, "stack row %lld: bad id", (long long)si.number);
  memcpy(cid.b, sqlite3_column_blob(d->stack, 1), SPAA_CID_LEN);
  spaa_cid_hex(&cid, si.id);
  si.event = (const char *)sqlite3_column_text(d->stack, 2);
  si.stack_type = (const char *)sqlite3_column_text(d->stack, 3);
  si.context = sqlite3_column_type(d->stack, 5) == SQLITE_NULL
                   ? NULL : (const char *)sqlite3_column_text(d->stack, 5);
  storage__rd_init(&r, sqlite3_column_blob(d->stack, 4), (size_t)sqlite3_column_bytes(d->stack, 4));
  while (r.pos < r.len) {
    int64_t row = (int64_t)storage__get_uv(&r);
    if (r.bad)
      return spaa_err_set(d->err, SPAA_E_STORE, 0, 0, "stack row %lld: bad frame list",
                          (long long)si.number);
    if (n == d->cap_path) {
      size_t cap = d->cap_path ? d->cap_path * 2 : 64;
      struct spaa_store_frame_info *a = realloc(d->path, cap * sizeof(*a));
      if (!a)
        return spaa_err_set(d->err, SPAA_E_NOMEM, 0, 0, NULL);
      d->path = a;
      d->cap_path = cap;
    }
    if ((rc = disc_frame(d, row, &f)))
      return rc;
    d->path[n++] = *f;
  }
  si.frames = d->path;
  si.n_frames = n;
  return cb(ctx, &si);
}

static int disc_stack_stmt(struct disc *d, const char *where)
{
  char sql[192];
  snprintf(sql, sizeof(sql), "SELECT id, cid, event, stack_type, frames, context FROM stack WHERE %s", where);
  if (sqlite3_prepare_v2(d->c->db, sql, -1, &d->stack, NULL) != SQLITE_OK)
    return storage__db_err(d->c, d->err, "preparing a stack read");
  return 0;
}

int storage__sq_stacks(struct storage__sqlite *s, const int64_t *numbers, size_t n,
                      spaa_store_stack_cb cb, void *ctx, struct spaa_err *err)
{
  struct disc d;
  size_t i;
  int rc;
  if (!(rc = disc_open(&d, s, err)))
    rc = disc_stack_stmt(&d, "id = ?1");
  for (i = 0; i < n && !rc; i++) {
    int step;
    sqlite3_reset(d.stack);
    sqlite3_bind_int64(d.stack, 1, numbers[i]);
    if ((step = sqlite3_step(d.stack)) == SQLITE_ROW)
      rc = disc_emit(&d, cb, ctx);
    else if (step != SQLITE_DONE)
      rc = storage__db_err(d.c, err, "reading a stack");
  }
  disc_close(&d);
  return rc;
}

int storage__sq_stack_by_id(struct storage__sqlite *s, const char *id, spaa_store_stack_cb cb,
                           void *ctx, struct spaa_err *err)
{
  struct spaa_cid cid;
  struct disc d;
  int rc, step;
  if (!id || spaa_cid_parse(id, &cid))
    return spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no stack with id '%.64s'", id ? id : "");
  if (!(rc = disc_open(&d, s, err)) && !(rc = disc_stack_stmt(&d, "cid = ?1"))) {
    sqlite3_bind_blob(d.stack, 1, cid.b, SPAA_CID_LEN, SQLITE_TRANSIENT);
    if ((step = sqlite3_step(d.stack)) == SQLITE_ROW)
      rc = disc_emit(&d, cb, ctx);
    else if (step == SQLITE_DONE)
      rc = spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no stack with id '%.64s'", id);
    else
      rc = storage__db_err(d.c, err, "reading a stack");
  }
  disc_close(&d);
  return rc;
}

/* ---- counts ------------------------------------------------------------------------------- */

/* Rows of `sql` (optionally bound to key) as name, count[, sources, first, last] into *out. */
static int name_rows(struct storage__sqlite *s, const char *sql, const char *key,
                     struct spaa_store_name_count **out, size_t *n, struct spaa_err *err)
{
  struct disc d;
  sqlite3_stmt *st = NULL;
  size_t cap = 0;
  int rc, step, cols;
  *out = NULL;
  *n = 0;
  if ((rc = disc_open(&d, s, err)))
    goto out;
  if (sqlite3_prepare_v2(d.c->db, sql, -1, &st, NULL) != SQLITE_OK) {
    rc = storage__db_err(d.c, err, "preparing a discovery query");
    goto out;
  }
  if (key)
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
  cols = sqlite3_column_count(st);
  while ((step = sqlite3_step(st)) == SQLITE_ROW && *n < DISCOVER_MAX_ROWS) {
    struct spaa_store_name_count *e;
    if (*n == cap) {
      size_t nc = cap ? cap * 2 : 64;
      struct spaa_store_name_count *a = realloc(*out, nc * sizeof(*a));
      if (!a) {
        rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
        goto out;
      }
      *out = a;
      cap = nc;
    }
    e = &(*out)[(*n)++];
    memset(e, 0, sizeof(*e));
    e->name = col_dup(st, 0);
    e->count = sqlite3_column_int64(st, 1);
    if (cols >= 5) {
      e->sources = col_dup(st, 2);
      e->first_ns = sqlite3_column_int64(st, 3);
      e->last_ns = sqlite3_column_int64(st, 4);
    }
    if (cols >= 6)
      e->events_json = col_dup(st, 5);
    if (!e->name) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      goto out;
    }
  }
  if (step != SQLITE_ROW && step != SQLITE_DONE)
    rc = storage__db_err(d.c, err, "running a discovery query");
out:
  sqlite3_finalize(st);
  disc_close(&d);
  return rc;
}

int storage__sq_services(struct storage__sqlite *s, struct spaa_store_name_count **out, size_t *n,
                        struct spaa_err *err)
{
  /* events: {"event":{"metric":total...}} summed over the service's profiles, as JSON text */
  return name_rows(s,
                   "SELECT p.service, count(*), (SELECT group_concat(src, ',') FROM (SELECT"
                   " DISTINCT source AS src FROM profile WHERE service = p.service ORDER BY"
                   " src)), min(p.received_ns), max(p.received_ns), (SELECT json_group_object("
                   "name, json(metrics)) FROM (SELECT e.name AS name, json_group_array(DISTINCT"
                   " m.key) AS metrics FROM profile q JOIN profile_event e ON e.profile ="
                   " q.num, json_each(e.totals) m WHERE q.service = p.service GROUP BY"
                   " e.name ORDER BY e.name)) FROM profile p GROUP BY p.service ORDER BY"
                   " p.service",
                   NULL, out, n, err);
}

int storage__sq_label_keys(struct storage__sqlite *s, struct spaa_store_name_count **out, size_t *n,
                          struct spaa_err *err)
{
  return name_rows(s, "SELECT key, count(*) FROM profile_label GROUP BY key ORDER BY key", NULL,
                   out, n, err);
}

int storage__sq_label_values(struct storage__sqlite *s, const char *key,
                            struct spaa_store_name_count **out, size_t *n, struct spaa_err *err)
{
  return name_rows(s,
                   "SELECT value, count(*) FROM profile_label WHERE key = ?1 GROUP BY value"
                   " ORDER BY value",
                   key, out, n, err);
}
