/* Reading a stored profile back into a model, on a reader connection inside one read
 * transaction: the profile's own rows joined with the shared dso, frame and stack rows. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "storage/store_int.h"

struct rctx {
  struct storage__conn *c;
  struct spaa_profile *p;   /* being built */
  const char *id;           /* the profile id, for messages */
  const char **strs;        /* the string table (strings in p's arena) */
  size_t n_strs;
  struct spaa_idmap frames; /* frame row id -> first local frame id */
  struct spaa_idmap stacks; /* stack row id -> index in p->stacks */
  const char **stack_ids;   /* interned stack id per stack index, made on first use */
  const char *last_kind, *last_event, *last_type; /* last interned value of each column */
  struct spaa_err *err;
};

static int corrupt(struct rctx *x, const char *what)
{
  return spaa_err_set(x->err, SPAA_E_STORE, 0, 0, "stored profile %.64s is corrupt: %s", x->id,
                      what);
}

static int nomem(struct rctx *x) { return spaa_err_set(x->err, SPAA_E_NOMEM, 0, 0, NULL); }

/* A text column interned in the profile; NULL for SQL NULL. *bad set on OOM. */
static const char *col_str(struct rctx *x, sqlite3_stmt *st, int i, int *bad)
{
  const unsigned char *t;
  const char *r;
  if (sqlite3_column_type(st, i) == SQLITE_NULL)
    return NULL;
  t = sqlite3_column_text(st, i);
  if (!t || !(r = spaa_strndup(x->p, (const char *)t, (size_t)sqlite3_column_bytes(st, i))))
    *bad = 1;
  return t ? r : NULL;
}

/* Reuse the previous pointer when a column repeats the same text (events, kinds). */
static const char *col_str_cached(struct rctx *x, sqlite3_stmt *st, int i, const char **last,
                                  int *bad)
{
  const unsigned char *t;
  if (sqlite3_column_type(st, i) == SQLITE_NULL)
    return NULL;
  t = sqlite3_column_text(st, i);
  if (t && *last && strcmp(*last, (const char *)t) == 0)
    return *last;
  return *last = col_str(x, st, i, bad);
}

static json_t *col_json(sqlite3_stmt *st, int i, int *bad)
{
  json_t *v;
  if (sqlite3_column_type(st, i) == SQLITE_NULL)
    return NULL;
  v = storage__json_parse((const char *)sqlite3_column_text(st, i),
                          (size_t)sqlite3_column_bytes(st, i));
  if (!v)
    *bad = 1;
  return v;
}

static void rd_col(struct storage__rd *r, sqlite3_stmt *st, int i)
{
  const void *b = sqlite3_column_blob(st, i);
  storage__rd_init(r, b, b ? (size_t)sqlite3_column_bytes(st, i) : 0);
}

/* A string table reference (0 = NULL). */
static const char *get_strref(struct rctx *x, struct storage__rd *r)
{
  uint64_t i = storage__get_uv(r);
  if (!i)
    return NULL;
  if (i > x->n_strs) {
    r->bad = 1;
    return NULL;
  }
  return x->strs[i - 1];
}

static int get_weights(struct rctx *x, struct storage__rd *r, struct spaa_weights *w)
{
  uint64_t n = storage__get_uv(r), i;
  if (r->bad || n > r->len - r->pos)
    return r->bad = 1, SPAA_E_STORE;
  if (!n)
    return 0;
  if (spaa_weights_alloc(x->p, w, (size_t)n))
    return SPAA_E_NOMEM;
  w->n = 0; /* counted up as they are read */
  for (i = 0; i < n && !r->bad; i++) {
    struct spaa_weight *e = &w->v[w->n++];
    e->metric = get_strref(x, r);
    e->unit = get_strref(x, r);
    e->value = storage__get_num(r);
    if (!e->metric)
      r->bad = 1;
  }
  return r->bad ? SPAA_E_STORE : 0;
}

