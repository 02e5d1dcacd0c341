/* SPAA model: allocation, interning and record arrays (see spaa.h). */
#include "spaa/spaa.h"

#include <stdlib.h>
#include <string.h>

#include "base/blocks.h"
#include "base/buf.h"

#define ARENA_BLOCK (64 * 1024)

int spaa_meter_add(struct spaa_meter *m, size_t n)
{
  if (m->refused)
    return -1;
  if (n > SIZE_MAX - m->held) {
    m->refused = spaa_err_set(&m->why, SPAA_E_TOO_LARGE, 0, 0, "a model past the address space");
    return -1;
  }
  if (m->held + n > m->room) {
    int rc = m->ask ? m->ask(m, m->held + n - m->room)
                    : spaa_err_set(&m->why, SPAA_E_TOO_LARGE, 0, 0, "the profiles take more "
                                   "than %zu bytes in memory", m->room);
    if (!rc && m->held + n > m->room)
      rc = spaa_err_set(&m->why, SPAA_E_NOMEM, 0, 0, NULL);
    if (rc) {
      m->refused = rc;
      return -1;
    }
  }
  m->held += n;
  if (m->held > m->peak)
    m->peak = m->held;
  return 0;
}

void spaa_meter_sub(struct spaa_meter *m, size_t n) { m->held -= n < m->held ? n : m->held; }

int spaa_meter_take(struct spaa_meter *m, size_t *counted, size_t n)
{
  if (!m)
    return 0;
  if (spaa_meter_add(m, n))
    return -1;
  *counted += n;
  return 0;
}

int spaa_meter_hold(struct spaa_meter *m, size_t *counted, size_t want)
{
  return want > *counted ? spaa_meter_take(m, counted, want - *counted) : 0;
}

void spaa_meter_give(struct spaa_meter *m, size_t *counted, size_t n)
{
  if (!m)
    return;
  if (n > *counted)
    n = *counted;
  *counted -= n;
  spaa_meter_sub(m, n);
}

/* Report n more bytes of p to its meter (0, or -1: refused), or give n back. */
static int meter_take(struct spaa_profile *p, size_t n)
{
  return spaa_meter_take(p->meter, &p->metered, n);
}

static void meter_give(struct spaa_profile *p, size_t n)
{
  spaa_meter_give(p->meter, &p->metered, n);
}

static void arena_free(struct spaa_profile *p, struct spaa_block **head);

struct spaa_profile *spaa_profile_new(void) { return spaa_profile_new_metered(NULL); }

struct spaa_profile *spaa_profile_new_metered(struct spaa_meter *m)
{
  struct spaa_profile *p = calloc(1, sizeof(*p));
  if (!p)
    return NULL;
  p->header.frame_order = SPAA_LEAF_TO_ROOT;
  p->header.id_mode = SPAA_IDS_CONTENT;
  p->meter = m;
  if (meter_take(p, sizeof(*p))) {
    free(p);
    return NULL;
  }
  return p;
}

size_t spaa_profile_bytes(const struct spaa_profile *p)
{
  if (!p)
    return 0;
  return sizeof(*p) + p->cap_dsos * sizeof(*p->dsos) + p->cap_frames * sizeof(*p->frames) +
         p->cap_threads * sizeof(*p->threads) + p->cap_stacks * sizeof(*p->stacks) +
         p->cap_samples * sizeof(*p->samples) + p->cap_csamples * sizeof(*p->csamples) +
         p->cs.cap_ctxs * sizeof(*p->cs.ctxs) +
         p->cap_windows * sizeof(*p->windows) +
         p->header.cap_events * sizeof(*p->header.events) + p->arena_bytes + p->bulk_bytes;
}

void spaa_profile_free(struct spaa_profile *p)
{
  size_t i;
  if (!p)
    return;
  for (i = 0; i < p->header.n_events; i++) {
    json_decref(p->header.events[i].sampling_extra);
    json_decref(p->header.events[i].extra);
  }
  free(p->header.events);
  json_decref(p->header.source);
  json_decref(p->header.extra);
  for (i = 0; i < p->n_dsos; i++)
    json_decref(p->dsos[i].extra);
  free(p->dsos);
  for (i = 0; i < p->n_frames; i++)
    json_decref(p->frames[i].extra);
  free(p->frames);
  for (i = 0; i < p->n_threads; i++)
    json_decref(p->threads[i].extra);
  free(p->threads);
  spaa_profile_drop_samples(p);
  spaa_profile_drop_stacks(p);
  for (i = 0; i < p->n_windows; i++) {
    json_decref(p->windows[i].by_stack);
    json_decref(p->windows[i].extra);
  }
  free(p->windows);
  arena_free(p, &p->arena);
  arena_free(p, &p->bulk);
  meter_give(p, p->metered);
  free(p);
}

