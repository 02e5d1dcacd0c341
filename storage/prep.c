/* Preparing a profile for the writer, in the caller's thread: content ids, the check that
 * the profile is in canonical form, packed per-profile blobs, event totals, compression. */
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/idmap.h"
#include "base/limits.h"
#include "spaa/canon.h"
#include "storage/engine_int.h"

/* With spaa_meta.take_records, the records read go back in runs of this many while the
 * rest are read (spaa_profile_release_*): a large profile is not held whole beside the
 * preparation it becomes. */
#define PREP_RELEASE_STACKS 16384  /* 2.6 MB of stack records */
#define PREP_RELEASE_SAMPLE_BYTES ((size_t)2 << 20) /* of samples, records or compact ones
                                                     * (24 bytes): a run must span at least
                                                     * spaa_mem_discard's 1 MiB */

#define TRY(x)                                                                                \
  do {                                                                                        \
    if ((rc = (x)))                                                                           \
      goto out;                                                                               \
  } while (0)

/* The profile's string table: metrics, units and sample events, each once. */
struct strtab {
  struct spaa_strmap map; /* string -> index in v */
  const char **v;         /* the strings (borrowed from the profile) */
  size_t n, cap;
};

/* Put the table reference of s (0 for NULL, else index + 1). */
static int put_strref(struct spaa_buf *b, struct strtab *t, const char *s)
{
  size_t len, idx;
  int rc;
  if (!s)
    return storage__put_uv(b, 0);
  len = strlen(s);
  if (!spaa_strmap_get(&t->map, s, len, &idx)) {
    if (t->n == t->cap) {
      size_t nc = t->cap ? 2 * t->cap : 16;
      const char **nv = realloc(t->v, nc * sizeof(*nv));
      if (!nv)
        return SPAA_E_NOMEM;
      t->v = nv;
      t->cap = nc;
    }
    idx = t->n;
    if ((rc = spaa_strmap_put(&t->map, s, len, idx, NULL)) < 0)
      return rc;
    t->v[t->n++] = s;
  }
  return storage__put_uv(b, (uint64_t)idx + 1);
}

static int put_weights(struct spaa_buf *b, struct strtab *t, const struct spaa_weights *w)
{
  size_t i;
  int rc = storage__put_uv(b, w->n);
  for (i = 0; i < w->n && !rc; i++) {
    if (!(rc = put_strref(b, t, w->v[i].metric)) && !(rc = put_strref(b, t, w->v[i].unit)))
      rc = storage__put_num(b, w->v[i].value);
  }
  return rc;
}

static int put_header(struct spaa_buf *b, const struct spaa_header *h)
{
  size_t i;
  int rc;
  TRY(storage__put_str(b, h->source_tool));
  TRY(storage__put_uv(b, (uint64_t)h->frame_order));
  TRY(storage__put_uv(b, (uint64_t)h->id_mode));
  TRY(storage__put_uv(b, h->n_events));
  for (i = 0; i < h->n_events; i++) {
    const struct spaa_event *e = &h->events[i];
    TRY(storage__put_str(b, e->name));
    TRY(storage__put_str(b, e->kind));
    TRY(storage__put_str(b, e->mode));
    TRY(storage__put_str(b, e->primary_metric));
    TRY(storage__put_uv(b, (e->has_sample_period ? 1u : 0u) | (e->has_frequency_hz ? 2u : 0u)));
    if (e->has_sample_period)
      TRY(storage__put_num(b, e->sample_period));
    if (e->has_frequency_hz)
      TRY(storage__put_num(b, e->frequency_hz));
    TRY(storage__put_json(b, e->sampling_extra));
    TRY(storage__put_json(b, e->extra));
  }
  TRY(storage__put_uv(b, h->has_time_range ? 1 : 0));
  if (h->has_time_range) {
    TRY(storage__put_num(b, h->start));
    TRY(storage__put_num(b, h->end));
    TRY(storage__put_str(b, h->time_unit));
  }
  TRY(storage__put_json(b, h->source));
  TRY(storage__put_json(b, h->extra));
out:
  return rc;
}

static int put_windows(struct spaa_buf *b, const struct spaa_profile *p)
{
  size_t i;
  int rc = 0;
  if (!p->n_windows)
    return 0;
  TRY(storage__put_uv(b, p->n_windows));
  for (i = 0; i < p->n_windows; i++) {
    const struct spaa_window *w = &p->windows[i];
    TRY(storage__put_str(b, w->id));
    TRY(storage__put_num(b, w->start));
    TRY(storage__put_num(b, w->end));
    TRY(storage__put_str(b, w->unit));
    TRY(storage__put_json(b, w->by_stack));
    TRY(storage__put_json(b, w->extra));
  }
out:
  return rc;
}