static int load_header(struct rctx *x, struct storage__rd *r)
{
  struct spaa_header *h = &x->p->header;
  uint64_t n, i, v;
  h->source_tool = storage__get_str(r, x->p);
  v = storage__get_uv(r);
  h->frame_order = v ? SPAA_ROOT_TO_LEAF : SPAA_LEAF_TO_ROOT;
  v = storage__get_uv(r);
  h->id_mode = v ? SPAA_IDS_LOCAL : SPAA_IDS_CONTENT;
  n = storage__get_uv(r);
  if (r->bad || n > r->len - r->pos)
    return corrupt(x, "header events");
  for (i = 0; i < n && !r->bad; i++) {
    struct spaa_event *e = spaa_add_event(x->p);
    if (!e)
      return nomem(x);
    e->name = storage__get_str(r, x->p);
    e->kind = storage__get_str(r, x->p);
    e->mode = storage__get_str(r, x->p);
    e->primary_metric = storage__get_str(r, x->p);
    v = storage__get_uv(r);
    e->has_sample_period = (v & 1) != 0;
    e->has_frequency_hz = (v & 2) != 0;
    if (e->has_sample_period)
      e->sample_period = storage__get_num(r);
    if (e->has_frequency_hz)
      e->frequency_hz = storage__get_num(r);
    e->sampling_extra = storage__get_json(r);
    e->extra = storage__get_json(r);
  }
  h->has_time_range = storage__get_uv(r) != 0;
  if (h->has_time_range) {
    h->start = storage__get_num(r);
    h->end = storage__get_num(r);
    h->time_unit = storage__get_str(r, x->p);
  }
  h->source = storage__get_json(r);
  h->extra = storage__get_json(r);
  return r->bad ? corrupt(x, "header") : 0;
}

static int load_strings(struct rctx *x, struct storage__rd *r)
{
  uint64_t n = storage__get_uv(r), i;
  if (r->bad || n > r->len - r->pos)
    return corrupt(x, "string table");
  if (!(x->strs = calloc(n ? (size_t)n : 1, sizeof(*x->strs))))
    return nomem(x);
  for (i = 0; i < n && !r->bad; i++)
    if (!(x->strs[i] = storage__get_str(r, x->p)))
      r->bad = 1;
  x->n_strs = (size_t)n;
  return r->bad ? corrupt(x, "string table") : 0;
}

static int load_windows(struct rctx *x, struct storage__rd *r)
{
  uint64_t n, i;
  if (!r->len)
    return 0;
  n = storage__get_uv(r);
  if (r->bad || n > r->len - r->pos)
    return corrupt(x, "windows");
  for (i = 0; i < n && !r->bad; i++) {
    struct spaa_window *w = spaa_add_window(x->p);
    if (!w)
      return nomem(x);
    w->id = storage__get_str(r, x->p);
    w->start = storage__get_num(r);
    w->end = storage__get_num(r);
    w->unit = storage__get_str(r, x->p);
    w->by_stack = storage__get_json(r);
    w->extra = storage__get_json(r);
  }
  return r->bad ? corrupt(x, "windows") : 0;
}

/* The profile row: header, string table, windows. *num = its row id. */
static int load_profile(struct rctx *x, int64_t *num)
{
  sqlite3_stmt *st = storage__stmt(x->c, ST_R_PROFILE, x->err);
  struct storage__rd r;
  int rc;
  if (!st)
    return SPAA_E_STORE;
  sqlite3_bind_text(st, 1, x->id, -1, SQLITE_STATIC);
  rc = sqlite3_step(st);
  if (rc == SQLITE_DONE) {
    rc = spaa_err_set(x->err, SPAA_E_NOT_FOUND, 0, 0, "no profile with id %.64s", x->id);
    goto out;
  }
  if (rc != SQLITE_ROW) {
    rc = storage__db_err(x->c, x->err, "reading the profile");
    goto out;
  }
  *num = sqlite3_column_int64(st, 0);
  rd_col(&r, st, 1);
  if ((rc = load_header(x, &r)))
    goto out;
  rd_col(&r, st, 2);
  if ((rc = load_strings(x, &r)))
    goto out;
  rd_col(&r, st, 3);
  rc = load_windows(x, &r);
out:
  sqlite3_reset(st);
  return rc;
}

