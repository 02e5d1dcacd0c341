/* GET /api/v1/pprof: the stacks of a selection, summed by stack id, as one pprof. The merged
 * stacks become a SPAA model (one event named after the metric, frames from the store's
 * frame dictionary) written by the pprof exporter, so the answer is what /pprof of one
 * profile would be. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "codecs/registry.h"
#include "server/api.h"
#include "server/api_select.h"
#include "server/api_views.h"

/* The model being built from resolved stacks. */
struct mbuild {
  struct spaa_profile *p;
  const struct spaa_vset *v;      /* the merged values, by stack id */
  struct spaa_strmap value_ix;    /* stack id -> index in v->stacks */
  struct spaa_strmap dso_ix;      /* dso name -> dso id */
  struct spaa_strmap frame_ix;    /* frame key (owned in keys) -> frame id */
  char **keys;                    /* frame keys (owned) */
  size_t n_keys, cap_keys;
  uint64_t *path;                 /* scratch frame ids */
  size_t cap_path;
  const char *metric;
};

static int frame_id(struct mbuild *b, const struct spaa_store_frame_info *f, uint64_t *out)
{
  char *key;
  size_t len, ix;
  struct spaa_frame *fr;
  len = strlen(f->func) + (f->srcline ? strlen(f->srcline) : 0) + (f->dso ? strlen(f->dso) : 0) + 64;
  if (!(key = malloc(len)))
    return SPAA_E_NOMEM;
  len = (size_t)snprintf(key, len, "%s|%s|%s|%d|%lld|%s", f->func, f->srcline ? f->srcline : "",
                         f->dso ? f->dso : "", f->inline_depth, (long long)f->addr, f->kind);
  if (spaa_strmap_get(&b->frame_ix, key, len, &ix)) {
    free(key);
    *out = ix;
    return 0;
  }
  if (b->n_keys == b->cap_keys) {
    size_t cap = b->cap_keys ? 2 * b->cap_keys : 256;
    char **a = realloc(b->keys, cap * sizeof(*a));
    if (!a) {
      free(key);
      return SPAA_E_NOMEM;
    }
    b->keys = a;
    b->cap_keys = cap;
  }
  b->keys[b->n_keys++] = key;
  if (!(fr = spaa_add_frame(b->p)))
    return SPAA_E_NOMEM;
  fr->id = b->p->n_frames;
  fr->func_resolved = f->func[0] != 0;
  if (!fr->func_resolved) {
    char a[32];
    snprintf(a, sizeof(a), "0x%llx", (unsigned long long)f->addr);
    fr->func = spaa_strdup(b->p, a);
    fr->has_ip = f->has_addr;
    fr->ip = (uint64_t)f->addr;
  } else {
    fr->func = spaa_strdup(b->p, f->func);
  }
  fr->srcline = f->srcline ? spaa_strdup(b->p, f->srcline) : NULL;
  fr->srcline_resolved = f->srcline != NULL;
  fr->inlined = f->inline_depth > 0;
  fr->has_inline_depth = 1;
  fr->inline_depth = (uint32_t)f->inline_depth;
  fr->kind = spaa_strdup(b->p, f->kind);
  if (f->dso) {
    size_t d;
    if (!spaa_strmap_get(&b->dso_ix, f->dso, strlen(f->dso), &d)) {
      struct spaa_dso *ds = spaa_add_dso(b->p);
      if (!ds || !(ds->name = spaa_strdup(b->p, f->dso)))
        return SPAA_E_NOMEM;
      ds->id = d = b->p->n_dsos;
      if (spaa_strmap_put(&b->dso_ix, ds->name, strlen(ds->name), d, NULL) < 0)
        return SPAA_E_NOMEM;
    }
    fr = &b->p->frames[b->p->n_frames - 1];
    fr->has_dso = 1;
    fr->dso = d;
  }
  if (!fr->func || !fr->kind || spaa_strmap_put(&b->frame_ix, key, len, fr->id, NULL) < 0)
    return SPAA_E_NOMEM;
  *out = fr->id;
  return 0;
}

