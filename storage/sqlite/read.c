/* Reading a stored profile on a reader connection inside one read transaction: the profile
 * row here, the block through the shared reader (storage/read.c), which asks this file for
 * the dictionary and for the frame and stack rows the block names, one lookup each. */
#include <stdlib.h>
#include <string.h>

#include "storage/sqlite/sqlite_int.h"

struct sq_src {
  struct storage__conn *c;
  sqlite3_stmt *dict, *frame, *stack; /* the statement of the last answer of each kind */
};

static void sq_src_reset(struct sq_src *q)
{
  if (q->dict)
    sqlite3_reset(q->dict);
  if (q->frame)
    sqlite3_reset(q->frame);
  if (q->stack)
    sqlite3_reset(q->stack);
  q->dict = q->frame = q->stack = NULL;
}

/* Step statement `id` for row id `row`, kept current in *cur until the next call. */
static int sq_row(struct sq_src *q, enum storage__st id, int64_t row, sqlite3_stmt **cur,
                  struct spaa_err *err)
{
  sqlite3_stmt *st;
  int rc;
  if (*cur)
    sqlite3_reset(*cur);
  *cur = NULL;
  if (!(st = storage__stmt(q->c, id, err)))
    return SPAA_E_STORE;
  sqlite3_bind_int64(st, 1, row);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *cur = st;
    return 0;
  }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 1 : storage__db_err(q->c, err, "reading a profile");
}

/* Column i as borrowed bytes; NULL for SQL NULL. */
static const char *col(sqlite3_stmt *st, int i, size_t *len)
{
  const void *b;
  *len = 0;
  if (sqlite3_column_type(st, i) == SQLITE_NULL)
    return NULL;
  b = sqlite3_column_blob(st, i);
  *len = (size_t)sqlite3_column_bytes(st, i);
  return b ? b : "";
}

static int sq_dict(void *ctx, int64_t id, const void **z, size_t *len, struct spaa_err *err)
{
  struct sq_src *q = ctx;
  int rc = sq_row(q, ST_R_DICT, id, &q->dict, err);
  if (!rc && !(*z = col(q->dict, 0, len)))
    *z = "";
  return rc;
}

static int sq_frame(void *ctx, int64_t row, struct storage__frow *f, struct spaa_err *err)
{
  struct sq_src *q = ctx;
  int rc = sq_row(q, ST_R_FRAME, row, &q->frame, err);
  if (rc)
    return rc;
  f->func = col(q->frame, 0, &f->func_len);
  f->srcline = col(q->frame, 1, &f->srcline_len);
  f->inline_depth = sqlite3_column_int64(q->frame, 2);
  f->kind = col(q->frame, 3, &f->kind_len);
  return 0;
}

static int sq_stack(void *ctx, int64_t row, struct storage__srow *s, struct spaa_err *err)
{
  struct sq_src *q = ctx;
  int rc = sq_row(q, ST_R_STACK, row, &q->stack, err);
  if (rc)
    return rc;
  s->cid = col(q->stack, 0, &s->cid_len);
  s->event = col(q->stack, 1, &s->event_len);
  s->stack_type = col(q->stack, 2, &s->stack_type_len);
  s->frames = col(q->stack, 3, &s->frames_len);
  s->context = col(q->stack, 4, &s->context_len);
  return 0;
}

static void sq_src_init(struct storage__src *src, struct sq_src *q, struct storage__conn *c)
{
  memset(q, 0, sizeof(*q));
  q->c = c;
  memset(src, 0, sizeof(*src));
  src->ctx = q;
  src->dict = sq_dict;
  src->frame = sq_frame;
  src->stack = sq_stack;
}

int storage__sq_block_raw(struct storage__conn *c, struct storage__rdict *dict, int64_t dict_id,
                          const void *z, size_t len, struct spaa_buf *raw,
                          struct spaa_err *err)
{
  struct storage__src src;
  struct sq_src q;
  int rc;
  sq_src_init(&src, &q, c);
  rc = storage__block_raw(&src, dict, dict_id, z, len, raw, err);
  sq_src_reset(&q);
  return rc;
}

int storage__sq_get(struct storage__sqlite *s, const char *id, struct spaa_meter *meter,
                    struct spaa_profile **out, struct spaa_err *err)
{
  struct storage__src src;
  struct sq_src q;
  struct storage__conn *c;
  sqlite3_stmt *st;
  int rc;
  *out = NULL;
  if (!s || !id)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store or no id");
  if (!(c = storage__reader_get(s, err)))
    return SPAA_E_STORE;
  /* one read transaction: every row from the same snapshot */
  if ((rc = storage__exec(c, ST_BEGIN, err)))
    goto out;
  if (!(st = storage__stmt(c, ST_R_PROFILE, err))) {
    rc = SPAA_E_STORE;
    goto done;
  }
  sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    sq_src_init(&src, &q, c);
    src.meter = meter;
    rc = storage__read_block(&src, id, sqlite3_column_int64(st, 0), sqlite3_column_blob(st, 1),
                             (size_t)sqlite3_column_bytes(st, 1), out, err);
    sq_src_reset(&q);
  } else if (rc == SQLITE_DONE) {
    rc = spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no profile with id %.64s", id);
  } else {
    rc = storage__db_err(c, err, "reading the profile");
  }
  sqlite3_reset(st);
done:
  storage__exec(c, ST_COMMIT, NULL);
out:
  storage__reader_put(s, c);
  return rc;
}
