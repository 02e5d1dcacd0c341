/* SPAA validator: one pass, every MUST of spec §7 and the house rules as errors, the SHOULDs
 * as warnings. Memory holds the dictionaries (dso and frame ids, stack ids as 16 bytes when
 * they are content ids), never the file. Rule names are listed in docs/spaa-output.md. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "base/hex.h"
#include "base/idmap.h"
#include "base/limits.h"
#include "spaa/spaa_io.h"
#include "spaa/spaa_lines.h"
#include "spaa/spaa_rec.h"

/* ---- a set of stack ids with a value (a line number) -------------------------------- */

/* Content ids ("0x" + 32 lowercase hex) are kept as 16 bytes; other ids as strings. */
struct cslot {
  uint8_t k[16];         /* the id's 16 bytes */
  uint64_t v;            /* value + 1; 0 = empty slot */
};

struct idset {
  struct cslot *cs;      /* content-id slots: key and value side by side, one cache miss */
  size_t cn, cmask;      /* entries, slots - 1 */
  struct spaa_strmap sm; /* other ids -> value */
  char **pool;           /* blocks holding the other ids' bytes */
  size_t n_pool;
  size_t pool_used;      /* bytes used in the last block */
};

#define POOL_BLOCK (64 * 1024)

static void idset_free(struct idset *s)
{
  size_t i;
  free(s->cs);
  spaa_strmap_free(&s->sm);
  for (i = 0; i < s->n_pool; i++)
    free(s->pool[i]);
  free(s->pool);
  memset(s, 0, sizeof(*s));
}

/* 1 and out filled when s is "0x" + 32 lowercase hex digits. */
static int as_cid(const char *s, size_t n, uint8_t out[16])
{
  return n == 34 && s[0] == '0' && s[1] == 'x' && spaa_hex_decode(out, s + 2, 32, 1) == 0;
}

static size_t cid_hash(const uint8_t k[16])
{
  uint64_t a, b;
  memcpy(&a, k, 8);
  memcpy(&b, k + 8, 8);
  a ^= b * 0x9e3779b97f4a7c15ULL;
  a ^= a >> 31;
  a *= 0xbf58476d1ce4e5b9ULL;
  a ^= a >> 29;
  return (size_t)a;
}

static int cid_grow(struct idset *s)
{
  size_t ns = s->cmask ? (s->cmask + 1) * 2 : 1024, i;
  struct cslot *n = calloc(ns, sizeof(*n));
  if (!n)
    return SPAA_E_NOMEM;
  for (i = 0; s->cmask && i <= s->cmask; i++) {
    size_t j;
    if (!s->cs[i].v)
      continue;
    j = cid_hash(s->cs[i].k) & (ns - 1);
    while (n[j].v)
      j = (j + 1) & (ns - 1);
    n[j] = s->cs[i];
  }
  free(s->cs);
  s->cs = n;
  s->cmask = ns - 1;
  return 0;
}

/* Look `id` up; when absent and `put`, add it with `val`. Returns 1 found (*old = its value),
 * 0 absent (added when put), or SPAA_E_NOMEM. */
static int idset_find(struct idset *s, const char *id, size_t n, int put, uint64_t val,
                      uint64_t *old)
{
  uint8_t k[16];
  size_t at;
  if (as_cid(id, n, k)) {
    size_t i;
    if (put && ((s->cn + 1) * 4 > (s->cmask + 1) * 3 || !s->cmask)) {
      int rc = cid_grow(s);
      if (rc)
        return rc;
    }
    if (!s->cmask)
      return 0;
    i = cid_hash(k) & s->cmask;
    while (s->cs[i].v) {
      if (memcmp(s->cs[i].k, k, 16) == 0) {
        if (old)
          *old = s->cs[i].v - 1;
        return 1;
      }
      i = (i + 1) & s->cmask;
    }
    if (put) {
      memcpy(s->cs[i].k, k, 16);
      s->cs[i].v = val + 1;
      s->cn++;
    }
    return 0;
  }
  if (spaa_strmap_get(&s->sm, id, n, &at)) {
    if (old)
      *old = at;
    return 1;
  }
  if (put) {
    char *c;
    if (!s->n_pool || s->pool_used + n > POOL_BLOCK) {
      size_t bs = n > POOL_BLOCK ? n : POOL_BLOCK;
      char **np = realloc(s->pool, (s->n_pool + 1) * sizeof(*np));
      if (!np)
        return SPAA_E_NOMEM;
      s->pool = np;
      if (!(s->pool[s->n_pool] = malloc(bs)))
        return SPAA_E_NOMEM;
      s->n_pool++;
      s->pool_used = 0;
    }
    c = s->pool[s->n_pool - 1] + s->pool_used;
    memcpy(c, id, n);
    s->pool_used += n;
    if (spaa_strmap_put(&s->sm, c, n, (size_t)val, NULL) < 0)
      return SPAA_E_NOMEM;
  }
  return 0;
}