static int mbuild_cb(void *ctx, const struct spaa_store_stack_info *st)
{
  struct mbuild *b = ctx;
  struct spaa_stack *s;
  size_t i, k;
  int rc;
  if (!spaa_strmap_get(&b->value_ix, st->id, strlen(st->id), &k))
    return 0; /* left out by the filters, or another event */
  if (st->n_frames > b->cap_path) {
    free(b->path);
    b->cap_path = st->n_frames;
    if (!(b->path = malloc(b->cap_path * sizeof(*b->path))))
      return SPAA_E_NOMEM;
  }
  for (i = 0; i < st->n_frames; i++)
    if ((rc = frame_id(b, &st->frames[i], &b->path[i])))
      return rc;
  if (!(s = spaa_add_stack(b->p)) || spaa_stack_set_frames(b->p, s, b->path, st->n_frames))
    return SPAA_E_NOMEM;
  snprintf(s->id, sizeof(s->id), "%s", st->id);
  s->event = b->p->header.events[0].name;
  return spaa_weights_add(b->p, &s->weights, b->metric, spaa_int((int64_t)b->v->stacks[k].value),
                          NULL);
}

/* Resolve the set's stacks again (by the store numbers kept in their tags) into b->p. */
static int build_model(struct spaa_store *store, const struct spaa_vset *v, struct mbuild *b,
                       struct spaa_err *err)
{
  struct spaa_event *e;
  size_t i;
  int rc = 0;
  if (!(b->p = spaa_profile_new()) || !(e = spaa_add_event(b->p)))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  b->p->header.source_tool = spaa_strdup(b->p, "spaa-relay");
  e->name = spaa_strdup(b->p, b->metric);
  e->kind = spaa_strdup(b->p, "software");
  e->mode = spaa_strdup(b->p, "event");
  e->primary_metric = e->name;
  for (i = 0; i < v->n_stacks; i++)
    if (spaa_strmap_put(&b->value_ix, v->stacks[i].id, strlen(v->stacks[i].id), i, NULL) < 0)
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  {
    int64_t *nums = malloc((v->n_stacks ? v->n_stacks : 1) * sizeof(*nums));
    if (!nums)
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    for (i = 0; i < v->n_stacks; i++)
      nums[i] = v->stacks[i].tag;
    rc = spaa_store_stacks(store, nums, v->n_stacks, mbuild_cb, b, err);
    free(nums);
  }
  return rc;
}

void spaa_api_merged_pprof(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const own[] = {"metric", "focus", "ignore", NULL};
  static const char *const *const lists[] = {own, spaa_api_filter_params, NULL};
  struct spaa_api_sel sel;
  struct spaa_vset v;
  struct mbuild b;
  struct spaa_api_out o;
  struct spaa_err err;
  size_t i;
  int rc;
  if (spaa_api_params_check(req, lists, NULL, resp))
    return;
  if (spaa_api_sel_parse(req, "", req->received_ns, &sel, resp)) {
    spaa_api_sel_free(&sel);
    return;
  }
  spaa_err_clear(&err);
  spaa_vset_init(&v);
  memset(&b, 0, sizeof(b));
  spaa_strmap_init(&b.value_ix);
  spaa_strmap_init(&b.dso_ix);
  spaa_strmap_init(&b.frame_ix);
  if (!(rc = spaa_vset_filters(&v, spaa_req_query(req, "focus"), spaa_req_query(req, "ignore"),
                               &err)) &&
      !(rc = spaa_api_merged_vset(req->app->store, &sel.q, spaa_req_query(req, "metric"), 0, &v,
                                  NULL, &err))) {
    b.v = &v;
    b.metric = v.metric ? v.metric : "samples";
    rc = build_model(req->app->store, &v, &b, &err);
  }
  if (!rc && !(rc = spaa_api_out_open(req, &o, 0, &err))) {
    rc = spaa_exporter("pprof")->fn(b.p, NULL, o.sink, o.ctx, &err);
    spaa_api_out_answer(resp, &o, rc, "application/octet-stream", &err);
  } else if (rc) {
    spaa_resp_err(resp, &err);
  }
  for (i = 0; i < b.n_keys; i++)
    free(b.keys[i]);
  free(b.keys);
  free(b.path);
  spaa_strmap_free(&b.value_ix);
  spaa_strmap_free(&b.dso_ix);
  spaa_strmap_free(&b.frame_ix);
  spaa_profile_free(b.p);
  spaa_vset_free(&v);
  spaa_api_sel_free(&sel);
}