static int put_dso_inst(struct spaa_buf *b, const struct spaa_dso *d)
{
  int rc;
  TRY(storage__put_str(b, d->name));
  TRY(storage__put_str(b, d->build_id));
  TRY(storage__put_uv(b, d->is_kernel ? 1 : 0));
  TRY(storage__put_uv(b, d->has_mapping ? 1 : 0));
  if (d->has_mapping) {
    TRY(storage__put_uv(b, d->map_start));
    TRY(storage__put_uv(b, d->map_limit));
    TRY(storage__put_uv(b, d->map_offset));
  }
  TRY(storage__put_json(b, d->extra));
out:
  return rc;
}

/* Canonical text of a JSON value, or NULL for NULL; *rc set on OOM. */
static char *json_text_or_null(const json_t *v, int *rc)
{
  char *t;
  if (!v)
    return NULL;
  if (!(t = storage__json_text(v, NULL)))
    *rc = SPAA_E_NOMEM;
  return t;
}

static int skip_event(const char *k) { return strcmp(k, "event") == 0; }

/* The stack's context minus "event" as a canonical object, NULL when there is none (the
 * same bytes the stack's content id hashes). */
static char *stack_context_text(const json_t *ctx, int *rc)
{
  struct spaa_buf b;
  spaa_buf_init(&b, 0);
  if (!ctx || !json_is_object(ctx))
    return NULL;
  if ((*rc = spaa_canon_members(&b, ctx, skip_event)) || !b.len ||
      (*rc = spaa_buf_add(&b, "}", 1))) {
    spaa_buf_free(&b);
    return NULL;
  }
  b.p[0] = '{';
  return spaa_buf_steal(&b, NULL);
}

/* *text = make(v), made once per JSON object v (seen: object -> its text in pr->texts): a
 * converter gives the stacks of one thread, or the frames of one kind, the same object.
 * NULL for NULL. 0 or SPAA_E_NOMEM. */
static int text_once(struct storage__prep *pr, struct spaa_idmap *seen, const json_t *v,
                     char *(*make)(const json_t *, int *), const char **text)
{
  size_t k;
  int rc = 0;
  *text = NULL;
  if (!v)
    return 0;
  if (spaa_idmap_get(seen, (uint64_t)(uintptr_t)v, &k)) {
    *text = pr->texts[k];
    return 0;
  }
  k = pr->n_texts;
  pr->texts[k] = make(v, &rc);
  if (rc)
    return rc;
  pr->n_texts++;
  if (spaa_idmap_put(seen, (uint64_t)(uintptr_t)v, k, NULL) < 0)
    return SPAA_E_NOMEM;
  *text = pr->texts[k];
  return 0;
}

/* Add v into totals[metric]: integers while they fit, else doubles. */
static int total_add(json_t *tot, const char *metric, struct spaa_num v)
{
  json_t *cur = json_object_get(tot, metric);
  int64_t sum;
  double d;
  if (!cur) {
    if (!v.is_float)
      return json_object_set_new(tot, metric, json_integer(v.i)) ? SPAA_E_NOMEM : 0;
    if (!isfinite(v.f))
      return 0;
    return json_object_set_new(tot, metric, json_real(v.f)) ? SPAA_E_NOMEM : 0;
  }
  if (json_is_integer(cur) && !v.is_float && !__builtin_add_overflow(json_integer_value(cur), v.i, &sum))
    return json_integer_set(cur, sum) ? SPAA_E_NOMEM : 0;
  d = json_number_value(cur) + spaa_num_as_double(v);
  if (!isfinite(d))
    return 0;
  return json_object_set_new(tot, metric, json_real(d)) ? SPAA_E_NOMEM : 0;
}

/* Totals per event over the stacks, summed as prep_stacks reads them: header events first,
 * then any other event named by a stack, in order of appearance; and the stacks' "samples"
 * weights, the meta answer's count when the profile has no sample records. */
struct totals {
  json_t **tot; /* cap objects (n made) */
  size_t n, cap;
  int64_t samples;
};

static int totals_init(struct storage__prep *pr, struct totals *tt)
{
  const struct spaa_profile *p = pr->p;
  size_t i;
  memset(tt, 0, sizeof(*tt));
  tt->cap = p->header.n_events + 4;
  if (!(tt->tot = calloc(tt->cap, sizeof(*tt->tot))) ||
      !(pr->event_names = calloc(tt->cap, sizeof(*pr->event_names))))
    return SPAA_E_NOMEM;
  for (i = 0; i < p->header.n_events; i++) {
    pr->event_names[tt->n] = p->header.events[i].name ? p->header.events[i].name : "";
    if (!(tt->tot[tt->n++] = json_object()))
      return SPAA_E_NOMEM;
  }
  return 0;
}

static void totals_free(struct totals *tt)
{
  size_t i;
  for (i = 0; tt->tot && i < tt->cap; i++)
    json_decref(tt->tot[i]);
  free(tt->tot);
  memset(tt, 0, sizeof(*tt));
}

