/* The per-profile block (docs/storage.md): a profile's dso, frame, thread, stack and sample
 * instances packed as delta-coded varint sections, built by the writer and by the schema
 * migration, and taken apart again by the reader and the scan. */
#include <stdlib.h>
#include <string.h>

/* ZSTD_createCDict_advanced and ZSTD_getCParams: the tables of a kept dictionary sized by us
 * (make_cdict). Exported by libzstd 1.5's shared library; the stable API has no other way to
 * digest a dictionary at a level without that level's tables. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "base/limits.h"
#include "storage/engine_int.h"

void storage__blk_init(struct storage__blk *b)
{
  size_t i;
  memset(b, 0, sizeof(*b));
  for (i = 0; i < BS__N; i++)
    spaa_buf_init(&b->sec[i], 0);
  spaa_buf_init(&b->sblobs, 0);
}

void storage__blk_free(struct storage__blk *b)
{
  size_t i;
  if (!b)
    return;
  for (i = 0; i < BS__N; i++)
    spaa_buf_free(&b->sec[i]);
  spaa_buf_free(&b->sblobs);
  free(b->stacks);
  memset(b, 0, sizeof(*b));
}

static int put_bytes(struct spaa_buf *b, const void *p, size_t len)
{
  int rc = storage__put_uv(b, len);
  return rc ? rc : spaa_buf_add(b, p, len);
}

int storage__blk_dso(struct storage__blk *b, uint64_t local_id, int64_t row, const void *inst,
                     size_t len)
{
  struct spaa_buf *s = &b->sec[BS_DSOS];
  int rc;
  if ((rc = storage__put_sv(s, (int64_t)(local_id - b->prev_dso_local))) ||
      (rc = storage__put_sv(s, row - b->prev_dso_row)) || (rc = put_bytes(s, inst, len)))
    return rc;
  b->prev_dso_local = local_id;
  b->prev_dso_row = row;
  b->n[BN_DSOS]++;
  return 0;
}

int storage__blk_frame(struct storage__blk *b, const struct storage__blk_frame *f)
{
  struct spaa_buf *s = &b->sec[BS_FRAMES];
  unsigned flags = f->flags | (f->has_dso ? BF_DSO : 0) | (f->has_ip ? BF_IP : 0);
  int rc;
  if ((rc = storage__put_sv(s, (int64_t)(f->local_id - b->prev_frame_local))) ||
      (rc = storage__put_sv(s, f->row - b->prev_frame_row)) || (rc = storage__put_uv(s, flags)))
    return rc;
  if (f->has_dso && (rc = storage__put_uv(s, f->dso_local)))
    return rc;
  if (f->has_ip) {
    if ((rc = storage__put_sv(s, (int64_t)(f->ip - b->prev_ip))))
      return rc;
    b->prev_ip = f->ip;
  }
  if ((rc = storage__put_str(s, f->func)) || (rc = storage__put_str(s, f->symoff)) ||
      (rc = storage__put_str(s, f->srcline)) || (rc = storage__put_str(s, f->extra)))
    return rc;
  b->prev_frame_local = f->local_id;
  b->prev_frame_row = f->row;
  b->n[BN_FRAMES]++;
  return 0;
}

int storage__blk_thread(struct storage__blk *b, int64_t pid, int64_t tid, const char *comm,
                        const char *extra)
{
  struct spaa_buf *s = &b->sec[BS_THREADS];
  int rc;
  if ((rc = storage__put_sv(s, pid)) || (rc = storage__put_sv(s, tid)) ||
      (rc = storage__put_str(s, comm)) || (rc = storage__put_str(s, extra)))
    return rc;
  b->n[BN_THREADS]++;
  return 0;
}

int storage__blk_stack(struct storage__blk *b, int64_t row, const void *w, size_t wlen,
                       const void *x, size_t xlen)
{
  struct storage__blk_st *e;
  int rc;
  if (b->n[BN_STACKS] == b->cap_stacks) {
    size_t nc = b->cap_stacks ? 2 * b->cap_stacks : 64;
    struct storage__blk_st *nv = realloc(b->stacks, nc * sizeof(*nv));
    if (!nv)
      return SPAA_E_NOMEM;
    b->stacks = nv;
    b->cap_stacks = nc;
  }
  e = &b->stacks[b->n[BN_STACKS]];
  e->row = row;
  e->off = b->sblobs.len;
  e->wlen = wlen;
  e->xlen = xlen;
  if ((wlen && (rc = spaa_buf_add(&b->sblobs, w, wlen))) ||
      (xlen && (rc = spaa_buf_add(&b->sblobs, x, xlen))))
    return rc;
  b->n[BN_STACKS]++;
  return 0;
}

int storage__put_sample(struct spaa_buf *s, int64_t *prev_ts, int64_t *prev_stack,
                        const struct storage__blk_sample *sm)
{
  unsigned flags = (unsigned)sm->ts_kind | (sm->has_tid ? 4u : 0) | (sm->has_stack ? 8u : 0) |
                   (sm->rest_len ? 16u : 0);
  int rc;
  if ((rc = storage__put_uv(s, flags)))
    return rc;
  if (sm->ts_kind == BT_INT) {
    if ((rc = storage__put_sv(s, (int64_t)((uint64_t)sm->ts.i - (uint64_t)*prev_ts))))
      return rc;
    *prev_ts = sm->ts.i;
  } else if (sm->ts_kind == BT_FLOAT && (rc = storage__put_num(s, sm->ts))) {
    return rc;
  }
  if (sm->has_tid && (rc = storage__put_sv(s, sm->tid)))
    return rc;
  if (sm->has_stack) {
    if ((rc = storage__put_sv(s, sm->stack_row - *prev_stack)))
      return rc;
    *prev_stack = sm->stack_row;
  }
  if (sm->rest_len && (rc = put_bytes(s, sm->rest, sm->rest_len)))
    return rc;
  return 0;
}

int storage__blk_sample(struct storage__blk *b, const struct storage__blk_sample *sm)
{
  int rc = storage__put_sample(&b->sec[BS_SAMPLES], &b->prev_ts, &b->prev_sample_stack, sm);
  if (!rc)
    b->n[BN_SAMPLES]++;
  return rc;
}

static int st_row_cmp(const void *a, const void *b)
{
  const struct storage__blk_st *x = a, *y = b;
  return x->row < y->row ? -1 : x->row > y->row;
}

/* A stack's weights, packed as pack.c's weights (count, then metric, unit, number each),
 * split into a shape section (count, references, number tags: the same for most stacks)
 * and a value section. */