/* Step `st` bound to the profile row id, calling fn for each row. */
static int each_row(struct rctx *x, enum storage__st id, int64_t num,
                    int (*fn)(struct rctx *x, sqlite3_stmt *st))
{
  sqlite3_stmt *st = storage__stmt(x->c, id, x->err);
  int rc;
  if (!st)
    return SPAA_E_STORE;
  sqlite3_bind_int64(st, 1, num);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    if ((rc = fn(x, st))) {
      sqlite3_reset(st);
      return rc;
    }
  if (rc != SQLITE_DONE) {
    rc = storage__db_err(x->c, x->err, "reading a profile");
    sqlite3_reset(st);
    return rc;
  }
  sqlite3_reset(st);
  return 0;
}

static int row_dso(struct rctx *x, sqlite3_stmt *st)
{
  struct spaa_dso *d = spaa_add_dso(x->p);
  struct storage__rd r;
  if (!d)
    return nomem(x);
  d->id = (uint64_t)sqlite3_column_int64(st, 0);
  rd_col(&r, st, 1);
  d->name = storage__get_str(&r, x->p);
  if (!d->name)
    d->name = "";
  d->build_id = storage__get_str(&r, x->p);
  d->is_kernel = storage__get_uv(&r) != 0;
  d->has_mapping = storage__get_uv(&r) != 0;
  if (d->has_mapping) {
    d->map_start = storage__get_uv(&r);
    d->map_limit = storage__get_uv(&r);
    d->map_offset = storage__get_uv(&r);
  }
  d->extra = storage__get_json(&r);
  return r.bad ? corrupt(x, "dso") : 0;
}

static int row_frame(struct rctx *x, sqlite3_stmt *st)
{
  struct spaa_frame *f = spaa_add_frame(x->p);
  unsigned flags;
  int bad = 0, rc;
  if (!f)
    return nomem(x);
  f->id = (uint64_t)sqlite3_column_int64(st, 0);
  rc = spaa_idmap_put(&x->frames, (uint64_t)sqlite3_column_int64(st, 1), (size_t)f->id, NULL);
  if (rc < 0)
    return nomem(x);
  if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
    f->has_dso = 1;
    f->dso = (uint64_t)sqlite3_column_int64(st, 2);
  }
  if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
    f->has_ip = 1;
    f->ip = (uint64_t)sqlite3_column_int64(st, 3);
  }
  flags = (unsigned)sqlite3_column_int64(st, 4);
  f->func_resolved = !(flags & PF_UNRESOLVED);
  f->func = col_str(x, st, f->func_resolved ? 9 : 5, &bad);
  f->symoff = col_str(x, st, 6, &bad);
  f->srcline = col_str(x, st, flags & PF_SRC_HERE ? 7 : 10, &bad);
  f->srcline_resolved = !(flags & PF_SRC_UNRESOLVED);
  f->inlined = (flags & PF_INLINED) != 0;
  f->has_inline_depth = !(flags & PF_NO_DEPTH);
  f->inline_depth = f->has_inline_depth ? (uint32_t)sqlite3_column_int64(st, 11) : 0;
  f->kind = col_str_cached(x, st, 12, &x->last_kind, &bad);
  f->extra = col_json(st, 8, &bad);
  if (!f->kind)
    f->kind = "unknown";
  if (!f->func)
    f->func = "";
  return bad ? corrupt(x, "frame") : 0;
}

static int row_thread(struct rctx *x, sqlite3_stmt *st)
{
  struct spaa_thread *t = spaa_add_thread(x->p);
  int bad = 0;
  if (!t)
    return nomem(x);
  t->pid = sqlite3_column_int64(st, 0);
  t->tid = sqlite3_column_int64(st, 1);
  t->comm = col_str(x, st, 2, &bad);
  t->extra = col_json(st, 3, &bad);
  return bad ? corrupt(x, "thread") : 0;
}

/* The stack's frames: local ids in the header's order, from the explicit list in x when
 * there is one, else the shared row's frame rows mapped to the first local frame of each. */