static int totals_add(struct storage__prep *pr, struct totals *tt, const struct spaa_stack *s)
{
  const char *ev = s->event ? s->event : "";
  const struct spaa_weight *w;
  size_t j, k;
  int rc;
  for (j = 0; j < tt->n; j++)
    if (strcmp(pr->event_names[j], ev) == 0)
      break;
  if (j == tt->n) {
    if (tt->n == tt->cap) {
      size_t nc = tt->cap * 2;
      json_t **nt = realloc(tt->tot, nc * sizeof(*nt));
      const char **nn;
      if (!nt)
        return SPAA_E_NOMEM;
      tt->tot = nt;
      memset(tt->tot + tt->cap, 0, (nc - tt->cap) * sizeof(*tt->tot));
      tt->cap = nc;
      if (!(nn = realloc(pr->event_names, nc * sizeof(*nn))))
        return SPAA_E_NOMEM;
      pr->event_names = nn;
    }
    pr->event_names[tt->n] = ev;
    if (!(tt->tot[tt->n++] = json_object()))
      return SPAA_E_NOMEM;
  }
  for (k = 0; k < s->weights.n; k++)
    if ((rc = total_add(tt->tot[j], s->weights.v[k].metric, s->weights.v[k].value)))
      return rc;
  if (!pr->n_samples && (w = spaa_weights_find(&s->weights, "samples")))
    tt->samples += w->value.is_float ? (int64_t)w->value.f : w->value.i;
  return 0;
}

/* The totals as canonical JSON texts, one per event name. */
static int totals_finish(struct storage__prep *pr, const struct totals *tt)
{
  size_t i;
  if (!(pr->event_totals = calloc(tt->n ? tt->n : 1, sizeof(char *))))
    return SPAA_E_NOMEM;
  pr->n_events_out = tt->n;
  for (i = 0; i < tt->n; i++)
    if (!(pr->event_totals[i] = storage__json_text(tt->tot[i], NULL)))
      return SPAA_E_NOMEM;
  return 0;
}

static int check_meta(const struct spaa_meta *m, struct spaa_err *err)
{
  const char *k;
  json_t *v;
  size_t len;
  if (!m || !m->id || !m->service || !m->source)
    return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "profile metadata lacks id, service or source");
  len = strlen(m->id);
  if (!len || len > SPAA_STORE_MAX_ID)
    return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "profile id must be 1 to %d bytes, not %zu",
                        SPAA_STORE_MAX_ID, len);
  if (m->labels) {
    if (!json_is_object(m->labels))
      return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "labels must be a JSON object");
    if (json_object_size(m->labels) > SPAA_STORE_MAX_LABELS)
      return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "%zu labels, at most %d are kept",
                          json_object_size(m->labels), SPAA_STORE_MAX_LABELS);
    json_object_foreach((json_t *)m->labels, k, v) {
      if (!json_is_string(v))
        return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "label \"%.64s\" is not a string", k);
      if (strlen(k) > SPAA_STORE_MAX_LABEL_LEN || json_string_length(v) > SPAA_STORE_MAX_LABEL_LEN)
        return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "label \"%.64s\" is over %d bytes", k,
                            SPAA_STORE_MAX_LABEL_LEN);
    }
  }
  return 0;
}

static int cid_idx_cmp(const void *a, const void *b, void *arg)
{
  const struct spaa_cid *cids = arg;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  int c = memcmp(cids[x].b, cids[y].b, SPAA_CID_LEN);
  return c ? c : (x < y ? -1 : x > y);
}

/* canon[k] = the rank of frame k among the frames with its content id, in profile order
 * (0 for the first). */
static int frame_canon(const struct spaa_cid *cids, size_t n, size_t *canon)
{
  size_t *ord, i, first = 0;
  if (!n)
    return 0;
  if (!(ord = malloc(n * sizeof(*ord))))
    return SPAA_E_NOMEM;
  for (i = 0; i < n; i++)
    ord[i] = i;
  qsort_r(ord, n, sizeof(*ord), cid_idx_cmp, (void *)cids);
  for (i = 0; i < n; i++) {
    if (i == 0 || memcmp(cids[ord[i]].b, cids[ord[first]].b, SPAA_CID_LEN) != 0)
      first = i;
    canon[ord[i]] = i - first;
  }
  free(ord);
  return 0;
}

/* The header position of a stack's event (n_events when the header has none such). */
static size_t event_pos(const struct spaa_profile *p, const char *ev)
{
  size_t i;
  for (i = 0; i < p->header.n_events; i++)
    if (ev && p->header.events[i].name && strcmp(p->header.events[i].name, ev) == 0)
      return i;
  return p->header.n_events;
}

/* The stack's value of its event's primary metric (0 when none). */
static struct spaa_num primary_of(const struct spaa_profile *p, size_t pos,
                                  const struct spaa_stack *s)
{
  const struct spaa_weight *w = NULL;
  if (pos < p->header.n_events && p->header.events[pos].primary_metric)
    w = spaa_weights_find(&s->weights, p->header.events[pos].primary_metric);
  return w ? w->value : spaa_int(0);
}