static int split_weights(struct storage__blk *b, const uint8_t *w, size_t wlen)
{
  struct spaa_buf *shape = &b->sec[BS_WSHAPE], *vals = &b->sec[BS_WVALS];
  struct storage__rd r;
  uint64_t n, i;
  int rc;
  storage__rd_init(&r, w, wlen);
  n = wlen ? storage__get_uv(&r) : 0;
  if (r.bad || n > wlen)
    return SPAA_E_STORE;
  if ((rc = storage__put_uv(shape, n)))
    return rc;
  for (i = 0; i < n; i++) {
    uint64_t metric = storage__get_uv(&r), unit = storage__get_uv(&r);
    struct spaa_num v = storage__get_num(&r);
    if (r.bad)
      return SPAA_E_STORE;
    if ((rc = storage__put_uv(shape, metric)) || (rc = storage__put_uv(shape, unit)) ||
        (rc = storage__put_uv(shape, v.is_float ? 1 : 0)))
      return rc;
    if (v.is_float) {
      struct spaa_buf *t = vals;
      size_t at = t->len;
      if ((rc = storage__put_num(t, v)))
        return rc;
      memmove(t->p + at, t->p + at + 1, 8); /* the tag is in the shape */
      t->len--;
    } else if ((rc = storage__put_sv(vals, v.i))) {
      return rc;
    }
  }
  return r.pos == r.len ? 0 : SPAA_E_STORE;
}