/* The arenas' blocks, counted by the profile's meter. */
static void *meter_get(void *arg, size_t n)
{
  struct spaa_profile *p = arg;
  void *b;
  if (meter_take(p, n))
    return NULL;
  if (!(b = malloc(n)))
    meter_give(p, n);
  return b;
}

static void meter_put(void *arg, void *b, size_t n)
{
  meter_give(arg, n);
  free(b);
}

/* size zeroed bytes from the arena at *head (p->arena or p->bulk), counted in *bytes. */
static void *arena_alloc(struct spaa_profile *p, struct spaa_block **head, size_t *bytes,
                         size_t size)
{
  struct spaa_block_src src = {meter_get, meter_put, p};
  void *r = spaa_blocks_take(head, size, 16, ARENA_BLOCK, &src);
  if (!r)
    return NULL;
  *bytes += (size + 15) & ~(size_t)15;
  memset(r, 0, size);
  return r;
}

/* Free the blocks of an arena, giving their bytes back to the meter. */
static void arena_free(struct spaa_profile *p, struct spaa_block **head)
{
  struct spaa_block_src src = {meter_get, meter_put, p};
  spaa_blocks_free(head, &src);
}

void *spaa_alloc(struct spaa_profile *p, size_t size)
{
  return arena_alloc(p, &p->arena, &p->arena_bytes, size);
}

/* Stack frame lists and weight arrays: the bulk arena, freed with the records that point
 * into it (spaa_profile_drop_stacks). */
static void *bulk_alloc(struct spaa_profile *p, size_t size)
{
  return arena_alloc(p, &p->bulk, &p->bulk_bytes, size);
}

const char *spaa_strndup(struct spaa_profile *p, const char *s, size_t len)
{
  char *r;
  if (!s)
    return NULL;
  r = spaa_alloc(p, len + 1);
  if (!r)
    return NULL;
  memcpy(r, s, len);
  r[len] = 0;
  return r;
}

const char *spaa_strdup(struct spaa_profile *p, const char *s)
{
  return s ? spaa_strndup(p, s, strlen(s)) : NULL;
}

/* Grow `*arr` (of `*cap` elements of `size`) to hold one more; zero the new element. */
static void *grow(struct spaa_profile *p, void **arr, size_t *n, size_t *cap, size_t size)
{
  char *r;
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    void *na;
    if (nc > SIZE_MAX / size || meter_take(p, (nc - *cap) * size))
      return NULL;
    na = realloc(*arr, nc * size);
    if (!na) {
      meter_give(p, (nc - *cap) * size);
      return NULL;
    }
    *arr = na;
    *cap = nc;
  }
  r = (char *)*arr + *n * size;
  memset(r, 0, size);
  (*n)++;
  return r;
}

#define ADD(p, arr, n, cap) grow((p), (void **)&(arr), &(n), &(cap), sizeof(*(arr)))

/* Shrink `*arr` to its n elements (at least one kept, as grow left it). */
static void fit(struct spaa_profile *p, void **arr, size_t n, size_t *cap, size_t size)
{
  void *na;
  if (!*arr || n >= *cap || !n)
    return;
  if ((na = realloc(*arr, n * size))) {
    meter_give(p, (*cap - n) * size);
    *arr = na;
    *cap = n;
  }
}

#define FIT(arr, n, cap) fit(p, (void **)&(arr), (n), &(cap), sizeof(*(arr)))

void spaa_profile_fit(struct spaa_profile *p)
{
  FIT(p->header.events, p->header.n_events, p->header.cap_events);
  FIT(p->dsos, p->n_dsos, p->cap_dsos);
  FIT(p->frames, p->n_frames, p->cap_frames);
  FIT(p->threads, p->n_threads, p->cap_threads);
  FIT(p->stacks, p->n_stacks, p->cap_stacks);
  FIT(p->samples, p->n_samples, p->cap_samples);
  FIT(p->csamples, p->n_csamples, p->cap_csamples);
  FIT(p->cs.ctxs, p->cs.n_ctxs, p->cs.cap_ctxs);
  FIT(p->windows, p->n_windows, p->cap_windows);
}

