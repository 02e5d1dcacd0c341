/* OTLP profiles -> SPAA: one SPAA profile per OTLP Profile (field table in
 * docs/otlp-mapping.md). Stacks are built once per distinct (stack, attributes, link). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/idmap.h"
#include "base/limits.h"
#include "otlp/otlp_int.h"
#include "spaa/spaa_io.h"

#define KEY_FRAME_TYPE "profile.frame.type"

/* A sample's identity, copied (the sample itself may be a scratch one): its stack, link
 * and attribute indices (n_attr of them at cv.pool[attr_off]). */
struct sid {
  int32_t stack_index, link_index;
  uint32_t n_attr, attr_off; /* (a pool of more than 2^32 indices is refused) */
};

/* per SPAA stack built from OTLP samples: 40 bytes, one per distinct identity */
struct stk {
  struct sid rep;       /* the identity of its samples */
  const char *id;       /* local stack id (arena) */
  int64_t sum;          /* total weight */
  uint32_t ctx;         /* its context's entry in cv.ctxs (thread.id, cpu.logical_number) */
};

/* conversion state for one dictionary; per-profile parts are reset by generation stamps */
struct cv {
  struct otlp_dictx *x;
  const OT_Dict *d;
  const struct otlp_cdict *cd; /* d's locations and stacks */
  struct spaa_meter *meter; /* the models' (opts), or NULL */
  int compact;              /* samples as compact ones (opts.compact_samples) */
  struct spaa_profile *p;   /* the profile being built */
  uint32_t gen;             /* profile generation */
  uint32_t *loc_gen;        /* per location: generation its frames were made in */
  uint64_t *loc_frame;      /* per location: id of its first (innermost) frame */
  uint32_t *loc_nfr;        /* per location: how many frames it made (no Location read) */
  uint32_t *st_gen;         /* per stack entry: generation its frame list was made in */
  uint64_t **st_frames;     /* per stack entry: that list (the model's, shared by the SPAA
                             * stacks of this entry: one per distinct attributes) */
  size_t *st_nfr;           /* per stack entry: its length */
  uint32_t *fn_gen;         /* per function: generation its name was copied in */
  const char **fn_name;     /* per function: that copy (the model's arena), shared by the
                             * frames of the function */
  uint32_t *map_gen;        /* per mapping: generation its dso was made in */
  uint64_t *map_dso;        /* per mapping: dso id */
  uint64_t next_frame, next_dso;
  struct {
    const char *type;       /* frame type ("" = none) */
    uint64_t dso;
  } nodso[16];              /* synthetic dsos for mapping-less frames, per frame type */
  size_t n_nodso;
  uint32_t *stk_slots;      /* open addressing over stk by identity (index + 1, 0 empty; at
                             * most half full; 4 bytes a slot, where a map of hashes took 16) */
  size_t cap_slots;         /* a power of two, or 0 */
  struct stk *stk;
  size_t n_stk, cap_stk;
  uint64_t *tmp;            /* frame ids of the stack being built */
  size_t cap_tmp;
  struct spaa_idmap threads; /* tid -> 1 */
  struct spaa_idmap ctxmap; /* (attributes, link) hash -> index in ctxs */
  struct ctxe {
    struct sid rep;         /* the identity of a sample with these attributes and link */
    json_t *ctx;            /* the stack context made for them (owned by a stack), or NULL */
    int has_tid, has_cpu;   /* thread.id / cpu.logical_number found */
    int64_t tid, cpu;
    uint32_t cc;            /* its entry in the model's cs.ctxs + 1 (compact samples), or 0 */
  } *ctxs;                  /* contexts made in this profile, shared by their stacks */
  size_t n_ctxs, cap_ctxs;
  int has_pid;
  int64_t pid;
  const char *event;        /* interned event name */
  const char *metric;       /* interned metric name */
  const char *unit;         /* interned unit or NULL */
  int32_t k_frame_type, k_tid, k_tname, k_cpu; /* canonical string index of keys, -1 if absent */
  int32_t *pool;            /* attribute indices of the identities (per profile) */
  size_t n_pool, cap_pool;
  struct spaa_idmap xmap;   /* hash of an extra's content -> index in xs */
  struct xe {               /* the content extra_new makes an object of */
    const char *ftype;      /* frame type (dictionary string) or NULL */
    const char *sys;        /* system name when it differs from the name, else NULL */
    int64_t column, start_line;
    json_t *extra;          /* the frames' extra object (borrowed from its first frame) */
  } *xs;                    /* extras made in this profile, shared by frames alike */
  size_t n_xs, cap_xs;
  struct spaa_err *err;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

static int nomem(struct cv *c) { return spaa_err_set(c->err, SPAA_E_NOMEM, 0, 0, NULL); }

static json_t *b64(const uint8_t *b, size_t n)
{
  static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i, o = 0;
  char *s = malloc((n + 2) / 3 * 4 + 1);
  json_t *j;
  if (!s)
    return NULL;
  for (i = 0; i + 2 < n; i += 3) {
    uint32_t v = (uint32_t)b[i] << 16 | (uint32_t)b[i + 1] << 8 | b[i + 2];
    s[o++] = al[v >> 18];
    s[o++] = al[(v >> 12) & 63];
    s[o++] = al[(v >> 6) & 63];
    s[o++] = al[v & 63];
  }
  if (i < n) {
    uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0);
    s[o++] = al[v >> 18];
    s[o++] = al[(v >> 12) & 63];
    s[o++] = i + 1 < n ? al[(v >> 6) & 63] : '=';
    s[o++] = '=';
  }
  s[o] = 0;
  j = json_stringn(s, o);
  free(s);
  return j;
}

/* AnyValue -> JSON (new reference), NULL on OOM or invalid UTF-8 */
static json_t *any_json(const OT_Dict *d, const OT_AnyValue *v, int depth)
{
  json_t *j;
  size_t i;
  if (!v || depth > OTLP_MAX_DEPTH)
    return json_null();
  switch (v->value_case) {
  case OT_ANY(STRING_VALUE):
    return json_string(v->string_value ? v->string_value : "");
  case OT_ANY(STRING_VALUE_STRINDEX): {
    const char *s = otlp__str(d, v->string_value_strindex);
    return s ? json_string(s) : NULL;
  }
  case OT_ANY(BOOL_VALUE):
    return json_boolean(v->bool_value);
  case OT_ANY(INT_VALUE):
    return json_integer(v->int_value);
  case OT_ANY(DOUBLE_VALUE):
    return isfinite(v->double_value) ? json_real(v->double_value) : json_null();
  case OT_ANY(BYTES_VALUE):
    return b64(v->bytes_value.data, v->bytes_value.len);
  case OT_ANY(ARRAY_VALUE):
    if (!(j = json_array()))
      return NULL;
    for (i = 0; v->array_value && i < v->array_value->n_values; i++)
      if (json_array_append_new(j, any_json(d, v->array_value->values[i], depth + 1))) {
        json_decref(j);
        return NULL;
      }
    return j;
  case OT_ANY(KVLIST_VALUE):
    if (!(j = json_object()))
      return NULL;
    for (i = 0; v->kvlist_value && i < v->kvlist_value->n_values; i++) {
      const OT_KeyValue *kv = v->kvlist_value->values[i];
      const char *k = kv->key && kv->key[0] ? kv->key : otlp__str(d, kv->key_strindex);
      if (!k || json_object_set_new(j, k, any_json(d, kv->value, depth + 1))) {
        json_decref(j);
        return NULL;
      }
    }
    return j;
  default:
    return json_null();
  }
}

/* set obj[prefix + key] = value (stolen); 0 or -1 */
static int set_pref(json_t *obj, const char *prefix, const char *key, json_t *value)
{
  char name[512];
  if (!value)
    return -1;
  snprintf(name, sizeof(name), "%s%s", prefix, key);
  return json_object_set_new(obj, name, value);
}

