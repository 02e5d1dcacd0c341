/* Reading a stored profile back into a model, for every engine: the profile's block
 * (decompressed with its service dictionary) and the shared frame and stack rows it names,
 * which the engine gives through struct storage__src (engine_int.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "storage/engine_int.h"

struct rctx {
  const struct storage__src *src;
  struct spaa_profile *p;   /* being built */
  const char *id;           /* the profile id, for messages */
  const char **strs;        /* the string table (strings in p's arena) */
  size_t n_strs;
  struct spaa_idmap frames; /* frame row id -> index in p->frames of its first local frame */
  size_t *next_dup;         /* per frame index: the next frame of the same row, or SIZE_MAX */
  size_t cap_dup;
  struct spaa_idmap stacks; /* stack row id -> index in p->stacks */
  const char **stack_ids;   /* interned stack id per stack index, made on first use */
  const char *last_kind, *last_event, *last_type; /* last interned value of each column */
  struct storage__blk_rd b; /* the block being read */
  struct storage__frow fr;  /* the shared row of the frame being read */
  struct storage__srow sr;  /* the shared row of the stack being read */
  struct spaa_err *err;
};

static int corrupt(struct rctx *x, const char *what)
{
  return spaa_err_set(x->err, SPAA_E_STORE, 0, 0, "stored profile %.64s is corrupt: %s", x->id,
                      what);
}

static int nomem(struct rctx *x) { return spaa_err_set(x->err, SPAA_E_NOMEM, 0, 0, NULL); }

/* A text column interned in the profile; NULL for SQL NULL. *bad set on OOM or a NUL. */
static const char *col_str(struct rctx *x, const char *t, size_t n, int *bad)
{
  const char *r;
  if (!t)
    return NULL;
  if (memchr(t, 0, n) || !(r = spaa_strndup(x->p, t, n)))
    return *bad = 1, NULL;
  return r;
}

/* Reuse the previous pointer when a column repeats the same text (events, kinds). */
static const char *col_str_cached(struct rctx *x, const char *t, size_t n, const char **last,
                                  int *bad)
{
  if (!t)
    return NULL;
  if (*last && strlen(*last) == n && memcmp(*last, t, n) == 0)
    return *last;
  return *last = col_str(x, t, n, bad);
}