/* ---- validator state ------------------------------------------------------------------ */

enum { VF_IP = 1, VF_DEPTH = 2, VF_KERNEL = 4, VF_USER = 8 };

struct vframe {
  uint64_t ip;    /* instruction address when VF_IP */
  uint64_t dso;   /* dso id */
  uint32_t depth; /* inline depth when VF_DEPTH */
  uint32_t flags; /* VF_* */
};

struct vevent {
  char *name;     /* malloc'd */
  char *primary;  /* malloc'd, NULL when the header gave none */
};

struct v {
  spaa_diag_cb cb;
  void *cb_ctx;
  size_t max_errors;
  struct spaa_validate_stats *st;
  size_t line;                  /* current line */
  int first_done;               /* the first record has been looked at */
  size_t header_line;           /* line of the header, 0 before it */
  int hdr_ok;                   /* the header parsed: events and order are known */
  enum spaa_frame_order order;
  struct vevent *events;
  size_t n_events;
  struct spaa_idmap dsos;       /* dso id -> is_kernel */
  struct spaa_idmap frames;     /* frame id -> index in vf */
  uint32_t *dense;              /* frame id -> index + 1 for small ids (0: absent) */
  size_t dense_cap;             /* entries of dense */
  struct vframe *vf;
  size_t n_vf, cap_vf;
  struct spaa_idmap tids;       /* thread tid -> line */
  struct spaa_idmap miss_dsos;  /* dso ids referenced before any definition -> line */
  struct spaa_idmap miss_frames;/* same for frame ids */
  struct idset stacks;          /* stack ids -> line */
  struct idset pending;         /* stack ids used before seen -> line * 4 + enum ref_kind */
  const struct vframe **leaf;   /* a stack's frames, leaf first */
  size_t cap_leaf;
  struct spaa_strmap warned_keys; /* unknown context keys already reported */
  char *warned_pool;            /* their bytes */
  size_t warned_used;
  unsigned sample_warned;       /* bit i: sample_fields[i] missing already reported */
};

static void diag(struct v *v, int is_error, const char *rule, const char *field, const char *fmt,
                 ...) __attribute__((format(printf, 5, 6)));

static void diag(struct v *v, int is_error, const char *rule, const char *field, const char *fmt,
                 ...)
{
  char msg[320];
  va_list ap;
  size_t count;
  struct spaa_diag d;
  if (is_error)
    count = ++v->st->errors;
  else
    count = ++v->st->warnings;
  if (!v->cb || (v->max_errors && count > v->max_errors))
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  d.is_error = is_error;
  d.line = v->line;
  d.rule = rule ? rule : "invalid"; /* every fault names its rule; never leave it empty */
  d.field = field ? field : "";
  d.msg = msg;
  v->cb(v->cb_ctx, &d);
}

static const char *const known_tools[] = {"perf",   "dtrace",   "sentry", "otlp",  "pprof",
                                          "ebpf",   "pyroscope", "heaptrack", "jemalloc",
                                          "tcmalloc", "async-profiler", "py-spy", "bpftrace",
                                          "spaa-relay"};

static int in_list(const char *s, const char *const *list, size_t n)
{
  size_t i;
  for (i = 0; s && i < n; i++)
    if (strcmp(s, list[i]) == 0)
      return 1;
  return 0;
}

