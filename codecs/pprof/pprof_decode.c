/* pprof decoding: gzip by magic under a cap (base/compress); the samples left on the wire
 * and read one at a time, every other field unpacked by protoc-c into a capped arena; and the
 * validation of every string index, id and reference before anything uses them. */
#include "pprof/pprof.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/compress.h"
#include "base/limits.h"
#include "base/pbwire.h"
#include "base/utf8.h"
#include "pprof/pprof_int.h"

/* ---- arena for protoc-c ------------------------------------------------------------------
 * protoc-c allocates every message, array and byte string separately; a bump allocator makes
 * unpacking faster, freeing one call, and lets us cap the memory a hostile input can claim. */

struct arena_block {
  struct arena_block *next; /* older block */
  size_t used, size;        /* bytes used / available in data[] */
  _Alignas(16) unsigned char data[];
};

struct spaa_pprof_arena {
  struct arena_block *head; /* the block being filled */
  size_t total;             /* bytes obtained from malloc */
  size_t cap;               /* total may not exceed this */
  size_t next_size;         /* size of the next block */
  int over_cap;             /* an allocation was refused because of the cap */
  int no_mem;               /* malloc failed */
};

static void *arena_alloc(void *ctx, size_t size)
{
  struct spaa_pprof_arena *a = ctx;
  struct arena_block *b = a->head;
  size_t need = (size + 7) & ~(size_t)7;
  void *r;
  if (need < size) {
    a->over_cap = 1;
    return NULL;
  }
  if (!b || b->size - b->used < need) {
    size_t bs = a->next_size;
    if (need > bs / 2)
      bs = need;
    if (bs > a->cap - a->total || a->total > a->cap) {
      a->over_cap = 1;
      return NULL;
    }
    if (!(b = malloc(sizeof(*b) + bs))) {
      a->no_mem = 1;
      return NULL;
    }
    a->total += bs;
    b->size = bs;
    b->used = 0;
    if (bs == need && a->head) { /* a big one: keep filling the current block */
      b->next = a->head->next;
      a->head->next = b;
    } else {
      b->next = a->head;
      a->head = b;
      if (a->next_size < 4u * 1024 * 1024)
        a->next_size *= 2;
    }
  }
  r = b->data + b->used;
  b->used += need;
  return r;
}

static void arena_free_one(void *ctx, void *ptr) { (void)ctx, (void)ptr; }

static struct spaa_pprof_arena *arena_new(size_t cap)
{
  struct spaa_pprof_arena *a = calloc(1, sizeof(*a));
  if (a) {
    a->cap = cap;
    a->next_size = 64 * 1024;
  }
  return a;
}

static void arena_destroy(struct spaa_pprof_arena *a)
{
  struct arena_block *b, *next;
  if (!a)
    return;
  for (b = a->head; b; b = next) {
    next = b->next;
    free(b);
  }
  free(a);
}

/* ---- gzip ------------------------------------------------------------------------------- */

int spaa_pprof_is_gzip(const uint8_t *buf, size_t len) { return spaa_is_gzip(buf, len); }

/* ---- validation ---------------------------------------------------------------------------- */

#define INVALID(...) (rc = spaa_err_set(err, SPAA_E_INVALID, 0, 0, __VA_ARGS__))