static json_t *col_json(const char *t, size_t n, int *bad)
{
  json_t *v;
  if (!t)
    return NULL;
  if (!(v = storage__json_parse(t, n)))
    *bad = 1;
  return v;
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

/* Weights packed as pack.c packs them (a sample's). */
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

/* A string table reference of the block's weights (0 = NULL); NULL when out of range. */
static const char *strref(struct rctx *x, uint64_t i, int *bad)
{
  if (!i)
    return NULL;
  if (i > x->n_strs) {
    *bad = 1;
    return NULL;
  }
  return x->strs[i - 1];
}

/* A stack's weights from the block's weight sections. */
static int block_weights(struct rctx *x, struct spaa_weights *w)
{
  struct storage__blk_weight small[16], *v = small;
  size_t n, i, cap = storage__blk_peek_weights(&x->b);
  int rc, bad = 0;
  if (cap == SIZE_MAX)
    return corrupt(x, "stack weights");
  if (cap > 16 && !(v = malloc(cap * sizeof(*v))))
    return nomem(x);
  if ((rc = storage__blk_next_weights(&x->b, v, cap > 16 ? cap : 16, &n))) {
    rc = corrupt(x, "stack weights");
    goto out;
  }
  if (n && spaa_weights_alloc(x->p, w, n)) {
    rc = nomem(x);
    goto out;
  }
  w->n = n;
  for (i = 0; i < n; i++) {
    w->v[i].metric = strref(x, v[i].metric, &bad);
    w->v[i].unit = strref(x, v[i].unit, &bad);
    w->v[i].value = v[i].value;
    if (!w->v[i].metric)
      bad = 1;
  }
  rc = bad ? corrupt(x, "stack weights") : 0;
out:
  if (v != small)
    free(v);
  return rc;
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

int storage__block_raw(const struct storage__src *src, struct storage__rdict *dict,
                       int64_t dict_id, const void *z, size_t len, struct spaa_buf *raw,
                       struct spaa_err *err)
{
  int rc;
  if (dict_id && dict->id != dict_id) {
    const void *dz;
    size_t dlen;
    dict->raw.len = 0;
    dict->id = 0;
    rc = src->dict(src->ctx, dict_id, &dz, &dlen, err);
    if (rc < 0)
      return rc;
    if (rc == 1)
      return SPAA_E_STORE;
    if ((rc = storage__blk_decompress(dz, dlen, NULL, 0, &dict->raw)))
      return rc == SPAA_E_NOMEM ? spaa_err_set(err, rc, 0, 0, NULL) : SPAA_E_STORE;
    dict->id = dict_id;
  }
  raw->len = 0;
  rc = storage__blk_decompress(z, len, dict_id ? dict->raw.p : NULL, dict_id ? dict->raw.len : 0,
                               raw);
  return rc == SPAA_E_NOMEM ? spaa_err_set(err, rc, 0, 0, NULL) : rc;
}

int storage__blk_rows(const struct storage__blk_rd *blk, int all,
                      int (*fn)(void *ctx, int kind, int64_t row), void *ctx)
{
  struct storage__blk_rd b = *blk;
  struct storage__blk_frame_rd f;
  struct storage__blk_sample sm;
  struct storage__rd r;
  uint64_t i, local;
  int64_t row;
  int rc = 0;
  /* each section has its own reader: the dsos are read only when asked for */
  for (i = 0; i < b.n[BN_DSOS] && !rc && all; i++)
    rc = storage__blk_next_dso(&b, &local, &row, &r) ? SPAA_E_STORE : fn(ctx, 2, row);
  for (i = 0; i < b.n[BN_FRAMES] && !rc; i++)
    rc = storage__blk_next_frame(&b, &f) ? SPAA_E_STORE : fn(ctx, 1, f.row);
  for (i = 0; i < b.n[BN_STACKS] && !rc; i++)
    rc = storage__blk_next_stack(&b, &row, &r) ? SPAA_E_STORE : fn(ctx, 0, row);
  for (i = 0; i < b.n[BN_SAMPLES] && !rc && all; i++)
    if (storage__blk_next_sample(&b, &sm))
      rc = SPAA_E_STORE;
    else if (sm.has_stack)
      rc = fn(ctx, 0, sm.stack_row);
  return rc;
}

/* The profile's block: decompressed into raw, opened in x->b; header, strings, windows. */
static int load_profile(struct rctx *x, int64_t dict_id, const void *z, size_t len,
                        struct spaa_buf *raw)
{
  struct storage__rdict dict;
  int rc;
  memset(&dict, 0, sizeof(dict));
  spaa_buf_init(&dict.raw, 0);
  rc = storage__block_raw(x->src, &dict, dict_id, z, len, raw, x->err);
  if (rc == SPAA_E_STORE || (!rc && storage__blk_open(&x->b, raw->p, raw->len))) {
    rc = corrupt(x, "block");
    goto out;
  }
  if (rc || (rc = load_header(x, &x->b.sec[BS_HEADER])) ||
      (rc = load_strings(x, &x->b.sec[BS_STRINGS])))
    goto out;
  rc = load_windows(x, &x->b.sec[BS_WINDOWS]);
  if (!rc && x->src->prefetch)
    rc = x->src->prefetch(x->src->ctx, &x->b, x->err);
out:
  spaa_buf_free(&dict.raw);
  return rc;
}

static int read_dso(struct rctx *x)
{
  struct spaa_dso *d = spaa_add_dso(x->p);
  struct storage__rd r;
  int64_t row;
  if (!d)
    return nomem(x);
  if (storage__blk_next_dso(&x->b, &d->id, &row, &r))
    return corrupt(x, "dso");
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

/* A string of the block interned in the profile (NULL stays NULL). */
static const char *blk_str(struct rctx *x, const char *s, size_t len, int *bad)
{
  const char *r;
  if (!s)
    return NULL;
  if (memchr(s, 0, len) || !(r = spaa_strndup(x->p, s, len)))
    *bad = 1;
  return s && !*bad ? r : NULL;
}

/* The shared frame (kind 0, into x->fr) or stack (kind 1, into x->sr) row `row`. */
static int shared_row(struct rctx *x, int kind, int64_t row)
{
  int rc = kind ? x->src->stack(x->src->ctx, row, &x->sr, x->err)
                : x->src->frame(x->src->ctx, row, &x->fr, x->err);
  if (rc == 1)
    return corrupt(x, kind ? "a stack row is missing" : "a frame row is missing");
  return rc;
}

/* Remember frame index k as a local frame of shared row `row` (after any before it). */
static int link_frame(struct rctx *x, int64_t row, size_t k)
{
  size_t first;
  int rc;
  if (k >= x->cap_dup) {
    size_t nc = x->cap_dup ? 2 * x->cap_dup : 256;
    size_t *nv = realloc(x->next_dup, nc * sizeof(*nv));
    if (!nv)
      return nomem(x);
    x->next_dup = nv;
    x->cap_dup = nc;
  }
  x->next_dup[k] = SIZE_MAX;
  rc = spaa_idmap_put(&x->frames, (uint64_t)row, k, &first);
  if (rc < 0)
    return nomem(x);
  if (rc == 1) {
    while (x->next_dup[first] != SIZE_MAX)
      first = x->next_dup[first];
    x->next_dup[first] = k;
  }
  return 0;
}

/* The local id of the rank-th local frame of shared row `row`; 0 when there is none. */
static int local_of(struct rctx *x, uint64_t row, uint64_t rank, uint64_t *local)
{
  size_t k;
  if (!spaa_idmap_get(&x->frames, row, &k))
    return 0;
  while (rank-- && k != SIZE_MAX)
    k = x->next_dup[k];
  if (k == SIZE_MAX)
    return 0;
  *local = x->p->frames[k].id;
  return 1;
}

static int read_frame(struct rctx *x)
{
  struct spaa_frame *f = spaa_add_frame(x->p);
  struct storage__blk_frame_rd b;
  int bad = 0, rc;
  if (!f)
    return nomem(x);
  if (storage__blk_next_frame(&x->b, &b))
    return corrupt(x, "frame");
  if ((rc = shared_row(x, 0, b.row)))
    return rc;
  f->id = b.local_id;
  if ((rc = link_frame(x, b.row, x->p->n_frames - 1)))
    return rc;
  f->has_dso = b.has_dso;
  f->dso = b.dso_local;
  f->has_ip = b.has_ip;
  f->ip = b.ip;
  f->func_resolved = !(b.flags & PF_UNRESOLVED);
  f->func = f->func_resolved ? col_str(x, x->fr.func, x->fr.func_len, &bad)
                             : blk_str(x, b.func, b.func_len, &bad);
  f->symoff = blk_str(x, b.symoff, b.symoff_len, &bad);
  f->srcline = b.flags & PF_SRC_HERE ? blk_str(x, b.srcline, b.srcline_len, &bad)
                                     : col_str(x, x->fr.srcline, x->fr.srcline_len, &bad);
  f->srcline_resolved = !(b.flags & PF_SRC_UNRESOLVED);
  f->inlined = (b.flags & PF_INLINED) != 0;
  f->has_inline_depth = !(b.flags & PF_NO_DEPTH);
  f->inline_depth = f->has_inline_depth ? (uint32_t)x->fr.inline_depth : 0;
  f->kind = col_str_cached(x, x->fr.kind, x->fr.kind_len, &x->last_kind, &bad);
  if (b.extra && !(f->extra = storage__json_parse(b.extra, b.extra_len)))
    bad = 1;
  if (!f->kind)
    f->kind = "unknown";
  if (!f->func)
    f->func = "";
  return bad ? corrupt(x, "frame") : 0;
}

static int read_thread(struct rctx *x)
{
  struct spaa_thread *t = spaa_add_thread(x->p);
  const char *comm, *extra;
  size_t comm_len, extra_len;
  int bad = 0;
  if (!t)
    return nomem(x);
  if (storage__blk_next_thread(&x->b, &t->pid, &t->tid, &comm, &comm_len, &extra, &extra_len))
    return corrupt(x, "thread");
  t->comm = blk_str(x, comm, comm_len, &bad);
  if (extra && !(t->extra = storage__json_parse(extra, extra_len)))
    bad = 1;
  return bad ? corrupt(x, "thread") : 0;
}

/* The stack's frames: local ids in the header's order, from the explicit list in x when
 * there is one, else the shared row's frame rows mapped to the first local frame of each. */
static int stack_frames(struct rctx *x, struct spaa_stack *s, struct storage__rd *xr,
                        unsigned flags)
{
  uint64_t n, i;
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
    uint64_t n_dups = 0, at = 0, pos = 0, row = 0;
    size_t cap;
    storage__rd_init(&r, x->sr.frames, x->sr.frames_len);
    cap = r.len;
    if (cap && !(s->frames = spaa_alloc(x->p, cap * sizeof(uint64_t))))
      return nomem(x);
    while (r.pos < r.len) {
      row = storage__get_uv(&r);
      if (r.bad || !local_of(x, row, 0, &s->frames[s->n_frames]))
        return corrupt(x, "a stack names a frame the profile lacks");
      s->n_frames++;
    }
    if (flags & PS_DUPS) {
      n_dups = storage__get_uv(xr);
      if (xr->bad || n_dups > s->n_frames)
        return corrupt(x, "stack frames");
      storage__rd_init(&r, x->sr.frames, x->sr.frames_len);
      for (i = 0; i < n_dups; i++) {
        uint64_t rank;
        at += storage__get_uv(xr);
        rank = storage__get_uv(xr);
        if (xr->bad || at >= s->n_frames || (i && at < pos))
          return corrupt(x, "stack frames");
        for (; pos <= at; pos++)
          row = storage__get_uv(&r);
        if (!local_of(x, row, rank, &s->frames[at]))
          return corrupt(x, "a stack names a frame the profile lacks");
      }
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

/* The rest of a stack once its shared row `st` is current: exclusive part, frames, event,
 * type, context, weights, related stacks, extra. */
static int stack_fields(struct rctx *x, struct spaa_stack *s, struct storage__rd *xr)
{
  unsigned flags = 0;
  int bad = 0, rc;
  uint64_t n, i;
  if (xr->len)
    flags = (unsigned)storage__get_uv(xr);
  /* the blob holds the exclusive part before the explicit frames (prep.c's order) */
  if (flags & PS_EXCLUSIVE) {
    s->has_exclusive = 1;
    if (!(flags & PS_EXCL_LEAF))
      s->excl_frame = storage__get_uv(xr);
    if (!(flags & PS_EXCL_SAME) && (rc = get_weights(x, xr, &s->excl_weights)))
      return rc == SPAA_E_NOMEM ? nomem(x) : corrupt(x, "exclusive weights");
  }
  if ((rc = stack_frames(x, s, xr, flags)))
    return rc;
  if (flags & PS_EXCL_LEAF) {
    if (!s->n_frames)
      return corrupt(x, "exclusive frame");
    s->excl_frame = s->frames[x->p->header.frame_order == SPAA_ROOT_TO_LEAF ? s->n_frames - 1 : 0];
  }
  s->event = col_str_cached(x, x->sr.event, x->sr.event_len, &x->last_event, &bad);
  s->stack_type = flags & PS_NO_TYPE ? NULL
                                     : col_str_cached(x, x->sr.stack_type, x->sr.stack_type_len,
                                                      &x->last_type, &bad);
  s->context = col_json(x->sr.context, x->sr.context_len, &bad);
  if (bad)
    return corrupt(x, "stack");
  if ((rc = block_weights(x, &s->weights)))
    return rc;
  if (flags & PS_EXCL_SAME) {
    if (s->weights.n && spaa_weights_alloc(x->p, &s->excl_weights, s->weights.n))
      return nomem(x);
    if (s->weights.n)
      memcpy(s->excl_weights.v, s->weights.v, s->weights.n * sizeof(*s->weights.v));
    s->excl_weights.n = s->weights.n;
  }
  if (flags & PS_RELATED) {
    n = storage__get_uv(xr);
    if (xr->bad || n > xr->len - xr->pos)
      return corrupt(x, "related stacks");
    if (n && !(s->related = spaa_alloc(x->p, (size_t)n * sizeof(*s->related))))
      return nomem(x);
    for (i = 0; i < n; i++)
      s->related[i] = storage__get_str(xr, x->p);
    s->n_related = (size_t)n;
  }
  if (flags & PS_EXTRA)
    s->extra = storage__get_json(xr);
  return xr->bad ? corrupt(x, "stack") : 0;
}

static int read_stack(struct rctx *x)
{
  struct spaa_stack *s = spaa_add_stack(x->p);
  struct storage__rd xr;
  struct spaa_cid cid;
  int64_t row;
  int rc;
  if (!s)
    return nomem(x);
  if (storage__blk_next_stack(&x->b, &row, &xr))
    return corrupt(x, "stack");
  if ((rc = shared_row(x, 1, row)))
    return rc;
  if (x->sr.cid_len != SPAA_CID_LEN)
    return corrupt(x, "stack id");
  memcpy(cid.b, x->sr.cid, SPAA_CID_LEN);
  spaa_cid_hex(&cid, s->id);
  rc = spaa_idmap_put(&x->stacks, (uint64_t)row, x->p->n_stacks - 1, NULL);
  /* a row named twice (a profile that was not canonical): samples name the first */
  return rc < 0 ? nomem(x) : stack_fields(x, s, &xr);
}

static int read_sample(struct rctx *x)
{
  struct spaa_sample *s = spaa_add_sample(x->p);
  struct storage__blk_sample b;
  struct storage__rd r;
  unsigned flags = 0;
  size_t k;
  if (!s)
    return nomem(x);
  if (storage__blk_next_sample(&x->b, &b))
    return corrupt(x, "sample");
  if (b.ts_kind != BT_NONE) {
    s->has_timestamp = 1;
    s->timestamp = b.ts;
  }
  s->has_tid = b.has_tid;
  s->tid = b.has_tid ? b.tid : 0;
  if (b.has_stack) {
    if (!spaa_idmap_get(&x->stacks, (uint64_t)b.stack_row, &k))
      return corrupt(x, "a sample names a stack the profile lacks");
    if (!x->stack_ids[k] && !(x->stack_ids[k] = spaa_strdup(x->p, x->p->stacks[k].id)))
      return nomem(x);
    s->stack_id = x->stack_ids[k];
  }
  storage__rd_init(&r, b.rest, b.rest_len);
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

static int stack_cmp(const void *a, const void *b, void *arg)
{
  return storage__stack_order_cmp(arg, a, b);
}

/* Call fn n times (one record each). */
static int each(struct rctx *x, uint64_t n, int (*fn)(struct rctx *x))
{
  uint64_t i;
  int rc;
  for (i = 0; i < n; i++)
    if ((rc = fn(x)))
      return rc;
  return 0;
}

static int load(struct rctx *x, int64_t dict_id, const void *z, size_t len)
{
  struct spaa_buf raw;
  size_t counted = 0; /* the decompressed block, reported to the meter while it is held */
  int rc;
  spaa_buf_init(&raw, 0);
  if (spaa_meter_take(x->src->meter, &counted, storage__blk_raw_size(z, len) + 1))
    return nomem(x);
  if ((rc = load_profile(x, dict_id, z, len, &raw)) || (rc = each(x, x->b.n[BN_DSOS], read_dso)) ||
      (rc = each(x, x->b.n[BN_FRAMES], read_frame)) ||
      (rc = each(x, x->b.n[BN_THREADS], read_thread)) ||
      (rc = each(x, x->b.n[BN_STACKS], read_stack)))
    goto out;
  if (!(x->stack_ids = calloc(x->p->n_stacks + 1, sizeof(*x->stack_ids)))) {
    rc = nomem(x);
    goto out;
  }
  if ((rc = each(x, x->b.n[BN_SAMPLES], read_sample)))
    goto out;
  /* stored by row id: back to the canonical order they were put in */
  if ((x->b.flags & BK_SORTED) && x->p->n_stacks) /* qsort_r of NULL is undefined */
    qsort_r(x->p->stacks, x->p->n_stacks, sizeof(*x->p->stacks), stack_cmp, x->p);
out:
  spaa_buf_free(&raw);
  spaa_meter_give(x->src->meter, &counted, counted);
  return rc;
}

int storage__read_block(const struct storage__src *src, const char *id, int64_t dict_id,
                        const void *z, size_t len, struct spaa_profile **out,
                        struct spaa_err *err)
{
  struct rctx x;
  int rc;
  *out = NULL;
  memset(&x, 0, sizeof(x));
  x.src = src;
  x.id = id;
  x.err = err;
  spaa_idmap_init(&x.frames);
  spaa_idmap_init(&x.stacks);
  if (!(x.p = spaa_profile_new_metered(src->meter)))
    rc = nomem(&x);
  else
    rc = load(&x, dict_id, z, len);
  spaa_idmap_free(&x.frames);
  spaa_idmap_free(&x.stacks);
  free(x.next_dup);
  free(x.strs);
  free(x.stack_ids);
  if (rc) {
    spaa_profile_free(x.p);
    return rc;
  }
  *out = x.p;
  return 0;
}