/* the string value of an attribute, or NULL */
static const char *attr_str(const OT_Dict *d, const OT_AnyValue *v)
{
  if (!v)
    return NULL;
  if (v->value_case == OT_ANY(STRING_VALUE))
    return v->string_value;
  if (v->value_case == OT_ANY(STRING_VALUE_STRINDEX))
    return otlp__str(d, v->string_value_strindex);
  return NULL;
}

static int is_hex(const char *s)
{
  size_t n = 0;
  for (; s[n]; n++)
    if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') ||
          (s[n] >= 'A' && s[n] <= 'F')))
      return 0;
  return n > 0 && n % 2 == 0;
}

/* the canonical string index of key k (validated before conversion; guarded all the same) */
static int32_t canon_key(const struct otlp_dictx *x, int32_t k)
{
  return k > 0 && (size_t)k < x->d->n_string_table ? x->canon[k] : 0;
}

/* the canonical string index of a literal key, or -1 when the table does not hold it */
static int32_t find_key(const struct otlp_dictx *x, const char *s)
{
  size_t i;
  for (i = 1; i < x->d->n_string_table; i++)
    if (strcmp(x->d->string_table[i], s) == 0)
      return x->canon[i];
  return -1;
}

/* ---- dsos and frames ------------------------------------------------------------------- */

static int dso_for_mapping(struct cv *c, int32_t mi, uint64_t *out)
{
  const OT_Mapping *m = c->d->mapping_table[mi];
  struct spaa_dso *ds;
  const char *name, *bid = NULL;
  int bid_rank = 99;
  size_t i;
  json_t *extra = NULL;
  if (c->map_gen[mi] == c->gen) {
    *out = c->map_dso[mi];
    return 0;
  }
  if (!(ds = spaa_add_dso(c->p)))
    return nomem(c);
  ds->id = c->next_dso++;
  name = otlp__str(c->d, m->filename_strindex);
  if (!(ds->name = spaa_strdup(c->p, name)))
    return nomem(c);
  ds->is_kernel = strcmp(name, "vmlinux") == 0 || strncmp(name, "[kernel", 7) == 0;
  if (m->memory_start || m->memory_limit || m->file_offset) {
    ds->has_mapping = 1;
    ds->map_start = m->memory_start;
    ds->map_limit = m->memory_limit;
    ds->map_offset = m->file_offset;
  }
  for (i = 0; i < m->n_attribute_indices; i++) {
    const OT_KVU *a = c->d->attribute_table[m->attribute_indices[i]];
    const char *k = otlp__str(c->d, a->key_strindex), *v = attr_str(c->d, a->value);
    static const char *const ranks[] = {"process.executable.build_id.gnu",
                                        "process.executable.build_id.go",
                                        "process.executable.build_id.htlhash",
                                        "process.executable.build_id.profiling"};
    int r;
    for (r = 0; r < 4; r++)
      if (v && strcmp(k, ranks[r]) == 0 && r < bid_rank && is_hex(v)) {
        bid = v;
        bid_rank = r;
      }
    if ((!extra && !(extra = json_object())) ||
        set_pref(extra, "x_otel_attr_", k, any_json(c->d, a->value, 0))) {
      json_decref(extra);
      return nomem(c);
    }
  }
  ds = &c->p->dsos[c->p->n_dsos - 1];
  ds->extra = extra;
  if (bid) {
    char *lower = (char *)spaa_strdup(c->p, bid);
    if (!lower)
      return nomem(c);
    for (i = 0; lower[i]; i++)
      if (lower[i] >= 'A' && lower[i] <= 'F')
        lower[i] = (char)(lower[i] - 'A' + 'a');
    ds->build_id = lower;
  }
  c->map_gen[mi] = c->gen;
  c->map_dso[mi] = ds->id;
  *out = ds->id;
  return 0;
}

/* a dso for frames without a mapping, one per frame type ("[cpython]", "[unknown]") */
static int dso_for_type(struct cv *c, const char *type, uint64_t *out)
{
  struct spaa_dso *ds;
  char name[96];
  size_t i;
  for (i = 0; i < c->n_nodso; i++)
    if (strcmp(c->nodso[i].type, type) == 0) {
      *out = c->nodso[i].dso;
      return 0;
    }
  if (!(ds = spaa_add_dso(c->p)))
    return nomem(c);
  ds->id = c->next_dso++;
  snprintf(name, sizeof(name), "[%s]", type[0] ? type : "unknown");
  if (!(ds->name = spaa_strdup(c->p, name)))
    return nomem(c);
  ds->is_kernel = strcmp(type, "kernel") == 0;
  if (c->n_nodso < sizeof(c->nodso) / sizeof(c->nodso[0])) {
    c->nodso[c->n_nodso].type = type;
    c->nodso[c->n_nodso++].dso = ds->id;
  }
  *out = ds->id;
  return 0;
}

static int extra_set(json_t **x, const char *key, json_t *v)
{
  if (!v || (!*x && !(*x = json_object()))) {
    json_decref(v);
    return -1;
  }
  return json_object_set_new(*x, key, v);
}

/* A new extra object for a frame of function fn (NULL: none) named `name` (its system name
 * sys), at column col, of frame type ftype (NULL: none): in *x, left NULL when there is
 * nothing to hold. 0 or -1 on OOM. */
static int extra_new(const OT_Function *fn, int64_t col, const char *ftype, const char *name,
                     const char *sys, json_t **x)
{
  if ((ftype && extra_set(x, "x_otel_frame_type", json_string(ftype))) ||
      (sys[0] && strcmp(sys, name) && extra_set(x, "x_otel_system_name", json_string(sys))) ||
      (col && extra_set(x, "x_otel_column", json_integer(col))) ||
      (fn && fn->start_line && extra_set(x, "x_otel_start_line", json_integer(fn->start_line)))) {
    json_decref(*x);
    *x = NULL;
    return -1;
  }
  return 0;
}

/* The extra object (extra_new) of a frame of function index fi, shared by the frames whose
 * extra holds the same (never changed once made; an eBPF profile's frames all carry their
 * frame type, functions of one start line share it): a new reference in *out. 0 or
 * SPAA_E_NOMEM. */
static int frame_extra(struct cv *c, int32_t fi, int64_t col, const char *ftype,
                       const char *name, const char *sys, json_t **out)
{
  const OT_Function *fn = fi > 0 ? c->d->function_table[fi] : NULL;
  const char *sysx = sys[0] && strcmp(sys, name) ? sys : NULL;
  int64_t start = fn ? fn->start_line : 0;
  uint64_t h = mix(mix(mix((uint64_t)(uintptr_t)ftype, (uint64_t)(uintptr_t)sysx), (uint64_t)col),
                   (uint64_t)start);
  json_t *x = NULL;
  size_t k;
  for (;; h = mix(h, 1)) {
    if (!spaa_idmap_get(&c->xmap, h, &k))
      break;
    if (c->xs[k].ftype == ftype && c->xs[k].sys == sysx && c->xs[k].column == col &&
        c->xs[k].start_line == start) {
      *out = json_incref(c->xs[k].extra);
      return 0;
    }
  }
  if (extra_new(fn, col, ftype, name, sys, &x))
    return SPAA_E_NOMEM;
  if (otlp__room((void **)&c->xs, c->n_xs + 1, &c->cap_xs, sizeof(*c->xs)) ||
      spaa_idmap_put(&c->xmap, h, c->n_xs, NULL) < 0)
    goto nomem;
  c->xs[c->n_xs].ftype = ftype;
  c->xs[c->n_xs].sys = sysx;
  c->xs[c->n_xs].column = col;
  c->xs[c->n_xs].start_line = start;
  c->xs[c->n_xs++].extra = x;
  *out = x;
  return 0;
nomem:
  json_decref(x);
  return SPAA_E_NOMEM;
}

