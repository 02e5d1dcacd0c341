/* Sentry profiles -> SPAA (field by field in docs/sentry-mapping.md), the envelope-level
 * conversion and the `convert --from sentry` entry point. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "base/buf.h"
#include "base/hex.h"
#include "base/idmap.h"
#include "base/limits.h"
#include "sentry/sentry_int.h"
#include "spaa/spaa_io.h"

#define EVENT_NAME "wall"
#define NOMINAL_HZ 101 /* the sampling rate Sample Format V1 asks SDKs for */

struct image {
  uint64_t start, limit; /* mapped range, limit > start */
  uint64_t dso;          /* SPAA dso id */
};

struct builder {
  struct sentry__profile *sp;
  struct spaa_profile *p;
  int compact;               /* samples as compact ones */
  struct image *images;      /* images with a known range, sorted by start */
  size_t n_images;
  struct spaa_strmap by_name;/* module/package name -> dso id (keys borrowed from the JSON) */
  int has_unknown;
  uint64_t unknown_dso;
};

static int set_new(json_t **obj, const char *k, json_t *v)
{
  if (!v)
    return SPAA_E_NOMEM;
  if (!*obj && !(*obj = json_object())) {
    json_decref(v);
    return SPAA_E_NOMEM;
  }
  return json_object_set_new(*obj, k, v) ? SPAA_E_NOMEM : 0;
}

/* Copy every member of `src` not in skip[] into *extra as "x_sentry_" + key (nulls
 * dropped). */
static int copy_extras(json_t **extra, const json_t *src, const char *const *skip)
{
  const char *k;
  json_t *v;
  char key[128];
  json_object_foreach((json_t *)src, k, v) {
    const char *const *s;
    int rc;
    for (s = skip; *s && strcmp(*s, k) != 0; s++)
      ;
    if (*s || json_is_null(v) || strlen(k) > sizeof(key) - 10)
      continue;
    snprintf(key, sizeof(key), "x_sentry_%s", k);
    if ((rc = set_new(extra, key, json_incref(v))))
      return rc;
  }
  return 0;
}

static int image_cmp(const void *a, const void *b)
{
  const struct image *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->dso < y->dso ? -1 : x->dso > y->dso;
}

/* debug_meta.images -> dso records; ranges for frame lookup. */
static int add_images(struct builder *b)
{
  static const char *const skip[] = {"code_file", "debug_id", "image_addr", "image_size", NULL};
  const json_t *im = json_object_get(json_object_get(b->sp->root, "debug_meta"), "images");
  size_t i, n = json_array_size(im);
  int rc;
  if (!n)
    return 0;
  if (!(b->images = calloc(n, sizeof(*b->images))))
    return SPAA_E_NOMEM;
  for (i = 0; i < n; i++) {
    const json_t *o = json_array_get(im, i), *v;
    struct spaa_dso *d = spaa_add_dso(b->p);
    const char *name;
    uint64_t addr = 0, size = 0;
    if (!d)
      return SPAA_E_NOMEM;
    d->id = b->p->n_dsos - 1;
    name = json_string_value(json_object_get(o, "code_file"));
    if (!name)
      name = json_string_value(json_object_get(o, "debug_file"));
    if (!name)
      name = json_string_value(json_object_get(o, "name"));
    if (name && !(d->name = spaa_strdup(b->p, name)))
      return SPAA_E_NOMEM;
    v = json_object_get(o, "debug_id");
    if (!json_is_string(v))
      v = json_object_get(o, "uuid");
    if (json_is_string(v)) {
      char hex[80];
      const char *s = json_string_value(v);
      size_t j, o2 = 0, ok = 1;
      for (j = 0; s[j] && ok; j++) {
        int hv = spaa_hex_val((unsigned char)s[j]);
        if (s[j] == '-')
          continue;
        if (hv < 0 || o2 + 1 >= sizeof(hex))
          ok = 0;
        else
          hex[o2++] = spaa_hex_digits[hv];
      }
      hex[o2] = 0;
      if (ok && o2 && !(d->build_id = spaa_strdup(b->p, hex)))
        return SPAA_E_NOMEM;
      if (!ok && (rc = set_new(&d->extra, "x_sentry_debug_id", json_incref((json_t *)v))))
        return rc;
    }
    if (!sentry__parse_addr(json_object_get(o, "image_addr"), &addr) &&
        !sentry__parse_addr(json_object_get(o, "image_size"), &size) && size > 0 &&
        addr <= UINT64_MAX - size) {
      d->has_mapping = 1;
      d->map_start = addr;
      d->map_limit = addr + size;
      d->map_offset = 0;
      b->images[b->n_images].start = addr;
      b->images[b->n_images].limit = addr + size;
      b->images[b->n_images].dso = d->id;
      b->n_images++;
    }
    if ((rc = copy_extras(&d->extra, o, skip)))
      return rc;
  }
  qsort(b->images, b->n_images, sizeof(*b->images), image_cmp);
  return 0;
}

static int find_image(const struct builder *b, uint64_t a, uint64_t *dso)
{
  size_t lo = 0, hi = b->n_images;
  while (lo < hi) { /* last image with start <= a */
    size_t mid = lo + (hi - lo) / 2;
    if (b->images[mid].start <= a)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0 || a >= b->images[lo - 1].limit)
    return 0;
  *dso = b->images[lo - 1].dso;
  return 1;
}