int storage__stack_order_cmp(const struct spaa_profile *p, const struct spaa_stack *a,
                             const struct spaa_stack *b)
{
  size_t pa = event_pos(p, a->event), pb = event_pos(p, b->event);
  struct spaa_num x, y;
  if (pa != pb)
    return pa < pb ? -1 : 1;
  x = primary_of(p, pa, a);
  y = primary_of(p, pb, b);
  if (!x.is_float && !y.is_float) {
    if (x.i != y.i)
      return x.i > y.i ? -1 : 1; /* heaviest first */
  } else {
    double dx = spaa_num_as_double(x), dy = spaa_num_as_double(y);
    if (dx < dy || dx > dy)
      return dx > dy ? -1 : 1;
  }
  return strcmp(a->id, b->id);
}

/* 1 when both lists hold the same weights in the same order, bit for bit. */
static int weights_same(const struct spaa_weights *a, const struct spaa_weights *b)
{
  size_t i;
  if (a->n != b->n)
    return 0;
  for (i = 0; i < a->n; i++) {
    const struct spaa_weight *x = &a->v[i], *y = &b->v[i];
    if (strcmp(x->metric, y->metric) != 0 || (!x->unit != !y->unit) ||
        (x->unit && strcmp(x->unit, y->unit) != 0) || x->value.is_float != y->value.is_float ||
        (x->value.is_float ? memcmp(&x->value.f, &y->value.f, sizeof(double)) != 0
                           : x->value.i != y->value.i))
      return 0;
  }
  return 1;
}

/* Frames of every stack, stack ids, canonical order, the per-stack blobs. */
static int prep_stacks(struct storage__prep *pr, struct strtab *t, const struct spaa_idlookup *fmap,
                       const size_t *canon, struct totals *tt, struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  struct spaa_idmap ctxmap; /* context object -> its text in texts */
  size_t i, j, k, total = 0, released = 0;
  int rc = 0, take = pr->m->take_records;
  spaa_idmap_init(&ctxmap);
  for (i = 0; i < p->n_stacks; i++)
    total += p->stacks[i].n_frames;
  pr->sorted = 1;
  if (p->n_frames > UINT32_MAX) /* frame indexes are kept in 32 bits */
    return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "%zu frames: more than a profile may have",
                        p->n_frames);
  if (!(pr->stack_frames = malloc((total ? total : 1) * sizeof(*pr->stack_frames))) ||
      !(pr->stack_frames_off = malloc((p->n_stacks + 1) * sizeof(size_t))) ||
      !(pr->stack_cid = malloc((p->n_stacks ? p->n_stacks : 1) * sizeof(struct spaa_cid))) ||
      !(pr->stack_ctx = calloc(p->n_stacks ? p->n_stacks : 1, sizeof(char *))) ||
      !(pr->pstacks = malloc((p->n_stacks ? p->n_stacks : 1) * sizeof(*pr->pstacks))) ||
      !(pr->pstack_w = malloc((2 * p->n_stacks + 1) * sizeof(size_t)))) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  total = 0;
  for (i = 0; i < p->n_stacks; i++) {
    const struct spaa_stack *s = &p->stacks[i];
    struct spaa_cid c;
    unsigned flags = 0;
    pr->stack_frames_off[i] = total;
    pr->pstacks[i].event = s->event;
    pr->pstacks[i].type = s->stack_type;
    for (j = 0; j < s->n_frames; j++) {
      size_t pos = p->header.frame_order == SPAA_ROOT_TO_LEAF ? s->n_frames - 1 - j : j;
      if (!spaa_idlookup_get(fmap, s->frames[pos], &k)) {
        rc = spaa_err_set(err, SPAA_E_INVALID, 0, 0, "stack %s references frame %" PRIu64
                          ", which does not exist", s->id, s->frames[pos]);
        goto out;
      }
      if (canon[k])
        flags |= PS_DUPS;
      pr->stack_frames[total++] = (uint32_t)k;
    }
    /* the id is trusted here (a known stack costs no hashing); the writer checks the content
     * id of every stack it has to insert */
    if (spaa_cid_parse(s->id, &c)) {
      rc = spaa_err_set(err, SPAA_E_INVALID, 0, 0, "stack %zu has id \"%.40s\", not a content "
                        "id: normalize the profile before storing it", i, s->id);
      goto out;
    }
    if (i && storage__stack_order_cmp(p, &p->stacks[i - 1], s) >= 0)
      pr->sorted = 0;
    pr->stack_cid[i] = c;
    if ((rc = text_once(pr, &ctxmap, s->context, stack_context_text, &pr->stack_ctx[i])))
      goto out;
    /* the per-profile blobs */
    pr->pstack_w[2 * i] = pr->blobs.len;
    TRY(put_weights(&pr->blobs, t, &s->weights));
    pr->pstack_w[2 * i + 1] = pr->blobs.len;
    flags |= (s->has_exclusive ? PS_EXCLUSIVE : 0) | (s->stack_type ? 0 : PS_NO_TYPE) |
             (s->n_related ? PS_RELATED : 0) | (s->extra ? PS_EXTRA : 0);
    if (s->has_exclusive && s->n_frames &&
        s->excl_frame == s->frames[p->header.frame_order == SPAA_ROOT_TO_LEAF ? s->n_frames - 1 : 0])
      flags |= PS_EXCL_LEAF;
    if (s->has_exclusive && weights_same(&s->weights, &s->excl_weights))
      flags |= PS_EXCL_SAME;
    if (flags) {
      TRY(storage__put_uv(&pr->blobs, flags));
      if (flags & PS_EXCLUSIVE) {
        if (!(flags & PS_EXCL_LEAF))
          TRY(storage__put_uv(&pr->blobs, s->excl_frame));
        if (!(flags & PS_EXCL_SAME))
          TRY(put_weights(&pr->blobs, t, &s->excl_weights));
      }
      if (flags & PS_DUPS) {
        /* (position leaf first, rank) of each frame that is not the first of its content id
         * in the profile: the shared row alone names the first */
        const uint32_t *sf = pr->stack_frames + pr->stack_frames_off[i];
        size_t n_dups = 0, last = 0;
        for (j = 0; j < s->n_frames; j++)
          n_dups += canon[sf[j]] != 0;
        TRY(storage__put_uv(&pr->blobs, n_dups));
        for (j = 0; j < s->n_frames; j++)
          if (canon[sf[j]]) {
            TRY(storage__put_uv(&pr->blobs, j - last));
            TRY(storage__put_uv(&pr->blobs, canon[sf[j]]));
            last = j;
          }
      }
      if (flags & PS_RELATED) {
        TRY(storage__put_uv(&pr->blobs, s->n_related));
        for (j = 0; j < s->n_related; j++)
          TRY(storage__put_str(&pr->blobs, s->related[j]));
      }
      if (flags & PS_EXTRA)
        TRY(storage__put_json(&pr->blobs, s->extra));
    }
    TRY(totals_add(pr, tt, s));
    if (take) {
      /* the writer checks a new stack's id from its record: here, every stack's, before
       * the record goes (the cost of hashing the known ones too, for a large profile only);
       * the one before stays for the order check of the next */
      pr->stack_frames_off[i + 1] = total;
      if ((rc = storage__prep_check_stack(pr, i, err)))
        goto out;
      if (i - released == PREP_RELEASE_STACKS) {
        spaa_profile_release_stacks((struct spaa_profile *)p, released, i);
        released = i;
      }
    }
  }
  pr->stack_frames_off[p->n_stacks] = total;
  pr->n_stacks = p->n_stacks;
  pr->pstack_w[2 * p->n_stacks] = pr->blobs.len;