/* Make the frames of location li (innermost inline first); *first receives the first id. */
static int location_frames(struct cv *c, int32_t li)
{
  const struct otlp_cloc *l = &c->cd->locs[li];
  const struct otlp_cline *lines = otlp__loc_lines(c->cd, l);
  const int32_t *lattr = otlp__loc_attrs(c->cd, l);
  const char *ftype = NULL;
  json_t *attrs = NULL;
  uint64_t dso = 0;
  size_t i, n = l->n_lines ? l->n_lines : 1;
  int rc;
  for (i = 0; i < l->n_attrs; i++) {
    const OT_KVU *a = c->d->attribute_table[lattr[i]];
    if (canon_key(c->x, a->key_strindex) == c->k_frame_type && attr_str(c->d, a->value)) {
      ftype = attr_str(c->d, a->value);
    } else {
      if ((!attrs && !(attrs = json_object())) ||
          set_pref(attrs, "x_otel_attr_", otlp__str(c->d, a->key_strindex),
                   any_json(c->d, a->value, 0))) {
        json_decref(attrs);
        return nomem(c);
      }
    }
  }
  if (l->mapping_index > 0)
    rc = dso_for_mapping(c, l->mapping_index, &dso);
  else
    rc = dso_for_type(c, ftype ? ftype : "", &dso);
  if (rc)
    goto out;
  c->loc_gen[li] = c->gen;
  c->loc_frame[li] = c->next_frame;
  c->loc_nfr[li] = (uint32_t)n;
  for (i = 0; i < n; i++) {
    struct spaa_frame *f = spaa_add_frame(c->p);
    const struct otlp_cline *ln = lines ? &lines[i] : NULL;
    const OT_Function *fn =
        ln && ln->function_index > 0 ? c->d->function_table[ln->function_index] : NULL;
    const char *name = fn ? otlp__str(c->d, fn->name_strindex) : "";
    const char *sys = fn ? otlp__str(c->d, fn->system_name_strindex) : "";
    const char *file = fn ? otlp__str(c->d, fn->filename_strindex) : "";
    char buf[40];
    rc = SPAA_E_NOMEM;
    if (!f)
      goto out;
    f->id = c->next_frame++;
    f->has_dso = 1;
    f->dso = dso;
    f->has_ip = l->address != 0 || !name[0];
    f->ip = l->address;
    if (!name[0])
      name = sys;
    if (name[0] && fn && c->fn_gen && (size_t)ln->function_index < c->d->n_function_table) {
      /* one copy per function: name is its name, else its system name, for every frame */
      size_t fi = (size_t)ln->function_index;
      if (c->fn_gen[fi] != c->gen && (c->fn_name[fi] = spaa_strdup(c->p, name)))
        c->fn_gen[fi] = c->gen;
      f->func = c->fn_gen[fi] == c->gen ? c->fn_name[fi] : NULL;
    } else if (name[0]) {
      f->func = spaa_strdup(c->p, name);
    } else {
      spaa_hex_addr(buf, l->address);
      f->func = spaa_strdup(c->p, buf);
      f->func_resolved = 0;
    }
    if (!f->func)
      goto out;
    if (file[0] || (ln && ln->line > 0)) {
      /* "file:line", "file" when the line is 0, ":line" when only the line is known */
      char *sl, dg[24];
      size_t fl = strlen(file), nd = 0;
      if (ln && ln->line > 0) { /* the digits without printf's cost per frame */
        uint64_t v = (uint64_t)ln->line;
        do
          dg[nd++] = (char)('0' + v % 10);
        while ((v /= 10) && nd < sizeof(dg));
      }
      if (!(sl = spaa_alloc(c->p, fl + (nd ? nd + 2 : 1)))) /* exact: 66 k of them a profile */
        goto out;
      memcpy(sl, file, fl + 1);
      if (nd) {
        sl[fl++] = ':';
        while (nd)
          sl[fl++] = dg[--nd];
        sl[fl] = 0;
      }
      f->srcline = sl;
    } else {
      f->srcline_resolved = 0;
    }
    if (n > 1) {
      f->has_inline_depth = 1;
      f->inline_depth = (uint32_t)(n - 1 - i);
      f->inlined = i + 1 < n;
    }
    f->kind = ftype && strcmp(ftype, "kernel") == 0 ? "kernel" : "user";
    if (!attrs) {
      if (frame_extra(c, ln ? ln->function_index : 0, ln ? ln->column : 0, ftype, name, sys,
                      &f->extra))
        goto out;
    } else if (extra_new(fn, ln ? ln->column : 0, ftype, name, sys, &f->extra) ||
               /* the location's own attributes: an object of its own */
               !(f->extra || (f->extra = json_object())) ||
               json_object_update(f->extra, attrs)) {
      goto out;
    }
  }
  rc = 0;
out:
  json_decref(attrs);
  return rc ? spaa_err_set(c->err, rc, 0, 0, NULL) : 0;
}

/* ---- stacks -------------------------------------------------------------------------- */

/* Copy the identity of s into *out. 0 or SPAA_E_NOMEM (c->err filled). */
static int sid_make(struct cv *c, const OT_Sample *s, struct sid *out)
{
  size_t n = s->n_attribute_indices;
  if (n > UINT32_MAX - c->n_pool ||
      otlp__room((void **)&c->pool, c->n_pool + n, &c->cap_pool, sizeof(*c->pool)))
    return nomem(c);
  out->stack_index = s->stack_index;
  out->link_index = s->link_index;
  out->n_attr = (uint32_t)n;
  out->attr_off = (uint32_t)c->n_pool;
  if (n)
    memcpy(c->pool + c->n_pool, s->attribute_indices, n * sizeof(int32_t));
  c->n_pool += n;
  return 0;
}

/* 1 when sample b has identity a's attributes and link. */
static int same_context(const struct cv *c, const struct sid *a, const OT_Sample *b)
{
  return a->link_index == b->link_index && a->n_attr == b->n_attribute_indices &&
         (!a->n_attr ||
          memcmp(c->pool + a->attr_off, b->attribute_indices, a->n_attr * sizeof(int32_t)) == 0);
}

/* 1 when sample b has identity a (stack, link and attributes). */
static int same_identity(const struct cv *c, const struct sid *a, const OT_Sample *b)
{
  return a->stack_index == b->stack_index && same_context(c, a, b);
}

/* The hash of an identity: its stack, link and attribute indices. */
static uint64_t identity_hash(int32_t stack_index, int32_t link_index, const int32_t *attrs,
                              size_t n_attrs)
{
  uint64_t h = mix(mix((uint64_t)(uint32_t)stack_index, (uint64_t)(uint32_t)link_index), n_attrs);
  size_t j;
  for (j = 0; j < n_attrs; j++)
    h = mix(h, (uint64_t)(uint32_t)attrs[j]);
  return h;
}

/* The slot of sample s's identity in c->stk_slots: the one naming its stack, or the empty
 * one where it would go. */
static size_t stk_slot(const struct cv *c, const OT_Sample *s, uint64_t h)
{
  size_t i = (size_t)h & (c->cap_slots - 1);
  while (c->stk_slots[i] && !same_identity(c, &c->stk[c->stk_slots[i] - 1].rep, s))
    i = (i + 1) & (c->cap_slots - 1);
  return i;
}

/* Room in c->stk_slots for one more stack (the table doubled and refilled when it would be
 * more than half full). 0 or SPAA_E_NOMEM. */
