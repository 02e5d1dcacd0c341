/* pprof decoding: gzip by magic under a cap (base/compress), protoc-c unpack into a capped
 * arena, and the validation of every string index, id and reference before anything uses
 * them. */
#include "pprof/pprof.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/limits.h"
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
  for (i = 0; i < m->n_sample; i++) {
    const Perftools__Profiles__Sample *s = m->sample[i];
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
  }
  return 0;
}

/* ---- decode -------------------------------------------------------------------------------- */

int spaa_pprof_decode(const uint8_t *buf, size_t len, struct spaa_pprof **out,
                      struct spaa_err *err)
{
  struct spaa_pprof *d = NULL;
  struct spaa_buf raw;
  const uint8_t *pb = buf;
  size_t pb_len = len;
  ProtobufCAllocator alloc;
  int rc = 0;

  *out = NULL;
  spaa_buf_init(&raw, 0);
  if (!(d = calloc(1, sizeof(*d))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if (spaa_is_gzip(buf, len)) {
    d->was_gzip = 1;
    if ((rc = spaa_decompress(SPAA_CODING_GZIP, buf, len, SPAA_PPROF_MAX_RAW, &raw, err)))
      goto out;
    pb = (const uint8_t *)raw.p;
    pb_len = raw.len;
  } else if (len > SPAA_PPROF_MAX_RAW) {
    rc = spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "pprof is larger than %u bytes",
                      SPAA_PPROF_MAX_RAW);
    goto out;
  }
  d->raw_len = pb_len;
  if (!(d->arena = arena_new(SPAA_PPROF_MAX_DECODED))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  alloc.alloc = arena_alloc;
  alloc.free = arena_free_one;
  alloc.allocator_data = d->arena;
  d->msg = (Perftools__Profiles__Profile *)protobuf_c_message_unpack(
      &perftools__profiles__profile__descriptor, &alloc, pb_len, pb);
  spaa_buf_free(&raw);
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
  spaa_buf_free(&raw);
  spaa_pprof_free(d);
  return rc;
}

void spaa_pprof_free(struct spaa_pprof *d)
{
  if (!d)
    return;
  spaa_idmap_free(&d->loc_ids.map);
  spaa_idmap_free(&d->fn_ids.map);
  spaa_idmap_free(&d->map_ids.map);
  arena_destroy(d->arena); /* NULL when msg belongs to the caller */
  free(d);
}