/* The stack sections: row ids (delta; ascending when sorted), weights, extras. */
static int finish_stacks(struct storage__blk *b, int sorted)
{
  int64_t prev = 0;
  size_t i;
  int rc;
  if (sorted && b->n[BN_STACKS] > 1)
    qsort(b->stacks, b->n[BN_STACKS], sizeof(*b->stacks), st_row_cmp);
  for (i = 0; i < b->n[BN_STACKS]; i++) {
    const struct storage__blk_st *e = &b->stacks[i];
    const uint8_t *p = (const uint8_t *)b->sblobs.p + e->off;
    if ((rc = sorted ? storage__put_uv(&b->sec[BS_STACKS], (uint64_t)(e->row - prev))
                     : storage__put_sv(&b->sec[BS_STACKS], e->row - prev)))
      return rc;
    prev = e->row;
    if ((rc = split_weights(b, p, e->wlen)) ||
        (rc = put_bytes(&b->sec[BS_X], p + e->wlen, e->xlen)))
      return rc;
  }
  return 0;
}

int storage__blk_finish(struct storage__blk *b, const struct storage__blk_tables *t,
                        struct spaa_buf *out)
{
  size_t i, total;
  int rc;
  if (t->sorted)
    for (i = 1; i < b->n[BN_STACKS]; i++)
      if (b->stacks[i].row == b->stacks[i - 1].row)
        return SPAA_E_STORE; /* cannot happen for a canonical profile; never sort those */
  if ((rc = finish_stacks(b, t->sorted)))
    return rc;
  if ((rc = spaa_buf_add(&b->sec[BS_HEADER], t->header, t->header_len)) ||
      (rc = spaa_buf_add(&b->sec[BS_STRINGS], t->strings, t->strings_len)) ||
      (rc = spaa_buf_add(&b->sec[BS_WINDOWS], t->windows, t->windows_len)))
    return rc;
  /* the block at its size (varints of at most 10 bytes), each section let go once copied:
   * a doubled block beside every section doubled was this profile's largest buffer */
  total = 11 + 10 * (size_t)(BN__N + BS__N);
  for (i = 0; i < BS__N; i++)
    total += b->sec[i].len;
  if (total <= SIZE_MAX - out->len)
    spaa_buf_presize(out, out->len + total); /* on failure the adds below say why */
  if ((rc = spaa_buf_add(out, "\x01", 1)) || (rc = storage__put_uv(out, t->sorted ? BK_SORTED : 0)))
    return rc;
  for (i = 0; i < BN__N; i++)
    if ((rc = storage__put_uv(out, b->n[i])))
      return rc;
  for (i = 0; i < BS__N; i++) {
    if ((rc = put_bytes(out, b->sec[i].p, b->sec[i].len)))
      return rc;
    spaa_buf_free(&b->sec[i]);
  }
  return 0;
}

/* ---- reading --------------------------------------------------------------------------- */

int storage__blk_open(struct storage__blk_rd *r, const void *raw, size_t len)
{
  struct storage__rd all;
  size_t i;
  memset(r, 0, sizeof(*r));
  storage__rd_init(&all, raw, len);
  if (!len || ((const uint8_t *)raw)[0] != 1)
    return SPAA_E_STORE;
  all.pos = 1;
  r->flags = (unsigned)storage__get_uv(&all);
  for (i = 0; i < BN__N; i++) {
    r->n[i] = storage__get_uv(&all);
    if (r->n[i] > len)
      return SPAA_E_STORE; /* every record takes at least a byte */
  }
  for (i = 0; i < BS__N; i++) {
    uint64_t n = storage__get_uv(&all);
    if (all.bad || n > all.len - all.pos)
      return SPAA_E_STORE;
    storage__rd_init(&r->sec[i], all.p + all.pos, (size_t)n);
    all.pos += (size_t)n;
  }
  return all.bad || all.pos != all.len ? SPAA_E_STORE : 0;
}

/* A length-prefixed piece of `r` as a reader of its own. */
static void sub_reader(struct storage__rd *r, struct storage__rd *out)
{
  uint64_t n = storage__get_uv(r);
  if (r->bad || n > r->len - r->pos) {
    r->bad = 1;
    storage__rd_init(out, NULL, 0);
    return;
  }
  storage__rd_init(out, r->p + r->pos, (size_t)n);
  r->pos += (size_t)n;
}

int storage__blk_next_dso(struct storage__blk_rd *r, uint64_t *local_id, int64_t *row,
                          struct storage__rd *inst)
{
  struct storage__rd *s = &r->sec[BS_DSOS];
  r->prev_dso_local += (uint64_t)storage__get_sv(s);
  r->prev_dso_row += storage__get_sv(s);
  *local_id = r->prev_dso_local;
  *row = r->prev_dso_row;
  sub_reader(s, inst);
  return s->bad ? SPAA_E_STORE : 0;
}