/* 0 when `idx` is a valid string index, else SPAA_E_INVALID naming `what` (printf-style). */
static int str_idx(const Perftools__Profiles__Profile *m, int64_t idx, struct spaa_err *err,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int str_idx(const Perftools__Profiles__Profile *m, int64_t idx, struct spaa_err *err,
                   const char *fmt, ...)
{
  char what[128];
  va_list ap;
  if (idx >= 0 && (uint64_t)idx < m->n_string_table)
    return 0;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  return spaa_err_set(err, SPAA_E_INVALID, 0, 0,
                      "%s: string index %" PRId64 " is out of range (string_table has %zu entries)",
                      what, idx, m->n_string_table);
}

/* Index the ids of `n` records: unique and nonzero. */
static int index_ids(struct spaa_pprof_ids *ids, const char *kind, size_t n,
                     const void *const *recs, size_t id_off, struct spaa_err *err)
{
  size_t i, prev;
  uint64_t id;
  ids->n = n;
  for (i = 0; i < n; i++) {
    memcpy(&id, (const char *)recs[i] + id_off, sizeof(id));
    if (id != i + 1)
      break;
  }
  if ((ids->dense = i == n)) /* 1..n in order: unique and nonzero by construction */
    return 0;
  for (i = 0; i < n; i++) {
    int r;
    memcpy(&id, (const char *)recs[i] + id_off, sizeof(id));
    if (id == 0)
      return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "%s %zu has id 0, which is reserved", kind, i);
    if ((r = spaa_idmap_put(&ids->map, id, i, &prev)) < 0)
      return spaa_err_set(err, r, 0, 0, NULL);
    if (r == 1)
      return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "%s %zu has id %" PRIu64
                          ", already used by %s %zu", kind, i, id, kind, prev);
  }
  return 0;
}

/* Sample i against the rules: one value per sample type, locations that exist, labels
 * whose strings do and that are a string or a number. 0 or SPAA_E_INVALID (err filled). */
static int check_sample(const struct spaa_pprof *d, const Perftools__Profiles__Sample *s,
                        size_t i, struct spaa_err *err)
{
  const Perftools__Profiles__Profile *m = d->msg;
  size_t j, k;
  int rc;
  if (s->n_value != m->n_sample_type)
    return INVALID("sample %zu has %zu values, but there are %zu sample types", i, s->n_value,
                   m->n_sample_type);
  for (j = 0; j < s->n_location_id; j++)
    if (!spaa_pprof_find(&d->loc_ids, s->location_id[j], &k))
      return INVALID("sample %zu references location %" PRIu64 " (position %zu), which does "
                     "not exist", i, s->location_id[j], j);
  for (j = 0; j < s->n_label; j++) {
    const Perftools__Profiles__Label *l = s->label[j];
    if ((rc = str_idx(m, l->key, err, "sample %zu label %zu key", i, j)) ||
        (rc = str_idx(m, l->str, err, "sample %zu label %zu str", i, j)) ||
        (rc = str_idx(m, l->num_unit, err, "sample %zu label %zu num_unit", i, j)))
      return rc;
    if (l->str && (l->num || l->num_unit))
      return INVALID("sample %zu label %zu has both a string and a number", i, j);
  }
  return 0;
}

/* Read every sample once (spaa_pprof_iter_next checks each). */
static int read_samples(const struct spaa_pprof *d, struct spaa_err *err)
{
  const Perftools__Profiles__Sample *s;
  struct spaa_pprof_iter it;
  int rc;
  spaa_pprof_iter_init(&it, d);
  while (!(rc = spaa_pprof_iter_next(&it, &s, err)) && s)
    ;
  spaa_pprof_iter_free(&it);
  return rc;
}