/* The dso named `name` (n bytes), made on first use. 0 or SPAA_E_NOMEM. */
static int named_dso(struct builder *b, const char *name, size_t n, uint64_t *dso)
{
  size_t idx;
  struct spaa_dso *d;
  if (spaa_strmap_get(&b->by_name, name, n, &idx)) {
    *dso = idx;
    return 0;
  }
  if (!(d = spaa_add_dso(b->p)) || !(d->name = spaa_strndup(b->p, name, n)))
    return SPAA_E_NOMEM;
  d->id = b->p->n_dsos - 1;
  /* the key is the dso's own copy: name may be read in place or a scratch */
  if (spaa_strmap_put(&b->by_name, d->name, n, d->id, NULL) < 0)
    return SPAA_E_NOMEM;
  *dso = d->id;
  return 0;
}

/* Frames alike share one extra object: frames whose members other than those the frame's
 * fields take are the same bytes get the same object, made once from the first of them. */
struct extras {
  struct spaa_buf sigs;      /* the members' bytes of every distinct set, one after another */
  struct spaa_idmap by_hash; /* XXH3 of a set's bytes -> index in v */
  struct {
    size_t off, len;         /* its bytes in sigs */
    json_t *extra;           /* its object (a reference), or NULL when it has no members */
    size_t next;             /* the next set with the same hash + 1, or 0 */
  } *v;
  size_t n, cap;
};

static void extras_free(struct extras *x)
{
  size_t i;
  for (i = 0; i < x->n; i++)
    json_decref(x->v[i].extra);
  free(x->v);
  spaa_buf_free(&x->sigs);
  spaa_idmap_free(&x->by_hash);
}

/* The keys a frame's fields take (the others become x_sentry_* extras). */
static const char *const frame_fields[] = {"function", "name", "filename", "file", "lineno",
                                           "line", "instruction_addr", NULL};

/* The extra object of the frame whose bytes are f: *out a new reference (shared with the
 * frames alike), or NULL when it has no extras. 0 or SPAA_E_NOMEM. */
static int frame_extra(struct extras *x, struct sentry__span f, json_t **out)
{
  struct sentry__iter it;
  struct sentry__span k, v;
  size_t start = x->sigs.len, len, idx, i;
  uint64_t h;
  json_t *o;
  int rc, found;
  *out = NULL;
  sentry__iter_init(&it, f);
  while (sentry__iter_member(&it, &k, &v)) {
    if (sentry__key_index(k, frame_fields, sizeof(frame_fields) / sizeof(frame_fields[0]) - 1) >= 0)
      continue;
    /* key and value bytes: a set of members reads back one way (strings are quoted) */
    if (spaa_buf_add(&x->sigs, k.p, k.n) || spaa_buf_add(&x->sigs, v.p, v.n))
      return SPAA_E_NOMEM;
  }
  len = x->sigs.len - start;
  if (!len)
    return 0;
  h = XXH3_64bits(x->sigs.p + start, len);
  found = spaa_idmap_get(&x->by_hash, h, &idx);
  for (i = idx + 1; found && i; i = x->v[i - 1].next)
    if (x->v[i - 1].len == len && memcmp(x->sigs.p + x->v[i - 1].off, x->sigs.p + start, len) == 0) {
      x->sigs.len = start; /* known: its bytes are not kept twice */
      *out = json_incref(x->v[i - 1].extra);
      return 0;
    }
  if (x->n == x->cap) {
    size_t nc = x->cap ? x->cap * 2 : 64;
    void *nv = realloc(x->v, nc * sizeof(*x->v));
    if (!nv)
      return SPAA_E_NOMEM;
    x->v = nv;
    x->cap = nc;
  }
  /* the first frame of its kind: read by jansson as it always was, extras copied from it */
  if (!(o = json_loadb(f.p, f.n, 0, NULL)))
    return SPAA_E_NOMEM;
  x->v[x->n].extra = NULL;
  rc = copy_extras(&x->v[x->n].extra, o, frame_fields);
  json_decref(o);
  if (rc)
    return rc;
  x->v[x->n].off = start;
  x->v[x->n].len = len;
  x->v[x->n].next = 0;
  if (found) { /* a set of the same hash: chained after the first */
    x->v[x->n].next = x->v[idx].next;
    x->v[idx].next = x->n + 1;
  } else if (spaa_idmap_put(&x->by_hash, h, x->n, NULL) < 0) {
    json_decref(x->v[x->n].extra);
    return SPAA_E_NOMEM;
  }
  *out = json_incref(x->v[x->n++].extra);
  return 0;
}

/* A frame's member read in place: absent and null both read as absent here, as
 * json_string_length and json_is_integer give nothing for them. */
static int present(struct sentry__span v)
{
  enum sentry__jkind k = sentry__kind(v);
  return k != SENTRY__J_ABSENT && k != SENTRY__J_NULL;
}

/* The first of two members that is present (first_of), else the second as it is. */
static struct sentry__span first_span(struct sentry__span a, struct sentry__span b)
{
  return present(a) ? a : b;
}

/* The text of a string member, or "" (length 0) when it is anything else. */
static int text_of(struct builder *b, struct sentry__span v, const char **s, size_t *n)
{
  *s = "";
  *n = 0;
  return sentry__kind(v) == SENTRY__J_STR ? sentry__str(v, &b->sp->sc, s, n) : 0;
}

