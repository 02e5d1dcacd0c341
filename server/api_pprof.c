/* GET /api/v1/pprof: the stacks of a selection, summed by stack id, as one pprof with a sample
 * type per metric of the selection (in the order the newest profiles give them; metric=
 * keeps one). The merged stacks become a SPAA model (one event, frames from the store's
 * frame dictionary, each stack's stored context) written by the pprof exporter, so the
 * answer is what /pprof of one profile would be, labels included; its period is the newest
 * selected profile's, its time and duration what the selection spans. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "codecs/registry.h"
#include "server/api.h"
#include "server/api_select.h"
#include "server/api_views.h"

/* The model being built from resolved stacks. */
#define MERGED_MAX_METRICS 16 /* sample types of one merged pprof */

struct mbuild {
  struct spaa_profile *p;
  struct spaa_meter *meter;       /* the request's (spaa_req.meter), or NULL */
  const struct spaa_vset *v;      /* the merged values of each metric, by stack id */
  size_t n_v;
  struct spaa_strmap value_ix[MERGED_MAX_METRICS]; /* per metric: stack id -> index in v */
  struct spaa_strmap dso_ix;      /* dso name -> dso id */
  struct spaa_strmap frame_ix;    /* frame key (owned in keys) -> frame id */
  char **keys;                    /* frame keys (owned) */
  size_t n_keys, cap_keys;
  uint64_t *path;                 /* scratch frame ids */
  size_t cap_path;
  size_t key_bytes;               /* the frame keys' bytes */
  size_t metered;                 /* the maps' and keys' bytes reported to the meter */
};

/* Report the maps and frame keys beside the model as they are now (the model and the sets
 * report on their own): 0, or SPAA_E_NOMEM when the meter refuses. */
static int mb_meter(struct mbuild *b)
{
  size_t want = spaa_strmap_bytes(&b->dso_ix) + spaa_strmap_bytes(&b->frame_ix) +
                b->cap_keys * sizeof(*b->keys) + b->key_bytes, m;
  for (m = 0; m < b->n_v; m++)
    want += spaa_strmap_bytes(&b->value_ix[m]);
  return spaa_meter_hold(b->meter, &b->metered, want) ? SPAA_E_NOMEM : 0;
}

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
  b->key_bytes += len + 1;
  if (!(fr = spaa_add_frame(b->p)))
    return SPAA_E_NOMEM;
  fr->id = b->p->n_frames;
  fr->func_resolved = f->func[0] != 0;
  if (!fr->func_resolved && !f->has_addr) {
    fr->func = spaa_strdup(b->p, "[unknown]"); /* as the converters name a frame without one */
  } else if (!fr->func_resolved) {
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
  if (!fr->func || !fr->kind || spaa_strmap_put(&b->frame_ix, key, len, fr->id, NULL) < 0 ||
      mb_meter(b))
    return SPAA_E_NOMEM;
  *out = fr->id;
  return 0;
}

static int mbuild_cb(void *ctx, const struct spaa_store_stack_info *st)
{
  struct mbuild *b = ctx;
  struct spaa_stack *s;
  size_t i, k, m, found = 0;
  int rc;
  for (m = 0; m < b->n_v; m++)
    found += spaa_strmap_get(&b->value_ix[m], st->id, strlen(st->id), &k);
  if (!found)
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
  if (st->context) { /* its labels and attributes: the exporter makes pprof labels of them */
    size_t len = strlen(st->context);
    if (!(s->context = json_loadb(st->context, len, 0, NULL)) || !json_is_object(s->context))
      return SPAA_E_STORE;
    b->key_bytes += 4 * len; /* a rough size of the parsed object, for the meter */
    if (mb_meter(b))
      return SPAA_E_NOMEM;
  }
  for (m = 0; m < b->n_v; m++)
    if (spaa_strmap_get(&b->value_ix[m], st->id, strlen(st->id), &k) &&
        (rc = spaa_weights_add(b->p, &s->weights, b->v[m].metric,
                               spaa_int((int64_t)b->v[m].stacks[k].value), b->v[m].unit)))
      return rc;
  return 0;
}

/* The event and its sample types (x_pprof_sample_types keeps their order for the exporter). */
static int model_head(struct mbuild *b)
{
  struct spaa_event *e;
  json_t *types = json_array();
  size_t m;
  if (!types || !(b->p = spaa_profile_new_metered(b->meter)) || !(e = spaa_add_event(b->p)) ||
      !(b->p->header.extra = json_object())) {
    json_decref(types);
    return SPAA_E_NOMEM;
  }
  b->p->header.source_tool = spaa_strdup(b->p, "spaa-relay");
  e->name = spaa_strdup(b->p, b->v[0].metric);
  e->kind = spaa_strdup(b->p, "software");
  e->mode = spaa_strdup(b->p, "event");
  e->primary_metric = e->name;
  for (m = 0; m < b->n_v; m++)
    if (json_array_append_new(types, json_pack("{s:s,s:s}", "type", b->v[m].metric, "unit",
                                               b->v[m].unit ? b->v[m].unit : "count")))
      break;
  if (json_object_set_new(b->p->header.extra, "x_pprof_sample_types", types) || m < b->n_v ||
      !e->name || !e->kind || !e->mode)
    return SPAA_E_NOMEM;
  return 0;
}