int spaa_pprof_validate(struct spaa_pprof *d, struct spaa_err *err)
{
  const Perftools__Profiles__Profile *m = d->msg;
  size_t i, j, k, bad;
  int rc = 0;

  /* strings */
  if (m->n_string_table == 0 || m->string_table[0].len != 0)
    return INVALID("string_table[0] must be \"\" (the table %s)",
                   m->n_string_table ? "starts with another string" : "is empty");
  for (i = 1; i < m->n_string_table; i++) {
    const ProtobufCBinaryData *s = &m->string_table[i];
    if ((bad = spaa_utf8_check(s->data, s->len)) != SIZE_MAX)
      return INVALID("string_table[%zu] is not valid UTF-8 (byte %zu)", i, bad);
    if (s->len && memchr(s->data, 0, s->len))
      return INVALID("string_table[%zu] contains a NUL character", i);
  }
  /* profile-level string indexes */
  for (i = 0; i < m->n_sample_type; i++)
    if ((rc = str_idx(m, m->sample_type[i]->type, err, "sample_type %zu type", i)) ||
        (rc = str_idx(m, m->sample_type[i]->unit, err, "sample_type %zu unit", i)))
      return rc;
  if (m->period_type && ((rc = str_idx(m, m->period_type->type, err, "period_type type")) ||
                         (rc = str_idx(m, m->period_type->unit, err, "period_type unit"))))
    return rc;
  if ((rc = str_idx(m, m->drop_frames, err, "drop_frames")) ||
      (rc = str_idx(m, m->keep_frames, err, "keep_frames")) ||
      (rc = str_idx(m, m->default_sample_type, err, "default_sample_type")) ||
      (rc = str_idx(m, m->doc_url, err, "doc_url")))
    return rc;
  for (i = 0; i < m->n_comment; i++)
    if ((rc = str_idx(m, m->comment[i], err, "comment %zu", i)))
      return rc;
  /* negative values only where pprof gives them a meaning (docs/pprof-mapping.md) */
  if (m->period < 0)
    return INVALID("period is negative (%" PRId64 ")", m->period);
  if (m->time_nanos < 0)
    return INVALID("time_nanos is negative (%" PRId64 ")", m->time_nanos);
  if (m->duration_nanos < 0)
    return INVALID("duration_nanos is negative (%" PRId64 ")", m->duration_nanos);

  /* ids */
  if ((rc = index_ids(&d->map_ids, "mapping", m->n_mapping, (const void *const *)m->mapping,
                      offsetof(Perftools__Profiles__Mapping, id), err)) ||
      (rc = index_ids(&d->fn_ids, "function", m->n_function, (const void *const *)m->function,
                      offsetof(Perftools__Profiles__Function, id), err)) ||
      (rc = index_ids(&d->loc_ids, "location", m->n_location, (const void *const *)m->location,
                      offsetof(Perftools__Profiles__Location, id), err)))
    return rc;

  for (i = 0; i < m->n_mapping; i++) {
    const Perftools__Profiles__Mapping *mp = m->mapping[i];
    if ((rc = str_idx(m, mp->filename, err, "mapping %zu (id %" PRIu64 ") filename", i, mp->id)) ||
        (rc = str_idx(m, mp->build_id, err, "mapping %zu (id %" PRIu64 ") build_id", i, mp->id)))
      return rc;
  }
  for (i = 0; i < m->n_function; i++) {
    const Perftools__Profiles__Function *f = m->function[i];
    if ((rc = str_idx(m, f->name, err, "function %zu (id %" PRIu64 ") name", i, f->id)) ||
        (rc = str_idx(m, f->system_name, err, "function %zu (id %" PRIu64 ") system_name", i,
                      f->id)) ||
        (rc = str_idx(m, f->filename, err, "function %zu (id %" PRIu64 ") filename", i, f->id)))
      return rc;
  }
  for (i = 0; i < m->n_location; i++) {
    const Perftools__Profiles__Location *l = m->location[i];
    if (l->mapping_id && !spaa_pprof_find(&d->map_ids, l->mapping_id, &k))
      return INVALID("location %zu (id %" PRIu64 ") references mapping %" PRIu64
                     ", which does not exist", i, l->id, l->mapping_id);
    for (j = 0; j < l->n_line; j++)
      if (l->line[j]->function_id && !spaa_pprof_find(&d->fn_ids, l->line[j]->function_id, &k))
        return INVALID("location %zu (id %" PRIu64 ") line %zu references function %" PRIu64
                       ", which does not exist", i, l->id, j, l->line[j]->function_id);
  }
  /* a profile read in windows has its samples checked as the conversion reads them: one
   * inflate of the whole input fewer */
  return d->stream ? 0 : read_samples(d, err);
}

/* ---- decode -------------------------------------------------------------------------------- */

/* ---- samples on the wire ----------------------------------------------------------------- */

#define PROFILE_SAMPLE 2 /* Profile.sample */

/* In what follows -1 means "these bytes are not protobuf"; the SPAA_E_* codes, all below -1,
 * are the other errors (err filled where they arise, except SPAA_E_NOMEM from the arrays). */

