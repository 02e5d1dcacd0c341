/* Deleting a selection: one delete at a time over every relay (the session lock
 * PG_LOCK_DELETE, held from the selection to the end of the sweep), the selected profiles in
 * transactions of SPAA_STORE_DELETE_BATCH (labels, totals and blocks cascade), then the sweep
 * (sweep.c), which deletes the shared rows no remaining block names while puts go on. */
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "storage/postgres/pg_int.h"

/* The selected profiles' numbers, newest first, the oldest `limit` kept when limit. */
static int select_nums(struct pg__conn *c, const struct spaa_list_query *sel, int64_t **nums,
                       size_t *n, struct spaa_err *err)
{
  struct pg__params p;
  struct spaa_buf sql;
  PGresult *r;
  size_t k, skip = 0, total;
  int rc;
  *nums = NULL;
  *n = 0;
  spaa_buf_init(&sql, 16 * 1024);
  if (pg__select(sel, 0, (size_t)INT64_MAX, &sql, &p) || spaa_buf_add(&sql, "", 1)) {
    spaa_buf_free(&sql);
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  r = pg__sql(c, sql.p, &p, err);
  spaa_buf_free(&sql);
  if (!r)
    return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  total = (size_t)PQntuples(r);
  if (sel->limit && total > sel->limit)
    skip = total - sel->limit;
  rc = 0;
  if (total - skip && !(*nums = malloc((total - skip) * sizeof(**nums))))
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  for (k = skip; !rc && k < total; k++)
    (*nums)[(*n)++] = pg__int(r, (int)k, 0);
  PQclear(r);
  return rc;
}

static int delete_profiles(struct pg__conn *c, const int64_t *nums, size_t n, uint64_t *done,
                           struct spaa_err *err)
{
  struct pg__ids v;
  PGresult *r;
  size_t i = 0, k;
  uint64_t got = 0;
  int rc = 0;
  pg__ids_init(&v);
  while (i < n && !rc) {
    for (k = 0; k < SPAA_STORE_DELETE_BATCH && i + k < n && !rc; k++)
      rc = pg__ids_add(&v, nums[i + k]);
    if (rc) {
      rc = spaa_err_set(err, rc, 0, 0, NULL);
      break;
    }
    if ((rc = pg__exec(c, "BEGIN", err)))
      break;
    r = pg__ids_run(c, "DELETE FROM profile WHERE num = ANY($1::int8[])", &v, &rc, err);
    if (r)
      got = strtoull(PQcmdTuples(r), NULL, 10);
    PQclear(r);
    if (rc || (rc = pg__exec(c, "COMMIT", err))) {
      if (c->db && PQstatus(c->db) == CONNECTION_OK)
        pg__exec(c, "ROLLBACK", NULL);
      break;
    }
    *done += got;
    i += k;
  }
  pg__ids_free(&v);
  return rc;
}

/* Take (on 1) or release (on 0) PG_LOCK_DELETE on c's session: taking waits for the delete
 * running on any relay. */
static int delete_lock(struct pg__conn *c, int on, struct spaa_err *err)
{
  struct pg__params p;
  PGresult *r;
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, PG_LOCK_DELETE);
  if (!(r = pg__sql(c, on ? "SELECT pg_advisory_lock($1::int8)"
                          : "SELECT pg_advisory_unlock($1::int8)", &p, err)))
    return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  PQclear(r);
  return 0;
}

int pg__delete(struct storage__pg *s, const struct spaa_list_query *sel,
               struct spaa_store_deleted *out, struct spaa_err *err)
{
  struct spaa_list_query q = *sel;
  struct pg__conn *c;
  int64_t *nums = NULL;
  size_t n = 0;
  int rc;
  memset(out, 0, sizeof(*out));
  q.limit = 0; /* a delete's limit is not a page size */
  if ((rc = storage__check_query(&q, err)))
    return rc;
  if (sel->after)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "a delete takes no cursor");
  if (!(c = pg__get(s, err)))
    return err && err->code ? err->code : SPAA_E_BUSY;
  if ((rc = delete_lock(c, 1, err)))
    goto out;
  rc = pg__bytes(c, &out->bytes_before, err);
  if (!rc)
    rc = select_nums(c, sel, &nums, &n, err);
  if (!rc)
    rc = delete_profiles(c, nums, n, &out->profiles, err);
  if (!rc && out->profiles)
    rc = pg__sweep(s, c, out, err);
  if (!rc) /* (what the tables take does not fall: their space is reused, not given back) */
    pg__bytes(c, &out->bytes_after, NULL);
  /* a lost session released the lock with it */
  if (c->db && PQstatus(c->db) == CONNECTION_OK)
    delete_lock(c, 0, NULL);
out:
  pg__put(s, c);
  free(nums);
  return rc;
}
