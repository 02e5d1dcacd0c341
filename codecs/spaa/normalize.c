/* Canonical form of a profile: content ids for stacks, duplicates merged, fixed order.
 * Hot path of every conversion: binary ids, index sorts, no per-stack allocation. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "spaa/cid.h"
#include "base/idmap.h"
#include "spaa/spaa_io.h"

static struct spaa_num num_add(struct spaa_num a, struct spaa_num b)
{
  if (!a.is_float && !b.is_float) {
    int64_t r;
    if (!__builtin_add_overflow(a.i, b.i, &r))
      return spaa_int(r);
  }
  return spaa_float(spaa_num_as_double(a) + spaa_num_as_double(b));
}

/* Add every weight of `src` into `dst` (same metric summed, new metrics appended). */
static int weights_merge(struct spaa_profile *p, struct spaa_weights *dst,
                         const struct spaa_weights *src)
{
  size_t i, j;
  for (i = 0; i < src->n; i++) {
    for (j = 0; j < dst->n; j++)
      if (dst->v[j].metric == src->v[i].metric || strcmp(dst->v[j].metric, src->v[i].metric) == 0)
        break;
    if (j < dst->n) {
      dst->v[j].value = num_add(dst->v[j].value, src->v[i].value);
    } else {
      int rc = spaa_weights_add(p, dst, src->v[i].metric, src->v[i].value, src->v[i].unit);
      if (rc)
        return rc;
    }
  }
  return 0;
}

/* A stack whose exclusive weights share the array of its weights (a converter's one weight
 * list for both) gets a copy of its own before either is merged into. 0 or SPAA_E_NOMEM. */
static int excl_unshare(struct spaa_profile *p, struct spaa_stack *s)
{
  struct spaa_weights w = s->excl_weights;
  if (!w.n || w.v != s->weights.v)
    return 0;
  if (spaa_weights_alloc(p, &s->excl_weights, w.n))
    return SPAA_E_NOMEM;
  memcpy(s->excl_weights.v, w.v, w.n * sizeof(*w.v));
  return 0;
}

/* Rewrite the stack ids that sample records, related_stacks and windows use, from each
 * stack's id (still its old one) to the content id cids[k] of the stack it names. (Compact
 * samples name their stack by position: spaa_normalize moves those.) */
static int rewrite_refs(struct spaa_profile *p, const struct spaa_cid *cids)
{
  struct spaa_strmap old; /* old id -> stack (keys: the stacks' own ids) */
  const char **fresh = NULL; /* arena copy of each stack's new id, made on first use */
  char hex[SPAA_CID_HEXLEN + 1];
  size_t i, j, k;
  int rc = 0;
  if (!p->n_samples && !p->n_windows) { /* compact samples name their stacks by position */
    for (i = 0; i < p->n_stacks && !p->stacks[i].n_related; i++)
      ;
    if (i == p->n_stacks)
      return 0;
  }
  spaa_strmap_init(&old);
  if (!(fresh = calloc(p->n_stacks ? p->n_stacks : 1, sizeof(*fresh))) ||
      spaa_strmap_reserve(&old, p->n_stacks))
    goto nomem;
  for (i = 0; i < p->n_stacks; i++)
    if (spaa_strmap_put(&old, p->stacks[i].id, strlen(p->stacks[i].id), i, NULL) < 0)
      goto nomem;
#define NEW_ID(k)                                                                             \
  (fresh[k] ? fresh[k] : (spaa_cid_hex(&cids[k], hex), fresh[k] = spaa_strdup(p, hex)))
  for (i = 0; i < p->n_samples; i++) {
    struct spaa_sample *s = &p->samples[i];
    if (s->stack_id && spaa_strmap_get(&old, s->stack_id, strlen(s->stack_id), &k) &&
        !(s->stack_id = NEW_ID(k)))
      goto nomem;
  }
  for (i = 0; i < p->n_stacks; i++) {
    struct spaa_stack *s = &p->stacks[i];
    for (j = 0; j < s->n_related; j++)
      if (spaa_strmap_get(&old, s->related[j], strlen(s->related[j]), &k) &&
          !(s->related[j] = NEW_ID(k)))
        goto nomem;
  }
#undef NEW_ID
  for (i = 0; i < p->n_windows; i++) {
    json_t *arr = p->windows[i].by_stack;
    for (j = 0; j < json_array_size(arr); j++) {
      json_t *e = json_array_get(arr, j);
      const char *sid = json_string_value(json_object_get(e, "stack_id"));
      if (sid && spaa_strmap_get(&old, sid, strlen(sid), &k)) {
        spaa_cid_hex(&cids[k], hex);
        if (json_object_set_new(e, "stack_id", json_string(hex)))
          goto nomem;
      }
    }
  }
  goto out;
nomem:
  rc = SPAA_E_NOMEM;
out:
  spaa_strmap_free(&old);
  free(fresh);
  return rc;
}