/* p, an array of *cap slots of `size` bytes, grown to hold n + 1 (p itself when it does);
 * NULL when out of memory (p is left as it was). */
static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
  size_t nc;
  void *np;
  if (n < *cap)
    return p;
  nc = *cap ? *cap * 2 : 64;
  if (!(np = realloc(p, nc * size)))
    return NULL;
  *cap = nc;
  return np;
}

/* A growable array of the integers of one repeated field. */
struct ints {
  uint64_t *v;
  size_t n, cap;
};

static int ints_push(struct ints *a, uint64_t v)
{
  uint64_t *nv = grow(a->v, &a->cap, a->n, sizeof(*a->v));
  if (!nv)
    return SPAA_E_NOMEM;
  a->v = nv;
  a->v[a->n++] = v;
  return 0;
}

/* A repeated integer field, packed (LEN) or not (VARINT), appended to a. 0, -1 when
 * malformed, SPAA_E_NOMEM. */
static int read_ints(const struct spaa_pb_field *f, struct ints *a)
{
  size_t pos = 0;
  uint64_t v;
  if (f->wt == SPAA_PB_VARINT)
    return ints_push(a, f->v);
  if (f->wt != SPAA_PB_LEN)
    return -1;
  while (pos < f->len) {
    if (spaa_pb_varint(f->data, f->len, &pos, &v))
      return -1;
    if (ints_push(a, v))
      return SPAA_E_NOMEM;
  }
  return 0;
}

/* One Label message into l. 0 or -1 when malformed. */
static int read_label(const uint8_t *p, size_t n, Perftools__Profiles__Label *l)
{
  static const Perftools__Profiles__Label init = PERFTOOLS__PROFILES__LABEL__INIT;
  struct spaa_pb_field f;
  size_t pos = 0;
  int r;
  *l = init;
  while ((r = spaa_pb_next(p, n, &pos, &f)) == 1) {
    int64_t *dst = f.num == 1 ? &l->key : f.num == 2 ? &l->str : f.num == 3 ? &l->num
                 : f.num == 4 ? &l->num_unit : NULL;
    if (!dst)
      continue; /* an unknown field, skipped as protobuf wants */
    if (f.wt != SPAA_PB_VARINT)
      return -1;
    *dst = (int64_t)f.v;
  }
  return r;
}

/* One Sample message into it->s (its arrays in the iterator's slots). 0, -1 when
 * malformed, SPAA_E_NOMEM. */
static int read_sample(struct spaa_pprof_iter *it, const uint8_t *p, size_t n)
{
  Perftools__Profiles__Sample *s = &it->s;
  struct ints loc = {it->loc, 0, it->cap_loc}, val = {it->val, 0, it->cap_val};
  struct spaa_pb_field f;
  size_t pos = 0, k, n_lab = 0;
  int r = 0, rc = 0;
  while (!rc && (r = spaa_pb_next(p, n, &pos, &f)) == 1) {
    if (f.num == 1) {
      rc = read_ints(&f, &loc);
    } else if (f.num == 2) {
      rc = read_ints(&f, &val);
    } else if (f.num == 3) { /* a label must be a message */
      Perftools__Profiles__Label *nl = grow(it->lab, &it->cap_lab, n_lab, sizeof(*nl));
      if (!nl)
        rc = SPAA_E_NOMEM;
      else if ((it->lab = nl), f.wt != SPAA_PB_LEN)
        rc = -1;
      else
        rc = read_label(f.data, f.len, &nl[n_lab++]);
    } /* else an unknown field, skipped as protobuf wants */
  }
  it->loc = loc.v, it->cap_loc = loc.cap;
  it->val = val.v, it->cap_val = val.cap;
  if (rc || r < 0)
    return rc ? rc : -1;
  if (n_lab > it->cap_labp) { /* pointers made last: lab may have moved while it grew */
    Perftools__Profiles__Label **lp = realloc(it->labp, it->cap_lab * sizeof(*lp));
    if (!lp)
      return SPAA_E_NOMEM;
    it->labp = lp;
    it->cap_labp = it->cap_lab;
  }
  for (k = 0; k < n_lab; k++)
    it->labp[k] = &it->lab[k];
  s->location_id = loc.v, s->n_location_id = loc.n;
  s->value = (int64_t *)val.v, s->n_value = val.n; /* same bits, as protobuf reads an int64 */
  s->label = it->labp, s->n_label = n_lab;
  return 0;
}

