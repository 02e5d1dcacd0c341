/* Inserting one prepared profile on the writer connection: shared dso, frame and stack rows
 * found by content id (the cache, else SQL) and inserted only when new, then the profile
 * row, its labels and events, and its block. Runs in the writer thread inside the batch
 * transaction, under a savepoint (storage.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "storage/sqlite/sqlite_int.h"

/* Bound pointers (SQLITE_STATIC) all point into the profile, its meta or its preparation,
 * which the waiting caller keeps alive until the batch is over; every statement is stepped
 * and reset inside this file, and its bindings are cleared before its next use. */

static int step_done(struct storage__conn *c, sqlite3_stmt *st, struct spaa_err *err,
                     const char *what)
{
  int rc = sqlite3_step(st);
  if (rc != SQLITE_DONE) {
    storage__db_err(c, err, what);
    sqlite3_reset(st);
    return SPAA_E_STORE;
  }
  sqlite3_reset(st);
  return 0;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
  if (s)
    sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, i);
}

/* The row id of content id `cid` of `kind`: 1 found (the cache, else SQL), 0 absent, or an
 * error. A row found in the database is noted for a sweep in progress (sw); one found in
 * the cache was noted when it entered the cache, which a sweep empties when it begins. */
static int lookup(struct storage__conn *c, struct storage__cache *cache,
                  struct storage__sweep *sw, enum storage__kind kind,
                  const struct spaa_cid *cid, int64_t *row, struct spaa_err *err)
{
  static const enum storage__st get[] = {ST_DSO_GET, ST_FRAME_GET, ST_STACK_GET};
  static const enum storage__sweep_kind swk[] = {SW_DSO, SW_FRAME, SW_STACK};
  sqlite3_stmt *st;
  int rc;
  if (storage__cache_get(cache, kind, cid, row)) {
    cache->hits++;
    return 1;
  }
  cache->misses++;
  if (!(st = storage__stmt(c, get[kind], err)))
    return SPAA_E_STORE;
  sqlite3_bind_blob(st, 1, cid->b, SPAA_CID_LEN, SQLITE_STATIC);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *row = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    storage__sweep_used(sw, swk[kind], *row);
    if (storage__cache_pending(cache, kind, cid, *row))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    return 1;
  }
  if (rc != SQLITE_DONE) {
    storage__db_err(c, err, "looking a content id up");
    sqlite3_reset(st);
    return SPAA_E_STORE;
  }
  sqlite3_reset(st);
  return 0;
}

