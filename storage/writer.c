/* Inserting one prepared profile on the writer connection: shared dso, frame and stack rows
 * looked up by content id and inserted only when new, then the profile's own rows. Runs in
 * the writer thread inside the batch transaction, under a savepoint (storage.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "storage/store_int.h"

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

static void bind_blob_range(sqlite3_stmt *st, int i, const struct storage__prep *pr, size_t from,
                            size_t to)
{
  if (to > from)
    sqlite3_bind_blob(st, i, pr->blobs.p + from, (int)(to - from), SQLITE_STATIC);
  else
    sqlite3_bind_null(st, i);
}

/* The row id of content id `cid` in the table of `get`: 1 found, 0 absent, or an error. */
static int lookup(struct storage__conn *c, enum storage__st get, const struct spaa_cid *cid,
                  int64_t *row, struct spaa_err *err)
{
  sqlite3_stmt *st = storage__stmt(c, get, err);
  int rc;
  if (!st)
    return SPAA_E_STORE;
  sqlite3_bind_blob(st, 1, cid->b, SPAA_CID_LEN, SQLITE_STATIC);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *row = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
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

static int add_dsos(struct storage__conn *c, const struct storage__prep *pr, int64_t *rows,
                    struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  char small[512];
  size_t i;
  int rc;
  for (i = 0; i < p->n_dsos; i++) {
    sqlite3_stmt *st;
    char *key = small;
    size_t n;
    if ((rc = lookup(c, ST_DSO_GET, &pr->dso_cid[i], &rows[i], err)))
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
  }
  return 0;
}

static int add_frames(struct storage__conn *c, const struct storage__prep *pr,
                      const int64_t *dso_rows, int64_t *rows, struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  size_t i;
  int rc;
  for (i = 0; i < p->n_frames; i++) {
    const struct spaa_frame *f = &p->frames[i];
    const struct spaa_dso *d = pr->frame_dso[i] == SIZE_MAX ? NULL : &p->dsos[pr->frame_dso[i]];
    sqlite3_stmt *st;
    if ((rc = lookup(c, ST_FRAME_GET, &pr->frame_cid[i], &rows[i], err)))
      if (rc < 0)
        return rc;
    if (rc == 1)
      continue;
    if (!(st = storage__stmt(c, ST_FRAME_ADD, err)))
      return SPAA_E_STORE;
    sqlite3_bind_blob(st, 1, pr->frame_cid[i].b, SPAA_CID_LEN, SQLITE_STATIC);
    if (d)
      sqlite3_bind_int64(st, 2, dso_rows[pr->frame_dso[i]]);
    /* the identity fields, as spaa_frame_identity reads them */
    sqlite3_bind_text(st, 3, f->func_resolved && f->func ? f->func : "", -1, SQLITE_STATIC);
    bind_text_or_null(st, 4, f->srcline_resolved && f->srcline && f->srcline[0] ? f->srcline : NULL);
    sqlite3_bind_int64(st, 5, f->has_inline_depth ? f->inline_depth : 0);
    sqlite3_bind_text(st, 6, f->kind ? f->kind : "unknown", -1, SQLITE_STATIC);
    if (!f->func_resolved && f->has_ip) {
      uint64_t a = f->ip;
      if (d && d->has_mapping && a >= d->map_start && a < d->map_limit)
        a = a - d->map_start + d->map_offset;
      sqlite3_bind_int64(st, 7, (int64_t)a);
    }
    if ((rc = step_done(c, st, err, "inserting a frame")))
      return rc;
    rows[i] = sqlite3_last_insert_rowid(c->db);
  }
  return 0;
}

static int add_stacks(struct storage__conn *c, const struct storage__prep *pr,
                      const int64_t *frame_rows, int64_t *rows, struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  struct spaa_buf fb;
  size_t i, j;
  int rc = 0;
  spaa_buf_init(&fb, 0);
  for (i = 0; i < p->n_stacks && !rc; i++) {
    const struct spaa_stack *s = &p->stacks[i];
    sqlite3_stmt *st;
    if ((rc = lookup(c, ST_STACK_GET, &pr->stack_cid[i], &rows[i], err)) == 1) {
      rc = 0;
      continue;
    }
    if (rc)
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
    sqlite3_bind_text(st, 3, s->stack_type ? s->stack_type : "unified", -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 4, fb.p ? fb.p : "", (int)fb.len, SQLITE_STATIC);
    bind_text_or_null(st, 5, pr->stack_ctx[i]);
    if ((rc = step_done(c, st, err, "inserting a stack")))
      break;
    rows[i] = sqlite3_last_insert_rowid(c->db);
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
  sqlite3_bind_blob(st, 9, pr->blobs.p + pr->header_off[0],
                    (int)(pr->header_off[1] - pr->header_off[0]), SQLITE_STATIC);
  sqlite3_bind_blob(st, 10, pr->blobs.p + pr->strings_off[0],
                    (int)(pr->strings_off[1] - pr->strings_off[0]), SQLITE_STATIC);
  bind_blob_range(st, 11, pr, pr->windows_off[0], pr->windows_off[1]);
  bind_text_or_null(st, 12, pr->labels_text);
  bind_text_or_null(st, 13, pr->attrs_text);
  if (pr->original)
    sqlite3_bind_blob(st, 14, pr->original, (int)pr->original_len, SQLITE_STATIC);
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

static int add_instances(struct storage__conn *c, const struct storage__prep *pr, int64_t num,
                         const int64_t *dso_rows, const int64_t *frame_rows,
                         struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  sqlite3_stmt *st;
  size_t i;
  int rc;
  for (i = 0; i < p->n_dsos; i++) {
    if (!(st = storage__stmt(c, ST_PDSO_ADD, err)))
      return SPAA_E_STORE;
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    sqlite3_bind_int64(st, 3, (int64_t)p->dsos[i].id);
    sqlite3_bind_int64(st, 4, dso_rows[i]);
    sqlite3_bind_blob(st, 5, pr->blobs.p + pr->dso_inst[i],
                      (int)(pr->dso_inst[i + 1] - pr->dso_inst[i]), SQLITE_STATIC);
    if ((rc = step_done(c, st, err, "inserting a profile dso")))
      return rc;
  }
  for (i = 0; i < p->n_frames; i++) {
    const struct spaa_frame *f = &p->frames[i];
    int src_here = !f->srcline_resolved || (f->srcline && !f->srcline[0]);
    unsigned flags = (f->func_resolved ? 0 : PF_UNRESOLVED) |
                     (f->srcline_resolved ? 0 : PF_SRC_UNRESOLVED) | (f->inlined ? PF_INLINED : 0) |
                     (f->has_inline_depth ? 0 : PF_NO_DEPTH) | (src_here ? PF_SRC_HERE : 0);
    if (!(st = storage__stmt(c, ST_PFRAME_ADD, err)))
      return SPAA_E_STORE;
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    sqlite3_bind_int64(st, 3, (int64_t)f->id);
    sqlite3_bind_int64(st, 4, frame_rows[i]);
    if (f->has_dso)
      sqlite3_bind_int64(st, 5, (int64_t)f->dso);
    if (f->has_ip)
      sqlite3_bind_int64(st, 6, (int64_t)f->ip);
    sqlite3_bind_int64(st, 7, flags);
    bind_text_or_null(st, 8, f->func_resolved ? NULL : f->func);
    bind_text_or_null(st, 9, f->symoff);
    bind_text_or_null(st, 10, src_here ? f->srcline : NULL);
    bind_text_or_null(st, 11, pr->frame_extra[i]);
    if ((rc = step_done(c, st, err, "inserting a profile frame")))
      return rc;
  }
  for (i = 0; i < p->n_threads; i++) {
    const struct spaa_thread *t = &p->threads[i];
    if (!(st = storage__stmt(c, ST_THREAD_ADD, err)))
      return SPAA_E_STORE;
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    sqlite3_bind_int64(st, 3, t->pid);
    sqlite3_bind_int64(st, 4, t->tid);
    bind_text_or_null(st, 5, t->comm);
    bind_text_or_null(st, 6, pr->thread_extra[i]);
    if ((rc = step_done(c, st, err, "inserting a thread")))
      return rc;
  }
  return 0;
}

static int add_stack_rows(struct storage__conn *c, const struct storage__prep *pr, int64_t num,
                          const int64_t *stack_rows, struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  sqlite3_stmt *st;
  size_t i;
  int rc;
  for (i = 0; i < p->n_stacks; i++) {
    if (!(st = storage__stmt(c, ST_PSTACK_ADD, err)))
      return SPAA_E_STORE;
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    sqlite3_bind_int64(st, 3, stack_rows[i]);
    sqlite3_bind_blob(st, 4, pr->blobs.p + pr->pstack_w[2 * i],
                      (int)(pr->pstack_w[2 * i + 1] - pr->pstack_w[2 * i]), SQLITE_STATIC);
    bind_blob_range(st, 5, pr, pr->pstack_w[2 * i + 1], pr->pstack_w[2 * i + 2]);
    if ((rc = step_done(c, st, err, "inserting a profile stack")))
      return rc;
  }
  for (i = 0; i < p->n_samples; i++) {
    const struct spaa_sample *s = &p->samples[i];
    if (!(st = storage__stmt(c, ST_SAMPLE_ADD, err)))
      return SPAA_E_STORE;
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    if (s->has_timestamp) {
      if (s->timestamp.is_float)
        sqlite3_bind_double(st, 3, s->timestamp.f);
      else
        sqlite3_bind_int64(st, 3, s->timestamp.i);
    }
    if (s->has_tid)
      sqlite3_bind_int64(st, 4, s->tid);
    if (pr->sample_stack[i] != SIZE_MAX)
      sqlite3_bind_int64(st, 5, stack_rows[pr->sample_stack[i]]);
    bind_blob_range(st, 6, pr, pr->sample_rest[i], pr->sample_rest[i + 1]);
    if ((rc = step_done(c, st, err, "inserting a sample")))
      return rc;
  }
  return 0;
}

int storage__insert(struct storage__conn *c, const struct storage__prep *pr,
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
      !(stack_rows = malloc((p->n_stacks + 1) * sizeof(int64_t)))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  if ((rc = add_dsos(c, pr, dso_rows, err)) || (rc = add_frames(c, pr, dso_rows, frame_rows, err)) ||
      (rc = add_stacks(c, pr, frame_rows, stack_rows, err)) ||
      (rc = add_profile_row(c, pr, &num, err)) || (rc = add_labels_events(c, pr, num, err)) ||
      (rc = add_instances(c, pr, num, dso_rows, frame_rows, err)) ||
      (rc = add_stack_rows(c, pr, num, stack_rows, err)))
    goto out;
out:
  free(dso_rows);
  free(frame_rows);
  free(stack_rows);
  return rc;
}