static int stk_slots_room(struct cv *c)
{
  size_t cap = c->cap_slots ? c->cap_slots : 1024, i, k;
  uint32_t *ns;
  if (2 * (c->n_stk + 1) <= c->cap_slots)
    return 0;
  while (2 * (c->n_stk + 1) > cap)
    cap <<= 1;
  if (c->n_stk >= UINT32_MAX || !(ns = calloc(cap, sizeof(*ns))))
    return nomem(c);
  for (i = 0; i < c->n_stk; i++) {
    const struct sid *r = &c->stk[i].rep;
    k = (size_t)identity_hash(r->stack_index, r->link_index, c->pool + r->attr_off, r->n_attr) &
        (cap - 1);
    while (ns[k])
      k = (k + 1) & (cap - 1);
    ns[k] = (uint32_t)(i + 1);
  }
  free(c->stk_slots);
  c->stk_slots = ns;
  c->cap_slots = cap;
  return 0;
}

static int zero_bin(const ProtobufCBinaryData *b)
{
  size_t i;
  for (i = 0; i < b->len; i++)
    if (b->data[i])
      return 0;
  return 1;
}

/* The context of sample s's stack (attributes and link), found among those made in this
 * profile or made now: *out = index in c->ctxs. Stacks share the object (json_incref): it
 * is never changed once made. */
static int stack_context(struct cv *c, const OT_Sample *s, size_t *out)
{
  uint64_t h = mix((uint64_t)(uint32_t)s->link_index, s->n_attribute_indices);
  struct ctxe *e;
  json_t *ctx = NULL;
  size_t i, k;
  for (i = 0; i < s->n_attribute_indices; i++)
    h = mix(h, (uint64_t)(uint32_t)s->attribute_indices[i]);
  /* a hash collision with another list makes its own entry, found by a linear probe */
  for (;; h = mix(h, 1)) {
    if (!spaa_idmap_get(&c->ctxmap, h, &k))
      break;
    if (same_context(c, &c->ctxs[k].rep, s)) {
      *out = k;
      return 0;
    }
  }
  if (otlp__room((void **)&c->ctxs, c->n_ctxs + 1, &c->cap_ctxs, sizeof(*c->ctxs)))
    return nomem(c);
  e = &c->ctxs[c->n_ctxs];
  memset(e, 0, sizeof(*e));
  if (sid_make(c, s, &e->rep))
    return SPAA_E_NOMEM;
  for (i = 0; i < s->n_attribute_indices; i++) {
    const OT_KVU *a = c->d->attribute_table[s->attribute_indices[i]];
    const char *key = otlp__str(c->d, a->key_strindex);
    int32_t ck = canon_key(c->x, a->key_strindex);
    if ((!ctx && !(ctx = json_object())) ||
        set_pref(ctx, "x_otel_attr_", key, any_json(c->d, a->value, 0)))
      goto nomem;
    if (a->unit_strindex && set_pref(ctx, "x_otel_unit_", key,
                                     json_string(otlp__str(c->d, a->unit_strindex))))
      goto nomem;
    if (a->value && a->value->value_case == OT_ANY(INT_VALUE)) {
      if (ck == c->k_tid) {
        e->has_tid = 1;
        e->tid = a->value->int_value;
      } else if (ck == c->k_cpu) {
        e->has_cpu = 1;
        e->cpu = a->value->int_value;
      }
    }
  }
  if (s->link_index > 0) {
    const OT_Link *ln = c->d->link_table[s->link_index];
    char tid[40], sid[40];
    if (!zero_bin(&ln->trace_id) || !zero_bin(&ln->span_id)) {
      spaa_hex_encode(tid, ln->trace_id.data, ln->trace_id.len);
      spaa_hex_encode(sid, ln->span_id.data, ln->span_id.len);
      if ((!ctx && !(ctx = json_object())) ||
          (ln->trace_id.len &&
           json_object_set_new(ctx, "x_otel_trace_id", json_string(tid))) ||
          (ln->span_id.len && json_object_set_new(ctx, "x_otel_span_id", json_string(sid))))
        goto nomem;
    }
  }
  if (spaa_idmap_put(&c->ctxmap, h, c->n_ctxs, NULL) < 0)
    goto nomem;
  e->ctx = ctx; /* this reference is the cache's; each stack takes its own */
  *out = c->n_ctxs++;
  return 0;
nomem:
  json_decref(ctx);
  return nomem(c);
}

/* Build the SPAA stack for sample s; *out = index in c->stk. */
static int new_stack(struct cv *c, const OT_Sample *s, size_t *out)
{
  const struct otlp_cstack *st = c->cd->n_stacks ? &c->cd->stacks[s->stack_index] : NULL;
  const int32_t *sl = st ? otlp__stack_locs(c->cd, (size_t)s->stack_index) : NULL;
  struct spaa_stack *sp;
  struct stk *k;
  json_t *ctx = NULL;
  size_t i, j, nf = 0, ce = 0;
  char idb[32];
  int rc;
  /* frames, leaf first; each location expands to its lines, innermost first (made once
   * per stack entry and profile: its other stacks share the list) */
  for (i = 0; st && c->st_gen[s->stack_index] != c->gen && i < st->n; i++) {
    int32_t li = sl[i];
    size_t n;
    if (li == 0)
      continue;
    if (c->loc_gen[li] != c->gen && (rc = location_frames(c, li)))
      return rc;
    n = c->loc_nfr[li];
    if (otlp__room((void **)&c->tmp, nf + n, &c->cap_tmp, sizeof(*c->tmp)))
      return nomem(c);
    for (j = 0; j < n; j++)
      c->tmp[nf++] = c->loc_frame[li] + j;
  }
  if (otlp__room((void **)&c->stk, c->n_stk + 1, &c->cap_stk, sizeof(*c->stk)))
    return nomem(c);
  k = &c->stk[c->n_stk];
  memset(k, 0, sizeof(*k));
  if ((rc = sid_make(c, s, &k->rep)))
    return rc;
  /* context: attributes and link, made once per distinct (attributes, link) */
  if ((rc = stack_context(c, s, &ce)))
    return rc;
  ctx = json_incref(c->ctxs[ce].ctx);
  k->ctx = (uint32_t)ce;
  /* a thread record per thread.id */
  if (c->ctxs[ce].has_tid) {
    int r = spaa_idmap_put(&c->threads, (uint64_t)c->ctxs[ce].tid, 0, NULL);
    if (r < 0)
      goto nomem;
    if (r == 0) {
      struct spaa_thread *t = spaa_add_thread(c->p);
      if (!t)
        goto nomem;
      t->tid = c->ctxs[ce].tid;
      t->pid = c->has_pid ? c->pid : 0;
      for (i = 0; i < s->n_attribute_indices; i++) {
        const OT_KVU *a = c->d->attribute_table[s->attribute_indices[i]];
        if (canon_key(c->x, a->key_strindex) == c->k_tname && attr_str(c->d, a->value) &&
            !(t->comm = spaa_strdup(c->p, attr_str(c->d, a->value))))
          goto nomem;
      }
    }
  }
  if (!(sp = spaa_add_stack(c->p)))
    goto nomem;
  snprintf(idb, sizeof(idb), "s%zu", c->n_stk);
  memcpy(sp->id, idb, strlen(idb) + 1);
  sp->event = c->event;
  sp->context = ctx;
  ctx = NULL;
  if (st && c->st_gen[s->stack_index] == c->gen) {
    if (spaa_stack_share_frames(c->p, sp, c->st_frames[s->stack_index],
                                c->st_nfr[s->stack_index]))
      goto nomem;
  } else if (spaa_stack_set_frames(c->p, sp, c->tmp, nf)) {
    goto nomem;
  } else if (st) {
    c->st_gen[s->stack_index] = c->gen;
    c->st_frames[s->stack_index] = sp->frames;
    c->st_nfr[s->stack_index] = nf;
  }
  if (!c->compact && !(k->id = spaa_strdup(c->p, idb))) /* compact samples name the */
    goto nomem;                                          /* stack by position */
  *out = c->n_stk++;
  return 0;
nomem:
  json_decref(ctx);
  return nomem(c);
}