/* ---- the wire, read field by field ------------------------------------------------------ */

/* The protobuf bytes of a profile as a window that moves over them: the bytes themselves
 * when they are in memory, or a gzip input inflated a window at a time (a large upload is
 * read twice that way rather than held decoded). */
struct spaa_pprof_src {
  struct spaa_dreader *z; /* the gzip reader, or NULL: p is the whole wire */
  const uint8_t *p;       /* the window: unread bytes p[lo..hi) */
  uint8_t *own;           /* the window's buffer (z only) */
  size_t cap, lo, hi;
  size_t off;             /* wire offset of p[0] (messages) */
  int end;                /* nothing more to read into the window */
};

static int src_open(struct spaa_pprof_src *s, const struct spaa_pprof *d, struct spaa_err *err)
{
  memset(s, 0, sizeof(*s));
  if (!d->stream) {
    s->p = d->wire;
    s->hi = d->wire_len;
    s->end = 1;
    return 0;
  }
  return spaa_dreader_new(SPAA_CODING_GZIP, d->wire, d->wire_len, SPAA_PPROF_MAX_RAW, &s->z,
                          err);
}

static void src_close(struct spaa_pprof_src *s)
{
  spaa_dreader_free(s->z);
  free(s->own);
  memset(s, 0, sizeof(*s));
}

/* At least n unread bytes in the window, or all there are at the end of the wire. 0 or an
 * error with err filled (the inflate's, or SPAA_E_NOMEM). */
static int src_need(struct spaa_pprof_src *s, size_t n, struct spaa_err *err)
{
  size_t made;
  int rc;
  while (s->hi - s->lo < n && !s->end) {
    if (s->lo) { /* slide the unread bytes to the front */
      memmove(s->own, s->own + s->lo, s->hi - s->lo);
      s->off += s->lo;
      s->hi -= s->lo;
      s->lo = 0;
    }
    if (s->cap - s->hi < SPAA_PPROF_WINDOW / 2 || s->cap < n) {
      size_t nc = s->cap ? s->cap * 2 : SPAA_PPROF_WINDOW;
      uint8_t *nb;
      while (nc < n)
        nc *= 2;
      if (!(nb = realloc(s->own, nc)))
        return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      s->own = nb;
      s->cap = nc;
    }
    s->p = s->own;
    if ((rc = spaa_dreader_read(s->z, s->own + s->hi, s->cap - s->hi, &made, err)))
      return rc;
    s->hi += made;
    s->end = made < s->cap - (s->hi - made);
  }
  return 0;
}

/* The next field's head: 1 with f set (a LEN field's bytes not yet read: f->len of them
 * follow in the source) and *head its bytes in the window (valid until the source moves),
 * 0 at the end, -1 when malformed, or an error code. */
static int src_head(struct spaa_pprof_src *s, struct spaa_pb_field *f, const uint8_t **head,
                    struct spaa_err *err)
{
  size_t pos = 0;
  int rc;
  if ((rc = src_need(s, 20, err))) /* a key and a length: two varints */
    return rc;
  *head = s->p + s->lo;
  if ((rc = spaa_pb_head(*head, s->hi - s->lo, &pos, f)) != 1)
    return rc;
  if (f->wt == SPAA_PB_LEN && f->len > SPAA_PPROF_MAX_RAW)
    return -1;
  s->lo += pos;
  return 1;
}

/* The next len bytes whole, in the window (*out valid until the source moves). 0, -1 when
 * the wire ends first, or an error code. */
