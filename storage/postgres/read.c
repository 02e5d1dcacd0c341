/* Reading a stored profile inside one read-only transaction: the profile row here, the block
 * through the shared reader (storage/read.c), with the frame and stack rows the block names
 * fetched in two queries (id = ANY($1)) before its records are read. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "storage/postgres/pg_int.h"

struct pg_src {
  struct pg__conn *c;
  PGresult *dict;               /* the last dictionary answer */
  PGresult *fr, *sr;            /* the shared frame rows (id, func, srcline, inline_depth,
                                   kind) and stack rows (id, cid, event, stack_type, frames,
                                   context) the block names */
  struct spaa_idmap frow, srow; /* row id -> row of fr / sr */
  struct spaa_buf fa, sa;       /* their ids as int8[] literals while they are collected */
};

static void pg_src_free(struct pg_src *q)
{
  PQclear(q->dict);
  PQclear(q->fr);
  PQclear(q->sr);
  spaa_idmap_free(&q->frow);
  spaa_idmap_free(&q->srow);
  spaa_buf_free(&q->fa);
  spaa_buf_free(&q->sa);
}

/* Column i of row k as borrowed bytes; NULL for SQL NULL. */
static const char *col(const PGresult *r, int k, int i, size_t *len)
{
  *len = 0;
  if (PQgetisnull(r, k, i))
    return NULL;
  *len = (size_t)PQgetlength(r, k, i);
  return PQgetvalue(r, k, i);
}

static int pg_dict(void *ctx, int64_t id, const void **z, size_t *len, struct spaa_err *err)
{
  struct pg_src *q = ctx;
  struct pg__params p;
  memset(&p, 0, sizeof(p));
  pg__p_int(&p, id);
  PQclear(q->dict);
  if (!(q->dict = pg__run(q->c, PS_R_DICT, &p, err)))
    return q->c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  if (!PQntuples(q->dict))
    return 1;
  *z = col(q->dict, 0, 0, len);
  return 0;
}

static int pg_frame(void *ctx, int64_t row, struct storage__frow *f, struct spaa_err *err)
{
  struct pg_src *q = ctx;
  size_t k;
  if (!q->fr || !spaa_idmap_get(&q->frow, (uint64_t)row, &k))
    return 1;
  f->func = col(q->fr, (int)k, 1, &f->func_len);
  f->srcline = col(q->fr, (int)k, 2, &f->srcline_len);
  f->inline_depth = pg__int(q->fr, (int)k, 3);
  f->kind = col(q->fr, (int)k, 4, &f->kind_len);
  return 0;
}

static int pg_stack(void *ctx, int64_t row, struct storage__srow *s, struct spaa_err *err)
{
  struct pg_src *q = ctx;
  size_t k;
  if (!q->sr || !spaa_idmap_get(&q->srow, (uint64_t)row, &k))
    return 1;
  s->cid = col(q->sr, (int)k, 1, &s->cid_len);
  s->event = col(q->sr, (int)k, 2, &s->event_len);
  s->stack_type = col(q->sr, (int)k, 3, &s->stack_type_len);
  s->frames = col(q->sr, (int)k, 4, &s->frames_len);
  s->context = col(q->sr, (int)k, 5, &s->context_len);
  return 0;
}

/* Append row id v to the stack (kind 0) or frame (kind 1) int8[] literal. */
static int collect(void *ctx, int kind, int64_t v)
{
  struct pg_src *q = ctx;
  struct spaa_buf *a = kind ? &q->fa : &q->sa;
  return spaa_buf_addf(a, "%s%" PRId64, a->len > 1 ? "," : "", v) ? SPAA_E_NOMEM : 0;
}

/* One query for the rows of an int8[] literal into *out, indexed by id in *map. */
static int fetch(struct pg_src *q, enum pg__st id, struct spaa_buf *a, PGresult **out,
                 struct spaa_idmap *map, struct spaa_err *err)
{
  struct pg__params p;
  int k;
  if (spaa_buf_adds(a, "}") || spaa_buf_add(a, "", 1))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  memset(&p, 0, sizeof(p));
  pg__p_text(&p, a->p);
  if (!(*out = pg__run(q->c, id, &p, err)))
    return q->c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  for (k = 0; k < PQntuples(*out); k++)
    if (spaa_idmap_put(map, (uint64_t)pg__int(*out, k, 0), (size_t)k, NULL) < 0)
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  return 0;
}

static int pg_prefetch(void *ctx, const struct storage__blk_rd *b, struct spaa_err *err)
{
  struct pg_src *q = ctx;
  int rc;
  if (spaa_buf_adds(&q->fa, "{") || spaa_buf_adds(&q->sa, "{"))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if ((rc = storage__blk_rows(b, 0, collect, q)))
    return rc == SPAA_E_NOMEM ? spaa_err_set(err, rc, 0, 0, NULL) : rc;
  if ((rc = fetch(q, PS_R_FRAMES, &q->fa, &q->fr, &q->frow, err)))
    return rc;
  return fetch(q, PS_R_STACKS, &q->sa, &q->sr, &q->srow, err);
}

static void pg_src_init(struct storage__src *src, struct pg_src *q, struct pg__conn *c)
{
  memset(q, 0, sizeof(*q));
  q->c = c;
  spaa_idmap_init(&q->frow);
  spaa_idmap_init(&q->srow);
  spaa_buf_init(&q->fa, 0);
  spaa_buf_init(&q->sa, 0);
  memset(src, 0, sizeof(*src));
  src->ctx = q;
  src->dict = pg_dict;
  src->frame = pg_frame;
  src->stack = pg_stack;
  src->prefetch = pg_prefetch;
}

int pg__block_raw(struct pg__conn *c, struct storage__rdict *dict, int64_t dict_id,
                  const void *z, size_t len, struct spaa_buf *raw, struct spaa_err *err)
{
  struct storage__src src;
  struct pg_src q;
  int rc;
  pg_src_init(&src, &q, c);
  rc = storage__block_raw(&src, dict, dict_id, z, len, raw, err);
  pg_src_free(&q);
  return rc;
}

int pg__get_profile(struct storage__pg *s, const char *id, struct spaa_meter *meter,
                    struct spaa_profile **out, struct spaa_err *err)
{
  struct storage__src src;
  struct pg_src q;
  struct pg__params p;
  struct pg__conn *c;
  PGresult *r = NULL;
  int rc;
  *out = NULL;
  if (!(c = pg__get(s, err)))
    return SPAA_E_BUSY;
  pg_src_init(&src, &q, c);
  src.meter = meter;
  /* one read transaction: every row from the same snapshot */
  if ((rc = pg__exec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err)))
    goto out;
  memset(&p, 0, sizeof(p));
  pg__p_str(&p, id);
  if (!(r = pg__run(c, PS_R_PROFILE, &p, err)))
    rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  else if (!PQntuples(r))
    rc = spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no profile with id %.64s", id);
  else
    rc = storage__read_block(&src, id, pg__int(r, 0, 0), PQgetvalue(r, 0, 1),
                             (size_t)PQgetlength(r, 0, 1), out, err);
  if (c->db && PQstatus(c->db) == CONNECTION_OK)
    pg__exec(c, "COMMIT", NULL);
out:
  PQclear(r);
  pg_src_free(&q);
  pg__put(s, c);
  return rc;
}