/* A string field as a pointer into the block: 1 when present (*s, *len), 0 for NULL. */
static int raw_str(struct storage__rd *r, const char **s, size_t *len)
{
  uint64_t n = storage__get_uv(r);
  *s = NULL;
  *len = 0;
  if (r->bad || !n)
    return 0;
  if (n - 1 > r->len - r->pos) {
    r->bad = 1;
    return 0;
  }
  *s = (const char *)r->p + r->pos;
  *len = (size_t)(n - 1);
  r->pos += (size_t)(n - 1);
  return 1;
}

int storage__blk_next_frame(struct storage__blk_rd *r, struct storage__blk_frame_rd *f)
{
  struct storage__rd *s = &r->sec[BS_FRAMES];
  unsigned flags;
  memset(f, 0, sizeof(*f));
  r->prev_frame_local += (uint64_t)storage__get_sv(s);
  r->prev_frame_row += storage__get_sv(s);
  f->local_id = r->prev_frame_local;
  f->row = r->prev_frame_row;
  flags = (unsigned)storage__get_uv(s);
  f->flags = flags & ~(unsigned)(BF_DSO | BF_IP);
  if ((f->has_dso = (flags & BF_DSO) != 0))
    f->dso_local = storage__get_uv(s);
  if ((f->has_ip = (flags & BF_IP) != 0)) {
    r->prev_ip += (uint64_t)storage__get_sv(s);
    f->ip = r->prev_ip;
  }
  raw_str(s, &f->func, &f->func_len);
  raw_str(s, &f->symoff, &f->symoff_len);
  raw_str(s, &f->srcline, &f->srcline_len);
  raw_str(s, &f->extra, &f->extra_len);
  return s->bad ? SPAA_E_STORE : 0;
}

int storage__blk_next_thread(struct storage__blk_rd *r, int64_t *pid, int64_t *tid,
                             const char **comm, size_t *comm_len, const char **extra,
                             size_t *extra_len)
{
  struct storage__rd *s = &r->sec[BS_THREADS];
  *pid = storage__get_sv(s);
  *tid = storage__get_sv(s);
  raw_str(s, comm, comm_len);
  raw_str(s, extra, extra_len);
  return s->bad ? SPAA_E_STORE : 0;
}

int storage__blk_next_stack(struct storage__blk_rd *r, int64_t *row, struct storage__rd *x)
{
  struct storage__rd *s = &r->sec[BS_STACKS];
  if (r->flags & BK_SORTED)
    r->prev_stack_row += (int64_t)storage__get_uv(s);
  else
    r->prev_stack_row += storage__get_sv(s);
  *row = r->prev_stack_row;
  sub_reader(&r->sec[BS_X], x);
  return s->bad || r->sec[BS_X].bad ? SPAA_E_STORE : 0;
}

size_t storage__blk_peek_weights(const struct storage__blk_rd *r)
{
  struct storage__rd shape = r->sec[BS_WSHAPE]; /* read ahead on a copy */
  uint64_t k = storage__get_uv(&shape);
  /* a weight takes 3 bytes of the section at least: a corrupt count allocates nothing */
  if (shape.bad || k > (shape.len - shape.pos) / 3)
    return SIZE_MAX;
  return (size_t)k;
}

int storage__blk_next_weights(struct storage__blk_rd *r, struct storage__blk_weight *w,
                              size_t cap, size_t *n)
{
  struct storage__rd *shape = &r->sec[BS_WSHAPE], *vals = &r->sec[BS_WVALS];
  uint64_t k = storage__get_uv(shape), i;
  if (shape->bad || k > cap)
    return SPAA_E_STORE;
  for (i = 0; i < k; i++) {
    w[i].metric = storage__get_uv(shape);
    w[i].unit = storage__get_uv(shape);
    if (storage__get_uv(shape)) {
      uint64_t bits = 0;
      int j;
      if (vals->len - vals->pos < 8)
        return SPAA_E_STORE;
      for (j = 0; j < 8; j++)
        bits |= (uint64_t)vals->p[vals->pos + j] << (8 * j);
      vals->pos += 8;
      w[i].value.is_float = 1;
      memcpy(&w[i].value.f, &bits, 8);
    } else {
      w[i].value = spaa_int(storage__get_sv(vals));
    }
  }
  *n = (size_t)k;
  return shape->bad || vals->bad ? SPAA_E_STORE : 0;
}