/* Resolve the sets' stacks again (by the store numbers kept in their tags) into b->p. */
static int build_model(struct spaa_store *store, struct mbuild *b, struct spaa_err *err)
{
  struct spaa_idmap seen;
  int64_t *nums = NULL;
  size_t i, m, n = 0, total = 0, k;
  int rc;
  if ((rc = model_head(b)))
    return spaa_err_set(err, rc, 0, 0, NULL);
  for (m = 0; m < b->n_v; m++)
    total += b->v[m].n_stacks;
  spaa_idmap_init(&seen);
  if (!(nums = malloc((total ? total : 1) * sizeof(*nums))))
    rc = SPAA_E_NOMEM;
  for (m = 0; m < b->n_v && !rc; m++)
    for (i = 0; i < b->v[m].n_stacks && !rc; i++) {
      const struct spaa_vstack *vs = &b->v[m].stacks[i];
      if (spaa_strmap_put(&b->value_ix[m], vs->id, strlen(vs->id), i, NULL) < 0)
        rc = SPAA_E_NOMEM;
      else if (!spaa_idmap_get(&seen, (uint64_t)vs->tag, &k)) {
        nums[n] = vs->tag;
        rc = spaa_idmap_put(&seen, (uint64_t)vs->tag, n++, NULL) < 0 ? SPAA_E_NOMEM : 0;
      }
    }
  if (!rc)
    rc = mb_meter(b);
  if (rc)
    spaa_err_set(err, rc, 0, 0, NULL);
  else
    rc = spaa_store_stacks(store, nums, n, mbuild_cb, b, err);
  free(nums);
  spaa_idmap_free(&seen);
  return rc;
}

/* The period of `newest`, the newest profile q selects (the last received; NULL: none), as
 * Pyroscope's merge keeps the one of its first profile: that profile's pprof period (x_pprof_period), else its event's
 * sampling (sample period, frequency, OTLP's period type), the event q names or its first
 * one. A profile that cannot be read now (gone, or over the request's budget) leaves the
 * merged pprof without a period. 0, or SPAA_E_NOMEM. */
static int newest_period(struct spaa_store *store, const char *newest,
                         const struct spaa_list_query *q, struct mbuild *b)
{
  struct spaa_profile *p = NULL;
  struct spaa_event *to = &b->p->header.events[0];
  const struct spaa_event *from = NULL;
  const json_t *per;
  struct spaa_err err;
  size_t i;
  int rc = 0;
  spaa_err_clear(&err);
  if (!newest || spaa_store_get_metered(store, newest, b->meter, &p, &err))
    return 0;
  for (i = 0; i < p->header.n_events && !from; i++)
    if (!q->event || strcmp(p->header.events[i].name, q->event) == 0)
      from = &p->header.events[i];
  if ((per = json_object_get(p->header.extra, "x_pprof_period")) &&
      json_object_set_new(b->p->header.extra, "x_pprof_period", json_deep_copy(per)))
    rc = SPAA_E_NOMEM;
  if (from && !rc) {
    to->has_sample_period = from->has_sample_period;
    to->sample_period = from->sample_period;
    to->has_frequency_hz = from->has_frequency_hz;
    to->frequency_hz = from->frequency_hz;
    if (from->sampling_extra && !(to->sampling_extra = json_deep_copy(from->sampling_extra)))
      rc = SPAA_E_NOMEM;
  }
  spaa_profile_free(p);
  return rc;
}

/* The time the profiles q selects span (the earliest start to the latest end of those with a
 * known range), as the merged pprof's time and duration; listed a page at a time, metadata
 * only. None known, or the store failing: no range. *newest: the newest one's id (owned by
 * the caller), or NULL. 0, or SPAA_E_NOMEM. */