void spaa_profile_drop_stacks(struct spaa_profile *p)
{
  size_t i;
  for (i = 0; i < p->n_stacks; i++) {
    json_decref(p->stacks[i].context);
    json_decref(p->stacks[i].extra);
  }
  free(p->stacks);
  meter_give(p, p->cap_stacks * sizeof(*p->stacks));
  p->stacks = NULL;
  p->n_stacks = p->cap_stacks = 0;
  if (!p->cap_samples) { /* the samples' weights are in the bulk arena too */
    arena_free(p, &p->bulk);
    p->bulk_bytes = 0;
  }
}

void spaa_profile_drop_samples(struct spaa_profile *p)
{
  size_t i;
  for (i = 0; i < p->n_samples; i++) {
    json_decref(p->samples[i].context);
    json_decref(p->samples[i].extra);
  }
  free(p->samples);
  meter_give(p, p->cap_samples * sizeof(*p->samples));
  p->samples = NULL;
  p->n_samples = p->cap_samples = 0;
  free(p->csamples);
  meter_give(p, p->cap_csamples * sizeof(*p->csamples));
  p->csamples = NULL;
  p->n_csamples = p->cap_csamples = 0;
  for (i = 0; i < p->cs.n_ctxs; i++)
    json_decref(p->cs.ctxs[i].context);
  free(p->cs.ctxs);
  meter_give(p, p->cs.cap_ctxs * sizeof(*p->cs.ctxs));
  p->cs.ctxs = NULL;
  p->cs.n_ctxs = p->cs.cap_ctxs = 0;
}

void spaa_profile_release_samples(struct spaa_profile *p, size_t from, size_t to)
{
  size_t i, a, b;
  if (to > spaa_profile_n_samples(p))
    to = spaa_profile_n_samples(p);
  for (a = i = from; i < to && i < p->n_samples; i++) {
    json_decref(p->samples[i].context);
    json_decref(p->samples[i].extra);
    p->samples[i].context = p->samples[i].extra = NULL;
  }
  if (i > a)
    spaa_mem_discard(p->samples + a, (i - a) * sizeof(*p->samples));
  a = (from > p->n_samples ? from : p->n_samples) - p->n_samples;
  b = to > p->n_samples ? to - p->n_samples : 0;
  if (b > a) /* their contexts are cs.ctxs', which stay until the samples are dropped */
    spaa_mem_discard(p->csamples + a, (b - a) * sizeof(*p->csamples));
}

void spaa_profile_release_stacks(struct spaa_profile *p, size_t from, size_t to)
{
  size_t i;
  if (to > p->n_stacks)
    to = p->n_stacks;
  for (i = from; i < to; i++) {
    json_decref(p->stacks[i].context);
    json_decref(p->stacks[i].extra);
    p->stacks[i].context = p->stacks[i].extra = NULL;
  }
  if (to > from)
    spaa_mem_discard(p->stacks + from, (to - from) * sizeof(*p->stacks));
}

/* Room for n more elements of `size` bytes in *arr (n_ used of cap_), in one allocation. */
static int reserve(struct spaa_profile *p, void **arr, size_t n_, size_t *cap_, size_t size,
                   size_t n)
{
  void *na;
  size_t more;
  if (n <= *cap_ - n_)
    return 0;
  if (n > SIZE_MAX / size - n_)
    return SPAA_E_NOMEM;
  more = (n_ + n - *cap_) * size;
  if (meter_take(p, more))
    return SPAA_E_NOMEM;
  if (!(na = realloc(*arr, (n_ + n) * size))) {
    meter_give(p, more);
    return SPAA_E_NOMEM;
  }
  *arr = na;
  *cap_ = n_ + n;
  return 0;
}

int spaa_reserve_samples(struct spaa_profile *p, size_t n)
{
  return reserve(p, (void **)&p->samples, p->n_samples, &p->cap_samples, sizeof(*p->samples),
                 n);
}

int spaa_reserve_csamples(struct spaa_profile *p, size_t n)
{
  return reserve(p, (void **)&p->csamples, p->n_csamples, &p->cap_csamples,
                 sizeof(*p->csamples), n);
}

struct spaa_csample *spaa_add_csample(struct spaa_profile *p)
{
  struct spaa_csample *s = ADD(p, p->csamples, p->n_csamples, p->cap_csamples);
  if (s)
    s->stack = SPAA_CS_NO_STACK;
  return s;
}