/* A dso is kernel when its name says so (set when made) or when every frame on it is a
 * kernel frame: a mapping shared by kernel and other frames (the v1experimental ebpf
 * profiler's dummy mapping serves kernel and interpreter frames alike) stays a user dso.
 * Dso ids are their positions + 1 (made in order by this file). 0 or SPAA_E_NOMEM. */
static int mark_kernel_dsos(struct cv *c)
{
  struct spaa_profile *p = c->p;
  unsigned char *seen; /* per dso: 1 kernel frame seen, 2 other frame seen */
  size_t i;
  if (!p->n_dsos)
    return 0;
  if (!(seen = calloc(p->n_dsos, 1)))
    return nomem(c);
  for (i = 0; i < p->n_frames; i++) {
    uint64_t d = p->frames[i].dso;
    if (p->frames[i].has_dso && d >= 1 && d <= p->n_dsos)
      seen[d - 1] |= strcmp(p->frames[i].kind, "kernel") == 0 ? 1 : 2;
  }
  for (i = 0; i < p->n_dsos; i++)
    if (seen[i] == 1)
      p->dsos[i].is_kernel = 1;
  free(seen);
  return 0;
}

/* ---- one profile --------------------------------------------------------------------- */

static const char *event_kind(const char *type, const char *unit)
{
  if (strstr(type, "alloc") || strcmp(unit, "bytes") == 0 || strcmp(unit, "By") == 0)
    return "allocation";
  if (strstr(type, "cycles") || strstr(type, "instructions") || strstr(type, "cache"))
    return "hardware";
  if (strstr(type, "off_cpu") || strcmp(type, "events") == 0 || strstr(type, "lock") ||
      strstr(type, "contention") || strstr(type, "block") || strstr(type, "mutex"))
    return "probe";
  return "timer";
}

/* 1 when s is empty or only spaces. */
static int blank(const char *s)
{
  while (*s == ' ' || *s == '\t')
    s++;
  return !*s;
}

/* resource / scope / profile attributes into obj under prefix; labels get scalar strings */
static int kv_list(struct cv *c, const OT_KeyValue *const *kv, size_t n, json_t *obj,
                   const char *prefix, json_t *labels, const char **service, const char **exe)
{
  size_t i;
  for (i = 0; i < n; i++) {
    const char *k = kv[i]->key && kv[i]->key[0] ? kv[i]->key : otlp__str(c->d, kv[i]->key_strindex);
    json_t *v;
    if (!k)
      return spaa_err_set(c->err, SPAA_E_INVALID, 0, 0, "attribute %zu references string %" PRId32
                          ", but there are %zu strings", i, kv[i]->key_strindex,
                          c->d->n_string_table);
    if (!(v = any_json(c->d, kv[i]->value, 0)))
      return spaa_err_set(c->err, SPAA_E_INVALID, 0, 0, "attribute \"%s\" has a value that "
                          "cannot be resolved", k);
    if (labels) {
      char num[48];
      const char *sv = NULL;
      if (json_is_string(v))
        sv = json_string_value(v);
      else if (json_is_integer(v))
        snprintf(num, sizeof(num), "%" PRId64, (int64_t)json_integer_value(v)), sv = num;
      else if (json_is_boolean(v))
        sv = json_is_true(v) ? "true" : "false";
      /* a label the store cannot index (a Java command line of 7 KB, the 257th attribute)
       * stays in the header only, rather than costing the profile */
      if (sv && (strlen(k) > SPAA_STORE_MAX_LABEL_LEN || strlen(sv) > SPAA_STORE_MAX_LABEL_LEN ||
                 (json_object_size(labels) >= SPAA_STORE_MAX_LABELS && !json_object_get(labels, k))))
        sv = NULL;
      if (sv && json_object_set_new(labels, k, json_string(sv))) {
        json_decref(v);
        return nomem(c);
      }
      /* a blank name names nothing: the next in the chain (docs/otlp-mapping.md) is used */
      if (sv && json_is_string(v) && !blank(sv) && strcmp(k, "service.name") == 0)
        *service = json_string_value(json_object_get(labels, k));
      if (sv && json_is_string(v) && !blank(sv) && strcmp(k, "process.executable.name") == 0)
        *exe = json_string_value(json_object_get(labels, k));
      if (json_is_integer(v) && strcmp(k, "process.pid") == 0) {
        c->has_pid = 1;
        c->pid = (int64_t)json_integer_value(v);
      }
    }
    if (set_pref(obj, prefix, k, v))
      return nomem(c);
  }
  return 0;
}

/* Set a one-entry weight list: metric and unit are the profile's own interned strings
 * (c->metric, c->unit), so nothing is copied. 0 or -1. */
static int weight1(const struct cv *c, struct spaa_weights *w, int64_t value)
{
  if (spaa_weights_alloc(c->p, w, 1))
    return -1;
  w->v[0].metric = c->metric;
  w->v[0].unit = c->unit;
  w->v[0].value = spaa_int(value);
  return 0;
}

static int obj_set(json_t *o, const char *k, json_t *v) { return v ? json_object_set_new(o, k, v) : -1; }

/* The profile's one event (its sample type, period and period type) and its time range.
 * 0 or SPAA_E_NOMEM. */
static int build_event(struct cv *c, const OT_Profile *pr, struct spaa_converted *out)
{
  const OT_Dict *d = c->d;
  struct spaa_profile *p = c->p;
  struct spaa_event *ev;
  const char *type = pr->sample_type ? otlp__str(d, pr->sample_type->type_strindex) : "";
  const char *unit = pr->sample_type ? otlp__str(d, pr->sample_type->unit_strindex) : "";
  if (!(ev = spaa_add_event(p)))
    return nomem(c);
  if (!(c->event = ev->name = spaa_strdup(p, type[0] ? type : "samples")))
    return nomem(c);
  c->metric = ev->primary_metric = ev->name;
  c->unit = unit[0] ? spaa_strdup(p, unit) : NULL;
  if (unit[0] && !c->unit)
    return nomem(c);
  ev->kind = event_kind(type, unit);
  if (pr->period > 0) {
    ev->mode = "period";
    ev->has_sample_period = 1;
    ev->sample_period = spaa_int(pr->period);
  } else {
    ev->mode = "event";
  }
  if (pr->period_type) {
    if (!(ev->sampling_extra = json_object()) ||
        obj_set(ev->sampling_extra, "x_otel_period_type",
                json_string(otlp__str(d, pr->period_type->type_strindex))) ||
        obj_set(ev->sampling_extra, "x_otel_period_unit",
                json_string(otlp__str(d, pr->period_type->unit_strindex))))
      return nomem(c);
  }
  if (pr->time_unix_nano) {
    p->header.has_time_range = 1;
    p->header.start = spaa_int((int64_t)pr->time_unix_nano);
    p->header.end = spaa_int((int64_t)(pr->time_unix_nano + pr->duration_nano));
    p->header.time_unit = "nanoseconds";
    out->start_ns = (int64_t)pr->time_unix_nano;
    out->end_ns = (int64_t)(pr->time_unix_nano + pr->duration_nano);
  }
  return 0;
}

/* header.source into src: the instrumentation scope as the tool, the OTLP version as the
 * format. 0 or -1 (out of memory). */
static int header_source(const struct otlp_request *r, const struct otlp_unit *u, json_t *src)
{
  if (obj_set(src, "tool", json_string(u->scope && u->scope->name && u->scope->name[0]
                                           ? u->scope->name : "otlp")) ||
      (u->scope && u->scope->version && u->scope->version[0] &&
       obj_set(src, "tool_version", json_string(u->scope->version))) ||
      obj_set(src, "format", json_string(r->version == OTLP_V1EXPERIMENTAL
                                             ? "otlp-profiles-v1experimental"
                                             : "otlp-profiles-v1development")))
    return -1;
  return 0;
}