static int add_dsos(struct storage__conn *c, struct storage__cache *cache,
                    struct storage__sweep *sw, const struct storage__prep *pr, int64_t *rows, struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  char small[512];
  size_t i;
  int rc;
  for (i = 0; i < p->n_dsos; i++) {
    sqlite3_stmt *st;
    char *key = small;
    size_t n;
    if ((rc = lookup(c, cache, sw, SK_DSO, &pr->dso_cid[i], &rows[i], err)))
      if (rc < 0)
        return rc;
    if (rc == 1)
      continue;
    n = spaa_dso_key(&p->dsos[i], small, sizeof(small));
    if (n >= sizeof(small)) {
      if (!(key = malloc(n + 1)))
        return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      spaa_dso_key(&p->dsos[i], key, n + 1);
    }
    if (!(st = storage__stmt(c, ST_DSO_ADD, err))) {
      if (key != small)
        free(key);
      return SPAA_E_STORE;
    }
    sqlite3_bind_blob(st, 1, pr->dso_cid[i].b, SPAA_CID_LEN, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, (int)n, SQLITE_TRANSIENT);
    rc = step_done(c, st, err, "inserting a dso");
    if (key != small)
      free(key);
    if (rc)
      return rc;
    rows[i] = sqlite3_last_insert_rowid(c->db);
    if (storage__cache_pending(cache, SK_DSO, &pr->dso_cid[i], rows[i]))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  return 0;
}

static int add_frames(struct storage__conn *c, struct storage__cache *cache,
                      struct storage__sweep *sw, const struct storage__prep *pr, const int64_t *dso_rows, int64_t *rows,
                      struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  size_t i;
  int rc;
  for (i = 0; i < p->n_frames; i++) {
    struct storage__frame_ident id;
    sqlite3_stmt *st;
    if ((rc = lookup(c, cache, sw, SK_FRAME, &pr->frame_cid[i], &rows[i], err)))
      if (rc < 0)
        return rc;
    if (rc == 1)
      continue;
    if (!(st = storage__stmt(c, ST_FRAME_ADD, err)))
      return SPAA_E_STORE;
    storage__frame_ident(pr, i, &id);
    sqlite3_bind_blob(st, 1, pr->frame_cid[i].b, SPAA_CID_LEN, SQLITE_STATIC);
    if (pr->frame_dso[i] != SIZE_MAX)
      sqlite3_bind_int64(st, 2, dso_rows[pr->frame_dso[i]]);
    sqlite3_bind_text(st, 3, id.func, -1, SQLITE_STATIC);
    bind_text_or_null(st, 4, id.srcline);
    sqlite3_bind_int64(st, 5, id.inline_depth);
    sqlite3_bind_text(st, 6, id.kind, -1, SQLITE_STATIC);
    if (id.has_addr)
      sqlite3_bind_int64(st, 7, id.addr);
    if ((rc = step_done(c, st, err, "inserting a frame")))
      return rc;
    rows[i] = sqlite3_last_insert_rowid(c->db);
    if (storage__cache_pending(cache, SK_FRAME, &pr->frame_cid[i], rows[i]))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  return 0;
}

static int add_stacks(struct storage__conn *c, struct storage__cache *cache,
                      struct storage__sweep *sw, const struct storage__prep *pr, const int64_t *frame_rows, int64_t *rows,
                      struct spaa_err *err)
{
  struct spaa_buf fb;
  size_t i, j;
  int rc = 0;
  spaa_buf_init(&fb, 0);
  for (i = 0; i < pr->n_stacks && !rc; i++) {
    const struct storage__pstack *s = &pr->pstacks[i];
    sqlite3_stmt *st;
    if ((rc = lookup(c, cache, sw, SK_STACK, &pr->stack_cid[i], &rows[i], err)) == 1) {
      rc = 0;
      continue;
    }
    if (rc || (rc = storage__prep_check_stack(pr, i, err)))
      break;
    fb.len = 0;
    for (j = pr->stack_frames_off[i]; j < pr->stack_frames_off[i + 1] && !rc; j++)
      rc = storage__put_uv(&fb, (uint64_t)frame_rows[pr->stack_frames[j]]);
    if (rc) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      break;
    }
    if (!(st = storage__stmt(c, ST_STACK_ADD, err))) {
      rc = SPAA_E_STORE;
      break;
    }
    sqlite3_bind_blob(st, 1, pr->stack_cid[i].b, SPAA_CID_LEN, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, s->event ? s->event : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, s->type ? s->type : "unified", -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 4, fb.p ? fb.p : "", (int)fb.len, SQLITE_STATIC);
    bind_text_or_null(st, 5, pr->stack_ctx[i]);
    if ((rc = step_done(c, st, err, "inserting a stack")))
      break;
    rows[i] = sqlite3_last_insert_rowid(c->db);
    if (storage__cache_pending(cache, SK_STACK, &pr->stack_cid[i], rows[i]))
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  spaa_buf_free(&fb);
  return rc;
}

static int add_profile_row(struct storage__conn *c, const struct storage__prep *pr,
                           int64_t *num, struct spaa_err *err)
{
  const struct spaa_meta *m = pr->m;
  sqlite3_stmt *st = storage__stmt(c, ST_PROFILE_ADD, err);
  int rc;
  if (!st)
    return SPAA_E_STORE;
  sqlite3_bind_text(st, 1, m->id, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, m->service, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, m->source, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 4, m->received_ns);
  if (m->start_ns)
    sqlite3_bind_int64(st, 5, m->start_ns);
  if (m->end_ns)
    sqlite3_bind_int64(st, 6, m->end_ns);
  sqlite3_bind_int64(st, 7, pr->samples);
  sqlite3_bind_int64(st, 8, (int64_t)m->payload_bytes);
  bind_text_or_null(st, 9, pr->labels_text);
  bind_text_or_null(st, 10, pr->attrs_text);
  if (pr->original)
    sqlite3_bind_blob(st, 11, pr->original, (int)pr->original_len, SQLITE_STATIC);
  if ((rc = step_done(c, st, err, "inserting the profile")))
    return rc;
  *num = sqlite3_last_insert_rowid(c->db);
  return 0;
}

static int add_labels_events(struct storage__conn *c, const struct storage__prep *pr,
                             int64_t num, struct spaa_err *err)
{
  sqlite3_stmt *st;
  const char *k;
  json_t *v;
  size_t i;
  int rc;
  if (pr->m->labels) {
    json_object_foreach((json_t *)pr->m->labels, k, v) {
      if (!(st = storage__stmt(c, ST_LABEL_ADD, err)))
        return SPAA_E_STORE;
      sqlite3_bind_int64(st, 1, num);
      sqlite3_bind_text(st, 2, k, -1, SQLITE_STATIC);
      sqlite3_bind_text(st, 3, json_string_value(v), (int)json_string_length(v), SQLITE_STATIC);
      if ((rc = step_done(c, st, err, "inserting a label")))
        return rc;
    }
  }
  for (i = 0; i < pr->n_events_out; i++) {
    if (!(st = storage__stmt(c, ST_EVENT_ADD, err)))
      return SPAA_E_STORE;
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    sqlite3_bind_text(st, 3, pr->event_names[i], -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, pr->event_totals[i], -1, SQLITE_STATIC);
    if ((rc = step_done(c, st, err, "inserting an event")))
      return rc;
  }
  return 0;
}

/* The service's block dictionary: cached, else read, else made of this raw block (its first
 * SPAA_STORE_MAX_DICT bytes) and inserted. *d NULL when none can be had (out of memory). */
static int service_dict(struct storage__conn *c, struct storage__cache *cache,
                        struct storage__sweep *sw, const char *service, const struct spaa_buf *raw,
                        struct storage__dict **d, struct spaa_err *err)
{
  struct spaa_buf z, dz;
  sqlite3_stmt *st;
  int64_t id;
  int rc, step;
  if ((*d = storage__cache_dict(cache, service)))
    return 0;
  spaa_buf_init(&z, 0);
  spaa_buf_init(&dz, 0);
  if (!(st = storage__stmt(c, ST_DICT_GET, err)))
    return SPAA_E_STORE;
  sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW) {
    id = sqlite3_column_int64(st, 0);
    storage__sweep_used(sw, SW_DICT, id);
    rc = storage__blk_decompress(sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1),
                                 NULL, 0, &dz);
    sqlite3_reset(st);
    if (rc) {
      rc = spaa_err_set(err, SPAA_E_STORE, 0, 0, "the block dictionary of %.64s is corrupt",
                        service);
      goto out;
    }
  } else {
    size_t len = raw->len < SPAA_STORE_MAX_DICT ? raw->len : SPAA_STORE_MAX_DICT;
    sqlite3_reset(st);
    if (step != SQLITE_DONE)
      return storage__db_err(c, err, "reading a block dictionary");
    if ((rc = spaa_buf_add(&dz, raw->p, len)) ||
        (rc = storage__blk_compress(raw->p, len, NULL, 0, NULL, &z)))
      goto out;
    if (!(st = storage__stmt(c, ST_DICT_ADD, err))) {
      rc = SPAA_E_STORE;
      goto out;
    }
    sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, z.p, (int)z.len, SQLITE_STATIC);
    if ((rc = step_done(c, st, err, "inserting a block dictionary")))
      goto out;
    id = sqlite3_last_insert_rowid(c->db);
  }
  if ((rc = storage__cache_dict_put(cache, service, id, dz.p, dz.len, 1)))
    goto out;
  *d = storage__cache_dict(cache, service);
