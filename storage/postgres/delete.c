/* Deleting a selection: the selected profiles in transactions of SPAA_STORE_DELETE_BATCH
 * (labels, totals and blocks cascade), then one sweep transaction that deletes the shared rows
 * no remaining block names. The sweep holds the sweep lock exclusively (puts hold it shared
 * for their whole transaction), so no relay's put takes a row while it is swept and one
 * relay sweeps at a time; it bumps the sweep generation, which empties every relay's
 * content-id cache at its next put. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "base/limits.h"
#include "storage/postgres/pg_int.h"

#define MARK_CHUNK 4096 /* row ids per INSERT into a keep table */

/* An int8[] literal being built. */
struct ids {
  struct spaa_buf a;
  size_t n;
};

static void ids_reset(struct ids *v)
{
  v->a.len = 0;
  v->n = 0;
}

static int ids_add(struct ids *v, int64_t id)
{
  v->n++;
  return spaa_buf_addf(&v->a, "%s%" PRId64, v->n > 1 ? "," : "{", id) ? SPAA_E_NOMEM : 0;
}

/* Run sql with the ids as $1 (int8[]); the affected rows into *n when n. */
static int with_ids(struct pg__conn *c, const char *sql, struct ids *v, uint64_t *n,
                    struct spaa_err *err)
{
  struct pg__params p;
  PGresult *r;
  if (!v->n) {
    if (n)
      *n = 0;
    return 0;
  }
  if (spaa_buf_add(&v->a, "}", 2))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  memset(&p, 0, sizeof(p));
  pg__p_text(&p, v->a.p);
  r = pg__sql(c, sql, &p, err);
  ids_reset(v);
  if (!r)
    return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  if (n)
    *n = strtoull(PQcmdTuples(r), NULL, 10);
  PQclear(r);
  return 0;
}

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
  struct ids v;
  size_t i = 0, k;
  uint64_t got;
  int rc = 0;
  spaa_buf_init(&v.a, 0);
  ids_reset(&v);
  while (i < n && !rc) {
    for (k = 0; k < SPAA_STORE_DELETE_BATCH && i + k < n && !rc; k++)
      rc = ids_add(&v, nums[i + k]);
    if (rc || (rc = pg__exec(c, "BEGIN", err)))
      break;
    if ((rc = with_ids(c, "DELETE FROM profile WHERE num = ANY($1::int8[])", &v, &got, err)) ||
        (rc = pg__exec(c, "COMMIT", err))) {
      if (c->db && PQstatus(c->db) == CONNECTION_OK)
        pg__exec(c, "ROLLBACK", NULL);
      break;
    }
    *done += got;
    i += k;
  }
  spaa_buf_free(&v.a);
  return rc == SPAA_E_NOMEM ? spaa_err_set(err, rc, 0, 0, NULL) : rc;
}

/* ---- the sweep ------------------------------------------------------------------------------ */

static const char *const KEEP_INS[3] = {
  "INSERT INTO keep_stack SELECT unnest($1::int8[]) ON CONFLICT DO NOTHING",
  "INSERT INTO keep_frame SELECT unnest($1::int8[]) ON CONFLICT DO NOTHING",
  "INSERT INTO keep_dso SELECT unnest($1::int8[]) ON CONFLICT DO NOTHING",
};

struct mark {
  struct pg__conn *c;
  struct ids v[3];             /* stack, frame, dso ids waiting for their INSERT */
  struct spaa_err *err;
};

static int keep(struct mark *m, int which, int64_t row)
{
  int rc = ids_add(&m->v[which], row);
  if (!rc && m->v[which].n >= MARK_CHUNK)
    rc = with_ids(m->c, KEEP_INS[which], &m->v[which], NULL, m->err);
  return rc;
}

static int keep_cb(void *m, int which, int64_t row) { return keep(m, which, row); }

static int flush(struct mark *m)
{
  int i, rc = 0;
  for (i = 0; i < 3 && !rc; i++)
    rc = with_ids(m->c, KEEP_INS[i], &m->v[i], NULL, m->err);
  return rc;
}

/* Mark what a raw block names (storage__blk_rows: 0 stacks, 1 frames, 2 dsos). */
static int mark_block(struct mark *m, const struct spaa_buf *raw)
{
  struct storage__blk_rd b;
  if (storage__blk_open(&b, raw->p, raw->len))
    return SPAA_E_STORE;
  return storage__blk_rows(&b, 1, keep_cb, m);
}

/* Mark from every remaining block, read through a cursor. */
static int mark_blocks(struct mark *m)
{
  struct storage__rdict dict;
  struct spaa_buf raw;
  PGresult *r;
  int rc, k, n;
  memset(&dict, 0, sizeof(dict));
  spaa_buf_init(&dict.raw, 0);
  spaa_buf_init(&raw, 0);
  rc = pg__exec(m->c, "DECLARE spaa_sweep BINARY NO SCROLL CURSOR FOR"
                      " SELECT dict, data FROM profile_block", m->err);
  while (!rc) {
    if (!(r = pg__sql(m->c, "FETCH 16 FROM spaa_sweep", NULL, m->err))) {
      rc = m->c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
      break;
    }
    n = PQntuples(r);
    for (k = 0; k < n && !rc; k++) {
      rc = pg__block_raw(m->c, &dict, pg__int(r, k, 0), PQgetvalue(r, k, 1),
                         (size_t)PQgetlength(r, k, 1), &raw, m->err);
      if (!rc)
        rc = mark_block(m, &raw);
      if (rc == SPAA_E_STORE && !m->err->code)
        spaa_err_set(m->err, rc, 0, 0, "a stored block is corrupt");
    }
    PQclear(r);
    if (!n)
      break;
  }
  spaa_buf_free(&dict.raw);
  spaa_buf_free(&raw);
  return rc == SPAA_E_NOMEM ? spaa_err_set(m->err, rc, 0, 0, NULL) : rc;
}