/* The resource's and the scope's attributes and fields into hx; the resource's attributes
 * also into labels, *service, *exe and the process id (c->has_pid, c->pid). 0 or an error
 * code (c->err filled). */
static int header_resource_scope(struct cv *c, const struct otlp_unit *u, json_t *hx,
                                 json_t *labels, const char **service, const char **exe)
{
  int rc;
  c->has_pid = 0;
  if (u->resource) {
    if ((rc = kv_list(c, (const OT_KeyValue *const *)u->resource->attributes,
                      u->resource->n_attributes, hx, "x_otel_resource_", labels, service, exe)))
      return rc;
    if (u->resource->dropped_attributes_count &&
        obj_set(hx, "x_otel_resource_dropped_attributes_count",
                json_integer(u->resource->dropped_attributes_count)))
      return nomem(c);
  }
  if (u->resource_schema[0] && obj_set(hx, "x_otel_resource_schema_url", json_string(u->resource_schema)))
    return nomem(c);
  if (u->scope) {
    if ((u->scope->name && u->scope->name[0] &&
         obj_set(hx, "x_otel_scope_name", json_string(u->scope->name))) ||
        (u->scope->version && u->scope->version[0] &&
         obj_set(hx, "x_otel_scope_version", json_string(u->scope->version))) ||
        (u->scope->dropped_attributes_count &&
         obj_set(hx, "x_otel_scope_dropped_attributes_count",
                 json_integer(u->scope->dropped_attributes_count))))
      return nomem(c);
    if ((rc = kv_list(c, (const OT_KeyValue *const *)u->scope->attributes,
                      u->scope->n_attributes, hx, "x_otel_scope_attr_", NULL, NULL, NULL)))
      return rc;
  }
  if (u->scope_schema[0] && obj_set(hx, "x_otel_scope_schema_url", json_string(u->scope_schema)))
    return nomem(c);
  return 0;
}

/* The profile's own attributes, its id (also into out->id) and where it came from, into hx.
 * 0 or SPAA_E_NOMEM. */
static int header_profile(struct cv *c, const struct otlp_request *r, const struct otlp_unit *u,
                          json_t *hx, struct spaa_converted *out)
{
  const OT_Profile *pr = u->profile;
  const OT_Dict *d = c->d;
  size_t i;
  for (i = 0; i < pr->n_attribute_indices; i++) {
    const OT_KVU *a = d->attribute_table[pr->attribute_indices[i]];
    const char *key = otlp__str(d, a->key_strindex);
    if (set_pref(hx, "x_otel_profile_attr_", key, any_json(d, a->value, 0)) ||
        (a->unit_strindex &&
         set_pref(hx, "x_otel_profile_unit_", key, json_string(otlp__str(d, a->unit_strindex)))))
      return nomem(c);
  }
  if (pr->dropped_attributes_count &&
      obj_set(hx, "x_otel_dropped_attributes_count", json_integer(pr->dropped_attributes_count)))
    return nomem(c);
  if (pr->profile_id.len == 16 && !zero_bin(&pr->profile_id)) {
    spaa_hex_encode(out->id, pr->profile_id.data, 16);
    if (obj_set(hx, "x_otel_profile_id", json_string(out->id)))
      return nomem(c);
  }
  if (u->origin.payload_format[0] &&
      obj_set(hx, "x_otel_original_payload_format", json_string(u->origin.payload_format)))
    return nomem(c);
  if (u->origin.payload_len &&
      obj_set(hx, "x_otel_original_payload_bytes", json_integer((json_int_t)u->origin.payload_len)))
    return nomem(c);
  if (r->version == OTLP_V1EXPERIMENTAL &&
      obj_set(hx, "x_otel_v1experimental_sample_type_index", json_integer((json_int_t)u->origin.sample_type)))
    return nomem(c);
  return 0;
}

/* header.source and header.extra; makes out->labels (the resource's scalar attributes) and
 * out->attrs (empty), and finds the service and executable names among the labels. 0 or an
 * error code (c->err filled). */
static int build_header(struct cv *c, const struct otlp_request *r, const struct otlp_unit *u,
                        struct spaa_converted *out, const char **service, const char **exe)
{
  json_t *hx = NULL, *src = NULL;
  int rc;
  if (!(hx = json_object()) || !(src = json_object()) || !(out->labels = json_object()) ||
      !(out->attrs = json_object()) || header_source(r, u, src)) {
    rc = nomem(c);
    goto out;
  }
  if ((rc = header_resource_scope(c, u, hx, out->labels, service, exe)) ||
      (rc = header_profile(c, r, u, hx, out)))
    goto out;
  c->p->header.source = src;
  c->p->header.extra = hx;
  src = hx = NULL;
out:
  json_decref(hx);
  json_decref(src);
  return rc;
}

/* The sample records of sample s and the stack it names (made on first sight); the stack's
 * weight summed in c->stk, the profile's in *total. 0, SPAA_E_NOMEM, or SPAA_E_INVALID when
 * the weights overflow (c->err filled). */
static int add_sample(struct cv *c, const OT_Sample *s, int64_t *total)
{
  struct spaa_profile *p = c->p;
  uint64_t h = identity_hash(s->stack_index, s->link_index, s->attribute_indices,
                             s->n_attribute_indices);
  size_t j, si = 0, slot, nt = s->n_timestamps_unix_nano;
  struct ctxe *ctx;
  int64_t w = 0;
  int per_ts, rc;
  if ((rc = stk_slots_room(c)))
    return rc;
  slot = stk_slot(c, s, h);
  if (c->stk_slots[slot]) {
    si = c->stk_slots[slot] - 1;
  } else {
    if ((rc = new_stack(c, s, &si)))
      return rc;
    c->stk_slots[slot] = (uint32_t)(si + 1);
  }
  ctx = &c->ctxs[c->stk[si].ctx];
  if (s->n_values) {
    for (j = 0; j < s->n_values; j++)
      if (__builtin_add_overflow(w, s->values[j], &w))
        goto overflow;
  } else {
    w = (int64_t)nt;
  }
  if (__builtin_add_overflow(c->stk[si].sum, w, &c->stk[si].sum) ||
      __builtin_add_overflow(*total, w, total))
    goto overflow;
  per_ts = s->n_values == nt;
  if (c->compact && nt && !ctx->cc) { /* the first timed sample of this context */
    uint32_t k;
    struct spaa_cctx *x = spaa_add_cctx(p, &k);
    if (!x)
      return nomem(c);
    x->tid = ctx->has_tid ? ctx->tid : 0;
    x->cpu = ctx->has_cpu ? ctx->cpu : 0;
    ctx->cc = k + 1;
  }
  for (j = 0; c->compact && j < nt; j++) {
    struct spaa_csample *cs = spaa_add_csample(p);
    if (!cs)
      return nomem(c);
    cs->flags = SPAA_CS_TIMESTAMP | (per_ts ? SPAA_CS_WEIGHT : 0);
    cs->timestamp = (int64_t)s->timestamps_unix_nano[j];
    cs->stack = (uint32_t)si; /* stk[si] and the model's stacks[si] are made together */
    cs->ctx = ctx->cc - 1;
    cs->value = per_ts ? s->values[j] : 0;
  }
  for (j = 0; !c->compact && j < nt; j++) {
    struct spaa_sample *sm = spaa_add_sample(p);
    if (!sm)
      return nomem(c);
    sm->has_timestamp = 1;
    sm->timestamp = spaa_int((int64_t)s->timestamps_unix_nano[j]);
    sm->event = c->event;
    sm->stack_id = c->stk[si].id;
    /* all six fields SPAA §5.1 shows and readers require: 0 for what the source lacks */
    sm->has_pid = sm->has_tid = sm->has_cpu = 1;
    sm->pid = c->has_pid ? c->pid : 0;
    sm->tid = ctx->has_tid ? ctx->tid : 0;
    sm->cpu = ctx->has_cpu ? ctx->cpu : 0;
    if (per_ts && weight1(c, &sm->weights, s->values[j]))
      return nomem(c);
  }
  return 0;
overflow:
  return spaa_err_set(c->err, SPAA_E_INVALID, 0, 0, "the sample values overflow a 64-bit total");
}