/* Compute content ids; stack_cids (may be NULL) receives each stack's id in binary. */
static int assign_ids(struct spaa_profile *p, struct spaa_cid *frame_cids,
                      struct spaa_cid *stack_cids, struct spaa_err *err)
{
  struct spaa_idlookup dsos, frames;
  struct spaa_cid *fc = frame_cids, *sc = stack_cids, *leaf = NULL;
  size_t i, j, k, maxf = 0;
  int rc = 0;

  memset(&dsos, 0, sizeof(dsos));
  memset(&frames, 0, sizeof(frames));
  if ((!fc && p->n_frames && !(fc = malloc(p->n_frames * sizeof(*fc)))) ||
      (!sc && p->n_stacks && !(sc = malloc(p->n_stacks * sizeof(*sc)))))
    goto nomem;
  /* (an id there twice is the validator's to refuse: the first of them is found) */
  if (spaa_idlookup_build(&dsos, p->dsos, p->n_dsos, sizeof(*p->dsos),
                          offsetof(struct spaa_dso, id), NULL) < 0 ||
      spaa_idlookup_build(&frames, p->frames, p->n_frames, sizeof(*p->frames),
                          offsetof(struct spaa_frame, id), NULL) < 0)
    goto nomem;
  for (i = 0; i < p->n_frames; i++) {
    const struct spaa_frame *f = &p->frames[i];
    const struct spaa_dso *d = NULL;
    if (f->has_dso) {
      if (!spaa_idlookup_get(&dsos, f->dso, &k)) {
        rc = spaa_err_set(err, SPAA_E_INVALID, 0, 0, "frame %" PRIu64 " references dso %" PRIu64
                          ", which does not exist", f->id, f->dso);
        goto out;
      }
      d = &p->dsos[k];
    }
    if ((rc = spaa_frame_cid(f, d, &fc[i])))
      goto fail;
  }
  for (i = 0; i < p->n_stacks; i++)
    if (p->stacks[i].n_frames > maxf)
      maxf = p->stacks[i].n_frames;
  if (maxf && !(leaf = malloc(maxf * sizeof(*leaf))))
    goto nomem;
  for (i = 0; i < p->n_stacks; i++) {
    struct spaa_stack *s = &p->stacks[i];
    int rev = p->header.frame_order == SPAA_ROOT_TO_LEAF;
    for (j = 0; j < s->n_frames; j++) {
      uint64_t fid = s->frames[rev ? s->n_frames - 1 - j : j];
      if (!spaa_idlookup_get(&frames, fid, &k)) {
        rc = spaa_err_set(err, SPAA_E_INVALID, 0, 0, "stack %s references frame %" PRIu64
                          ", which does not exist", s->id, fid);
        goto out;
      }
      leaf[j] = fc[k];
    }
    if ((rc = spaa_stack_cid(s->event, s->stack_type, leaf, s->n_frames, s->context, &sc[i])))
      goto fail;
  }
  /* the references first, found by the old ids the stacks still carry; then the stacks */
  if ((rc = rewrite_refs(p, sc)))
    goto fail;
  for (i = 0; i < p->n_stacks; i++)
    spaa_cid_hex(&sc[i], p->stacks[i].id);
  p->header.id_mode = SPAA_IDS_CONTENT;
  goto out;
nomem:
  rc = SPAA_E_NOMEM;
fail:
  spaa_err_set(err, rc, 0, 0, "computing content ids: %s", spaa_err_default(rc));
out:
  spaa_idlookup_free(&dsos);
  spaa_idlookup_free(&frames);
  if (fc != frame_cids)
    free(fc);
  if (sc != stack_cids)
    free(sc);
  free(leaf);
  return rc;
}