struct spaa_cctx *spaa_add_cctx(struct spaa_profile *p, uint32_t *index)
{
  struct spaa_cctx *c;
  if (p->cs.n_ctxs > SPAA_CS_MAX_CTX || !(c = ADD(p, p->cs.ctxs, p->cs.n_ctxs, p->cs.cap_ctxs)))
    return NULL;
  *index = (uint32_t)(p->cs.n_ctxs - 1);
  return c;
}

const struct spaa_sample *spaa_profile_sample(const struct spaa_profile *p, size_t i,
                                              struct spaa_sample_buf *buf)
{
  const struct spaa_csample *c;
  const struct spaa_cctx *x;
  if (i < p->n_samples)
    return &p->samples[i];
  c = &p->csamples[i - p->n_samples];
  x = c->ctx < p->cs.n_ctxs ? &p->cs.ctxs[c->ctx] : NULL;
  memset(buf, 0, sizeof(*buf));
  buf->s.has_timestamp = (c->flags & SPAA_CS_TIMESTAMP) != 0;
  buf->s.timestamp = spaa_int(c->timestamp);
  buf->s.has_pid = buf->s.has_tid = buf->s.has_cpu = 1;
  buf->s.pid = p->cs.pid;
  buf->s.tid = x ? x->tid : 0;
  buf->s.cpu = x ? x->cpu : 0;
  buf->s.event = p->cs.event;
  buf->s.stack_id = c->stack < p->n_stacks ? p->stacks[c->stack].id : "";
  buf->s.context = x ? x->context : NULL;
  if (c->flags & SPAA_CS_WEIGHT) {
    buf->w.metric = p->cs.metric;
    buf->w.unit = p->cs.unit;
    buf->w.value = spaa_int(c->value);
    buf->s.weights.v = &buf->w;
    buf->s.weights.n = buf->s.weights.cap = 1;
  }
  return &buf->s;
}

struct spaa_event *spaa_add_event(struct spaa_profile *p)
{
  return ADD(p, p->header.events, p->header.n_events, p->header.cap_events);
}

struct spaa_dso *spaa_add_dso(struct spaa_profile *p)
{
  struct spaa_dso *d = ADD(p, p->dsos, p->n_dsos, p->cap_dsos);
  if (d)
    d->name = "";
  return d;
}

struct spaa_frame *spaa_add_frame(struct spaa_profile *p)
{
  struct spaa_frame *f = ADD(p, p->frames, p->n_frames, p->cap_frames);
  if (f) {
    f->func = "";
    f->func_resolved = 1;
    f->srcline_resolved = 1;
    f->kind = "unknown";
  }
  return f;
}

struct spaa_thread *spaa_add_thread(struct spaa_profile *p)
{
  return ADD(p, p->threads, p->n_threads, p->cap_threads);
}

struct spaa_stack *spaa_add_stack(struct spaa_profile *p)
{
  return ADD(p, p->stacks, p->n_stacks, p->cap_stacks);
}

struct spaa_sample *spaa_add_sample(struct spaa_profile *p)
{
  struct spaa_sample *s = ADD(p, p->samples, p->n_samples, p->cap_samples);
  if (s)
    s->stack_id = "";
  return s;
}

struct spaa_window *spaa_add_window(struct spaa_profile *p)
{
  return ADD(p, p->windows, p->n_windows, p->cap_windows);
}

int spaa_weights_add(struct spaa_profile *p, struct spaa_weights *w, const char *metric,
                     struct spaa_num value, const char *unit)
{
  struct spaa_weight *e;
  if (w->n == w->cap) {
    /* grow inside the arena: the old array is left behind (weight lists are short) */
    size_t nc = w->cap ? (size_t)w->cap * 2 : 2;
    struct spaa_weight *nv = nc <= UINT32_MAX ? bulk_alloc(p, nc * sizeof(*nv)) : NULL;
    if (!nv)
      return SPAA_E_NOMEM;
    if (w->n)
      memcpy(nv, w->v, w->n * sizeof(*nv));
    w->v = nv;
    w->cap = (uint32_t)nc;
  }
  e = &w->v[w->n++];
  e->metric = spaa_strdup(p, metric);
  e->unit = unit ? spaa_strdup(p, unit) : NULL;
  e->value = value;
  if (!e->metric || (unit && !e->unit))
    return SPAA_E_NOMEM;
  return 0;
}

int spaa_weights_alloc(struct spaa_profile *p, struct spaa_weights *w, size_t n)
{
  struct spaa_weight *v = NULL;
  if (n && (n > UINT32_MAX || !(v = bulk_alloc(p, n * sizeof(*v)))))
    return SPAA_E_NOMEM;
  w->v = v;
  w->n = w->cap = (uint32_t)n;
  return 0;
}