enum { F_FUNCTION, F_NAME, F_FILENAME, F_FILE, F_ABS_PATH, F_LINENO, F_LINE, F_MODULE, F_PACKAGE,
       F_N };
static const char *const frame_read[F_N] = {"function", "name", "filename", "file", "abs_path",
                                            "lineno", "line", "module", "package"};

static int add_frames(struct builder *b)
{
  struct sentry__profile *sp = b->sp;
  struct extras x;
  size_t i;
  int rc = 0;
  memset(&x, 0, sizeof(x));
  spaa_buf_init(&x.sigs, 0);
  spaa_idmap_init(&x.by_hash);
  for (i = 0; i < sp->n_frames && !rc; i++) {
    struct sentry__span v[F_N], fn, file, line, mod;
    struct spaa_frame *f = spaa_add_frame(b->p);
    const char *s;
    size_t n;
    uint64_t dso;
    char tmp[40];
    if (!f) {
      rc = SPAA_E_NOMEM;
      break;
    }
    sentry__fields(sp->frame[i], frame_read, F_N, v);
    f->id = i;
    f->kind = "user";
    fn = first_span(v[F_FUNCTION], v[F_NAME]);
    if (sp->has_addr[i]) {
      f->has_ip = 1;
      f->ip = sp->addr[i];
    }
    if ((rc = text_of(b, fn, &s, &n)))
      break;
    if (n) {
      if (!(f->func = spaa_strndup(b->p, s, n))) {
        rc = SPAA_E_NOMEM;
        break;
      }
    } else {
      f->func_resolved = 0;
      if (f->has_ip) {
        spaa_hex_addr(tmp, f->ip);
        if (!(f->func = spaa_strdup(b->p, tmp))) {
          rc = SPAA_E_NOMEM;
          break;
        }
      } else {
        f->func = "[unknown]";
      }
    }
    file = first_span(v[F_FILENAME], v[F_FILE]);
    if ((rc = text_of(b, file, &s, &n)))
      break;
    if (!n) {
      file = v[F_ABS_PATH];
      if ((rc = text_of(b, file, &s, &n)))
        break;
    }
    line = first_span(v[F_LINENO], v[F_LINE]);
    if (n || (sentry__kind(line) == SENTRY__J_INT && sentry__int(line) > 0)) {
      /* "file:line", "file" without a line, ":line" when only the line is known */
      char *sl;
      if (!(sl = spaa_alloc(b->p, n + 24))) {
        rc = SPAA_E_NOMEM;
        break;
      }
      if (n)
        memcpy(sl, s, n);
      if (sentry__kind(line) == SENTRY__J_INT)
        snprintf(sl + n, 24, ":%" PRId64, sentry__int(line));
      else
        sl[n] = 0;
      f->srcline = sl;
    } else {
      f->srcline_resolved = 0;
    }
    /* the dso: the image holding the address, else the module or package, else [unknown] */
    mod = first_span(v[F_MODULE], v[F_PACKAGE]);
    if ((rc = text_of(b, mod, &s, &n)))
      break;
    if (f->has_ip && find_image(b, f->ip, &dso)) {
      /* found */
    } else if (n) {
      if ((rc = named_dso(b, s, n, &dso)))
        break;
    } else {
      if (!b->has_unknown) {
        struct spaa_dso *d = spaa_add_dso(b->p);
        if (!d) {
          rc = SPAA_E_NOMEM;
          break;
        }
        d->id = b->p->n_dsos - 1;
        d->name = "[unknown]";
        b->unknown_dso = d->id;
        b->has_unknown = 1;
      }
      dso = b->unknown_dso;
    }
    f->has_dso = 1;
    f->dso = dso;
    rc = frame_extra(&x, sp->frame[i], &f->extra);
  }
  extras_free(&x);
  return rc;
}

static int add_threads(struct builder *b)
{
  static const char *const skip[] = {"name", NULL};
  struct sentry__profile *sp = b->sp;
  size_t i;
  int rc;
  for (i = 0; i < sp->n_threads; i++)
    sp->threads[i].n = 0;
  for (i = 0; i < sp->n_samples; i++)
    sp->threads[sp->samples[i].thread].n++;
  for (i = 0; i < sp->n_threads; i++) {
    const struct sentry__thread *t = &sp->threads[i];
    struct spaa_thread *o;
    const char *name;
    if (!t->n)
      continue; /* Relay drops metadata of threads no sample uses */
    if (!(o = spaa_add_thread(b->p)))
      return SPAA_E_NOMEM;
    o->pid = 0;
    o->tid = t->tid;
    name = json_string_value(json_object_get(t->meta, "name"));
    if (name && !(o->comm = spaa_strdup(b->p, name)))
      return SPAA_E_NOMEM;
    if (!t->tid_exact) {
      json_t *orig;
      if (t->id_str) {
        orig = json_string(t->id_str);
      } else {
        char tmp[24];
        snprintf(tmp, sizeof(tmp), "%" PRIu64, t->id_u64);
        orig = json_string(tmp);
      }
      if ((rc = set_new(&o->extra, "x_sentry_thread_id", orig)))
        return rc;
    }
    if (t->meta && (rc = copy_extras(&o->extra, t->meta, skip)))
      return rc;
  }
  return 0;
}

/* One weight, "samples" = v (metric: the profile's one copy of the name), in one exact
 * allocation. 0 or SPAA_E_NOMEM. */