int storage__get_sample(struct storage__rd *s, int64_t *prev_ts, int64_t *prev_stack,
                        struct storage__blk_sample *sm)
{
  unsigned flags = (unsigned)storage__get_uv(s);
  memset(sm, 0, sizeof(*sm));
  sm->ts_kind = (int)(flags & 3u);
  if (sm->ts_kind == BT_INT) {
    *prev_ts = (int64_t)((uint64_t)*prev_ts + (uint64_t)storage__get_sv(s));
    sm->ts = spaa_int(*prev_ts);
  } else if (sm->ts_kind == BT_FLOAT) {
    sm->ts = storage__get_num(s);
  } else if (sm->ts_kind != BT_NONE) {
    s->bad = 1;
  }
  if ((sm->has_tid = (flags & 4u) != 0))
    sm->tid = storage__get_sv(s);
  if ((sm->has_stack = (flags & 8u) != 0)) {
    *prev_stack += storage__get_sv(s);
    sm->stack_row = *prev_stack;
  }
  if (flags & 16u) {
    struct storage__rd rest;
    sub_reader(s, &rest);
    sm->rest = rest.p;
    sm->rest_len = rest.len;
  }
  return s->bad ? SPAA_E_STORE : 0;
}

int storage__blk_next_sample(struct storage__blk_rd *r, struct storage__blk_sample *sm)
{
  return storage__get_sample(&r->sec[BS_SAMPLES], &r->prev_ts, &r->prev_sample_stack, sm);
}

/* ---- compression ------------------------------------------------------------------------ */

/* The smallest window log that lets a frame reach back over dict_len + len bytes. */
static int window_log(size_t total)
{
  int w = 10;
  while (w < 27 && ((size_t)1 << w) < total)
    w++;
  return w;
}

/* A service's dictionary digested for its blocks: level 9 (level 3 past STORAGE_LEVEL_SWITCH)
 * with its match tables capped at 2^STORAGE_DICT_TABLE_LOG entries each. Uncapped, level 9
 * sizes them for any input (2^21 and 2^20 entries: 13 MiB for a 1 MiB dictionary), and the
 * writer keeps a digested dictionary per service; capped, 1 MiB, and the blocks come out
 * within a few percent of the same size (docs/storage.md). It refers to dict, which must
 * outlive it. NULL when out of memory. */
static ZSTD_CDict *make_cdict(const void *dict, size_t len)
{
  ZSTD_compressionParameters cp =
      ZSTD_getCParams(len > STORAGE_LEVEL_SWITCH ? STORAGE_BLOCK_LEVEL_LARGE : STORAGE_BLOCK_LEVEL,
                      ZSTD_CONTENTSIZE_UNKNOWN, len);
  if (cp.hashLog > STORAGE_DICT_TABLE_LOG)
    cp.hashLog = STORAGE_DICT_TABLE_LOG;
  if (cp.chainLog > STORAGE_DICT_TABLE_LOG)
    cp.chainLog = STORAGE_DICT_TABLE_LOG;
  /* by reference: the dictionary's bytes are kept beside it (storage__dict.raw) */
  return ZSTD_createCDict_advanced(dict, len, ZSTD_dlm_byRef, ZSTD_dct_rawContent, cp,
                                   ZSTD_defaultCMem);
}

/* The match tables of one block's compression capped like a digested dictionary's: a large
 * block at level 9 would otherwise take 2^21 + 2^20 entries (12 MiB) beside the model it is
 * written from. Past the first 128 KiB of input, zstd sizes the tables for the input even
 * when a digested dictionary is referenced; explicit values rule in both cases. */
static int cap_tables(ZSTD_CCtx *cc, size_t len, size_t dict_len)
{
  ZSTD_compressionParameters cp = ZSTD_getCParams(STORAGE_BLOCK_LEVEL, len, dict_len);
  return cp.hashLog > STORAGE_DICT_TABLE_LOG &&
                 (ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_hashLog, STORAGE_DICT_TABLE_LOG)) ||
                  ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_chainLog, STORAGE_DICT_TABLE_LOG)))
             ? -1
             : 0;
}