static int stack_frames(struct rctx *x, struct spaa_stack *s, sqlite3_stmt *st,
                        struct storage__rd *xr, unsigned flags)
{
  uint64_t n, i;
  size_t k;
  if (flags & PS_FRAMES) {
    n = storage__get_uv(xr);
    if (xr->bad || n > xr->len - xr->pos)
      return corrupt(x, "stack frames");
    if (n && !(s->frames = spaa_alloc(x->p, (size_t)n * sizeof(uint64_t))))
      return nomem(x);
    for (i = 0; i < n; i++)
      s->frames[i] = storage__get_uv(xr);
    s->n_frames = (size_t)n;
    return xr->bad ? corrupt(x, "stack frames") : 0;
  } else {
    struct storage__rd r;
    size_t cap;
    rd_col(&r, st, 4);
    cap = r.len;
    if (cap && !(s->frames = spaa_alloc(x->p, cap * sizeof(uint64_t))))
      return nomem(x);
    while (r.pos < r.len) {
      uint64_t row = storage__get_uv(&r);
      if (r.bad || !spaa_idmap_get(&x->frames, row, &k))
        return corrupt(x, "a stack names a frame the profile lacks");
      s->frames[s->n_frames++] = (uint64_t)k;
    }
    if (x->p->header.frame_order == SPAA_ROOT_TO_LEAF)
      for (i = 0; i < s->n_frames / 2; i++) {
        uint64_t t = s->frames[i];
        s->frames[i] = s->frames[s->n_frames - 1 - i];
        s->frames[s->n_frames - 1 - i] = t;
      }
    return 0;
  }
}

static int row_stack(struct rctx *x, sqlite3_stmt *st)
{
  struct spaa_stack *s = spaa_add_stack(x->p);
  struct spaa_cid cid;
  struct storage__rd wr, xr;
  unsigned flags = 0;
  int bad = 0, rc;
  uint64_t n, i;
  if (!s)
    return nomem(x);
  if (sqlite3_column_bytes(st, 1) != SPAA_CID_LEN)
    return corrupt(x, "stack id");
  memcpy(cid.b, sqlite3_column_blob(st, 1), SPAA_CID_LEN);
  spaa_cid_hex(&cid, s->id);
  rc = spaa_idmap_put(&x->stacks, (uint64_t)sqlite3_column_int64(st, 0), x->p->n_stacks - 1, NULL);
  if (rc < 0)
    return nomem(x);
  rd_col(&xr, st, 7);
  if (xr.len)
    flags = (unsigned)storage__get_uv(&xr);
  /* the blob holds the exclusive part before the explicit frames (prep.c's order) */
  if (flags & PS_EXCLUSIVE) {
    s->has_exclusive = 1;
    s->excl_frame = storage__get_uv(&xr);
    if ((rc = get_weights(x, &xr, &s->excl_weights)))
      return rc == SPAA_E_NOMEM ? nomem(x) : corrupt(x, "exclusive weights");
  }
  if ((rc = stack_frames(x, s, st, &xr, flags)))
    return rc;
  s->event = col_str_cached(x, st, 2, &x->last_event, &bad);
  s->stack_type = flags & PS_NO_TYPE ? NULL : col_str_cached(x, st, 3, &x->last_type, &bad);
  s->context = col_json(st, 5, &bad);
  if (bad)
    return corrupt(x, "stack");
  rd_col(&wr, st, 6);
  if ((rc = get_weights(x, &wr, &s->weights)))
    return rc == SPAA_E_NOMEM ? nomem(x) : corrupt(x, "stack weights");
  if (flags & PS_RELATED) {
    n = storage__get_uv(&xr);
    if (xr.bad || n > xr.len - xr.pos)
      return corrupt(x, "related stacks");
    if (n && !(s->related = spaa_alloc(x->p, (size_t)n * sizeof(*s->related))))
      return nomem(x);
    for (i = 0; i < n; i++)
      s->related[i] = storage__get_str(&xr, x->p);
    s->n_related = (size_t)n;
  }
  if (flags & PS_EXTRA)
    s->extra = storage__get_json(&xr);
  return xr.bad ? corrupt(x, "stack") : 0;
}