static int one_weight(struct spaa_profile *p, struct spaa_weights *w, const char *metric, size_t v)
{
  if (spaa_weights_alloc(p, w, 1))
    return SPAA_E_NOMEM;
  w->v[0].metric = metric;
  w->v[0].value = spaa_int((int64_t)v);
  return 0;
}

/* The context of a sample on a queue: one object per queue, made on first use and shared
 * (queue_ctx[q]); *out a new reference, or NULL off any queue. 0 or SPAA_E_NOMEM. */
static int queue_context(const struct sentry__profile *sp, const struct sentry__sample *in,
                         json_t **queue_ctx, json_t **out)
{
  size_t q;
  if (!in->queue || !spaa_strmap_get(&sp->queue_map, in->queue, strlen(in->queue), &q))
    return 0;
  if (!queue_ctx[q] && set_new(&queue_ctx[q], "x_sentry_queue_address", json_string(in->queue)))
    return SPAA_E_NOMEM;
  *out = json_incref(queue_ctx[q]);
  return 0;
}

/* A compact sample's entry in the model's cs.ctxs: one per thread and queue, made on first
 * use (cmap: thread index and queue position + 1 -> entry). 0 or SPAA_E_NOMEM. */
static int sample_cctx(struct spaa_profile *p, const struct sentry__profile *sp,
                       const struct sentry__sample *in, json_t **queue_ctx,
                       struct spaa_idmap *cmap, uint32_t *out)
{
  size_t q = 0, k;
  uint64_t key;
  struct spaa_cctx *x;
  if (in->queue && spaa_strmap_get(&sp->queue_map, in->queue, strlen(in->queue), &q))
    q++;
  if (in->thread > UINT32_MAX || q > UINT32_MAX)
    return SPAA_E_NOMEM; /* beyond what the input caps allow */
  key = (uint64_t)in->thread << 32 | q;
  if (spaa_idmap_get(cmap, key, &k)) {
    *out = (uint32_t)k;
    return 0;
  }
  if (!(x = spaa_add_cctx(p, out)) || spaa_idmap_put(cmap, key, *out, NULL) < 0)
    return SPAA_E_NOMEM;
  x->tid = sp->threads[in->thread].tid;
  return queue_context(sp, in, queue_ctx, &x->context);
}

/* One SPAA stack per Sentry stack used; every sample kept as a sample record, or a compact
 * one when asked (reserved at their count; samples of one queue share one context object,
 * compact ones of one thread and queue one entry of cs.ctxs). */
static int add_stacks_samples(struct builder *b)
{
  struct sentry__profile *sp = b->sp;
  size_t *count = NULL, i;
  const char **ids = NULL, *metric;
  uint32_t *pos = NULL; /* per Sentry stack: its SPAA stack's position (compact samples) */
  json_t **queue_ctx = NULL;
  struct spaa_idmap cmap;
  int rc = SPAA_E_NOMEM;
  spaa_idmap_init(&cmap);
  if (!(count = calloc(sp->n_stacks + 1, sizeof(*count))) ||
      !(ids = calloc(sp->n_stacks + 1, sizeof(*ids))) ||
      !(pos = calloc(sp->n_stacks + 1, sizeof(*pos))) ||
      !(queue_ctx = calloc(sp->n_queues + 1, sizeof(*queue_ctx))) ||
      !(metric = spaa_strdup(b->p, "samples")))
    goto out;
  for (i = 0; i < sp->n_samples; i++)
    count[sp->samples[i].stack]++;
  for (i = 0; i < sp->n_stacks; i++) {
    struct spaa_stack *s;
    size_t off = sp->stack_off[i], n = sp->stack_off[i + 1] - off;
    if (!count[i])
      continue;
    if (!(s = spaa_add_stack(b->p)))
      goto out;
    pos[i] = (uint32_t)(b->p->n_stacks - 1);
    snprintf(s->id, sizeof(s->id), "s%zu", i);
    if (!(ids[i] = spaa_strdup(b->p, s->id)))
      goto out;
    s->event = EVENT_NAME;
    if (spaa_stack_set_frames(b->p, s, sp->stack_frames + off, n) ||
        one_weight(b->p, &s->weights, metric, count[i]))
      goto out;
    if (n) {
      s->has_exclusive = 1;
      s->excl_frame = sp->stack_frames[off];
      if (one_weight(b->p, &s->excl_weights, metric, count[i]))
        goto out;
    }
  }
  sentry__profile_drop_stacks(sp); /* made: given back before the samples are */
  if (b->compact ? spaa_reserve_csamples(b->p, sp->n_samples)
                 : spaa_reserve_samples(b->p, sp->n_samples))
    goto out;
  b->p->cs.event = EVENT_NAME; /* pid 0, no weights */
  for (i = 0; b->compact && i < sp->n_samples; i++) {
    const struct sentry__sample *in = &sp->samples[i];
    struct spaa_csample *o = spaa_add_csample(b->p);
    uint32_t k;
    if (!o)
      goto out;
    o->flags = SPAA_CS_TIMESTAMP;
    o->timestamp = in->t_ns;
    o->stack = pos[in->stack];
    if (sample_cctx(b->p, sp, in, queue_ctx, &cmap, &k))
      goto out;
    o->ctx = k;
  }
  for (i = 0; !b->compact && i < sp->n_samples; i++) {
    const struct sentry__sample *in = &sp->samples[i];
    struct spaa_sample *o = spaa_add_sample(b->p);
    if (!o)
      goto out;
    /* all six fields SPAA §5.1 shows and readers require; Sentry has no pid or cpu: 0 */
    o->has_timestamp = 1;
    o->timestamp = spaa_int(in->t_ns);
    o->has_pid = o->has_tid = o->has_cpu = 1;
    o->pid = 0;
    o->tid = sp->threads[in->thread].tid;
    o->cpu = 0;
    o->event = EVENT_NAME;
    o->stack_id = ids[in->stack];
    if (queue_context(sp, in, queue_ctx, &o->context))
      goto out;
  }
  rc = 0;
out:
  spaa_idmap_free(&cmap);
  for (i = 0; queue_ctx && i < sp->n_queues; i++)
    json_decref(queue_ctx[i]);
  free(queue_ctx);
  free(count);
  free(ids);
  free(pos);
  return rc;
}