size_t storage__blk_cdict_size(const void *cdict)
{
  return cdict ? ZSTD_sizeof_CDict((const ZSTD_CDict *)cdict) : 0;
}

int storage__blk_compress(const void *raw, size_t len, const void *dict, size_t dict_len,
                          void **cdict, struct spaa_buf *out)
{
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  size_t bound = ZSTD_compressBound(len), n;
  int rc = 0;
  if (!cc || spaa_buf_reserve(out, bound)) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  if (dict_len && cdict) {
    /* the dictionary digested once (raw content: a block never starts with zstd's dictionary
     * magic), then referenced by every block of the service; its parameters rule */
    if (!*cdict && !(*cdict = make_cdict(dict, dict_len))) {
      rc = SPAA_E_NOMEM;
      goto out;
    }
    if (ZSTD_isError(ZSTD_CCtx_refCDict(cc, (ZSTD_CDict *)*cdict))) {
      rc = SPAA_E_STORE;
      goto out;
    }
  } else if (ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel,
                                                 STORAGE_BLOCK_LEVEL)) ||
             ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog,
                                                 window_log(dict_len + len))) ||
             (dict_len && ZSTD_isError(ZSTD_CCtx_refPrefix(cc, dict, dict_len)))) {
    rc = SPAA_E_STORE;
    goto out;
  }
  if (cap_tables(cc, len, dict_len)) {
    rc = SPAA_E_STORE;
    goto out;
  }
  n = ZSTD_compress2(cc, out->p + out->len, bound, raw, len);
  if (ZSTD_isError(n)) {
    rc = SPAA_E_STORE;
    goto out;
  }
  out->len += n;
out:
  ZSTD_freeCCtx(cc);
  return rc;
}

void storage__blk_cdict_free(void *cdict)
{
  ZSTD_freeCDict((ZSTD_CDict *)cdict);
}

size_t storage__blk_raw_size(const void *z, size_t len)
{
  unsigned long long size = ZSTD_getFrameContentSize(z, len);
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ||
      size > SPAA_STORE_MAX_BLOCK)
    return 0;
  return (size_t)size;
}

int storage__blk_decompress(const void *z, size_t len, const void *dict, size_t dict_len,
                            struct spaa_buf *out)
{
  ZSTD_DCtx *dc = NULL;
  unsigned long long size = ZSTD_getFrameContentSize(z, len);
  size_t n;
  int rc = 0;
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN ||
      size > SPAA_STORE_MAX_BLOCK)
    return SPAA_E_STORE;
  if (!(dc = ZSTD_createDCtx()) || spaa_buf_reserve(out, (size_t)size + 1)) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  if (ZSTD_isError(ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax, 27)) ||
      (dict_len && ZSTD_isError(ZSTD_DCtx_refPrefix(dc, dict, dict_len)))) {
    rc = SPAA_E_STORE;
    goto out;
  }
  n = ZSTD_decompressDCtx(dc, out->p + out->len, (size_t)size, z, len);
  if (ZSTD_isError(n) || n != size) {
    rc = SPAA_E_STORE;
    goto out;
  }
  out->len += n;
out:
  ZSTD_freeDCtx(dc);
  return rc;
}

/* The profile's frame instances, in its order. */
static int build_frames(struct storage__blk *b, const struct storage__prep *pr,
                        const int64_t *frame_rows)
{
  const struct spaa_profile *p = pr->p;
  size_t i;
  int rc = 0;
  for (i = 0; i < p->n_frames && !rc; i++) {
    const struct spaa_frame *f = &p->frames[i];
    struct storage__blk_frame bf;
    int src_here = !f->srcline_resolved || (f->srcline && !f->srcline[0]);
    bf.local_id = f->id;
    bf.row = frame_rows[i];
    bf.flags = (f->func_resolved ? 0 : PF_UNRESOLVED) |
               (f->srcline_resolved ? 0 : PF_SRC_UNRESOLVED) | (f->inlined ? PF_INLINED : 0) |
               (f->has_inline_depth ? 0 : PF_NO_DEPTH) | (src_here ? PF_SRC_HERE : 0);
    bf.has_dso = f->has_dso;
    bf.dso_local = f->dso;
    bf.has_ip = f->has_ip;
    bf.ip = f->ip;
    bf.func = f->func_resolved ? NULL : f->func;
    bf.symoff = f->symoff;
    bf.srcline = src_here ? f->srcline : NULL;
    bf.extra = pr->frame_extra[i];
    rc = storage__blk_frame(b, &bf);
  }
  return rc;
}

