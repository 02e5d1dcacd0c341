/* spaa_store_scan: the stack weights of a selection straight from the blocks, one block in
 * memory at a time, on a reader connection inside one read transaction. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/sqlite/sqlite_int.h"

struct scan {
  struct storage__conn *c;
  spaa_store_scan_cb cb;
  void *ctx;
  struct spaa_err *err;
  struct storage__rdict dict;    /* the last dictionary read */
  struct spaa_buf raw;           /* the current block */
  char **strs;                   /* its string table, NUL-terminated copies */
  size_t n_strs;
  struct storage__blk_weight *w; /* weights of one stack as stored */
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

/* The block's string table into x->strs. 0, SPAA_E_STORE (corrupt), SPAA_E_NOMEM. */
static int load_strs(struct scan *x, struct storage__rd *r)
{
  uint64_t n = storage__get_uv(r), i;
  strs_free(x);
  if (r->bad || n > r->len)
    return SPAA_E_STORE;
  if (!(x->strs = calloc(n ? (size_t)n : 1, sizeof(*x->strs))))
    return SPAA_E_NOMEM;
  for (i = 0; i < n; i++) {
    uint64_t len = storage__get_uv(r);
    if (r->bad || !len || len - 1 > r->len - r->pos)
      return SPAA_E_STORE;
    if (!(x->strs[i] = strndup((const char *)r->p + r->pos, (size_t)(len - 1))))
      return SPAA_E_NOMEM;
    x->n_strs = (size_t)i + 1;
    r->pos += (size_t)(len - 1);
  }
  return 0;
}

/* Grow the weight arrays to hold n. 0 or SPAA_E_NOMEM. */
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

/* Every stack of the block in x->raw. */
static int scan_block(struct scan *x, int64_t num, const char *id)
{
  struct storage__blk_rd b;
  struct spaa_store_scan_stack st;
  uint64_t i;
  size_t k, n;
  int rc;
  if (storage__blk_open(&b, x->raw.p, x->raw.len) || (rc = load_strs(x, &b.sec[BS_STRINGS])) ==
      SPAA_E_STORE)
    return SPAA_E_STORE;
  if (rc)
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

/* Step the selection, one block at a time. */
static int scan_rows(struct scan *x, sqlite3_stmt *st)
{
  int rc, step;
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t num = sqlite3_column_int64(st, 0);
    const char *id = (const char *)sqlite3_column_text(st, 1);
    rc = storage__block_raw(x->c, &x->dict, sqlite3_column_int64(st, 2),
                            sqlite3_column_blob(st, 3), (size_t)sqlite3_column_bytes(st, 3),
                            &x->raw, x->err);
    if (!rc)
      rc = scan_block(x, num, id ? id : "");
    if (rc == SPAA_E_STORE)
      return spaa_err_set(x->err, rc, 0, 0, "stored profile %.64s is corrupt: block",
                          id ? id : "");
    if (rc == SPAA_E_NOMEM)
      return spaa_err_set(x->err, rc, 0, 0, NULL);
    if (rc)
      return rc;
  }
  return step == SQLITE_DONE ? 0 : storage__db_err(x->c, x->err, "scanning profiles");
}

int storage__sq_scan(struct storage__sqlite *s, const struct spaa_list_query *sel,
                    spaa_store_scan_cb cb, void *ctx, struct spaa_err *err)
{
  struct scan x;
  struct spaa_buf sql;
  sqlite3_stmt *st = NULL;
  int rc;
  if (!s || !sel || !cb)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store, no selection or no callback");
  if ((rc = storage__check_query(sel, err)))
    return rc;
  memset(&x, 0, sizeof(x));
  x.cb = cb;
  x.ctx = ctx;
  x.err = err;
  spaa_buf_init(&x.dict.raw, 0);
  spaa_buf_init(&x.raw, 0);
  spaa_buf_init(&sql, 16 * 1024);
  if (storage__select_sql(sel, &sql, 1)) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  if (!(x.c = storage__reader_get(s, err))) {
    rc = SPAA_E_STORE;
    goto out;
  }
  if ((rc = storage__exec(x.c, ST_BEGIN, err)))
    goto out;
  if (sqlite3_prepare_v2(x.c->db, sql.p, (int)sql.len, &st, NULL) != SQLITE_OK)
    rc = storage__db_err(x.c, err, "preparing the scan");
  if (!rc) {
    /* select_bind asks for one row more than it is given (a list's "is there a next
     * page"): a scan visits at most sel->limit profiles */
    storage__select_bind(st, sel, sel->limit ? sel->limit - 1 : (size_t)INT64_MAX - 1);
    rc = scan_rows(&x, st);
  }
  sqlite3_finalize(st);
  storage__exec(x.c, ST_COMMIT, NULL);
out:
  if (x.c)
    storage__reader_put(s, x.c);
  spaa_buf_free(&sql);
  spaa_buf_free(&x.dict.raw);
  spaa_buf_free(&x.raw);
  strs_free(&x);
  free(x.w);
  free(x.out);
  return rc;
}