static int row_sample(struct rctx *x, sqlite3_stmt *st)
{
  struct spaa_sample *s = spaa_add_sample(x->p);
  struct storage__rd r;
  unsigned flags = 0;
  size_t k;
  if (!s)
    return nomem(x);
  switch (sqlite3_column_type(st, 0)) {
  case SQLITE_INTEGER:
    s->has_timestamp = 1;
    s->timestamp = spaa_int(sqlite3_column_int64(st, 0));
    break;
  case SQLITE_FLOAT:
    s->has_timestamp = 1;
    s->timestamp = spaa_float(sqlite3_column_double(st, 0));
    break;
  default:
    break;
  }
  if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
    s->has_tid = 1;
    s->tid = sqlite3_column_int64(st, 1);
  }
  if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
    if (!spaa_idmap_get(&x->stacks, (uint64_t)sqlite3_column_int64(st, 2), &k))
      return corrupt(x, "a sample names a stack the profile lacks");
    if (!x->stack_ids[k] && !(x->stack_ids[k] = spaa_strdup(x->p, x->p->stacks[k].id)))
      return nomem(x);
    s->stack_id = x->stack_ids[k];
  }
  rd_col(&r, st, 3);
  if (r.len)
    flags = (unsigned)storage__get_uv(&r);
  if (flags & SR_PID) {
    s->has_pid = 1;
    s->pid = storage__get_sv(&r);
  }
  if (flags & SR_CPU) {
    s->has_cpu = 1;
    s->cpu = storage__get_sv(&r);
  }
  if (flags & SR_EVENT)
    s->event = get_strref(x, &r);
  if (flags & SR_PERIOD) {
    s->has_period = 1;
    s->period = storage__get_num(&r);
  }
  if ((flags & SR_WEIGHTS) && get_weights(x, &r, &s->weights) == SPAA_E_NOMEM)
    return nomem(x);
  if (flags & SR_CONTEXT)
    s->context = storage__get_json(&r);
  if (flags & SR_EXTRA)
    s->extra = storage__get_json(&r);
  if (flags & SR_STACK_ID)
    s->stack_id = storage__get_str(&r, x->p);
  return r.bad ? corrupt(x, "sample") : 0;
}

static int load(struct rctx *x)
{
  int64_t num = 0;
  int rc;
  if ((rc = load_profile(x, &num)) || (rc = each_row(x, ST_R_DSOS, num, row_dso)) ||
      (rc = each_row(x, ST_R_FRAMES, num, row_frame)) ||
      (rc = each_row(x, ST_R_THREADS, num, row_thread)) ||
      (rc = each_row(x, ST_R_STACKS, num, row_stack)))
    return rc;
  if (!(x->stack_ids = calloc(x->p->n_stacks + 1, sizeof(*x->stack_ids))))
    return nomem(x);
  return each_row(x, ST_R_SAMPLES, num, row_sample);
}

int spaa_store_get(struct spaa_store *s, const char *id, struct spaa_profile **out,
                   struct spaa_err *err)
{
  struct rctx x;
  int rc;
  *out = NULL;
  memset(&x, 0, sizeof(x));
  if (!s || !id)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store or no id");
  x.id = id;
  x.err = err;
  spaa_idmap_init(&x.frames);
  spaa_idmap_init(&x.stacks);
  if (!(x.c = storage__reader_get(s, err)))
    return SPAA_E_STORE;
  if (!(x.p = spaa_profile_new())) {
    rc = nomem(&x);
    goto out;
  }
  /* one read transaction: every row from the same snapshot */
  if ((rc = storage__exec(x.c, ST_BEGIN, err)))
    goto out;
  rc = load(&x);
  storage__exec(x.c, ST_COMMIT, NULL);
out:
  storage__reader_put(s, x.c);
  spaa_idmap_free(&x.frames);
  spaa_idmap_free(&x.stacks);
  free(x.strs);
  free(x.stack_ids);
  if (rc) {
    spaa_profile_free(x.p);
    return rc;
  }
  *out = x.p;
  return 0;
}