int spaa_assign_content_ids(struct spaa_profile *p, struct spaa_cid *frame_cids,
                            struct spaa_err *err)
{
  return assign_ids(p, frame_cids, NULL, err);
}

/* ---- sorting ------------------------------------------------------------------------- */

struct stack_key {
  size_t event_pos;        /* position of the event in the header (n_events if unknown) */
  struct spaa_num primary; /* the primary metric, 0 when absent */
};

struct sort_ctx {
  const struct spaa_cid *cids;
  const struct stack_key *keys;
};

static int num_cmp(struct spaa_num a, struct spaa_num b)
{
  if (!a.is_float && !b.is_float)
    return a.i < b.i ? -1 : a.i > b.i;
  double x = spaa_num_as_double(a), y = spaa_num_as_double(b);
  return x < y ? -1 : x > y;
}

static int by_cid(const void *a, const void *b, void *arg)
{
  const struct sort_ctx *c = arg;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  int r = memcmp(c->cids[x].b, c->cids[y].b, SPAA_CID_LEN);
  return r ? r : (x < y ? -1 : x > y); /* stable: the first of equals stays first */
}

static int by_key(const void *a, const void *b, void *arg)
{
  const struct sort_ctx *c = arg;
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  int r;
  if (c->keys[x].event_pos != c->keys[y].event_pos)
    return c->keys[x].event_pos < c->keys[y].event_pos ? -1 : 1;
  if ((r = num_cmp(c->keys[y].primary, c->keys[x].primary)))
    return r; /* heaviest first */
  return memcmp(c->cids[x].b, c->cids[y].b, SPAA_CID_LEN);
}