static int src_take(struct spaa_pprof_src *s, size_t len, const uint8_t **out, struct spaa_err *err)
{
  int rc;
  if ((rc = src_need(s, len, err)))
    return rc;
  if (s->hi - s->lo < len)
    return -1;
  *out = s->p + s->lo;
  s->lo += len;
  return 0;
}

/* Pass the next len bytes by, appended to `to` when it is not NULL. 0, -1 when the wire
 * ends first, or an error code. */
static int src_pass(struct spaa_pprof_src *s, size_t len, struct spaa_buf *to, struct spaa_err *err)
{
  int rc;
  while (len) {
    size_t k;
    if ((rc = src_need(s, 1, err)))
      return rc;
    if (s->hi == s->lo)
      return -1;
    k = s->hi - s->lo < len ? s->hi - s->lo : len;
    if (to && spaa_buf_add(to, s->p + s->lo, k))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    s->lo += k;
    len -= k;
  }
  return 0;
}

/* ---- the samples --------------------------------------------------------------------------- */

void spaa_pprof_iter_init(struct spaa_pprof_iter *it, const struct spaa_pprof *d)
{
  static const Perftools__Profiles__Sample init = PERFTOOLS__PROFILES__SAMPLE__INIT;
  memset(it, 0, sizeof(*it));
  it->d = d;
  it->s = init;
}

static int bad_sample(const struct spaa_pprof_iter *it, struct spaa_err *err)
{
  return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0, "not a pprof profile: sample %zu is not "
                      "a Sample message", it->i);
}

int spaa_pprof_iter_next(struct spaa_pprof_iter *it, const Perftools__Profiles__Sample **s,
                         struct spaa_err *err)
{
  const struct spaa_pprof *d = it->d;
  struct spaa_pb_field f;
  const uint8_t *head = NULL, *body = NULL;
  int rc;
  *s = NULL;
  if (!d->wire) {
    if (it->i < d->msg->n_sample && (rc = check_sample(d, d->msg->sample[it->i], it->i, err)))
      return rc;
    if (it->i < d->msg->n_sample)
      *s = d->msg->sample[it->i++];
    return 0;
  }
  if (!it->src) {
    if (!(it->src = malloc(sizeof(*it->src))))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    if ((rc = src_open(it->src, d, err))) {
      free(it->src);
      it->src = NULL;
      return rc;
    }
  }
  while ((rc = src_head(it->src, &f, &head, err)) == 1) {
    if (f.num != PROFILE_SAMPLE) {
      if (f.wt == SPAA_PB_LEN && (rc = src_pass(it->src, f.len, NULL, err)))
        break;
      continue;
    }
    if (f.wt != SPAA_PB_LEN)
      rc = -1;
    else if (!(rc = src_take(it->src, f.len, &body, err)) && !(rc = read_sample(it, body, f.len))) {
      if ((rc = check_sample(d, &it->s, it->i, err)))
        return rc;
      it->i++;
      *s = &it->s;
      return 0;
    }
    break;
  }
  if (rc == -1) /* the split found the wire sound: what is wrong is inside a sample */
    return bad_sample(it, err);
  return rc == SPAA_E_NOMEM ? spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL) : rc;
}

void spaa_pprof_iter_free(struct spaa_pprof_iter *it)
{
  if (it->src) {
    src_close(it->src);
    free(it->src);
  }
  free(it->loc);
  free(it->val);
  free(it->labp);
  free(it->lab);
  memset(it, 0, sizeof(*it));
}

/* Split the wire: count the samples (left where they are) and copy every other field, in
 * order, into rest (what protobuf-c unpacks). 0, -1 when the bytes are not a protobuf
 * message or a sample is not length-delimited, or an error code with err filled. */