out:
  spaa_idmap_free(&ctxmap);
  if (rc && rc != SPAA_E_INVALID)
    spaa_err_set(err, rc, 0, 0, "preparing the stacks: %s", spaa_err_default(rc));
  return rc;
}

static int prep_samples(struct storage__prep *pr, struct strtab *t, struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  struct spaa_strmap smap;
  struct spaa_sample_buf sb;
  struct spaa_buf rest;
  size_t i, k, n = spaa_profile_n_samples(p), released = 0;
  int64_t prev_ts = 0, prev_stack = 0;
  int rc = 0, take = pr->m->take_records;
  spaa_strmap_init(&smap);
  spaa_buf_init(&rest, 0);
  pr->n_samples = n;
  /* sample records name their stacks by id; compact samples by position, without a map */
  if (p->n_samples && (rc = spaa_strmap_reserve(&smap, p->n_stacks)))
    goto out;
  for (i = 0; p->n_samples && i < p->n_stacks; i++)
    if ((rc = spaa_strmap_put(&smap, p->stacks[i].id, strlen(p->stacks[i].id), i, NULL)) < 0)
      goto out;
  rc = 0;
  for (i = 0; i < n; i++) {
    const struct spaa_sample *s = spaa_profile_sample(p, i, &sb);
    struct storage__blk_sample ps; /* stack_row: the stack's index in p->stacks */
    unsigned flags = 0;
    if (take && (i - released) * (i < p->n_samples ? sizeof(*p->samples)
                                                   : sizeof(*p->csamples)) >=
                    PREP_RELEASE_SAMPLE_BYTES) {
      spaa_profile_release_samples((struct spaa_profile *)p, released, i);
      released = i;
    }
    memset(&ps, 0, sizeof(ps));
    ps.ts_kind = !s->has_timestamp ? BT_NONE : s->timestamp.is_float ? BT_FLOAT : BT_INT;
    ps.ts = s->timestamp;
    ps.has_tid = s->has_tid != 0;
    ps.tid = s->tid;
    if (i >= p->n_samples ? (k = p->csamples[i - p->n_samples].stack) < p->n_stacks
                          : s->stack_id && spaa_strmap_get(&smap, s->stack_id,
                                                           strlen(s->stack_id), &k)) {
      ps.has_stack = 1;
      ps.stack_row = (int64_t)k;
    } else {
      flags |= SR_STACK_ID;
    }
    flags |= (s->has_pid ? SR_PID : 0) | (s->has_cpu ? SR_CPU : 0) | (s->event ? SR_EVENT : 0) |
             (s->has_period ? SR_PERIOD : 0) | (s->weights.n ? SR_WEIGHTS : 0) |
             (s->context ? SR_CONTEXT : 0) | (s->extra ? SR_EXTRA : 0);
    rest.len = 0;
    if (flags) {
      TRY(storage__put_uv(&rest, flags));
      if (flags & SR_PID)
        TRY(storage__put_sv(&rest, s->pid));
      if (flags & SR_CPU)
        TRY(storage__put_sv(&rest, s->cpu));
      if (flags & SR_EVENT)
        TRY(put_strref(&rest, t, s->event));
      if (flags & SR_PERIOD)
        TRY(storage__put_num(&rest, s->period));
      if (flags & SR_WEIGHTS)
        TRY(put_weights(&rest, t, &s->weights));
      if (flags & SR_CONTEXT)
        TRY(storage__put_json(&rest, s->context));
      if (flags & SR_EXTRA)
        TRY(storage__put_json(&rest, s->extra));
      if (flags & SR_STACK_ID)
        TRY(storage__put_str(&rest, s->stack_id));
    }
    ps.rest = rest.p;
    ps.rest_len = rest.len;
    TRY(storage__put_sample(&pr->psamples, &prev_ts, &prev_stack, &ps));
  }
out:
  spaa_strmap_free(&smap);
  spaa_buf_free(&rest);
  if (rc)
    spaa_err_set(err, rc, 0, 0, NULL);
  return rc;
}