/* Every sample of unit u (add_sample). The same returns, or SPAA_E_BAD_PROTOBUF. */
static int add_samples(struct cv *c, const struct otlp_unit *u, int64_t *total)
{
  struct otlp_samples it;
  const OT_Sample *s;
  size_t at;
  int rd, rc = 0;
  otlp__samples_open(&it, u);
  while ((rd = otlp__samples_next(&it, &s)) == 1 && !(rc = add_sample(c, s, total)))
    ;
  at = it.i;
  otlp__samples_close(&it);
  if (rc)
    return rc;
  if (rd < 0)
    return spaa_err_set(c->err, rd, 0, 0, "sample %zu: %s", at, spaa_err_default(rd));
  return 0;
}

/* Each stack's summed weight as its weight and, when it has frames, as the exclusive weight
 * of its leaf. 0 or SPAA_E_NOMEM. */
static int stack_weights(struct cv *c)
{
  size_t i;
  for (i = 0; i < c->n_stk; i++) {
    struct spaa_stack *st = &c->p->stacks[i];
    if (weight1(c, &st->weights, c->stk[i].sum))
      return nomem(c);
    if (st->n_frames) {
      st->has_exclusive = 1;
      st->excl_frame = st->frames[0];
      st->excl_weights = st->weights; /* the same one weight: one array (spaa.h) */
    }
  }
  return 0;
}

/* The converted entry's metadata: out->service (the service name, else the executable's,
 * else "unknown_service") and out->attrs (where the profile was in the request, its total,
 * the timestamp warning if any). 0 or SPAA_E_NOMEM. */
static int entry_meta(struct cv *c, const struct otlp_request *r, const struct otlp_unit *u,
                      struct spaa_converted *out, const char *service, const char *exe,
                      int64_t total, size_t n_warn, const char *warn)
{
  if (service)
    out->service = strdup(service);
  else if (exe)
    out->service = strdup(exe);
  else
    out->service = strdup("unknown_service");
  if (!out->service ||
      obj_set(out->attrs, "otlp_version", json_string(r->version == OTLP_V1EXPERIMENTAL
                                                          ? "v1experimental" : "v1development")) ||
      obj_set(out->attrs, "resource_index", json_integer((json_int_t)u->origin.resource)) ||
      obj_set(out->attrs, "scope_index", json_integer((json_int_t)u->origin.scope)) ||
      obj_set(out->attrs, "profile_index", json_integer((json_int_t)u->origin.profile)) ||
      obj_set(out->attrs, "total", json_integer(total)))
    return nomem(c);
  if (u->scope && u->scope->name && u->scope->name[0] &&
      obj_set(out->attrs, "scope_name", json_string(u->scope->name)))
    return nomem(c);
  if (u->scope && u->scope->version && u->scope->version[0] &&
      obj_set(out->attrs, "scope_version", json_string(u->scope->version)))
    return nomem(c);
  if (u->origin.payload_format[0] &&
      obj_set(out->attrs, "original_payload_format", json_string(u->origin.payload_format)))
    return nomem(c);
  if (n_warn) {
    json_t *wa = json_array();
    char wbuf[320];
    snprintf(wbuf, sizeof(wbuf), "%s%s", warn,
             n_warn > 1 ? " (and more timestamps like it)" : "");
    if (!wa || json_array_append_new(wa, json_string(wbuf)) ||
        json_object_set_new(out->attrs, "warnings", wa))
      return nomem(c);
  }
  return 0;
}

/* Convert unit u (checked) into c->p and out. 0 or an error code (c->err filled). */
static int build(struct cv *c, const struct otlp_request *r, const struct otlp_unit *u,
                 struct spaa_converted *out, size_t n_warn, const char *warn)
{
  const char *service = NULL, *exe = NULL;
  int64_t total = 0;
  int rc;
  c->p->header.source_tool = "otlp";
  c->p->header.frame_order = SPAA_LEAF_TO_ROOT;
  if ((rc = build_event(c, u->profile, out)) ||
      (rc = build_header(c, r, u, out, &service, &exe)))
    return rc;
  /* what the compact samples share: as add_sample would set in each record */
  c->p->cs.pid = c->has_pid ? c->pid : 0;
  c->p->cs.event = c->event;
  c->p->cs.metric = c->metric;
  c->p->cs.unit = c->unit;
  if ((rc = add_samples(c, u, &total)) || (rc = stack_weights(c)) ||
      (rc = mark_kernel_dsos(c)))
    return rc;
  return entry_meta(c, r, u, out, service, exe, total, n_warn, warn);
}

/* ---- request ------------------------------------------------------------------------- */

static int cv_open(struct cv *c, struct otlp_dictx *x, struct spaa_meter *meter,
                   struct spaa_err *err)
{
  const OT_Dict *d = x->d;
  const struct otlp_cdict *cd = x->cd;
  memset(c, 0, sizeof(*c));
  c->x = x;
  c->meter = meter;
  c->d = d;
  c->cd = cd;
  c->err = err;
  spaa_idmap_init(&c->threads);
  spaa_idmap_init(&c->ctxmap);
  spaa_idmap_init(&c->xmap);
  if ((cd->n_locs && (!(c->loc_gen = calloc(cd->n_locs, sizeof(uint32_t))) ||
                      !(c->loc_frame = malloc(cd->n_locs * sizeof(uint64_t))) ||
                      !(c->loc_nfr = malloc(cd->n_locs * sizeof(uint32_t))))) ||
      (d->n_function_table &&
       (!(c->fn_gen = calloc(d->n_function_table, sizeof(uint32_t))) ||
        !(c->fn_name = malloc(d->n_function_table * sizeof(const char *))))) ||
      (d->n_mapping_table && (!(c->map_gen = calloc(d->n_mapping_table, sizeof(uint32_t))) ||
                              !(c->map_dso = malloc(d->n_mapping_table * sizeof(uint64_t))))) ||
      (cd->n_stacks && (!(c->st_gen = calloc(cd->n_stacks, sizeof(uint32_t))) ||
                        !(c->st_frames = malloc(cd->n_stacks * sizeof(uint64_t *))) ||
                        !(c->st_nfr = malloc(cd->n_stacks * sizeof(size_t))))))
    return nomem(c);
  c->k_frame_type = find_key(x, KEY_FRAME_TYPE);
  c->k_tid = find_key(x, "thread.id");
  c->k_tname = find_key(x, "thread.name");
  c->k_cpu = find_key(x, "cpu.logical_number");
  return 0;
}

/* Drop the contexts and frame extras cached for the last profile. */
static void ctx_reset(struct cv *c)
{
  size_t i;
  for (i = 0; i < c->n_ctxs; i++)
    json_decref(c->ctxs[i].ctx);
  c->n_ctxs = 0;
  spaa_idmap_free(&c->ctxmap);
  spaa_idmap_init(&c->ctxmap);
  c->n_xs = 0;
  spaa_idmap_free(&c->xmap);
  spaa_idmap_init(&c->xmap);
}

/* Drop the per-stack state of the last profile (identities, their map, the thread map, the
 * frame scratch): sized by a profile's stacks, it is rebuilt for the next one. */
static void stacks_reset(struct cv *c)
{
  free(c->stk);
  free(c->pool);
  free(c->tmp);
  c->stk = NULL;
  c->pool = NULL;
  c->tmp = NULL;
  c->n_stk = c->cap_stk = c->n_pool = c->cap_pool = c->cap_tmp = 0;
  free(c->stk_slots);
  c->stk_slots = NULL;
  c->cap_slots = 0;
  spaa_idmap_free(&c->threads);
  spaa_idmap_init(&c->threads);
}