static int selection_range(struct spaa_store *store, const struct spaa_list_query *q,
                           struct mbuild *b, char **newest)
{
  struct spaa_list_query page = *q;
  struct spaa_store_cursor after;
  struct spaa_store_page pg;
  struct spaa_err err;
  int64_t lo = 0, hi = 0;
  char *last = NULL;
  size_t i;
  int rc = 0, more;
  page.limit = 1000;
  page.after = NULL;
  do {
    memset(&pg, 0, sizeof(pg));
    spaa_err_clear(&err);
    if (spaa_store_list(store, &page, &pg, &err)) {
      lo = hi = 0; /* a part unknown: no range rather than a wrong one */
      more = 0;
    } else {
      if (!*newest && pg.n > 0 && !(*newest = strdup(pg.profiles[0].id)))
        rc = SPAA_E_NOMEM;
      for (i = 0; i < pg.n; i++) {
        const struct spaa_store_profile_info *pi = &pg.profiles[i];
        if (pi->start_ns <= 0 || pi->end_ns < pi->start_ns)
          continue;
        if (!lo || pi->start_ns < lo)
          lo = pi->start_ns;
        if (pi->end_ns > hi)
          hi = pi->end_ns;
      }
      if ((more = pg.has_next && !rc)) {
        free(last);
        if (!(last = strdup(pg.next.id))) {
          rc = SPAA_E_NOMEM;
          more = 0;
        }
        after.received_ns = pg.next.received_ns;
        after.id = last;
        page.after = &after;
      }
    }
    spaa_store_page_free(&pg);
  } while (more);
  free(last);
  if (!rc && lo > 0 && (b->p->header.time_unit = spaa_strdup(b->p, "nanoseconds"))) {
    b->p->header.has_time_range = 1;
    b->p->header.start = spaa_int(lo);
    b->p->header.end = spaa_int(hi);
  } else if (!rc && lo > 0) {
    rc = SPAA_E_NOMEM;
  }
  return rc;
}

/* The distinct metric names of a selection's stacks, in the order met. */
struct metric_names {
  char name[MERGED_MAX_METRICS][128];
  size_t n;
};

static int metric_names_cb(void *ctx, const struct spaa_store_scan_stack *st)
{
  struct metric_names *mn = ctx;
  size_t i, j;
  for (i = 0; i < st->n_weights && mn->n < MERGED_MAX_METRICS; i++) {
    for (j = 0; j < mn->n && strcmp(mn->name[j], st->weights[i].metric); j++)
      ;
    if (j == mn->n && strlen(st->weights[i].metric) < sizeof(mn->name[0]))
      snprintf(mn->name[mn->n++], sizeof(mn->name[0]), "%s", st->weights[i].metric);
  }
  return 0;
}

/* One merged set per metric (metric= alone when given) into v[0..*n). */
static int merged_sets(const struct spaa_req *req, const struct spaa_list_query *q,
                       struct spaa_vset *v, size_t *n, struct spaa_err *err)
{
  const char *metric = spaa_req_query(req, "metric");
  struct metric_names mn;
  size_t m;
  int rc = 0;
  memset(&mn, 0, sizeof(mn));
  *n = 0;
  if (!metric &&
      (rc = spaa_store_scan_metered(req->app->store, q, req->meter, metric_names_cb, &mn, err)))
    return rc;
  for (m = 0; m < (metric ? 1 : mn.n ? mn.n : 1) && !rc; m++) {
    (*n)++;
    if (!(rc = spaa_vset_filters(&v[m], spaa_req_query(req, "focus"),
                                 spaa_req_query(req, "ignore"), err)))
      rc = spaa_api_merged_vset(req->app->store, q, metric ? metric : mn.n ? mn.name[m] : NULL,
                                0, &v[m], NULL, err);
    if (!rc && !v[m].metric)
      v[m].metric = "samples"; /* an empty selection: still name the type */
  }
  return rc;
}

void spaa_api_merged_pprof(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const own[] = {"metric", "focus", "ignore", NULL};
  static const char *const *const lists[] = {own, spaa_api_filter_params, NULL};
  struct spaa_api_sel sel;
  struct spaa_vset v[MERGED_MAX_METRICS];
  struct mbuild b;
  struct spaa_api_out o;
  struct spaa_err err;
  char *newest = NULL;
  size_t i, n = 0;
  int rc;
  if (spaa_api_params_check(req, lists, NULL, resp))
    return;
  if (spaa_api_sel_parse(req, "", req->received_ns, &sel, resp)) {
    spaa_api_sel_free(&sel);
    return;
  }
  spaa_err_clear(&err);
  for (i = 0; i < MERGED_MAX_METRICS; i++) {
    spaa_vset_init(&v[i]);
    v[i].meter = req->meter;
  }
  memset(&b, 0, sizeof(b));
  b.meter = req->meter;
  for (i = 0; i < MERGED_MAX_METRICS; i++)
    spaa_strmap_init(&b.value_ix[i]);
  spaa_strmap_init(&b.dso_ix);
  spaa_strmap_init(&b.frame_ix);
  if (!(rc = merged_sets(req, &sel.q, v, &n, &err))) {
    b.v = v;
    b.n_v = n;
    if (!(rc = build_model(req->app->store, &b, &err)) &&
        ((rc = selection_range(req->app->store, &sel.q, &b, &newest)) ||
         (rc = newest_period(req->app->store, newest, &sel.q, &b))))
      spaa_err_set(&err, rc, 0, 0, NULL);
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
  for (i = 0; i < MERGED_MAX_METRICS; i++) {
    spaa_strmap_free(&b.value_ix[i]);
    spaa_vset_free(&v[i]);
  }
  spaa_strmap_free(&b.dso_ix);
  spaa_strmap_free(&b.frame_ix);
  spaa_meter_give(b.meter, &b.metered, b.metered);
  spaa_profile_free(b.p);
  spaa_api_sel_free(&sel);
  free(newest);
}