/* Relay's metadata of a transaction event (release, environment, transaction name...). */
static json_t *txn_metadata(const json_t *ev)
{
  json_t *m = json_object(), *v;
  const json_t *trace = json_object_get(json_object_get(ev, "contexts"), "trace");
  static const char *const top[][2] = {{"release", "release"}, {"dist", "dist"},
                                       {"environment", "environment"}, {"transaction", "transaction"},
                                       {"start_timestamp", "transaction.start"},
                                       {"timestamp", "transaction.end"}};
  size_t i;
  if (!m)
    return NULL;
  for (i = 0; i < sizeof(top) / sizeof(top[0]); i++)
    if ((v = json_object_get(ev, top[i][0])) && (json_is_string(v) || json_is_number(v)))
      json_object_set(m, top[i][1], v);
  if (json_is_object(trace)) {
    v = json_object_get(trace, "status");
    json_object_set_new(m, "transaction.status", json_string(json_is_string(v) ? json_string_value(v) : "unknown"));
    if (json_is_string(v = json_object_get(trace, "op")))
      json_object_set(m, "transaction.op", v);
  }
  if (json_is_string(v = json_object_get(json_object_get(ev, "request"), "method")))
    json_object_set(m, "http.method", v);
  if (json_is_string(v = json_object_get(json_object_get(json_object_get(ev, "contexts"), "app"),
                                         "app_identifier")))
    json_object_set(m, "app.identifier", v);
  return m;
}

/* Event tags, as an object or as [key, value] pairs, into a string map. */
static json_t *txn_tags(const json_t *ev)
{
  const json_t *tags = json_object_get(ev, "tags");
  json_t *m, *v;
  const char *k;
  size_t i;
  if (!tags || !(m = json_object()))
    return NULL;
  if (json_is_object(tags)) {
    json_object_foreach((json_t *)tags, k, v)
      if (json_is_string(v))
        json_object_set(m, k, v);
  } else {
    json_array_foreach(tags, i, v) {
      const json_t *tk = json_array_get(v, 0), *tv = json_array_get(v, 1);
      if (json_is_string(tk) && json_is_string(tv))
        json_object_set(m, json_string_value(tk), (json_t *)tv);
    }
  }
  if (!json_object_size(m)) {
    json_decref(m);
    return NULL;
  }
  return m;
}

static int set_str(json_t **o, const char *k, const char *v)
{
  return v && v[0] ? set_new(o, k, json_string(v)) : 0;
}

/* The one event (wall time at the nominal rate) and the time range of the samples, also
 * into out. 0 or SPAA_E_NOMEM. */
static int header_event(struct builder *b, struct spaa_converted *out)
{
  struct sentry__profile *sp = b->sp;
  struct spaa_header *h = &b->p->header;
  struct spaa_event *e;
  size_t i;
  int rc;
  if (!(e = spaa_add_event(b->p)))
    return SPAA_E_NOMEM;
  e->name = EVENT_NAME;
  e->kind = "timer";
  e->mode = "frequency";
  e->primary_metric = "samples";
  e->has_frequency_hz = 1;
  e->frequency_hz = spaa_int(NOMINAL_HZ);
  if ((rc = set_new(&e->sampling_extra, "x_sentry_frequency", json_string("nominal"))))
    return rc;
  h->has_time_range = 1;
  h->time_unit = "nanoseconds";
  h->start = spaa_int(sp->samples[0].t_ns);
  h->end = spaa_int(sp->samples[0].t_ns);
  for (i = 1; i < sp->n_samples; i++) {
    if (sp->samples[i].t_ns < h->start.i)
      h->start.i = sp->samples[i].t_ns;
    if (sp->samples[i].t_ns > h->end.i)
      h->end.i = sp->samples[i].t_ns;
  }
  out->start_ns = h->start.i;
  out->end_ns = h->end.i;
  return 0;
}

/* header.source: the format, and the SDK (the profile's client_sdk, else the envelope's sdk)
 * as the tool. 0 or SPAA_E_NOMEM. */
static int header_source(struct builder *b, const json_t *sdk)
{
  struct spaa_header *h = &b->p->header;
  const json_t *v;
  int rc;
  if ((rc = set_new(&h->source, "tool", json_string("sentry"))) ||
      (rc = set_new(&h->source, "format", json_string(b->sp->version == 1 ? "sample-v1" : "sample-v2"))))
    return rc;
  if (json_is_object(sdk) && json_is_string(v = json_object_get(sdk, "name")) &&
      ((rc = set_new(&h->source, "sdk", json_incref((json_t *)v))) ||
       (json_is_string(json_object_get(sdk, "version")) &&
        (rc = set_new(&h->source, "tool_version", json_incref(json_object_get(sdk, "version")))))))
    return rc;
  return 0;
}