static int compress_original(struct storage__prep *pr, struct spaa_err *err)
{
  const struct spaa_meta *m = pr->m;
  struct spaa_buf z;
  int rc;
  if (!m->original || !m->original_len)
    return 0;
  spaa_buf_init(&z, 0);
  if ((rc = spaa_zstd_compress(m->original, m->original_len, 3, &z, err))) {
    spaa_buf_free(&z);
    return rc == SPAA_E_TOO_LARGE ? spaa_err_set(err, rc, 0, 0, "original payload too large "
                                                 "to keep")
                                  : rc;
  }
  pr->original = spaa_buf_steal(&z, &pr->original_len);
  return 0;
}

/* Fill err for a failure that is not the profile's fault (memory, mostly); returns the code. */
static int prep_fail(struct spaa_err *err, int rc)
{
  return spaa_err_set(err, rc && rc != 1 && rc != SPAA_E_INVALID ? rc : SPAA_E_NOMEM, 0, 0,
                      "preparing the profile: %s", spaa_err_default(rc ? rc : SPAA_E_NOMEM));
}

/* The arrays sized by the profile's record counts (canon: n_frames). 0 or SPAA_E_NOMEM. */
static int prep_alloc(struct storage__prep *pr, size_t **canon)
{
  const struct spaa_profile *p = pr->p;
  size_t nd = p->n_dsos ? p->n_dsos : 1, nf = p->n_frames ? p->n_frames : 1;
  if (!(pr->dso_cid = malloc(nd * sizeof(struct spaa_cid))) ||
      !(pr->dso_inst = malloc((p->n_dsos + 1) * sizeof(size_t))) ||
      !(pr->frame_cid = malloc(nf * sizeof(struct spaa_cid))) ||
      !(pr->frame_dso = malloc(nf * sizeof(size_t))) ||
      !(pr->frame_extra = calloc(nf, sizeof(char *))) ||
      !(pr->texts = calloc(p->n_frames + p->n_stacks + 1, sizeof(char *))) ||
      !(pr->thread_extra = calloc(p->n_threads ? p->n_threads : 1, sizeof(char *))) ||
      !(*canon = malloc(nf * sizeof(size_t))))
    return SPAA_E_NOMEM;
  return 0;
}

/* Content ids and packed instance blobs of the dsos; dmap gets dso id -> index. */
static int prep_dsos(struct storage__prep *pr, struct spaa_idmap *dmap, struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  size_t i;
  int rc;
  for (i = 0; i < p->n_dsos; i++) {
    rc = spaa_idmap_put(dmap, p->dsos[i].id, i, NULL);
    if (rc == 1)
      return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "dso id %" PRIu64 " is used twice",
                          p->dsos[i].id);
    if (rc || (rc = spaa_dso_cid(&p->dsos[i], &pr->dso_cid[i])))
      return prep_fail(err, rc);
    pr->dso_inst[i] = pr->blobs.len;
    if ((rc = put_dso_inst(&pr->blobs, &p->dsos[i])))
      return prep_fail(err, rc);
  }
  pr->dso_inst[p->n_dsos] = pr->blobs.len;
  return 0;
}