static int split_wire(struct spaa_pprof *d, struct spaa_buf *rest, struct spaa_err *err)
{
  struct spaa_pb_field f;
  struct spaa_pprof_src s;
  const uint8_t *head = NULL;
  int rc;
  if ((rc = src_open(&s, d, err)))
    return rc;
  while ((rc = src_head(&s, &f, &head, err)) == 1) {
    if (f.num == PROFILE_SAMPLE) {
      if (f.wt != SPAA_PB_LEN) {
        rc = -1;
        break;
      }
      d->n_samples++;
      if ((rc = src_pass(&s, f.len, NULL, err)))
        break;
      continue;
    }
    if (spaa_buf_add(rest, head, (size_t)(s.p + s.lo - head))) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      break;
    }
    if (f.wt == SPAA_PB_LEN && (rc = src_pass(&s, f.len, rest, err)))
      break;
  }
  d->raw_len = s.off + s.hi;
  src_close(&s);
  return rc;
}

/* ---- decode -------------------------------------------------------------------------------- */

int spaa_pprof__decode(const uint8_t *buf, size_t len, size_t stream_over,
                       struct spaa_pprof **out, struct spaa_err *err)
{
  struct spaa_pprof *d = NULL;
  struct spaa_buf rest;
  ProtobufCAllocator alloc;
  int rc = 0;

  *out = NULL;
  spaa_buf_init(&rest, 0);
  if (!(d = calloc(1, sizeof(*d))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  spaa_buf_init(&d->raw, 0);
  d->wire = buf;
  d->wire_len = len;
  if (spaa_is_gzip(buf, len)) {
    d->was_gzip = 1;
    if (len > stream_over) {
      d->stream = 1; /* inflated as it is read, at every pass */
    } else {
      if ((rc = spaa_decompress(SPAA_CODING_GZIP, buf, len, SPAA_PPROF_MAX_RAW, &d->raw, err)))
        goto out;
      d->wire = (const uint8_t *)(d->raw.p ? d->raw.p : "");
      d->wire_len = d->raw.len;
    }
  } else if (len > SPAA_PPROF_MAX_RAW) {
    rc = spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "pprof is larger than %u bytes",
                      SPAA_PPROF_MAX_RAW);
    goto out;
  }
  if ((rc = split_wire(d, &rest, err)) == -1) {
    rc = spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0, "not a pprof profile: %s",
                      d->was_gzip ? "the decompressed bytes are not a protobuf Profile"
                                  : "the bytes are neither gzip nor a protobuf Profile");
    goto out;
  }
  if (rc)
    goto out;
  if (!(d->arena = arena_new(SPAA_PPROF_MAX_DECODED))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  alloc.alloc = arena_alloc;
  alloc.free = arena_free_one;
  alloc.allocator_data = d->arena;
  d->msg = (Perftools__Profiles__Profile *)protobuf_c_message_unpack(
      &perftools__profiles__profile__descriptor, &alloc, rest.len,
      (const uint8_t *)(rest.p ? rest.p : ""));
  spaa_buf_free(&rest);
  if (!d->msg) {
    if (d->arena->over_cap)
      rc = spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0,
                        "pprof would need more than %u MiB once unpacked",
                        SPAA_PPROF_MAX_DECODED >> 20);
    else if (d->arena->no_mem)
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    else
      rc = spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0, "not a pprof profile: %s",
                        d->was_gzip ? "the decompressed bytes are not a protobuf Profile"
                                    : "the bytes are neither gzip nor a protobuf Profile");
    goto out;
  }
  if ((rc = spaa_pprof_validate(d, err)))
    goto out;
  *out = d;
  d = NULL;
out:
  spaa_buf_free(&rest);
  spaa_pprof_free(d);
  return rc;
}

int spaa_pprof_decode(const uint8_t *buf, size_t len, struct spaa_pprof **out,
                      struct spaa_err *err)
{
  return spaa_pprof__decode(buf, len, SPAA_PPROF_STREAM_OVER, out, err);
}

void spaa_pprof_free(struct spaa_pprof *d)
{
  if (!d)
    return;
  spaa_idmap_free(&d->loc_ids.map);
  spaa_idmap_free(&d->fn_ids.map);
  spaa_idmap_free(&d->map_ids.map);
  arena_destroy(d->arena); /* NULL when msg belongs to the caller */
  spaa_buf_free(&d->raw);
  free(d);
}