/* The profile's metadata kept as x_sentry_* header keys: the listed members, the event or
 * chunk id, the envelope's sdk when the profile has none, and the queue metadata of the
 * queues the samples name. 0 or SPAA_E_NOMEM. */
static int header_kept(struct builder *b, const json_t *sdk)
{
  static const char *const keep[] = {"device", "os", "runtime", "measurements", "dist",
                                     "platform", "version", "timestamp", "transaction_metadata",
                                     "transaction_tags", "client_sdk", "profiler_id", "release",
                                     "environment"};
  struct sentry__profile *sp = b->sp;
  struct spaa_header *h = &b->p->header;
  const json_t *root = sp->root, *v;
  const char *k;
  json_t *val;
  size_t i;
  int rc;
  for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
    char key[64];
    v = json_object_get(root, keep[i]);
    if (!v || json_is_null(v))
      continue;
    snprintf(key, sizeof(key), "x_sentry_%s", keep[i]);
    if ((rc = set_new(&h->extra, key, json_incref((json_t *)v))))
      return rc;
  }
  if ((rc = set_new(&h->extra, sp->version == 1 ? "x_sentry_event_id" : "x_sentry_chunk_id",
                    json_string(sp->id))))
    return rc;
  if (json_is_object(sdk) && sdk != json_object_get(root, "client_sdk") &&
      (rc = set_new(&h->extra, "x_sentry_sdk", json_incref((json_t *)sdk))))
    return rc;
  v = json_object_get(json_object_get(root, "profile"), "queue_metadata");
  if (json_is_object(v)) {
    json_t *q = json_object();
    if (!q)
      return SPAA_E_NOMEM;
    json_object_foreach((json_t *)v, k, val)
      for (i = 0; i < sp->n_samples; i++)
        if (sp->samples[i].queue && strcmp(sp->samples[i].queue, k) == 0) {
          json_object_set(q, k, val);
          break;
        }
    if ((rc = set_new(&h->extra, "x_sentry_queue_metadata", q)))
      return rc;
  }
  return 0;
}

/* What the entry's attrs take from the profile and its transaction. */
struct txn_view {
  const char *release, *environment, *name; /* borrowed from the profile or from meta */
  char trace[33], id[33];                    /* normalized trace and transaction ids, or "" */
  json_t *meta;                              /* the transaction item's metadata (owned), or NULL */
};

/* The transaction: the profile's, overridden by the transaction item txn_ev as Relay does,
 * into x_sentry_transaction (+ _metadata, _tags), out->labels and *tv (whose meta the
 * caller releases, also on error). 0 or SPAA_E_NOMEM. */
static int header_transaction(struct builder *b, const json_t *txn_ev, struct spaa_converted *out,
                              struct txn_view *tv)
{
  struct sentry__profile *sp = b->sp;
  struct spaa_header *h = &b->p->header;
  const json_t *v;
  json_t *val;
  int rc;
  tv->release = json_string_value(json_object_get(sp->root, "release"));
  tv->environment = json_string_value(json_object_get(sp->root, "environment"));
  if (sp->txn) {
    json_t *tx = json_deep_copy(sp->txn);
    if (!tx)
      return SPAA_E_NOMEM;
    tv->name = json_string_value(json_object_get(sp->txn, "name"));
    v = json_object_get(sp->txn, "trace_id");
    sentry_uuid_normalize(json_string_value(v), json_string_length(v), tv->trace);
    v = json_object_get(sp->txn, "id");
    sentry_uuid_normalize(json_string_value(v), json_string_length(v), tv->id);
    if (txn_ev && (tv->meta = txn_metadata(txn_ev))) {
      const char *s;
      if ((s = json_string_value(json_object_get(tv->meta, "transaction")))) {
        tv->name = s;
        json_object_set_new(tx, "name", json_string(s));
      }
      if (!tv->release)
        tv->release = json_string_value(json_object_get(tv->meta, "release"));
      if ((s = json_string_value(json_object_get(tv->meta, "environment"))))
        tv->environment = s;
      if ((rc = set_new(&h->extra, "x_sentry_transaction_metadata", json_incref(tv->meta)))) {
        json_decref(tx);
        return rc;
      }
    }
    if ((rc = set_new(&h->extra, "x_sentry_transaction", tx)))
      return rc;
  }
  if (txn_ev && (val = txn_tags(txn_ev))) {
    out->labels = json_deep_copy(val);
    if ((rc = set_new(&h->extra, "x_sentry_transaction_tags", val)))
      return rc;
  }
  return 0;
}

/* The entry's attrs (what people filter on), and the effective release in the header when
 * it came from the transaction item. 0 or SPAA_E_NOMEM. */
