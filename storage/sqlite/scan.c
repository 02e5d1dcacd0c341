/* spaa_store_scan: the stack weights of a selection straight from the blocks (storage/scan.c),
 * one block in memory at a time, on a reader connection inside one read transaction. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/sqlite/sqlite_int.h"

struct scan {
  struct storage__scan s;        /* the block being scanned (storage/scan.c) */
  struct storage__conn *c;
  struct spaa_err *err;
  struct storage__rdict dict;    /* the last dictionary read */
};

/* Step the selection, one block at a time. */
static int scan_rows(struct scan *x, sqlite3_stmt *st)
{
  int rc, step;
  while ((step = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t num = sqlite3_column_int64(st, 0);
    const char *id = (const char *)sqlite3_column_text(st, 1);
    const void *z = sqlite3_column_blob(st, 3);
    size_t len = (size_t)sqlite3_column_bytes(st, 3);
    rc = storage__scan_room(&x->s, z, len);
    if (!rc)
      rc = storage__sq_block_raw(x->c, &x->dict, sqlite3_column_int64(st, 2), z, len, &x->s.raw,
                                 x->err);
    if (!rc)
      rc = storage__scan_block(&x->s, num, id ? id : "");
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
                     struct spaa_meter *meter, spaa_store_scan_cb cb, void *ctx,
                     struct spaa_err *err)
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
  x.s.cb = cb;
  x.s.ctx = ctx;
  x.s.meter = meter;
  x.err = err;
  spaa_buf_init(&x.dict.raw, 0);
  spaa_buf_init(&x.s.raw, 0);
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
  storage__scan_free(&x.s);
  return rc;
}