int spaa_stack_set_frames(struct spaa_profile *p, struct spaa_stack *s, const uint64_t *frames,
                          size_t n)
{
  uint64_t *f = NULL;
  if (n) {
    if (n > SIZE_MAX / sizeof(*f) || !(f = bulk_alloc(p, n * sizeof(*f))))
      return SPAA_E_NOMEM;
    memcpy(f, frames, n * sizeof(*f));
  }
  s->frames = f;
  s->n_frames = n;
  return 0;
}

int spaa_stack_share_frames(struct spaa_profile *p, struct spaa_stack *s, uint64_t *frames,
                            size_t n)
{
  if (n > SIZE_MAX / sizeof(*frames) || meter_take(p, n * sizeof(*frames)))
    return SPAA_E_NOMEM;
  s->frames = frames;
  s->n_frames = n;
  return 0;
}

const struct spaa_event *spaa_find_event(const struct spaa_profile *p, const char *name)
{
  size_t i;
  if (!name)
    return NULL;
  for (i = 0; i < p->header.n_events; i++)
    if (strcmp(p->header.events[i].name, name) == 0)
      return &p->header.events[i];
  return NULL;
}

const struct spaa_weight *spaa_weights_find(const struct spaa_weights *w, const char *metric)
{
  size_t i;
  for (i = 0; i < w->n; i++)
    if (strcmp(w->v[i].metric, metric) == 0)
      return &w->v[i];
  return NULL;
}

double spaa_unit_size(const char *unit, int *kind)
{
  static const struct {
    const char *name;
    int kind;
    double size;
  } units[] = {
      {"nanoseconds", 1, 1},          {"nanosecond", 1, 1},         {"ns", 1, 1},
      {"microseconds", 1, 1e3},       {"microsecond", 1, 1e3},      {"us", 1, 1e3},
      {"milliseconds", 1, 1e6},       {"millisecond", 1, 1e6},      {"ms", 1, 1e6},
      {"seconds", 1, 1e9},            {"second", 1, 1e9},           {"s", 1, 1e9},
      {"bytes", 2, 1},                {"byte", 2, 1},               {"By", 2, 1},
      {"kilobytes", 2, 1024},         {"KiBy", 2, 1024},            {"megabytes", 2, 1048576},
      {"MiBy", 2, 1048576},           {"gigabytes", 2, 1073741824}, {"GiBy", 2, 1073741824}};
  size_t i;
  *kind = 0;
  for (i = 0; unit && i < sizeof(units) / sizeof(units[0]); i++)
    if (strcmp(unit, units[i].name) == 0) {
      *kind = units[i].kind;
      return units[i].size;
    }
  return 0;
}

/* Nanoseconds in one `unit` of a time range (NULL: nanoseconds); 0 for no time unit. */
static int64_t unit_ns(const char *unit)
{
  int kind;
  double size = unit ? spaa_unit_size(unit, &kind) : 1;
  return unit && kind != 1 ? 0 : (int64_t)size;
}

/* A time of `m` ns per unit in ns: an integer exactly (epoch nanoseconds pass 2^53, where a
 * double rounds them: 1673511894614055000 became ...054912), saturated past int64; a float
 * as a double can. */
static int64_t num_ns(struct spaa_num t, int64_t m)
{
  int64_t ns;
  double d;
  if (!t.is_float)
    return __builtin_mul_overflow(t.i, m, &ns) ? (t.i < 0 ? INT64_MIN : INT64_MAX) : ns;
  d = t.f * (double)m;
  if (!(d == d))
    return 0;
  if (d >= 9223372036854775807.0)
    return INT64_MAX;
  return d <= -9223372036854775808.0 ? INT64_MIN : (int64_t)d;
}

int spaa_header_range_ns(const struct spaa_profile *p, int64_t *start_ns, int64_t *end_ns)
{
  int64_t m = unit_ns(p->header.time_unit);
  if (!p->header.has_time_range || !m)
    return -1;
  *start_ns = num_ns(p->header.start, m);
  *end_ns = num_ns(p->header.end, m);
  return 0;
}

uint64_t spaa_frame_rel_addr(const struct spaa_frame *f, const struct spaa_dso *d)
{
  uint64_t a = f->ip;
  if (d && d->has_mapping && a >= d->map_start && a < d->map_limit)
    a = a - d->map_start + d->map_offset;
  return a;
}