/* The frames of every kept stack. */
static int mark_stack_frames(struct mark *m)
{
  PGresult *r;
  int rc = flush(m), k, n;
  if (!rc)
    rc = pg__exec(m->c, "DECLARE spaa_kept BINARY NO SCROLL CURSOR FOR"
                        " SELECT s.frames FROM stack s JOIN keep_stack k ON k.id = s.id",
                  m->err);
  while (!rc) {
    if (!(r = pg__sql(m->c, "FETCH 1000 FROM spaa_kept", NULL, m->err)))
      return m->c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
    n = PQntuples(r);
    for (k = 0; k < n && !rc; k++) {
      struct storage__rd rd;
      storage__rd_init(&rd, PQgetvalue(r, k, 0), (size_t)PQgetlength(r, k, 0));
      while (!rc && rd.pos < rd.len) {
        uint64_t row = storage__get_uv(&rd);
        rc = rd.bad || row > INT64_MAX
                 ? spaa_err_set(m->err, SPAA_E_STORE, 0, 0, "a stack row is corrupt")
                 : keep(m, 1, (int64_t)row);
      }
    }
    PQclear(r);
    if (!n)
      break;
  }
  return rc ? rc : flush(m);
}

static const char SWEEP_TABLES[] =
  "CREATE TEMP TABLE keep_stack(id int8 PRIMARY KEY) ON COMMIT DROP;"
  "CREATE TEMP TABLE keep_frame(id int8 PRIMARY KEY) ON COMMIT DROP;"
  "CREATE TEMP TABLE keep_dso(id int8 PRIMARY KEY) ON COMMIT DROP";

/* Children before parents: a frame names its dso, a block its dictionary. */
static const char *const SWEEP_DELETE[4] = {
  "DELETE FROM stack s WHERE NOT EXISTS (SELECT 1 FROM keep_stack k WHERE k.id = s.id)",
  "DELETE FROM frame f WHERE NOT EXISTS (SELECT 1 FROM keep_frame k WHERE k.id = f.id)",
  "DELETE FROM dso d WHERE NOT EXISTS (SELECT 1 FROM keep_dso k WHERE k.id = d.id)",
  ("DELETE FROM block_dict d WHERE NOT EXISTS"
   " (SELECT 1 FROM profile_block b WHERE b.dict = d.id)"),
};

static int sweep_in(struct mark *m, struct spaa_store_deleted *out)
{
  uint64_t *count[4] = {&out->stacks, &out->frames, &out->dsos, &out->dicts};
  struct pg__params p;
  PGresult *r;
  int i, rc;
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, PG_LOCK_SWEEP);
  if (!(r = pg__sql(m->c, "SELECT pg_advisory_xact_lock($1::int8)", &p, m->err)))
    return m->c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  PQclear(r);
  if ((rc = pg__exec(m->c, SWEEP_TABLES, m->err)) || (rc = mark_blocks(m)) ||
      (rc = mark_stack_frames(m)) ||
      (rc = pg__exec(m->c, "INSERT INTO keep_dso SELECT f.dso FROM frame f JOIN keep_frame k"
                           " ON k.id = f.id WHERE f.dso IS NOT NULL ON CONFLICT DO NOTHING",
                     m->err)))
    return rc;
  for (i = 0; i < 4; i++) {
    if (!(r = pg__sql(m->c, SWEEP_DELETE[i], NULL, m->err)))
      return m->c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
    *count[i] = strtoull(PQcmdTuples(r), NULL, 10);
    PQclear(r);
  }
  return pg__exec(m->c, "UPDATE spaa_meta SET v = v + 1 WHERE k = 'sweep'", m->err);
}

static int sweep(struct pg__conn *c, struct spaa_store_deleted *out, struct spaa_err *err)
{
  struct mark m;
  int i, rc;
  memset(&m, 0, sizeof(m));
  m.c = c;
  m.err = err;
  for (i = 0; i < 3; i++)
    spaa_buf_init(&m.v[i].a, 0);
  if (!(rc = pg__exec(c, "BEGIN", err))) {
    rc = sweep_in(&m, out);
    if (!rc)
      rc = pg__exec(c, "COMMIT", err);
    if (rc && c->db && PQstatus(c->db) == CONNECTION_OK)
      pg__exec(c, "ROLLBACK", NULL);
  }
  if (rc)
    out->stacks = out->frames = out->dsos = out->dicts = 0;
  for (i = 0; i < 3; i++)
    spaa_buf_free(&m.v[i].a);
  storage__cache_free(&c->cache);
  c->gen = -1;
  return rc;
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
  rc = select_nums(c, sel, &nums, &n, err);
  if (!rc)
    rc = delete_profiles(c, nums, n, &out->profiles, err);
  if (!rc && out->profiles)
    rc = sweep(c, out, err);
  pg__put(s, c);
  free(nums);
  return rc;
}