out:
  spaa_buf_free(&z);
  spaa_buf_free(&dz);
  if (rc && rc != SPAA_E_STORE)
    spaa_err_set(err, rc, 0, 0, "making a block dictionary failed");
  return rc;
}

/* The profile's block, compressed with its service's dictionary, into profile_block. */
static int add_block(struct storage__conn *c, struct storage__cache *cache,
                     struct storage__sweep *sw, struct storage__prep *pr, int64_t num, const int64_t *frame_rows,
                     const int64_t *stack_rows, const int64_t *dso_rows, struct spaa_err *err)
{
  struct storage__dict *d = NULL;
  struct spaa_buf raw, z;
  sqlite3_stmt *st;
  int rc;
  spaa_buf_init(&raw, 0);
  spaa_buf_init(&z, 0);
  if ((rc = storage__blk_build_once(pr, dso_rows, frame_rows, stack_rows, &raw))) {
    rc = spaa_err_set(err, rc, 0, 0, "packing the profile's block failed");
    goto out;
  }
  if ((rc = service_dict(c, cache, sw, pr->m->service, &raw, &d, err)))
    goto out;
  if ((rc = storage__blk_compress(raw.p, raw.len, d ? d->raw : NULL, d ? d->len : 0,
                                   d ? &d->cdict : NULL, &z))) {
    rc = spaa_err_set(err, rc, 0, 0, "compressing the profile's block failed");
    goto out;
  }
  if (!(st = storage__stmt(c, ST_BLOCK_ADD, err))) {
    rc = SPAA_E_STORE;
    goto out;
  }
  sqlite3_bind_int64(st, 1, num);
  if (d)
    sqlite3_bind_int64(st, 2, d->id);
  sqlite3_bind_int64(st, 3, (int64_t)pr->n_stacks);
  sqlite3_bind_int64(st, 4, (int64_t)pr->n_samples);
  sqlite3_bind_blob(st, 5, z.p, (int)z.len, SQLITE_STATIC);
  rc = step_done(c, st, err, "inserting the profile's block");
out:
  spaa_buf_free(&raw);
  spaa_buf_free(&z);
  return rc;
}