static int entry_attrs(struct builder *b, const json_t *sdk, const struct txn_view *tv,
                       struct spaa_converted *out)
{
  struct sentry__profile *sp = b->sp;
  int rc;
  if ((rc = set_str(&out->attrs, "kind", sp->version == 1 ? "transaction" : "continuous")) ||
      (rc = set_str(&out->attrs, "platform", sp->platform)) ||
      (rc = set_str(&out->attrs, "release", tv->release)) ||
      (rc = set_str(&out->attrs, "environment", tv->environment)) ||
      (rc = set_str(&out->attrs, "transaction", tv->name)) ||
      (rc = set_str(&out->attrs, "transaction_id", tv->id)) ||
      (rc = set_str(&out->attrs, "trace_id", tv->trace)) ||
      (rc = set_str(&out->attrs, "profiler_id", sp->profiler_id)) ||
      (json_is_object(sdk) &&
       ((rc = set_str(&out->attrs, "sdk_name", json_string_value(json_object_get(sdk, "name")))) ||
        (rc = set_str(&out->attrs, "sdk_version", json_string_value(json_object_get(sdk, "version")))))))
    return rc;
  if (tv->release && !json_object_get(sp->root, "release") &&
      (rc = set_new(&b->p->header.extra, "x_sentry_release", json_string(tv->release))))
    return rc;
  return 0;
}

/* Header (events, time range, source, x_sentry_* extras) and the entry's attrs. */
static int add_header(struct builder *b, const struct sentry_item_ctx *ctx, struct spaa_converted *out)
{
  const json_t *sdk = json_object_get(b->sp->root, "client_sdk");
  struct txn_view tv;
  int rc;
  memset(&tv, 0, sizeof(tv));
  if (!json_is_object(sdk) && ctx && ctx->env_header)
    sdk = json_object_get(ctx->env_header, "sdk");
  b->p->header.source_tool = "sentry";
  b->p->header.frame_order = SPAA_LEAF_TO_ROOT;
  if ((rc = header_event(b, out)) || (rc = header_source(b, sdk)) || (rc = header_kept(b, sdk)))
    return rc;
  if (!(rc = header_transaction(b, ctx ? ctx->transaction : NULL, out, &tv)))
    rc = entry_attrs(b, sdk, &tv, out);
  json_decref(tv.meta);
  return rc;
}

static int build(struct sentry__profile *sp, const uint8_t *payload, size_t len,
                 const struct sentry_item_ctx *ctx, struct spaa_converted *out)
{
  struct builder b;
  int rc;
  memset(&b, 0, sizeof(b));
  b.sp = sp;
  b.compact = ctx && ctx->compact_samples;
  spaa_strmap_init(&b.by_name);
  if (!(b.p = spaa_profile_new_metered(ctx ? ctx->meter : NULL))) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  if ((rc = add_header(&b, ctx, out)) || (rc = add_images(&b)) || (rc = add_frames(&b)))
    goto out;
  /* the frames were the last thing read from the payload: its pages go back now, before the
   * records of the samples and stacks are made */
  if (ctx && ctx->input_spent)
    spaa_mem_discard(payload, len);
  if ((rc = add_threads(&b)) || (rc = add_stacks_samples(&b)))
    goto out;
  sentry__profile_drop_tables(sp); /* read: given back before normalization */
  if ((rc = spaa_normalize(b.p, &out->err)))
    goto out;
  out->profile = b.p;
  b.p = NULL;
out:
  if (rc && !out->err.code)
    spaa_err_set(&out->err, rc, 0, 0, "converting the Sentry profile: %s", spaa_err_default(rc));
  spaa_profile_free(b.p);
  free(b.images);
  spaa_strmap_free(&b.by_name);
  return rc;
}

/* Decode the payload read into d (its root taken) into out. */
static int convert_doc(struct sentry__doc *d, const uint8_t *payload, size_t len,
                       enum sentry_item_kind kind, const struct sentry_item_ctx *ctx,
                       struct spaa_converted *out)
{
  struct sentry__profile sp;
  int rc = sentry__profile_decode(d, kind, ctx, &sp);
  if (sp.id[0])
    snprintf(out->id, sizeof(out->id), "%s", sp.id);
  if (rc > 0) {
    snprintf(out->reason, sizeof(out->reason), "%s", sentry__reason_name(rc));
    out->err = sp.err;
    rc = 0;
  } else if (rc < 0) {
    spaa_err_set(&out->err, rc, 0, 0, "decoding the Sentry profile: %s", spaa_err_default(rc));
  } else {
    rc = build(&sp, payload, len, ctx, out);
  }
  sentry__profile_free(&sp);
  return rc;
}

int sentry_profile_convert(const uint8_t *payload, size_t len, enum sentry_item_kind kind,
                           const struct sentry_item_ctx *ctx, struct spaa_converted *out)
{
  struct sentry__doc d;
  json_error_t je;
  int rc = sentry__doc_load(payload, len, &d, &je);
  if (rc == SPAA_E_BAD_JSON) {
    snprintf(out->reason, sizeof(out->reason), "%s", sentry__reason_name(SENTRY__R_INVALID_JSON));
    spaa_err_set(&out->err, SPAA_E_BAD_JSON, (size_t)(je.line > 0 ? je.line : 0),
                 (size_t)(je.position > 0 ? je.position : 0), "payload is not valid JSON: %s", je.text);
    rc = 0;
  } else if (rc) {
    spaa_err_set(&out->err, rc, 0, 0, "decoding the Sentry profile: %s", spaa_err_default(rc));
  } else {
    rc = convert_doc(&d, payload, len, kind, ctx, out);
  }
  sentry__doc_free(&d);
  return rc;
}