#define SORT_BY_ID(arr, n, type, field)                                                       \
  do {                                                                                        \
    size_t i_;                                                                                \
    for (i_ = 1; i_ < (n) && (arr)[i_ - 1].field <= (arr)[i_].field; i_++)                    \
      ;                                                                                       \
    if (i_ < (n))                                                                             \
      qsort((arr), (n), sizeof(type), type##_cmp);                                            \
  } while (0)

typedef struct spaa_dso dso_t;
typedef struct spaa_frame frame_t;
typedef struct spaa_thread thread_t;

static int dso_t_cmp(const void *a, const void *b)
{
  const struct spaa_dso *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int frame_t_cmp(const void *a, const void *b)
{
  const struct spaa_frame *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int thread_t_cmp(const void *a, const void *b)
{
  const struct spaa_thread *x = a, *y = b;
  return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* A merged-away stack: its arrays live in the arena, only its JSON is released. */
static void stack_release(struct spaa_stack *s)
{
  json_decref(s->context);
  json_decref(s->extra);
}

/* The header position of an event, by pointer first (converters intern one string per
 * event), then by name. */
static size_t event_pos(const struct spaa_profile *p, const char *name, const char **last_name,
                        size_t *last_pos)
{
  size_t i;
  if (name && name == *last_name)
    return *last_pos;
  for (i = 0; name && i < p->header.n_events; i++)
    if (p->header.events[i].name == name || strcmp(p->header.events[i].name, name) == 0) {
      *last_name = name;
      *last_pos = i;
      return i;
    }
  return p->header.n_events;
}

/* Put a[idx[i]] at a[i] for every i < n, idx a permutation of 0..n-1, following its cycles
 * in place: a copy of the stacks beside them would double their bytes at the conversion's
 * peak (176 bytes a stack). `seen` is n bytes of scratch, overwritten. */
static void permute(struct spaa_stack *a, const uint32_t *idx, char *seen, size_t n)
{
  size_t i, j, k;
  memset(seen, 0, n);
  for (i = 0; i < n; i++) {
    struct spaa_stack held;
    if (seen[i] || idx[i] == i)
      continue;
    held = a[i];
    for (j = i;; j = k) {
      seen[j] = 1;
      k = idx[j];
      if (k == i) {
        a[j] = held;
        break;
      }
      a[j] = a[k];
    }
  }
}

int spaa_normalize(struct spaa_profile *p, struct spaa_err *err)
{
  struct spaa_cid *cids = NULL;
  struct stack_key *keys = NULL;
  uint32_t *idx = NULL, *to = NULL; /* to: a stack's old position -> its new one */
  char *dead = NULL;
  struct sort_ctx sc;
  const char *last_name = NULL;
  size_t i, n = p->n_stacks, out_n, first_i, last_pos = 0;
  int rc;

  if (n > UINT32_MAX)
    return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "more than 2^32 stacks");
  if (n && !(cids = malloc(n * sizeof(*cids))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if ((rc = assign_ids(p, NULL, cids, err)))
    goto out;
  SORT_BY_ID(p->dsos, p->n_dsos, dso_t, id);
  SORT_BY_ID(p->frames, p->n_frames, frame_t, id);
  SORT_BY_ID(p->threads, p->n_threads, thread_t, tid);
  if (!n)
    goto out;
  if (!(keys = malloc(n * sizeof(*keys))) || !(idx = malloc(n * sizeof(*idx))) ||
      !(dead = calloc(n, 1)) || (p->n_csamples && !(to = malloc(n * sizeof(*to))))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  sc.cids = cids;
  sc.keys = keys;
  /* merge stacks with equal ids into the first of them */
  for (i = 0; i < n; i++)
    idx[i] = (uint32_t)i;
  qsort_r(idx, n, sizeof(*idx), by_cid, &sc);
  for (i = 1, first_i = 0; i < n; i++) {
    struct spaa_stack *first, *dup;
    if (memcmp(cids[idx[i]].b, cids[idx[first_i]].b, SPAA_CID_LEN) != 0) {
      first_i = i;
      continue;
    }
    first = &p->stacks[idx[first_i]];
    dup = &p->stacks[idx[i]];
    if ((rc = excl_unshare(p, first)) ||
        (rc = weights_merge(p, &first->weights, &dup->weights)) ||
        (rc = weights_merge(p, &first->excl_weights, &dup->excl_weights))) {
      spaa_err_set(err, rc, 0, 0, NULL);
      goto out;
    }
    if (!first->has_exclusive && dup->has_exclusive) {
      first->has_exclusive = 1;
      first->excl_frame = dup->excl_frame;
    }
    dead[idx[i]] = 1;
    if (to)
      to[idx[i]] = idx[first_i]; /* the old position of the stack it went into, for now */
  }
  out_n = 0;
  for (i = 0; i < n; i++) {
    struct spaa_stack *s = &p->stacks[i];
    const struct spaa_event *e;
    const struct spaa_weight *w = NULL;
    if (dead[i]) {
      stack_release(s);
      continue;
    }
    keys[i].event_pos = event_pos(p, s->event, &last_name, &last_pos);
    e = keys[i].event_pos < p->header.n_events ? &p->header.events[keys[i].event_pos] : NULL;
    if (e && e->primary_metric)
      w = spaa_weights_find(&s->weights, e->primary_metric);
    keys[i].primary = w ? w->value : spaa_int(0);
    idx[out_n++] = (uint32_t)i;
  }
  qsort_r(idx, out_n, sizeof(*idx), by_key, &sc);
  if (to) { /* compact samples follow their stacks: kept ones, then merged-away ones */
    for (i = 0; i < out_n; i++)
      to[idx[i]] = (uint32_t)i;
    for (i = 0; i < n; i++)
      if (dead[i])
        to[i] = to[to[i]];
    for (i = 0; i < p->n_csamples; i++) {
      struct spaa_csample *s = &p->csamples[i];
      s->stack = s->stack < n ? to[s->stack] : SPAA_CS_NO_STACK;
    }
  }
  /* the merged-away stacks after the others make idx a whole permutation, applied in place */
  for (i = 0, first_i = out_n; i < n; i++)
    if (dead[i])
      idx[first_i++] = (uint32_t)i;
  permute(p->stacks, idx, dead, n);
  p->n_stacks = out_n;
  rc = 0;
out:
  if (!rc)
    spaa_profile_fit(p);
  free(cids);
  free(keys);
  free(idx);
  free(to);
  free(dead);
  return rc;
}