/* An array of the preparation freed once packed, while the block's sections grow. */
static void let_go(void *pp)
{
  void **p = pp;
  free(*p);
  *p = NULL;
}

/* consume: pr itself, whose arrays go once packed, or NULL */
static int blk_build(const struct storage__prep *pr, struct storage__prep *consume,
                     const int64_t *dso_rows, const int64_t *frame_rows,
                     const int64_t *stack_rows, struct spaa_buf *raw)
{
  const struct spaa_profile *p = pr->p;
  struct storage__blk_tables t;
  struct storage__blk b;
  struct storage__rd rd;
  int64_t prev_ts = 0, prev_stack = 0;
  size_t i;
  int rc = 0;
  storage__blk_init(&b);
  for (i = 0; i < p->n_dsos && !rc; i++)
    rc = storage__blk_dso(&b, p->dsos[i].id, dso_rows[i], pr->blobs.p + pr->dso_inst[i],
                          pr->dso_inst[i + 1] - pr->dso_inst[i]);
  if (!rc)
    rc = build_frames(&b, pr, frame_rows);
  for (i = 0; i < p->n_threads && !rc; i++)
    rc = storage__blk_thread(&b, p->threads[i].pid, p->threads[i].tid, p->threads[i].comm,
                             pr->thread_extra[i]);
  for (i = 0; i < pr->n_stacks && !rc; i++)
    rc = storage__blk_stack(&b, stack_rows[i], pr->blobs.p + pr->pstack_w[2 * i],
                            pr->pstack_w[2 * i + 1] - pr->pstack_w[2 * i],
                            pr->blobs.p + pr->pstack_w[2 * i + 1],
                            pr->pstack_w[2 * i + 2] - pr->pstack_w[2 * i + 1]);
  if (consume) {
    let_go(&consume->pstacks);
    let_go(&consume->pstack_w);
    let_go(&consume->stack_cid);
    let_go(&consume->stack_ctx);
  }
  storage__rd_init(&rd, pr->psamples.p, pr->psamples.len);
  for (i = 0; i < pr->n_samples && !rc; i++) {
    struct storage__blk_sample sm; /* its stack_row a stack's index until mapped */
    if ((rc = storage__get_sample(&rd, &prev_ts, &prev_stack, &sm)))
      break; /* not what the preparation wrote */
    if (sm.has_stack) {
      if (sm.stack_row < 0 || (uint64_t)sm.stack_row >= pr->n_stacks) {
        rc = SPAA_E_STORE;
        break;
      }
      sm.stack_row = stack_rows[sm.stack_row];
    }
    rc = storage__blk_sample(&b, &sm);
  }
  if (consume)
    spaa_buf_free(&consume->psamples);
  memset(&t, 0, sizeof(t));
  t.header = pr->blobs.p + pr->header_off[0];
  t.header_len = pr->header_off[1] - pr->header_off[0];
  t.strings = pr->blobs.p + pr->strings_off[0];
  t.strings_len = pr->strings_off[1] - pr->strings_off[0];
  t.windows = pr->blobs.p + pr->windows_off[0];
  t.windows_len = pr->windows_off[1] - pr->windows_off[0];
  t.sorted = pr->sorted;
  if (!rc)
    rc = storage__blk_finish(&b, &t, raw);
  storage__blk_free(&b);
  return rc;
}

int storage__blk_build(const struct storage__prep *pr, const int64_t *dso_rows,
                       const int64_t *frame_rows, const int64_t *stack_rows,
                       struct spaa_buf *raw)
{
  return blk_build(pr, NULL, dso_rows, frame_rows, stack_rows, raw);
}

int storage__blk_build_once(struct storage__prep *pr, const int64_t *dso_rows,
                            const int64_t *frame_rows, const int64_t *stack_rows,
                            struct spaa_buf *raw)
{
  return blk_build(pr, pr, dso_rows, frame_rows, stack_rows, raw);
}