int sentry_envelope_convert(const struct sentry_envelope *env, const struct spaa_convert_opts *o,
                            struct spaa_conv_list *out, struct spaa_err *err)
{
  struct sentry_item_ctx ctx;
  json_t *txn = NULL, *hdr = NULL;
  long ti = sentry_envelope_find(env, SENTRY_ITEM_TRANSACTION);
  size_t i, n_prof = 0;
  int rc = 0, kept = 0; /* kept: a profile item converted (the envelope's one) */
  for (i = 0; i < env->n_items; i++) {
    const struct sentry_item *it = &env->items[i];
    if (it->kind != SENTRY_ITEM_PROFILE && it->kind != SENTRY_ITEM_CHUNK)
      continue;
    n_prof++;
    if (it->payload_len > SENTRY_MAX_PROFILE_BYTES)
      return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, it->offset,
                          "item %zu (%s) at byte %zu: %zu bytes, over the %u byte profile cap", i,
                          it->type, it->offset, it->payload_len, SENTRY_MAX_PROFILE_BYTES);
  }
  /* the envelope header (for "sdk") is parsed only when a profile needs it */
  if (n_prof && env->header_line && !(hdr = sentry_envelope_header(env)))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if (ti >= 0 && n_prof) { /* parsed only when a profile needs it */
    const struct sentry_item *it = &env->items[ti];
    txn = json_loadb((const char *)it->payload, it->payload_len, 0, NULL);
    if (txn && !json_is_object(txn)) {
      json_decref(txn);
      txn = NULL;
    }
  }
  for (i = 0; i < env->n_items; i++) {
    const struct sentry_item *it = &env->items[i];
    struct spaa_converted *c;
    if (it->kind != SENTRY_ITEM_PROFILE && it->kind != SENTRY_ITEM_CHUNK)
      continue;
    if (!(c = spaa_conv_add(out))) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      break;
    }
    if (it->kind == SENTRY_ITEM_PROFILE && kept) { /* Relay drops it unread */
      snprintf(c->reason, sizeof(c->reason), "%s",
               sentry__reason_name(SENTRY__R_TOO_MANY_PROFILES));
      spaa_err_set(&c->err, SPAA_E_INVALID, 0, it->offset, "item %zu (profile) at byte %zu: "
                   "the envelope's profile is an earlier item: one profile per envelope", i,
                   it->offset);
      continue;
    }
    memset(&ctx, 0, sizeof(ctx));
    ctx.in_envelope = 1;
    /* a transaction item that is not JSON still counts as present, with no metadata */
    ctx.has_transaction = ti >= 0;
    ctx.transaction = txn;
    ctx.item_platform = it->platform;
    ctx.env_header = hdr;
    ctx.meter = o ? o->meter : NULL;
    /* the body is freed unread once converted, and no original points into it */
    ctx.input_spent = o && o->input_spent && !o->keep_original;
    ctx.compact_samples = o && o->compact_samples;
    if ((rc = sentry_profile_convert(it->payload ? it->payload : (const uint8_t *)"", it->payload_len,
                                     it->kind, &ctx, c))) {
      if (err)
        *err = c->err;
      break;
    }
    kept |= it->kind == SENTRY_ITEM_PROFILE && c->profile;
    if (o && o->service && !(c->service = strdup(o->service))) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      break;
    }
    if (o && o->keep_original && c->profile) { /* the item as it came, for a later converter */
      c->original = it->payload;
      c->original_len = it->payload_len;
    }
  }
  json_decref(txn);
  json_decref(hdr);
  return rc;
}

int spaa_convert_sentry(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                        struct spaa_conv_list *out, struct spaa_err *err)
{
  struct sentry_envelope env;
  struct sentry__doc d;
  int rc;
  if (o && o->sentry_env)
    return sentry_envelope_convert(o->sentry_env, o, out, err);
  if (len > SENTRY_MAX_PROFILE_BYTES * 4u)
    return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "input of %zu bytes is over the cap", len);
  /* a bare profile or chunk: the whole input is one JSON object that is not a header (only
   * envelope header keys) */
  rc = sentry__doc_load(buf, len, &d, NULL);
  if (rc == SPAA_E_NOMEM)
    return spaa_err_set(err, rc, 0, 0, NULL);
  if (!rc && json_is_object(d.root) && !d.only_header_keys) {
    struct spaa_converted *c = spaa_conv_add(out);
    struct sentry_item_ctx ctx; /* none: not in an envelope, no transaction, no meter */
    const json_t *ver = json_object_get(d.root, "version");
    enum sentry_item_kind kind =
        (json_is_string(ver) && strcmp(json_string_value(ver), "2") == 0) ||
                json_object_get(d.root, "chunk_id")
            ? SENTRY_ITEM_CHUNK
            : SENTRY_ITEM_PROFILE;
    if (!c) {
      sentry__doc_free(&d);
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    }
    memset(&ctx, 0, sizeof(ctx));
    ctx.input_spent = o && o->input_spent && !o->keep_original;
    ctx.compact_samples = o && o->compact_samples;
    if ((rc = convert_doc(&d, buf, len, kind, &ctx, c)) && err)
      *err = c->err;
    sentry__doc_free(&d);
    if (!rc && o && o->service && !(c->service = strdup(o->service)))
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    return rc;
  }
  sentry__doc_free(&d);
  if ((rc = sentry_envelope_parse(buf, len, &env, err)) == 0)
    rc = sentry_envelope_convert(&env, o, out, err);
  sentry_envelope_free(&env);
  return rc;
}