/* Content ids, dsos and extras of the frames (fmap: frame id -> index), canon[k] the
 * rank of frame k among the frames with its content id, and the threads' extras. */
static int prep_frames(struct storage__prep *pr, const struct spaa_idmap *dmap,
                       struct spaa_idlookup *fmap, size_t *canon, struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  struct spaa_idmap xmap; /* extra object -> its text in texts */
  size_t i, k = 0;
  uint64_t dup = 0;
  int rc;
  if ((rc = spaa_idlookup_build(fmap, p->frames, p->n_frames, sizeof(*p->frames),
                                offsetof(struct spaa_frame, id), &dup)) == 1)
    return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "frame id %" PRIu64 " is used twice", dup);
  if (rc)
    return prep_fail(err, rc);
  spaa_idmap_init(&xmap);
  for (i = 0; i < p->n_frames && !rc; i++) {
    const struct spaa_frame *f = &p->frames[i];
    pr->frame_dso[i] = SIZE_MAX;
    if (!rc && f->has_dso) {
      if (!spaa_idmap_get(dmap, f->dso, &k)) {
        rc = spaa_err_set(err, SPAA_E_INVALID, 0, 0, "frame %" PRIu64 " references dso %" PRIu64
                          ", which does not exist", f->id, f->dso);
        break;
      }
      pr->frame_dso[i] = k;
    }
    if (!rc)
      rc = spaa_frame_cid(f, f->has_dso ? &p->dsos[k] : NULL, &pr->frame_cid[i]);
    if (!rc)
      rc = text_once(pr, &xmap, f->extra, json_text_or_null, &pr->frame_extra[i]);
  }
  spaa_idmap_free(&xmap);
  if (rc)
    return rc == SPAA_E_INVALID ? rc : prep_fail(err, rc);
  if ((rc = frame_canon(pr->frame_cid, p->n_frames, canon)))
    return prep_fail(err, rc);
  for (i = 0; i < p->n_threads; i++) {
    pr->thread_extra[i] = json_text_or_null(p->threads[i].extra, &rc);
    if (rc)
      return prep_fail(err, rc);
  }
  return 0;
}

/* The packed header, windows and string table, back to back after the other blobs. */
static int prep_tables(struct storage__prep *pr, const struct strtab *t, struct spaa_err *err)
{
  size_t i;
  int rc;
  pr->header_off[0] = pr->blobs.len;
  if ((rc = put_header(&pr->blobs, &pr->p->header)))
    return prep_fail(err, rc);
  pr->header_off[1] = pr->windows_off[0] = pr->blobs.len;
  if ((rc = put_windows(&pr->blobs, pr->p)))
    return prep_fail(err, rc);
  pr->windows_off[1] = pr->strings_off[0] = pr->blobs.len;
  if ((rc = storage__put_uv(&pr->blobs, t->n)))
    return prep_fail(err, rc);
  for (i = 0; i < t->n; i++)
    if ((rc = storage__put_str(&pr->blobs, t->v[i])))
      return prep_fail(err, rc);
  pr->strings_off[1] = pr->blobs.len;
  return 0;
}

/* What list and meta answer: labels and attrs as canonical JSON, event totals, samples. */
static int prep_summary(struct storage__prep *pr, const struct totals *tt, struct spaa_err *err)
{
  const struct spaa_meta *m = pr->m;
  int rc = 0;
  if (m->labels && json_object_size(m->labels) &&
      !(pr->labels_text = json_text_or_null(m->labels, &rc)))
    return prep_fail(err, rc);
  if (m->attrs && !(pr->attrs_text = json_text_or_null(m->attrs, &rc)))
    return prep_fail(err, rc);
  if (totals_finish(pr, tt))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "out of memory summing event totals");
  pr->samples = pr->n_samples ? (int64_t)pr->n_samples : tt->samples;
  return 0;
}