static void cv_close(struct cv *c)
{
  ctx_reset(c);
  free(c->ctxs);
  free(c->loc_gen);
  free(c->loc_frame);
  free(c->loc_nfr);
  free(c->fn_gen);
  free(c->fn_name);
  free(c->map_gen);
  free(c->map_dso);
  free(c->st_gen);
  free(c->st_frames);
  free(c->st_nfr);
  free(c->xs);
  stacks_reset(c);
}

static void reject(struct spaa_converted *e, const struct otlp_unit *u, const char *reason,
                   const struct spaa_err *why)
{
  char msg[sizeof(e->err.msg)];
  snprintf(e->reason, sizeof(e->reason), "%s", reason);
  snprintf(msg, sizeof(msg), "%s", why->msg[0] ? why->msg : spaa_err_default(why->code));
  spaa_err_set(&e->err, why->code ? why->code : SPAA_E_INVALID, 0, 0,
               "profile %zu of scope %zu of resource %zu: %s", u->origin.profile, u->origin.scope,
               u->origin.resource, msg);
}

/* convert one unit into e; 0, or SPAA_E_NOMEM (e rejected otherwise) */
static int convert_unit(struct cv *c, const struct otlp_request *r, const struct otlp_unit *u,
                        struct spaa_converted *e)
{
  struct spaa_err why;
  char reason[48], warn[256];
  size_t n_warn = 0, n_stamps = 0;
  int rc;
  spaa_err_clear(&why);
  if (!u->profile) {
    reject(e, u, "invalid_v1experimental", &u->xerr);
    return 0;
  }
  if (otlp__check_profile(c->x, u, &n_stamps, reason, sizeof(reason), &n_warn, warn,
                          sizeof(warn), &why)) {
    reject(e, u, reason, &why);
    return 0;
  }
  /* the sample records at their number: grown by doubling they held up to twice it */
  if (!(c->p = spaa_profile_new_metered(c->meter)) ||
      (c->compact ? spaa_reserve_csamples(c->p, n_stamps)
                  : spaa_reserve_samples(c->p, n_stamps))) {
    spaa_profile_free(c->p);
    c->p = NULL;
    return SPAA_E_NOMEM;
  }
  if (++c->gen == 0) {
    if (c->loc_gen)
      memset(c->loc_gen, 0, c->cd->n_locs * sizeof(uint32_t));
    if (c->map_gen)
      memset(c->map_gen, 0, c->d->n_mapping_table * sizeof(uint32_t));
    if (c->fn_gen)
      memset(c->fn_gen, 0, c->d->n_function_table * sizeof(uint32_t));
    if (c->st_gen)
      memset(c->st_gen, 0, c->cd->n_stacks * sizeof(uint32_t));
    c->gen = 1;
  }
  c->next_frame = c->next_dso = 1;
  c->n_nodso = 0;
  c->err = &why;
  rc = build(c, r, u, e, n_warn, warn);
  ctx_reset(c);
  stacks_reset(c); /* the model has its stacks: normalizing and storing it need room */
  if (!rc)
    rc = spaa_normalize(c->p, &why);
  if (rc == SPAA_E_NOMEM) {
    spaa_profile_free(c->p);
    return rc;
  }
  if (rc) {
    spaa_profile_free(c->p);
    free(e->service);
    json_decref(e->labels);
    json_decref(e->attrs);
    memset(e, 0, sizeof(*e));
    reject(e, u, "invalid", &why);
    return 0;
  }
  e->profile = c->p;
  c->p = NULL;
  return 0;
}

/* With samples left on the wire, only the Profiles' bytes are read once the request is
 * unpacked: the pages of the rest (the dictionary, mostly) go back at once when the caller
 * reads none of the body again. A body that is a file's mapping (refetch) gives all its
 * pages back: each Profile's come back from the file when its samples are read, so the
 * Profiles not converted yet are not held meanwhile. */
static void discard_unpacked(const struct otlp_request *r, int refetch)
{
  const uint8_t *at = r->body;
  size_t i;
  if (!r->wire || !r->body)
    return;
  if (refetch) {
    spaa_mem_discard(r->body, r->body_len);
    return;
  }
  for (i = 0; i < r->n_wire; i++) { /* in wire order */
    if (r->wire[i].wire > at)
      spaa_mem_discard(at, (size_t)(r->wire[i].wire - at));
    if (r->wire[i].wire + r->wire[i].len > at)
      at = r->wire[i].wire + r->wire[i].len;
  }
  if (r->body + r->body_len > at)
    spaa_mem_discard(at, (size_t)(r->body + r->body_len - at));
}

int otlp_convert(const struct otlp_request *r, const struct spaa_convert_opts *o,
                 struct spaa_conv_list *out, struct spaa_err *err)
{
  struct otlp_dictx x;
  struct cv c;
  const OT_Dict *open_dict = NULL;
  size_t i, first = out->n;
  int rc = 0, have = 0;
  /* what was read may go back: the caller reads none of the body again, or its pages come
   * back from a file (OTLP_DECODE_REFETCH) */
  int give_back = r->refetch || (o && o->input_spent);
  memset(&x, 0, sizeof(x));
  memset(&c, 0, sizeof(c));
  if (give_back)
    discard_unpacked(r, r->refetch);
  for (i = 0; i < r->n_units; i++) {
    const struct otlp_unit *u = &r->units[i];
    struct spaa_converted *e;
    if (u->dict != open_dict) {
      struct spaa_err derr;
      if (have) {
        cv_close(&c);
        otlp__dict_close(&x);
        have = 0;
      }
      open_dict = u->dict;
      spaa_err_clear(&derr);
      rc = otlp__dict_open(&x, u->dict, u->cdict, &derr);
      if (rc == SPAA_E_NOMEM || (rc && u->shared_dict)) {
        *err = derr;
        goto fail;
      }
      if (rc) {
        /* a v1experimental profile's own dictionary: that profile alone fails */
        for (; i < r->n_units && r->units[i].dict == open_dict; i++) {
          if (!(e = spaa_conv_add(out)))
            goto nomem;
          reject(e, &r->units[i], "invalid_dictionary", &derr);
        }
        i--;
        open_dict = NULL;
        rc = 0;
        continue;
      }
      have = 1;
      if ((rc = cv_open(&c, &x, o ? o->meter : NULL, err)))
        goto fail;
      c.compact = o && o->compact_samples;
    }
    if (!(e = spaa_conv_add(out)))
      goto nomem;
    if ((rc = convert_unit(&c, r, u, e)))
      goto nomem;
    /* original_payload is part of the profile (the bytes a profiler sent along), not the
     * upload: kept whatever keep_original says, so that nothing the source carried is lost */
    if (e->profile && u->origin.payload) {
      e->original = u->origin.payload;
      e->original_len = u->origin.payload_len;
    }
    /* the unit's samples are read: on a large request, their pages go back before its
     * model is stored (the other bytes of the Profile were copied out when decoded) */
    if (give_back && u->wire)
      spaa_mem_discard(u->wire, u->wire_len);
    if (o && o->each && (rc = o->each(o->each_ctx, out, out->n - 1, err)))
      goto done; /* the consumer stopped us: the list stays as it has it */
  }
  goto done;
nomem:
  rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
fail:
  /* nothing of this request stays in the list */
  while (out->n > first) {
    struct spaa_converted *e = &out->v[--out->n];
    spaa_profile_free(e->profile);
    free(e->service);
    json_decref(e->labels);
    json_decref(e->attrs);
  }
done:
  if (have) {
    cv_close(&c);
    otlp__dict_close(&x);
  }
  return rc;
}