int storage__insert(struct storage__conn *c, struct storage__cache *cache,
                    struct storage__sweep *sw, struct storage__prep *pr,
                    struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  int64_t *dso_rows = NULL, *frame_rows = NULL, *stack_rows = NULL, num = 0;
  sqlite3_stmt *st;
  int rc;

  if (!(st = storage__stmt(c, ST_PROFILE_EXISTS, err)))
    return SPAA_E_STORE;
  sqlite3_bind_text(st, 1, pr->m->id, -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc == SQLITE_ROW)
    return 1;
  if (rc != SQLITE_DONE)
    return storage__db_err(c, err, "checking the profile id");

  if (!(dso_rows = malloc((p->n_dsos + 1) * sizeof(int64_t))) ||
      !(frame_rows = malloc((p->n_frames + 1) * sizeof(int64_t))) ||
      !(stack_rows = malloc((pr->n_stacks + 1) * sizeof(int64_t)))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  if ((rc = add_dsos(c, cache, sw, pr, dso_rows, err)) ||
      (rc = add_frames(c, cache, sw, pr, dso_rows, frame_rows, err)) ||
      (rc = add_stacks(c, cache, sw, pr, frame_rows, stack_rows, err)))
    goto out;
  storage__prep_drop_frames(pr); /* inserted: the block is built without them */
  if ((rc = add_profile_row(c, pr, &num, err)) || (rc = add_labels_events(c, pr, num, err)) ||
      (rc = add_block(c, cache, sw, pr, num, frame_rows, stack_rows, dso_rows, err)))
    goto out;
out:
  free(dso_rows);
  free(frame_rows);
  free(stack_rows);
  return rc;
}