int storage__prep_build(struct storage__prep *pr, const struct spaa_profile *p,
                        const struct spaa_meta *m, struct spaa_err *err)
{
  struct spaa_idmap dmap;
  struct spaa_idlookup fmap; /* frame id -> index */
  struct strtab t;
  struct totals tt;
  size_t *canon = NULL;
  int rc;

  memset(pr, 0, sizeof(*pr));
  memset(&t, 0, sizeof(t));
  memset(&tt, 0, sizeof(tt));
  spaa_strmap_init(&t.map);
  spaa_idmap_init(&dmap);
  memset(&fmap, 0, sizeof(fmap));
  spaa_buf_init(&pr->blobs, 0);
  spaa_buf_init(&pr->psamples, 0);
  pr->p = p;
  pr->m = m;
  if ((rc = check_meta(m, err)))
    goto out;
  if (p->header.id_mode != SPAA_IDS_CONTENT) {
    rc = spaa_err_set(err, SPAA_E_INVALID, 0, 0,
                      "stack ids are not content ids: normalize the profile before storing it");
    goto out;
  }
  if ((rc = prep_alloc(pr, &canon))) {
    rc = prep_fail(err, 0);
    goto out;
  }
  if ((rc = prep_dsos(pr, &dmap, err)) || (rc = prep_frames(pr, &dmap, &fmap, canon, err)) ||
      (rc = prep_samples(pr, &t, err)))
    goto out;
  if (m->take_records) /* read: the largest record array goes before the rest is prepared */
    spaa_profile_drop_samples((struct spaa_profile *)p);
  if (totals_init(pr, &tt)) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "out of memory summing event totals");
    goto out;
  }
  if ((rc = prep_stacks(pr, &t, &fmap, canon, &tt, err)) || (rc = prep_tables(pr, &t, err)) ||
      (rc = prep_summary(pr, &tt, err)))
    goto out;
  rc = compress_original(pr, err);
  if (!rc && m->take_records) {
    pr->checked = 1; /* every stack's id was checked as it was read */
    spaa_profile_drop_stacks((struct spaa_profile *)p);
    /* the model's records and what was made on the way to them (a decoder's tables, JSON
     * values, maps) are free now, much of it inside malloc's arenas: give those pages
     * back before the writer builds the block beside the preparation */
    malloc_trim(0);
  }
out:
  totals_free(&tt);
  spaa_idmap_free(&dmap);
  spaa_idlookup_free(&fmap);
  spaa_strmap_free(&t.map);
  free(t.v);
  free(canon);
  return rc;
}

static void free_strs(char **v, size_t n)
{
  size_t i;
  if (!v)
    return;
  for (i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

void storage__prep_drop_frames(struct storage__prep *pr)
{
  free(pr->stack_frames);
  free(pr->stack_frames_off);
  pr->stack_frames = NULL;
  pr->stack_frames_off = NULL;
}

void storage__prep_free(struct storage__prep *pr)
{
  if (!pr)
    return;
  free(pr->dso_cid);
  free(pr->dso_inst);
  free(pr->frame_cid);
  free(pr->frame_dso);
  free(pr->stack_cid);
  free(pr->pstacks);
  free(pr->stack_frames);
  free(pr->stack_frames_off);
  spaa_buf_free(&pr->psamples);
  free(pr->pstack_w);
  spaa_buf_free(&pr->blobs);
  free(pr->frame_extra);
  free_strs(pr->thread_extra, pr->p ? pr->p->n_threads : 0);
  free(pr->stack_ctx);
  free_strs(pr->texts, pr->n_texts);
  free(pr->labels_text);
  free(pr->attrs_text);
  free(pr->event_names);
  free_strs(pr->event_totals, pr->event_totals ? pr->n_events_out : 0);
  free(pr->original);
  memset(pr, 0, sizeof(*pr));
}

int storage__prep_check_stack(const struct storage__prep *pr, size_t i, struct spaa_err *err)
{
  const struct spaa_stack *s;
  size_t from = pr->stack_frames_off[i], n = pr->stack_frames_off[i + 1] - from, j;
  struct spaa_cid small[64] = {{{0}}}, *leaf = small, c;
  int rc;
  if (pr->checked)
    return 0;
  s = &pr->p->stacks[i];
  if (n > 64 && !(leaf = malloc(n * sizeof(*leaf))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  for (j = 0; j < n; j++)
    leaf[j] = pr->frame_cid[pr->stack_frames[from + j]];
  rc = spaa_stack_cid(s->event, s->stack_type, leaf, n, s->context, &c);
  if (leaf != small)
    free(leaf);
  if (rc)
    return spaa_err_set(err, rc, 0, 0, "computing a stack's content id failed");
  if (memcmp(c.b, pr->stack_cid[i].b, SPAA_CID_LEN) != 0) {
    char hex[SPAA_CID_HEXLEN + 1];
    spaa_cid_hex(&c, hex);
    return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "stack %zu has id \"%.40s\" but its content "
                        "id is %s: normalize the profile before storing it", i, s->id, hex);
  }
  return 0;
}

void storage__frame_ident(const struct storage__prep *pr, size_t i,
                          struct storage__frame_ident *out)
{
  const struct spaa_profile *p = pr->p;
  const struct spaa_frame *f = &p->frames[i];
  const struct spaa_dso *d = pr->frame_dso[i] == SIZE_MAX ? NULL : &p->dsos[pr->frame_dso[i]];
  out->func = f->func_resolved && f->func ? f->func : "";
  out->srcline = f->srcline_resolved && f->srcline && f->srcline[0] ? f->srcline : NULL;
  out->inline_depth = f->has_inline_depth ? f->inline_depth : 0;
  out->kind = f->kind ? f->kind : "unknown";
  out->has_addr = !f->func_resolved && f->has_ip;
  out->addr = 0;
  if (out->has_addr)
    out->addr = (int64_t)spaa_frame_rel_addr(f, d);
}
