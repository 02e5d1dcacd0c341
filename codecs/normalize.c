/* Canonical form of a profile: content ids for stacks, duplicates merged, fixed order. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/cid.h"
#include "codecs/idmap.h"
#include "codecs/spaa_io.h"

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
      if (strcmp(dst->v[j].metric, src->v[i].metric) == 0)
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

/* Rewrite the stack ids in window by_stack arrays through `map` (old id -> stack index). */
static void rewrite_windows(struct spaa_profile *p, const struct spaa_strmap *map,
                            char (*old_ids)[48])
{
  size_t i, j, k;
  for (i = 0; i < p->n_windows; i++) {
    json_t *arr = p->windows[i].by_stack;
    for (j = 0; j < json_array_size(arr); j++) {
      json_t *e = json_array_get(arr, j);
      json_t *sid = json_object_get(e, "stack_id");
      const char *s = json_string_value(sid);
      if (s && spaa_strmap_get(map, s, strlen(s), &k))
        json_object_set_new(e, "stack_id", json_string(p->stacks[k].id));
    }
  }
  (void)old_ids;
}

int spaa_assign_content_ids(struct spaa_profile *p, struct spaa_cid *frame_cids,
                            struct spaa_err *err)
{
  struct spaa_idmap dsos, frames;
  struct spaa_strmap old;
  struct spaa_cid *fc = frame_cids, *leaf = NULL;
  char (*old_ids)[48] = NULL;
  size_t i, j, k, maxf = 0;
  int rc = 0;