#define IN(s, ...)                                                                            \
  in_list(s, (const char *const[]){__VA_ARGS__},                                              \
          sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

static const struct vevent *find_event(const struct v *v, const char *name)
{
  size_t i;
  for (i = 0; name && i < v->n_events; i++)
    if (strcmp(v->events[i].name, name) == 0)
      return &v->events[i];
  return NULL;
}

static void free_events(struct v *v)
{
  size_t i;
  for (i = 0; i < v->n_events; i++) {
    free(v->events[i].name);
    free(v->events[i].primary);
  }
  free(v->events);
  v->events = NULL;
  v->n_events = 0;
}

/* Frame ids are often small and dense: index those through a flat array, kept within 16
 * entries per frame defined so that memory still follows the dictionary. */
#define DENSE_MAX (1u << 24)

static int frame_find(const struct v *v, uint64_t id, size_t *idx)
{
  if (id < v->dense_cap) {
    if (!v->dense[id])
      return 0;
    *idx = v->dense[id] - 1;
    return 1;
  }
  return spaa_idmap_get(&v->frames, id, idx);
}

static int frame_index(struct v *v, uint64_t id, size_t idx)
{
  if (id >= v->dense_cap && id < DENSE_MAX && id < 16 * (uint64_t)(v->n_vf + 1) + 4096) {
    size_t nc = v->dense_cap ? v->dense_cap : 4096;
    uint32_t *nd;
    while (nc <= id)
      nc *= 2;
    if (!(nd = realloc(v->dense, nc * sizeof(*nd))))
      return SPAA_E_NOMEM;
    memset(nd + v->dense_cap, 0, (nc - v->dense_cap) * sizeof(*nd));
    /* ids kept in the map so far move to the array */
    if (v->frames.n) {
      size_t i;
      for (i = 0; i <= v->frames.mask; i++)
        if (v->frames.vals[i] && v->frames.keys[i] < nc)
          nd[v->frames.keys[i]] = (uint32_t)v->frames.vals[i];
    }
    v->dense = nd;
    v->dense_cap = nc;
  }
  if (id < v->dense_cap && idx < UINT32_MAX) {
    v->dense[id] = (uint32_t)(idx + 1);
    return 0;
  }
  return spaa_idmap_put(&v->frames, id, idx, NULL) < 0 ? SPAA_E_NOMEM : 0;
}

/* ---- records ---------------------------------------------------------------------------- */

static int check_header(struct v *v, const json_t *doc)
{
  struct spaa_profile *p;
  struct spaa_fault f;
  size_t i, j;
  int rc = 0;
  if (v->header_line) {
    diag(v, 1, "header-duplicate", "type", "a second header (the first is on line %zu)",
         v->header_line);
    return 0;
  }
  v->header_line = v->line;
  if (!(p = spaa_profile_new()))
    return SPAA_E_NOMEM;
  memset(&f, 0, sizeof(f));
  rc = spaa_rec_header(doc, p, &f);
  if (rc == -1) {
    diag(v, 1, f.rule, f.field, "%s", f.msg);
    rc = 0;
    goto out;
  }
  if (rc)
    goto out;
  if (!p->header.source_tool)
    diag(v, 0, "unknown-source-tool", "source_tool", "the header names no source_tool");
  else if (!in_list(p->header.source_tool, known_tools, sizeof(known_tools) / sizeof(*known_tools)))
    diag(v, 0, "unknown-source-tool", "source_tool", "unknown source_tool \"%s\"",
         p->header.source_tool);
  if (!json_object_get(doc, "stack_id_mode"))
    diag(v, 1, "field-missing", "stack_id_mode",
         "the header must declare stack_id_mode (content_addressable or local)");
  if (!p->header.n_events)
    diag(v, 1, "field-missing", "events", "the header declares no events");
  if (p->header.has_time_range &&
      spaa_num_as_double(p->header.end) < spaa_num_as_double(p->header.start))
    diag(v, 0, "suspicious-value", "time_range.end", "time_range ends before it starts");
  if (p->header.n_events && !(v->events = calloc(p->header.n_events, sizeof(*v->events)))) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  for (i = 0; i < p->header.n_events; i++) {
    const struct spaa_event *e = &p->header.events[i];
    char fb[80];
    for (j = 0; j < i; j++)
      if (strcmp(e->name, p->header.events[j].name) == 0) {
        snprintf(fb, sizeof(fb), "events[%zu].name", i);
        diag(v, 1, "event-duplicate", fb, "event \"%s\" is declared twice", e->name);
      }
    if (!e->kind) {
      snprintf(fb, sizeof(fb), "events[%zu].kind", i);
      diag(v, 1, "field-missing", fb, "event \"%s\" has no kind", e->name);
    } else if (!IN(e->kind, "hardware", "software", "allocation", "deallocation", "timer",
                   "probe")) {
      snprintf(fb, sizeof(fb), "events[%zu].kind", i);
      diag(v, 1, "bad-enum", fb,
           "kind \"%s\" is not one of hardware, software, allocation, deallocation, timer, "
           "probe", e->kind);
    }
    if (!e->mode) {
      snprintf(fb, sizeof(fb), "events[%zu].sampling.mode", i);
      diag(v, 1, "field-missing", fb, "event \"%s\" has no sampling.mode", e->name);
    } else if (!IN(e->mode, "period", "frequency", "event")) {
      snprintf(fb, sizeof(fb), "events[%zu].sampling.mode", i);
      diag(v, 1, "bad-enum", fb, "sampling.mode \"%s\" is not one of period, frequency, event",
           e->mode);
    }
    if (!e->primary_metric) {
      snprintf(fb, sizeof(fb), "events[%zu].sampling.primary_metric", i);
      diag(v, 1, "field-missing", fb, "event \"%s\" has no sampling.primary_metric", e->name);
    }
    if (e->has_sample_period && spaa_num_as_double(e->sample_period) <= 0) {
      snprintf(fb, sizeof(fb), "events[%zu].sampling.sample_period", i);
      diag(v, 0, "suspicious-value", fb, "sample_period is not positive");
    }
    v->events[i].name = strdup(e->name);
    v->events[i].primary = e->primary_metric ? strdup(e->primary_metric) : NULL;
    v->n_events++;
    if (!v->events[i].name || (e->primary_metric && !v->events[i].primary)) {
      rc = SPAA_E_NOMEM;
      goto out;
    }
  }
  v->order = p->header.frame_order;
  v->hdr_ok = 1;
out:
  spaa_profile_free(p);
  return rc;
}

/* A definition of an id that was referenced earlier (and reported missing then). */
static void defined_late(struct v *v, struct spaa_idmap *miss, uint64_t id, const char *what)
{
  size_t at;
  if (miss->n && spaa_idmap_get(miss, id, &at))
    diag(v, 1, "ref-before-def", "id",
         "%s %" PRIu64 " is defined here but line %zu referenced it first: dictionaries must "
         "come before the records that use them", what, id, at);
}

static int check_dso(struct v *v, const struct spaa_rec *r)
{
  const struct spaa_dso *d = &r->dso;
  size_t old;
  int rc;
  v->st->dsos++;
  if (!(r->present & SPAA_HAS_NAME))
    diag(v, 1, "field-missing", "name", "a dso needs a name");
  if (d->build_id) {
    const char *p;
    for (p = d->build_id; *p && spaa_hex_lower_val((unsigned char)*p) >= 0; p++)
      ;
    if (*p || !d->build_id[0])
      diag(v, 0, "build-id-format", "build_id",
           "build_id should be lowercase hex without separators");
  }
  if (d->has_mapping && d->map_limit < d->map_start)
    diag(v, 0, "suspicious-value", "x_mapping.limit", "x_mapping ends before it starts");
  rc = spaa_idmap_put(&v->dsos, d->id, (size_t)d->is_kernel, &old);
  if (rc < 0)
    return rc;
  if (rc == 1) {
    diag(v, 1, "dso-duplicate", "id", "dso %" PRIu64 " is defined twice", d->id);
    return 0;
  }
  defined_late(v, &v->miss_dsos, d->id, "dso");
  return 0;
}

static int check_frame(struct v *v, const struct spaa_rec *r)
{
  const struct spaa_frame *f = &r->frame;
  struct vframe vf;
  size_t is_kernel = 0, old;
  int rc;
  v->st->frames++;
  if (!(r->present & SPAA_HAS_FUNC))
    diag(v, 1, "field-missing", "func", "a frame needs a func");
  if ((r->present & SPAA_HAS_KIND) && !IN(f->kind, "user", "kernel", "unknown"))
    diag(v, 1, "bad-enum", "kind", "kind \"%s\" is not one of user, kernel, unknown", f->kind);
  if (!f->has_dso) {
    diag(v, 1, "frame-dso-missing", "dso", "frame %" PRIu64 " names no dso", f->id);
  } else if (!spaa_idmap_get(&v->dsos, f->dso, &is_kernel)) {
    diag(v, 1, "frame-dso-missing", "dso",
         "frame %" PRIu64 " references dso %" PRIu64 ", which is not defined before this line",
         f->id, f->dso);
    if (spaa_idmap_put(&v->miss_dsos, f->dso, v->line, NULL) < 0)
      return SPAA_E_NOMEM;
  }
  memset(&vf, 0, sizeof(vf));
  vf.ip = f->ip;
  vf.dso = f->dso;
  vf.depth = f->inline_depth;
  vf.flags = (f->has_ip ? VF_IP : 0) | (f->has_inline_depth ? VF_DEPTH : 0);
  /* the frame's own kind decides; the dso only speaks for frames of kind "unknown" */
  if (strcmp(f->kind, "kernel") == 0 || (is_kernel && strcmp(f->kind, "unknown") == 0))
    vf.flags |= VF_KERNEL;
  else if (strcmp(f->kind, "user") == 0)
    vf.flags |= VF_USER;
  if (frame_find(v, f->id, &old)) {
    diag(v, 1, "frame-duplicate", "id", "frame %" PRIu64 " is defined twice", f->id);
    return 0;
  }
  if ((rc = frame_index(v, f->id, v->n_vf)))
    return rc;
  if (v->n_vf == v->cap_vf) {
    size_t nc = v->cap_vf ? v->cap_vf * 2 : 1024;
    struct vframe *n = realloc(v->vf, nc * sizeof(*n));
    if (!n)
      return SPAA_E_NOMEM;
    v->vf = n;
    v->cap_vf = nc;
  }
  v->vf[v->n_vf++] = vf;
  defined_late(v, &v->miss_frames, f->id, "frame");
  return 0;
}

static int check_thread(struct v *v, const struct spaa_rec *r)
{
  size_t old;
  int rc;
  v->st->threads++;
  rc = spaa_idmap_put(&v->tids, (uint64_t)r->thread.tid, v->line, &old);
  if (rc < 0)
    return rc;
  if (rc == 1)
    diag(v, 1, "thread-duplicate", "tid", "thread %" PRId64 " is already defined on line %zu",
         r->thread.tid, old);
  return 0;
}

/* Warn about the first negative weight, or zero one unless another weight of the array is
 * nonzero (a zero beside a nonzero metric is a measurement: a stack that allocated but holds
 * nothing live); once per array. */
static void check_values(struct v *v, const struct spaa_weights *w, const char *field)
{
  size_t i;
  int nonzero = 0;
  char fb[64];
  for (i = 0; i < w->n; i++)
    nonzero |= spaa_num_as_double(w->v[i].value) != 0;
  for (i = 0; i < w->n; i++) {
    double x = spaa_num_as_double(w->v[i].value);
    if (x < 0 || (x == 0 && !nonzero)) {
      snprintf(fb, sizeof(fb), "%s[%zu].value", field, i);
      diag(v, 0, "suspicious-value", fb, "weight \"%s\" is %s", w->v[i].metric,
           x == 0 ? "zero" : "negative");
      return;
    }
  }
}

/* Unknown context keys: a warning the first time each key is seen. */
static int check_ctx_keys(struct v *v, const struct spaa_rec *r)
{
  size_t n;
  if (!r->unknown_ctx)
    return 0;
  n = strlen(r->unknown_ctx);
  if (spaa_strmap_get(&v->warned_keys, r->unknown_ctx, n, NULL))
    return 0;
  if (v->warned_used + n + 1 <= SPAA_VALIDATE_MAX_WARNED_BYTES) {
    char *c = v->warned_pool + v->warned_used;
    memcpy(c, r->unknown_ctx, n + 1);
    v->warned_used += n + 1;
    if (spaa_strmap_put(&v->warned_keys, c, n, 0, NULL) < 0)
      return SPAA_E_NOMEM;
  }
  {
    char fb[64];
    snprintf(fb, sizeof(fb), "context.%s", r->unknown_ctx);
    diag(v, 0, "unknown-context-key", fb,
         "context key \"%s\" is not a standard key; custom keys should start with \"x_\"",
         r->unknown_ctx);
  }
  return 0;
}

/* What names a stack by its id: the three records that may come before the stack. */
enum ref_kind { REF_SAMPLE = 0, REF_WINDOW = 1, REF_RELATED = 2 };

/* A sample, window or related_stacks entry naming a stack: resolved now, or remembered for
 * the end. */
static int stack_ref(struct v *v, const char *id, enum ref_kind kind)
{
  size_t n = strlen(id);
  int rc = idset_find(&v->stacks, id, n, 0, 0, NULL);
  if (rc)
    return rc < 0 ? rc : 0;
  rc = idset_find(&v->pending, id, n, 1, (uint64_t)v->line * 4 + (uint64_t)kind, NULL);
  return rc < 0 ? rc : 0;
}

static int check_stack(struct v *v, const struct spaa_rec *r)
{
  const struct spaa_stack *s = &r->stack;
  size_t i, idx, n = s->n_frames, missing = 0, first_missing = 0;
  uint64_t old;
  int rc;
  v->st->stacks++;
  rc = idset_find(&v->stacks, s->id, strlen(s->id), 1, v->line, &old);
  if (rc < 0)
    return rc;
  if (rc == 1)
    diag(v, 1, "stack-duplicate", "id", "stack %s is already defined on line %" PRIu64, s->id,
         old);
  if (!(r->present & SPAA_HAS_FRAMES))
    diag(v, 1, "field-missing", "frames", "a stack needs frames");
  else if (!n)
    diag(v, 0, "stack-empty", "frames", "stack %s has no frames", s->id);
  if (s->stack_type && !IN(s->stack_type, "unified", "user", "kernel"))
    diag(v, 1, "bad-enum", "stack_type", "stack_type \"%s\" is not one of unified, user, kernel",
         s->stack_type);
  /* frames, leaf first */
  if (n > v->cap_leaf) {
    size_t nc = v->cap_leaf ? v->cap_leaf : 64;
    const struct vframe **nl;
    while (nc < n)
      nc *= 2;
    if (!(nl = realloc(v->leaf, nc * sizeof(*nl))))
      return SPAA_E_NOMEM;
    v->leaf = nl;
    v->cap_leaf = nc;
  }
  for (i = 0; i < n; i++) {
    size_t pos = v->order == SPAA_ROOT_TO_LEAF ? n - 1 - i : i;
    if (!frame_find(v, s->frames[pos], &idx)) {
      if (!missing++)
        first_missing = pos;
      if (spaa_idmap_put(&v->miss_frames, s->frames[pos], v->line, NULL) < 0)
        return SPAA_E_NOMEM;
      v->leaf[i] = NULL;
      continue;
    }
    v->leaf[i] = &v->vf[idx];
  }
  if (missing) {
    char fb[48];
    snprintf(fb, sizeof(fb), "frames[%zu]", first_missing);
    diag(v, 1, "stack-frame-missing", fb,
         "stack %s references frame %" PRIu64 ", which is not defined before this line%s",
         s->id, s->frames[first_missing], missing > 1 ? " (and more)" : "");
  }
  /* context and event */
  if (!(r->present & SPAA_HAS_CONTEXT))
    diag(v, 1, "field-missing", "context", "a stack needs a context with its event");
  else if (!s->event)
    diag(v, 1, "field-missing", "context.event", "the stack's context names no event");
  if (!(r->present & SPAA_HAS_WEIGHTS)) {
    diag(v, 1, "field-missing", "weights", "a stack needs weights");
  } else if (v->hdr_ok && s->event) {
    const struct vevent *e = find_event(v, s->event);
    if (!e)
      diag(v, 1, "stack-event-undeclared", "context.event",
           "event \"%s\" is not declared in the header", s->event);
    else if (e->primary && !spaa_weights_find(&s->weights, e->primary))
      diag(v, 1, "primary-metric-missing", "weights",
           "weights lack \"%s\", the primary metric of event \"%s\"", e->primary, e->name);
  }
  check_values(v, &s->weights, "weights");
  if (s->has_exclusive)
    check_values(v, &s->excl_weights, "exclusive.weights");
  if ((rc = check_ctx_keys(v, r)))
    return rc;
  /* related_stacks are references like a sample's: after normalization each names the
   * content id of a stack of the file, which a stack that is not there has none of */
  for (i = 0; i < s->n_related; i++)
    if ((rc = stack_ref(v, s->related[i], REF_RELATED)))
      return rc;
  if (!v->hdr_ok || !n)
    return 0;
  /* frame order: inline depth within one ip, kernel frames at the leaf end */
  if (!missing) {
    int unified = !s->stack_type || strcmp(s->stack_type, "unified") == 0, seen_user = 0;
    const char *ord = v->order == SPAA_ROOT_TO_LEAF ? "root_to_leaf" : "leaf_to_root";
    for (i = 0; i < n; i++) {
      const struct vframe *a = v->leaf[i], *b = i + 1 < n ? v->leaf[i + 1] : NULL;
      if (unified) {
        if (a->flags & VF_USER) {
          seen_user = 1;
        } else if ((a->flags & VF_KERNEL) && seen_user) {
          diag(v, 1, "frame-order", "frames",
               "kernel frame %" PRIu64 " lies on the root side of user frames: with frame_order "
               "%s kernel frames belong at the leaf end",
               s->frames[v->order == SPAA_ROOT_TO_LEAF ? n - 1 - i : i], ord);
          break;
        }
      }
      if (b && (a->flags & b->flags & VF_IP) && (a->flags & b->flags & VF_DEPTH) &&
          a->ip == b->ip && a->dso == b->dso && a->depth > 0 && b->depth >= a->depth) {
        diag(v, 1, "frame-order", "frames",
             "frames at ip 0x%" PRIx64 " go from inline_depth %" PRIu32 " to %" PRIu32
             " toward the root: with frame_order %s the deepest inlined frame comes first",
             a->ip, a->depth, b->depth, ord);
        break;
      }
    }
  }
  if (s->has_exclusive) {
    uint64_t leaf = v->order == SPAA_ROOT_TO_LEAF ? s->frames[n - 1] : s->frames[0];
    uint64_t root = v->order == SPAA_ROOT_TO_LEAF ? s->frames[0] : s->frames[n - 1];
    if (s->excl_frame != leaf) {
      if (n > 1 && s->excl_frame == root)
        diag(v, 1, "frame-order", "exclusive.frame",
             "exclusive.frame %" PRIu64 " is the root end of frames: the frames are not in the "
             "declared order %s", s->excl_frame,
             v->order == SPAA_ROOT_TO_LEAF ? "root_to_leaf" : "leaf_to_root");
      else
        diag(v, 1, "exclusive-not-leaf", "exclusive.frame",
             "exclusive.frame %" PRIu64 " is not the leaf frame %" PRIu64, s->excl_frame, leaf);
    }
  }
  return 0;
}

/* Fields of the spec's §5.1 sample example that readers rely on (the reference parser
 * refuses a file whose samples lack one); `period` (only for period sampling) and `context`
 * (an empty object there) are optional. A SHOULD: warned once per field, on the first
 * sample lacking it. */
static void check_sample_fields(struct v *v, const struct spaa_sample *s)
{
  static const char *const names[] = {"timestamp", "pid", "tid", "cpu", "event"};
  int has[] = {s->has_timestamp, s->has_pid, s->has_tid, s->has_cpu, s->event != NULL};
  size_t i;
  for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (!has[i] && !(v->sample_warned & (1u << i))) {
      v->sample_warned |= 1u << i;
      diag(v, 0, "sample-field-missing", names[i], "a sample lacks \"%s\" (spec §5.1 shows "
           "it; readers such as the SPAA reference parser require it); reported once",
           names[i]);
    }
}

static int check_sample(struct v *v, const struct spaa_rec *r)
{
  const struct spaa_sample *s = &r->sample;
  int rc;
  v->st->samples++;
  check_sample_fields(v, s);
  if ((rc = stack_ref(v, s->stack_id, REF_SAMPLE)))
    return rc;
  if (s->event && v->hdr_ok && !find_event(v, s->event))
    diag(v, 1, "sample-event-undeclared", "event", "event \"%s\" is not declared in the header",
         s->event);
  if (s->has_period && spaa_num_as_double(s->period) <= 0)
    diag(v, 0, "suspicious-value", "period", "period is %s",
         spaa_num_as_double(s->period) == 0 ? "zero" : "negative");
  check_values(v, &s->weights, "x_weights");
  return check_ctx_keys(v, r);
}

static int check_window(struct v *v, const struct spaa_rec *r)
{
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_window *w;
  struct spaa_fault f;
  size_t i;
  int rc = 0;
  char fb[64];
  v->st->windows++;
  if (!p || !(w = spaa_add_window(p))) {
    spaa_profile_free(p);
    return SPAA_E_NOMEM;
  }
  memset(&f, 0, sizeof(f));
  rc = spaa_rec_window(r->doc, p, w, &f);
  if (rc == -1) {
    diag(v, 1, f.rule, f.field, "%s", f.msg);
    rc = 0;
    goto out;
  }
  if (rc)
    goto out;
  if (!w->id)
    diag(v, 1, "field-missing", "id", "a window needs an id");
  if (!json_object_get(r->doc, "start") || !json_object_get(r->doc, "end"))
    diag(v, 1, "field-missing", json_object_get(r->doc, "start") ? "end" : "start",
         "a window needs a start and an end");
  else if (spaa_num_as_double(w->end) < spaa_num_as_double(w->start))
    diag(v, 0, "suspicious-value", "end", "the window ends before it starts");
  if (!w->by_stack) {
    diag(v, 1, "field-missing", "by_stack", "a window needs by_stack");
    goto out;
  }
  for (i = 0; i < json_array_size(w->by_stack); i++) {
    json_t *e = json_array_get(w->by_stack, i), *sid = json_object_get(e, "stack_id"),
           *ws = json_object_get(e, "weights");
    size_t j;
    snprintf(fb, sizeof(fb), "by_stack[%zu].stack_id", i);
    if (!json_is_string(sid)) {
      diag(v, 1, sid ? "type" : "field-missing", fb, "each by_stack entry needs a stack_id string");
      continue;
    }
    if ((rc = stack_ref(v, json_string_value(sid), REF_WINDOW)))
      goto out;
    snprintf(fb, sizeof(fb), "by_stack[%zu].weights", i);
    if (!json_is_array(ws)) {
      diag(v, 1, ws ? "type" : "field-missing", fb, "each by_stack entry needs a weights array");
      continue;
    }
    for (j = 0; j < json_array_size(ws); j++) {
      json_t *we = json_array_get(ws, j);
      if (!json_is_string(json_object_get(we, "metric")) ||
          !json_is_number(json_object_get(we, "value"))) {
        snprintf(fb, sizeof(fb), "by_stack[%zu].weights[%zu]", i, j);
        diag(v, 1, "type", fb, "a weight needs a metric string and a number value");
        break;
      }
    }
  }
out:
  spaa_profile_free(p);
  return rc;
}

/* A reference to a stack that never came: reported on the line that made it. */
static void missing_ref(struct v *v, uint64_t val, const char *id, int n)
{
  static const char *const rule[] = {"sample-stack-missing", "window-stack-missing",
                                     "related-stack-missing"};
  static const char *const field[] = {"stack_id", "by_stack.stack_id", "related_stacks"};
  size_t kind = (size_t)(val % 4);
  if (kind > REF_RELATED)
    kind = REF_SAMPLE;
  v->line = (size_t)(val / 4);
  diag(v, 1, rule[kind], field[kind], "stack %.*s is never defined", n, id);
}

/* The end: references to stacks that never came. */
static int check_pending(struct v *v)
{
  size_t i;
  char hex[35];
  for (i = 0; v->pending.cmask && i <= v->pending.cmask; i++) {
    if (!v->pending.cs[i].v)
      continue;
    hex[0] = '0';
    hex[1] = 'x';
    spaa_hex_encode(hex + 2, v->pending.cs[i].k, 16);
    if (idset_find(&v->stacks, hex, 34, 0, 0, NULL))
      continue;
    missing_ref(v, v->pending.cs[i].v - 1, hex, 34);
  }
  for (i = 0; v->pending.sm.mask && i <= v->pending.sm.mask; i++) {
    if (!v->pending.sm.vals[i])
      continue;
    if (idset_find(&v->stacks, v->pending.sm.keys[i], v->pending.sm.lens[i], 0, 0, NULL))
      continue;
    missing_ref(v, v->pending.sm.vals[i] - 1, v->pending.sm.keys[i],
                (int)v->pending.sm.lens[i]);
  }
  return 0;
}

static const char *type_word(int t)
{
  switch (t) {
  case SPAA_REC_DSO: return "dso";
  case SPAA_REC_FRAME: return "frame";
  case SPAA_REC_THREAD: return "thread";
  case SPAA_REC_STACK: return "stack";
  case SPAA_REC_SAMPLE: return "sample";
  case SPAA_REC_WINDOW: return "window";
  default: return "non-header";
  }
}

int spaa__validate_each(spaa_read_cb rd, void *rd_ctx, spaa_diag_cb cb, void *cb_ctx,
                        size_t max_errors, struct spaa_validate_stats *st, int want_json,
                        spaa__rec_cb each, void *each_ctx)
{
  struct spaa_validate_stats local;
  struct spaa_lines l;
  struct spaa_rec r;
  struct spaa_err err;
  struct v v;
  const char *line;
  size_t len;
  int rc;

  if (!st)
    st = &local;
  memset(st, 0, sizeof(*st));
  memset(&v, 0, sizeof(v));
  memset(&err, 0, sizeof(err));
  v.cb = cb;
  v.cb_ctx = cb_ctx;
  v.max_errors = max_errors;
  v.st = st;
  spaa_lines_init(&l, rd, rd_ctx);
  spaa_rec_init(&r, want_json);
  if (!(v.warned_pool = malloc(SPAA_VALIDATE_MAX_WARNED_BYTES))) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  while ((rc = spaa_lines_next(&l, &line, &len, &err)) == 1) {
    v.line = l.lineno;
    st->lines = l.lineno;
    rc = spaa_rec_parse(&r, line, len);
    if (rc == -1) {
      diag(&v, 1, r.fault.rule, r.fault.field, "%s", r.fault.msg);
      if (r.type == SPAA_REC_HEADER && !v.header_line)
        v.header_line = v.line;
      v.first_done = 1;
      continue;
    }
    if (rc)
      goto out;
    if (r.type == SPAA_REC_NONE)
      continue;
    if (!v.first_done) {
      v.first_done = 1;
      if (r.type != SPAA_REC_HEADER)
        diag(&v, 1, "header-first", "type", "the first record must be the header, not a %s record",
             r.type == SPAA_REC_OTHER ? r.type_name : type_word(r.type));
    }
    switch (r.type) {
    case SPAA_REC_HEADER: rc = check_header(&v, r.doc); break;
    case SPAA_REC_DSO: rc = check_dso(&v, &r); break;
    case SPAA_REC_FRAME: rc = check_frame(&v, &r); break;
    case SPAA_REC_THREAD: rc = check_thread(&v, &r); break;
    case SPAA_REC_STACK: rc = check_stack(&v, &r); break;
    case SPAA_REC_SAMPLE: rc = check_sample(&v, &r); break;
    case SPAA_REC_WINDOW: rc = check_window(&v, &r); break;
    default:
      diag(&v, 0, "unknown-record-type", "type", "unknown record type \"%s\"", r.type_name);
      rc = 0;
    }
    if (!rc && each)
      rc = each(each_ctx, &r, l.lineno, l.bytes - len);
    if (rc)
      goto out;
  }
  st->bytes = l.bytes;
  if (rc < 0) {
    /* the input could not be read on: say so as a diagnostic too */
    v.line = err.line ? err.line : l.lineno + 1;
    diag(&v, 1, rc == SPAA_E_TOO_LARGE ? "line-too-long" : rc == SPAA_E_IO ? "io" : "compression",
         "", "%s", err.msg);
    if (rc == SPAA_E_TOO_LARGE)
      rc = SPAA_E_INVALID;
    goto out;
  }
  if (!v.header_line) {
    v.line = 1;
    diag(&v, 1, "header-missing", "type", "the file has no header record");
  }
  check_pending(&v);
  rc = st->errors ? SPAA_E_INVALID : 0;
out:
  if (rc == SPAA_E_NOMEM)
    diag(&v, 1, "nomem", "", "out of memory");
  free_events(&v);
  spaa_idmap_free(&v.dsos);
  spaa_idmap_free(&v.frames);
  free(v.dense);
  spaa_idmap_free(&v.tids);
  spaa_idmap_free(&v.miss_dsos);
  spaa_idmap_free(&v.miss_frames);
  idset_free(&v.stacks);
  idset_free(&v.pending);
  spaa_strmap_free(&v.warned_keys);
  free(v.warned_pool);
  free(v.vf);
  free(v.leaf);
  spaa_lines_free(&l);
  spaa_rec_free(&r);
  return rc;
}

int spaa_validate(spaa_read_cb rd, void *rd_ctx, spaa_diag_cb cb, void *cb_ctx, size_t max_errors,
                  struct spaa_validate_stats *st)
{
  return spaa__validate_each(rd, rd_ctx, cb, cb_ctx, max_errors, st, 0, NULL, NULL);
}

int spaa_validate_buf(const void *buf, size_t len, spaa_diag_cb cb, void *cb_ctx,
                      size_t max_errors, struct spaa_validate_stats *st)
{
  struct spaa_mem_src m = {buf, len, 0};
  return spaa_validate(spaa_mem_read, &m, cb, cb_ctx, max_errors, st);
}