  spaa_idmap_init(&dsos);
  spaa_idmap_init(&frames);
  spaa_strmap_init(&old);
  if (!fc && p->n_frames && !(fc = malloc(p->n_frames * sizeof(*fc)))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  for (i = 0; i < p->n_dsos; i++)
    if ((rc = spaa_idmap_put(&dsos, p->dsos[i].id, i, NULL)) < 0)
      goto nomem;
  for (i = 0; i < p->n_frames; i++) {
    const struct spaa_frame *f = &p->frames[i];
    const struct spaa_dso *d = NULL;
    if (f->has_dso) {
      if (!spaa_idmap_get(&dsos, f->dso, &k)) {
        rc = spaa_err_set(err, SPAA_E_INVALID, 0, 0, "frame %" PRIu64 " references dso %" PRIu64
                          ", which does not exist", f->id, f->dso);
        goto out;
      }
      d = &p->dsos[k];
    }
    if ((rc = spaa_frame_cid(f, d, &fc[i])) || (rc = spaa_idmap_put(&frames, f->id, i, NULL)) < 0)
      goto nomem;
  }
  for (i = 0; i < p->n_stacks; i++)
    if (p->stacks[i].n_frames > maxf)
      maxf = p->stacks[i].n_frames;
  if ((maxf && !(leaf = malloc(maxf * sizeof(*leaf)))) ||
      (p->n_stacks && !(old_ids = malloc(p->n_stacks * sizeof(*old_ids)))))
    goto nomem;
  for (i = 0; i < p->n_stacks; i++) {
    struct spaa_stack *s = &p->stacks[i];
    struct spaa_cid sc;
    for (j = 0; j < s->n_frames; j++) {
      size_t pos = p->header.frame_order == SPAA_ROOT_TO_LEAF ? s->n_frames - 1 - j : j;
      if (!spaa_idmap_get(&frames, s->frames[pos], &k)) {
        rc = spaa_err_set(err, SPAA_E_INVALID, 0, 0, "stack %s references frame %" PRIu64
                          ", which does not exist", s->id, s->frames[pos]);
        goto out;
      }
      leaf[j] = fc[k];
    }
    if ((rc = spaa_stack_cid(s->event, s->stack_type, leaf, s->n_frames, s->context, &sc)))
      goto nomem;
    memcpy(old_ids[i], s->id, sizeof(s->id));
    spaa_cid_hex(&sc, s->id);
  }
  /* old id -> index, to rewrite references */
  for (i = 0; i < p->n_stacks; i++)
    if ((rc = spaa_strmap_put(&old, old_ids[i], strlen(old_ids[i]), i, NULL)) < 0)
      goto nomem;
  rc = 0;
  for (i = 0; i < p->n_samples; i++) {
    struct spaa_sample *s = &p->samples[i];
    if (s->stack_id && spaa_strmap_get(&old, s->stack_id, strlen(s->stack_id), &k) &&
        !(s->stack_id = spaa_strdup(p, p->stacks[k].id)))
      goto nomem;
  }
  for (i = 0; i < p->n_stacks; i++) {
    struct spaa_stack *s = &p->stacks[i];
    for (j = 0; j < s->n_related; j++)
      if (spaa_strmap_get(&old, s->related[j], strlen(s->related[j]), &k) &&
          !(s->related[j] = spaa_strdup(p, p->stacks[k].id)))
        goto nomem;
  }
  rewrite_windows(p, &old, old_ids);
  p->header.id_mode = SPAA_IDS_CONTENT;
  goto out;
nomem:
  rc = spaa_err_set(err, rc < 0 && rc != 1 ? rc : SPAA_E_NOMEM, 0, 0, NULL);
out:
  spaa_idmap_free(&dsos);
  spaa_idmap_free(&frames);
  spaa_strmap_free(&old);
  if (fc != frame_cids)
    free(fc);
  free(leaf);
  free(old_ids);
  return rc;
}

/* ---- sorting ------------------------------------------------------------------------- */

struct stack_key {
  size_t event_pos;        /* position of the event in the header (n_events if unknown) */
  struct spaa_num primary; /* the primary metric, 0 when absent */
  const char *id;
  size_t idx;              /* index in p->stacks */
};

static int num_cmp(struct spaa_num a, struct spaa_num b)
{
  if (!a.is_float && !b.is_float)
    return a.i < b.i ? -1 : a.i > b.i;
  double x = spaa_num_as_double(a), y = spaa_num_as_double(b);
  return x < y ? -1 : x > y;
}

static int stack_key_cmp(const void *a, const void *b)
{
  const struct stack_key *x = a, *y = b;
  int c;
  if (x->event_pos != y->event_pos)
    return x->event_pos < y->event_pos ? -1 : 1;
  if ((c = num_cmp(y->primary, x->primary)))
    return c; /* heaviest first */
  return strcmp(x->id, y->id);
}

static int dso_cmp(const void *a, const void *b)
{
  const struct spaa_dso *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int frame_cmp(const void *a, const void *b)
{
  const struct spaa_frame *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int thread_cmp(const void *a, const void *b)
{
  const struct spaa_thread *x = a, *y = b;
  return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int id_cmp(const void *a, const void *b)
{
  const struct stack_key *x = a, *y = b;
  int c = strcmp(x->id, y->id);
  return c ? c : (x->idx < y->idx ? -1 : x->idx > y->idx);
}

static void stack_release(struct spaa_stack *s)
{
  free(s->frames);
  free(s->related);
  json_decref(s->context);
  json_decref(s->extra);
  free(s->weights.v);
  free(s->excl_weights.v);
}

int spaa_normalize(struct spaa_profile *p, struct spaa_err *err)
{
  struct stack_key *keys = NULL;
  struct spaa_stack *sorted = NULL;
  char *dead = NULL;
  size_t i, n, out_n, first_i;
  int rc;

  if ((rc = spaa_assign_content_ids(p, NULL, err)))
    return rc;
  /* qsort's array must not be NULL, even for no elements */
  if (p->n_dsos > 1)
    qsort(p->dsos, p->n_dsos, sizeof(*p->dsos), dso_cmp);
  if (p->n_frames > 1)
    qsort(p->frames, p->n_frames, sizeof(*p->frames), frame_cmp);
  if (p->n_threads > 1)
    qsort(p->threads, p->n_threads, sizeof(*p->threads), thread_cmp);
  n = p->n_stacks;
  if (!n)
    return 0;
  if (!(keys = malloc(n * sizeof(*keys))) || !(sorted = malloc(n * sizeof(*sorted)))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  /* merge stacks with equal ids into the first of them */
  if (!(dead = calloc(n, 1))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  for (i = 0; i < n; i++) {
    keys[i].id = p->stacks[i].id;
    keys[i].idx = i;
  }
  qsort(keys, n, sizeof(*keys), id_cmp);
  for (i = 1, first_i = 0; i < n; i++) {
    struct spaa_stack *first, *dup;
    if (strcmp(keys[i].id, keys[first_i].id) != 0) {
      first_i = i;
      continue;
    }
    first = &p->stacks[keys[first_i].idx];
    dup = &p->stacks[keys[i].idx];
    if ((rc = weights_merge(p, &first->weights, &dup->weights)) ||
        (rc = weights_merge(p, &first->excl_weights, &dup->excl_weights))) {
      spaa_err_set(err, rc, 0, 0, NULL);
      goto out;
    }
    if (!first->has_exclusive && dup->has_exclusive) {
      first->has_exclusive = 1;
      first->excl_frame = dup->excl_frame;
    }
    dead[keys[i].idx] = 1;
  }
  out_n = 0;
  for (i = 0; i < n; i++) {
    struct spaa_stack *s = &p->stacks[i];
    const struct spaa_event *e;
    const struct spaa_weight *w;
    if (dead[i]) {
      stack_release(s);
      continue;
    }
    e = spaa_find_event(p, s->event);
    w = e && e->primary_metric ? spaa_weights_find(&s->weights, e->primary_metric) : NULL;
    keys[out_n].event_pos = e ? (size_t)(e - p->header.events) : p->header.n_events;
    keys[out_n].primary = w ? w->value : spaa_int(0);
    keys[out_n].id = s->id;
    keys[out_n].idx = i;
    out_n++;
  }
  qsort(keys, out_n, sizeof(*keys), stack_key_cmp);
  for (i = 0; i < out_n; i++)
    sorted[i] = p->stacks[keys[i].idx];
  memcpy(p->stacks, sorted, out_n * sizeof(*sorted));
  p->n_stacks = out_n;
  rc = 0;
out:
  free(keys);
  free(sorted);
  free(dead);
  return rc;
}
