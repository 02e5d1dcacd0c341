/* Views over stored profiles: exports of one profile (/pprof, /collapsed, /speedscope, /top,
 * /flamegraph under /api/v1/profiles/{id}) and the same views merged over a selection
 * (/api/v1/top, /flamegraph, /collapsed). The writers live in codecs/ (spaa/view.h,
 * pprof/pprof.h); this file reads parameters, the store, and shapes the answer. */
#include "server/api_views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/idmap.h"
#include "codecs/registry.h"
#include "server/api.h"
#include "server/api_select.h"
#include "spaa/view.h"

/* ---- answers ------------------------------------------------------------------------------ */

int spaa_api_out_open(const struct spaa_req *req, struct spaa_api_out *o, int compress,
                      struct spaa_err *err)
{
  memset(o, 0, sizeof(*o));
  spaa_spool_init(&o->body, req->app && req->app->cfg ? req->app->cfg->data_dir : NULL,
                  SPAA_HTTP_RESP_MAX);
  o->enc = compress ? spaa_query_pick_encoding(spaa_req_header(req, "Accept-Encoding")) : 0;
  if (o->enc && spaa_csink_open(o->enc == 2 ? SPAA_CODING_ZSTD : SPAA_CODING_GZIP,
                                o->enc == 2 ? 3 : 6, spaa_spool_sink, &o->body, &o->z, err)) {
    spaa_spool_free(&o->body);
    return err->code;
  }
  o->sink = o->z ? spaa_csink_write : spaa_spool_sink;
  o->ctx = o->z ? (void *)o->z : (void *)&o->body;
  return 0;
}

void spaa_api_out_answer(struct spaa_resp *resp, struct spaa_api_out *o, int rc,
                         const char *media_type, struct spaa_err *err)
{
  if (!rc && o->z)
    rc = spaa_csink_finish(o->z, err);
  if (!rc)
    rc = spaa_spool_to_resp(&o->body, resp, err);
  if (rc) {
    spaa_resp_err(resp, err);
  } else {
    resp->status = 200;
    resp->content_type = media_type;
    if (o->enc)
      spaa_resp_header(resp, "Content-Encoding", o->enc == 2 ? "zstd" : "gzip");
    spaa_resp_header(resp, "Vary", "Accept-Encoding");
  }
  spaa_csink_free(o->z);
  o->z = NULL;
  spaa_spool_free(&o->body);
}

/* ---- view parameters ---------------------------------------------------------------------- */

/* Every view's, then each view's own (docs/query-api.md): a view refuses another's. */
static const char *const view_params[] = {"metric", "event", "by", "focus", "ignore", NULL};
static const char *const top_params[] = {"limit", NULL};
static const char *const flame_params[] = {"max_nodes", NULL};
static const char *const summary_params[] = {"budget", "format", NULL};
static const char *const no_params[] = {NULL};

static const char *const *view_own(enum spaa_api_view kind)
{
  return kind == SPAA_VIEW_TOP          ? top_params
         : kind == SPAA_VIEW_FLAMEGRAPH ? flame_params
         : kind == SPAA_VIEW_SUMMARY    ? summary_params
                                        : no_params;
}

/* What the view parameters ask for. */
struct view_args {
  const char *metric, *event, *focus, *ignore;
  int by_frame;
  size_t limit, max_nodes;
  size_t budget;   /* summary: most bytes */
  int json;        /* summary: format=json */
};

static int view_args(const struct spaa_req *req, struct view_args *a, struct spaa_resp *resp)
{
  const char *by = spaa_req_query(req, "by"), *fmt = spaa_req_query(req, "format");
  memset(a, 0, sizeof(*a));
  a->metric = spaa_req_query(req, "metric");
  a->event = spaa_req_query(req, "event");
  a->focus = spaa_req_query(req, "focus");
  a->ignore = spaa_req_query(req, "ignore");
  if ((a->metric && !a->metric[0]) || (a->event && !a->event[0])) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad '%s': empty", a->metric && !a->metric[0]
                                                                   ? "metric" : "event");
    return -1;
  }
  if (by && strcmp(by, "function") && strcmp(by, "frame")) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad 'by' '%.32s': expected function or frame", by);
    return -1;
  }
  a->by_frame = by && strcmp(by, "frame") == 0;
  if (fmt && strcmp(fmt, "text") && strcmp(fmt, "json")) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad 'format' '%.32s': expected text or json", fmt);
    return -1;
  }
  a->json = fmt && strcmp(fmt, "json") == 0;
  if (spaa_api_size_param(req, "budget", 256, SPAA_API_MAX_BUDGET, 4096, &a->budget, resp))
    return -1;
  if (spaa_api_size_param(req, "limit", 1, SPAA_API_MAX_TOP, 50, &a->limit, resp) ||
      spaa_api_size_param(req, "max_nodes", 1, SPAA_API_MAX_NODES, 2000, &a->max_nodes, resp))
    return -1;
  return 0;
}

/* ---- one profile ---------------------------------------------------------------------------- */

/* The stored profile named by {id}; answers 404 and returns NULL when there is none. */
static struct spaa_profile *load_profile(const struct spaa_req *req, struct spaa_resp *resp)
{
  const char *id = spaa_req_param(req, "id");
  struct spaa_profile *p = NULL;
  struct spaa_err err;
  spaa_err_clear(&err);
  if (!spaa_query_id_ok(id)) {
    spaa_resp_error(resp, SPAA_E_NOT_FOUND, "no profile with id '%.64s'", id ? id : "");
    return NULL;
  }
  if (spaa_store_get_metered(req->app->store, id, req->meter, &p, &err)) {
    spaa_resp_err(resp, &err);
    return NULL;
  }
  return p;
}

/* Write view `kind` of set v. */
static int write_view(enum spaa_api_view kind, const struct spaa_vset *v,
                      const struct view_args *a, const char *name, struct spaa_api_out *o,
                      const struct spaa_profile *p, struct spaa_err *err)
{
  /* one profile with timestamped samples: speedscope's evented form, a profile per thread */
  if (kind == SPAA_VIEW_SPEEDSCOPE && p && spaa_view_has_timeline(p, a->event))
    return spaa_view_speedscope_evented(v, p, a->event, name, o->sink, o->ctx, err);
  switch (kind) {
  case SPAA_VIEW_TOP: return spaa_view_top(v, a->limit, o->sink, o->ctx, err);
  case SPAA_VIEW_FLAMEGRAPH: return spaa_view_flamegraph(v, a->max_nodes, o->sink, o->ctx, err);
  case SPAA_VIEW_COLLAPSED: return spaa_view_collapsed(v, o->sink, o->ctx, err);
  case SPAA_VIEW_SPEEDSCOPE: return spaa_view_speedscope(v, name, o->sink, o->ctx, err);
  case SPAA_VIEW_SUMMARY:
    return spaa_view_summary(v, a->budget, a->json, name, o->sink, o->ctx, err);
  default: return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "unknown view");
  }
}

static const char *view_media(enum spaa_api_view kind)
{
  return kind == SPAA_VIEW_COLLAPSED ? "text/plain; charset=utf-8"
       : kind == SPAA_VIEW_SUMMARY ? "text/plain; charset=utf-8" : "application/json";
}

static const char *view_media_of(enum spaa_api_view kind, const struct view_args *a)
{
  return kind == SPAA_VIEW_SUMMARY && a->json ? "application/json" : view_media(kind);
}

/* Map a writer's usage complaint (no such event or metric) to a 400 naming the parameter. */
static int usage_to_bad_request(int rc, struct spaa_err *err)
{
  if (rc == SPAA_E_USAGE) {
    err->code = SPAA_E_BAD_REQUEST;
    return SPAA_E_BAD_REQUEST;
  }
  return rc;
}

void spaa_api_profile_view(const struct spaa_req *req, struct spaa_resp *resp,
                           enum spaa_api_view kind)
{
  const char *const *const lists[] = {view_params, view_own(kind), NULL};
  struct spaa_profile *p;
  struct view_args a;
  struct spaa_vset v;
  struct spaa_api_out o;
  struct spaa_err err;
  int rc;
  if (spaa_api_params_check(req, lists, NULL, resp) || view_args(req, &a, resp) ||
      !(p = load_profile(req, resp)))
    return;
  spaa_err_clear(&err);
  spaa_vset_init(&v);
  v.meter = req->meter;
  if (!(rc = spaa_vset_filters(&v, a.focus, a.ignore, &err)) &&
      !(rc = usage_to_bad_request(
            spaa_vset_from_profile(&v, p, a.event, a.metric, a.by_frame, &err), &err)) &&
      !(rc = spaa_api_out_open(req, &o, 1, &err))) {
    rc = write_view(kind, &v, &a, spaa_req_param(req, "id"), &o, p, &err);
    spaa_api_out_answer(resp, &o, rc, view_media_of(kind, &a), &err);
  } else {
    spaa_resp_err(resp, &err);
  }
  spaa_vset_free(&v);
  spaa_profile_free(p);
}

void spaa_api_profile_pprof(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const pprof_params[] = {"event", NULL};
  static const char *const *const lists[] = {pprof_params, NULL};
  const struct spaa_exporter *x = spaa_exporter("pprof");
  struct spaa_export_opts opts = {NULL, NULL};
  struct spaa_profile *p;
  struct spaa_api_out o;
  struct spaa_err err;
  int rc;
  if (spaa_api_params_check(req, lists, NULL, resp) || !(p = load_profile(req, resp)))
    return;
  spaa_err_clear(&err);
  opts.event = spaa_req_query(req, "event");
  if (!(rc = spaa_api_out_open(req, &o, 0, &err))) { /* pprof is gzipped already */
    rc = usage_to_bad_request(x->fn(p, &opts, o.sink, o.ctx, &err), &err);
    spaa_api_out_answer(resp, &o, rc, x->media_type, &err);
  } else {
    spaa_resp_err(resp, &err);
  }
  spaa_profile_free(p);
}

void spaa_api_pprof(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_profile_pprof(req, resp);
}
void spaa_api_collapsed(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_profile_view(req, resp, SPAA_VIEW_COLLAPSED);
}
void spaa_api_speedscope(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_profile_view(req, resp, SPAA_VIEW_SPEEDSCOPE);
}
void spaa_api_top(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_profile_view(req, resp, SPAA_VIEW_TOP);
}
void spaa_api_flamegraph(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_profile_view(req, resp, SPAA_VIEW_FLAMEGRAPH);
}
void spaa_api_summary(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_profile_view(req, resp, SPAA_VIEW_SUMMARY);
}

/* ---- merged over a selection ---------------------------------------------------------------- */

/* Stack weights summed by stack number during a scan. */
struct agg {
  const char *metric;       /* the metric summed (the request's, else the first one seen) */
  char metric_own[128];     /* storage for a metric taken from the scan */
  char unit[64];            /* the sums' unit: the first one seen, or the finest of its kind
                             * seen since (spaa_unit_size) */
  double unit_size;         /* spaa_unit_size of unit (0: of no known kind) */
  int unit_kind;
  char why[256];            /* SPAA_E_BAD_REQUEST: units that do not add up */
  struct spaa_idmap ix;     /* stack number -> index */
  int64_t *numbers;         /* distinct stack numbers, in order of first appearance */
  spaa_vnum *values;
  size_t n, cap;
  int64_t last_profile;
  size_t profiles;          /* profiles visited */
  char first[4][64];        /* ids of the first profiles visited (declared_in_selection) */
  struct spaa_meter *meter; /* the request's (the set's), or NULL */
  size_t metered;           /* bytes of the arrays and the map reported to it */
  struct spaa_vset *v;      /* the set made: the metrics met are offered to it */
};

/* Report the sums' arrays at cap entries and the map as it is now: 0, or SPAA_E_NOMEM when
 * the meter refuses (nothing more is allocated then). */
static int agg_meter(struct agg *g, size_t cap)
{
  size_t want = cap * (sizeof(*g->numbers) + sizeof(*g->values)) + spaa_idmap_bytes(&g->ix);
  return spaa_meter_hold(g->meter, &g->metered, want) ? SPAA_E_NOMEM : 0;
}

/* *x, a weight in `unit`, in the sums' unit: a unit of the same kind converted (every sum so
 * far rescaled when `unit` is the finer), the first unit seen taken as the sums'. 0, or
 * SPAA_E_BAD_REQUEST (g->why) for units that cannot be added: selections mix profiles whose
 * tools measure one metric name differently (a wall clock in microseconds and one in
 * nanoseconds add up once converted; "wall" in samples and in seconds do not). */
static int agg_unit(struct agg *g, const char *unit, spaa_vnum *x)
{
  double size;
  int kind;
  size_t i;
  if (!unit || !strcmp(unit, g->unit))
    return 0;
  size = spaa_unit_size(unit, &kind);
  if (!g->unit[0]) {
    snprintf(g->unit, sizeof(g->unit), "%s", unit);
    g->unit_size = size;
    g->unit_kind = kind;
    return 0;
  }
  if (!size || !g->unit_size || kind != g->unit_kind) {
    snprintf(g->why, sizeof(g->why), "metric '%.48s' is in '%.32s' in some profiles of the "
             "selection and in '%.32s' in others: narrow the selection", g->metric, g->unit,
             unit);
    return SPAA_E_BAD_REQUEST;
  }
  if (size < g->unit_size) { /* finer: the sums so far into it */
    for (i = 0; i < g->n; i++)
      g->values[i] *= g->unit_size / size;
    snprintf(g->unit, sizeof(g->unit), "%s", unit);
    g->unit_size = size;
    return 0;
  }
  *x *= size / g->unit_size;
  return 0;
}

static int agg_cb(void *ctx, const struct spaa_store_scan_stack *st)
{
  struct agg *g = ctx;
  size_t i, k;
  if (st->profile != g->last_profile) {
    g->last_profile = st->profile;
    if (g->profiles < sizeof(g->first) / sizeof(g->first[0]) && st->profile_id)
      snprintf(g->first[g->profiles], sizeof(g->first[0]), "%s", st->profile_id);
    g->profiles++;
  }
  for (i = 0; i < st->n_weights; i++)
    spaa_vset_offer(g->v, st->weights[i].metric);
  if (!g->metric && st->n_weights) {
    snprintf(g->metric_own, sizeof(g->metric_own), "%s", st->weights[0].metric);
    g->metric = g->metric_own;
  }
  for (i = 0; i < st->n_weights; i++) {
    spaa_vnum x;
    if (strcmp(st->weights[i].metric, g->metric) != 0)
      continue;
    x = spaa_vnum_of(st->weights[i].value);
    if (agg_unit(g, st->weights[i].unit, &x))
      return SPAA_E_BAD_REQUEST;
    if (!spaa_idmap_get(&g->ix, (uint64_t)st->stack, &k)) {
      if (g->n == SPAA_API_MAX_STACKS)
        return SPAA_E_TOO_LARGE;
      if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 1024;
        int64_t *a;
        if (agg_meter(g, cap))
          return SPAA_E_NOMEM;
        a = realloc(g->numbers, cap * sizeof(*a));
        spaa_vnum *b = a ? realloc(g->values, cap * sizeof(*b)) : NULL;
        if (a)
          g->numbers = a;
        if (!b)
          return SPAA_E_NOMEM;
        g->values = b;
        g->cap = cap;
      }
      k = g->n++;
      g->numbers[k] = st->stack;
      g->values[k] = 0;
      if (spaa_idmap_put(&g->ix, (uint64_t)st->stack, k, NULL) < 0 || agg_meter(g, g->cap))
        return SPAA_E_NOMEM;
    }
    g->values[k] += x;
    break;
  }
  return 0;
}

/* Turning resolved stacks into the view set. */
struct resolve {
  struct agg *g;
  struct spaa_vset *v;
  const char *event;        /* only stacks of this event, or NULL */
  int by_frame;
  const char **names;
  char *tmp;
  size_t cap;
};

static const char *stored_name(const struct spaa_store_frame_info *f, int by_frame, char *tmp,
                               size_t cap)
{
  if (!f->func[0] && f->has_addr)
    snprintf(tmp, cap, "0x%llx", (unsigned long long)f->addr);
  else if (by_frame && f->srcline)
    snprintf(tmp, cap, "%s (%s)", f->func[0] ? f->func : "[unknown]", f->srcline);
  else
    return f->func[0] ? f->func : "[unknown]";
  return tmp;
}

static int resolve_cb(void *ctx, const struct spaa_store_stack_info *st)
{
  struct resolve *r = ctx;
  size_t j, k;
  if (r->event && strcmp(st->event, r->event) != 0)
    return 0;
  if (!spaa_idmap_get(&r->g->ix, (uint64_t)st->number, &k))
    return 0;
  if (st->n_frames > r->cap) {
    free(r->names);
    free(r->tmp);
    r->cap = st->n_frames;
    r->names = malloc(r->cap * sizeof(*r->names));
    r->tmp = malloc(r->cap * 512);
    if (!r->names || !r->tmp)
      return SPAA_E_NOMEM;
  }
  for (j = 0; j < st->n_frames; j++) /* leaf first -> root first */
    r->names[j] = stored_name(&st->frames[st->n_frames - 1 - j], r->by_frame, r->tmp + j * 512,
                              512);
  {
    size_t before = r->v->n_stacks;
    int rc = spaa_vset_add(r->v, r->names, st->n_frames, r->g->values[k], st->id);
    if (!rc && r->v->n_stacks > before)
      r->v->stacks[before].tag = st->number;
    return rc;
  }
}

/* 1 when one of the first profiles of the selection declares g->metric for `event` though
 * none of its stacks carries it (a sample type whose values are all zero, spaa/view.h):
 * the merged views then answer an empty set of it, as the views of one profile do, rather
 * than a 400. Only the first few profiles are read (the scan found the metric on no stack,
 * so this costs a few profile loads at most); the declared unit goes to g->unit. */
static int declared_in_selection(struct spaa_store *store, struct agg *g, const char *event)
{
  size_t i, n = g->profiles < sizeof(g->first) / sizeof(g->first[0])
                    ? g->profiles : sizeof(g->first) / sizeof(g->first[0]);
  int found = 0;
  if (!n && g->first[0][0])
    n = 1; /* profiles without stacks: the newest, put there by spaa_api_merged_vset */
  for (i = 0; i < n && !found; i++) {
    struct spaa_profile *p = NULL;
    struct spaa_vset v;
    struct spaa_err err;
    spaa_err_clear(&err);
    if (!g->first[i][0] || spaa_store_get_metered(store, g->first[i], g->meter, &p, &err))
      continue;
    spaa_vset_init(&v);
    v.meter = g->meter;
    if (spaa_vset_from_profile(&v, p, event, g->metric, 0, &err) == 0) {
      found = 1;
      if (v.unit && !g->unit[0])
        snprintf(g->unit, sizeof(g->unit), "%s", v.unit);
    }
    spaa_vset_free(&v);
    spaa_profile_free(p);
  }
  return found;
}

/* The id of the newest profile q selects (its paging ignored; its metric a filter) into id
 * (cap bytes), "" when there is none. 0 or the store's errors. */
static int newest_selected_as(struct spaa_store *store, const struct spaa_list_query *q,
                              char *id, size_t cap, struct spaa_err *err)
{
  struct spaa_list_query one = *q;
  struct spaa_store_page pg;
  int rc;
  one.limit = 1;
  one.after = NULL;
  id[0] = '\0';
  rc = spaa_store_list(store, &one, &pg, err);
  if (!rc && pg.n > 0)
    snprintf(id, cap, "%s", pg.profiles[0].id);
  spaa_store_page_free(&pg);
  return rc;
}

/* As newest_selected_as, q's metric ignored: a view's metric is what it sums, not a filter. */
static int newest_selected(struct spaa_store *store, const struct spaa_list_query *q, char *id,
                           size_t cap, struct spaa_err *err)
{
  struct spaa_list_query one = *q;
  one.metric = NULL;
  return newest_selected_as(store, &one, id, cap, err);
}

int spaa_api_sel_any(struct spaa_store *store, const struct spaa_list_query *q, int *any,
                     struct spaa_err *err)
{
  char id[64];
  int rc = newest_selected(store, q, id, sizeof(id), err);
  *any = !rc && id[0];
  return rc;
}

/* Profiles selected, none with a stack (g saw none) and no metric named: the metric and
 * unit the newest one's views answer (its event's primary), so that the answer has the
 * shape of any other, not "metric":null. Best effort: a profile that cannot be read leaves
 * them unnamed. */
static void name_metric_of(struct spaa_store *store, struct agg *g, const char *id,
                           const char *event)
{
  struct spaa_profile *p = NULL;
  struct spaa_vset v;
  struct spaa_err err;
  spaa_err_clear(&err);
  if (spaa_store_get_metered(store, id, g->meter, &p, &err))
    return;
  spaa_vset_init(&v);
  v.meter = g->meter;
  if (spaa_vset_from_profile(&v, p, event, NULL, 0, &err) == 0 && v.metric) {
    snprintf(g->metric_own, sizeof(g->metric_own), "%s", v.metric);
    g->metric = g->metric_own;
    for (size_t i = 0; i < v.n_metrics; i++)
      spaa_vset_offer(g->v, v.metrics[i]);
    if (v.unit)
      snprintf(g->unit, sizeof(g->unit), "%s", v.unit);
  }
  spaa_vset_free(&v);
  spaa_profile_free(p);
}

/* The answer to a selection that matches no stored profile: a 404 naming its filters. When
 * event= names what is a metric of the selection's profiles (a pprof's sample types are
 * metrics of one event named after its primary type: a heap profile's inuse_space is a
 * metric of event alloc_space), the answer says so. */
static int no_profile(struct spaa_store *store, const struct spaa_list_query *q,
                      struct spaa_err *err)
{
  char what[200], id[64] = "";
  struct spaa_list_query m = *q;
  struct spaa_err e2;
  if (!spaa_api_sel_describe(q, what, sizeof(what)))
    return spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no stored profile matches the "
                        "selection (no filter given: the store is empty)");
  if (q->event) {
    m.event = NULL;
    m.metric = q->event;
    spaa_err_clear(&e2);
    if (newest_selected_as(store, &m, id, sizeof(id), &e2) == 0 && id[0])
      return spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no stored profile matches the "
                          "selection (%s): '%.64s' is a metric of the selected profiles, not "
                          "an event: ask metric=%.64s", what, q->event, q->event);
  }
  return spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "no stored profile matches the selection "
                      "(%s)", what);
}

int spaa_api_merged_vset(struct spaa_store *store, const struct spaa_list_query *q,
                         const char *metric, int by_frame, struct spaa_vset *v,
                         size_t *profiles, struct spaa_err *err)
{
  struct spaa_list_query sq = *q;
  struct agg g;
  struct resolve r;
  int rc;
  memset(&g, 0, sizeof(g));
  memset(&r, 0, sizeof(r));
  spaa_idmap_init(&g.ix);
  g.metric = metric;
  g.last_profile = -1;
  g.meter = v->meter;
  g.v = v;
  /* on a view, metric= names the metric summed, not a filter: a metric no selected profile
   * has is then a 400 below rather than an empty answer */
  sq.metric = NULL;
  rc = spaa_store_scan_metered(store, &sq, v->meter, agg_cb, &g, err);
  if (rc == SPAA_E_TOO_LARGE)
    spaa_err_set(err, rc, 0, 0, "the selection holds more than %d distinct stacks: narrow it",
                 SPAA_API_MAX_STACKS);
  else if (rc == SPAA_E_BAD_REQUEST && g.why[0])
    spaa_err_set(err, rc, 0, 0, "%s", g.why);
  else if (rc == SPAA_E_NOMEM && !err->code)
    spaa_err_set(err, rc, 0, 0, NULL);
  if (!rc) {
    r.g = &g;
    r.v = v;
    r.event = q->event;
    r.by_frame = by_frame;
    rc = spaa_store_stacks(store, g.numbers, g.n, resolve_cb, &r, err);
    if (rc && !err->code)
      spaa_err_set(err, rc, 0, 0, NULL);
  }
  /* no stack seen: a selection of no profile is a 404 (an answer of zeros would read as
   * "everything went away"); profiles without stacks give an empty set of their metric */
  if (!rc && !g.profiles) {
    char id[64];
    if (!(rc = newest_selected(store, &sq, id, sizeof(id), err)) && !id[0])
      rc = no_profile(store, &sq, err);
    else if (!rc && !g.metric)
      name_metric_of(store, &g, id, q->event);
    else if (!rc) /* metric= names one: it must be declared, as below */
      snprintf(g.first[0], sizeof(g.first[0]), "%s", id);
  }
  if (!rc && metric && (g.profiles || g.first[0][0]) && !g.n &&
      !declared_in_selection(store, &g, q->event))
    rc = spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad 'metric' '%.64s': no stack of the "
                      "selection has it", metric);
  if (profiles)
    *profiles = g.profiles;
  if (g.metric) { /* the set keeps a pointer: copy the name where it outlives g */
    snprintf(v->metric_buf, sizeof(v->metric_buf), "%s", g.metric);
    v->metric = v->metric_buf;
  }
  if (g.unit[0]) {
    snprintf(v->unit_buf, sizeof(v->unit_buf), "%s", g.unit);
    v->unit = v->unit_buf;
  }
  free(r.names);
  free(r.tmp);
  free(g.numbers);
  free(g.values);
  spaa_idmap_free(&g.ix);
  spaa_meter_give(g.meter, &g.metered, g.metered);
  return rc;
}

void spaa_api_merged_view(const struct spaa_req *req, struct spaa_resp *resp,
                          enum spaa_api_view kind)
{
  const char *const *const lists[] = {view_params, view_own(kind), spaa_api_filter_params, NULL};
  struct spaa_api_sel sel;
  struct view_args a;
  struct spaa_vset v;
  struct spaa_api_out o;
  struct spaa_err err;
  int rc;
  if (spaa_api_params_check(req, lists, NULL, resp) || view_args(req, &a, resp))
    return;
  if (spaa_api_sel_parse(req, "", req->received_ns, &sel, resp)) {
    spaa_api_sel_free(&sel);
    return;
  }
  if (a.event && !sel.q.event)
    sel.q.event = a.event;
  spaa_err_clear(&err);
  spaa_vset_init(&v);
  v.meter = req->meter;
  if (!(rc = spaa_vset_filters(&v, a.focus, a.ignore, &err)) &&
      !(rc = spaa_api_merged_vset(req->app->store, &sel.q, a.metric, a.by_frame, &v, NULL,
                                  &err)) &&
      !(rc = spaa_api_out_open(req, &o, 1, &err))) {
    rc = write_view(kind, &v, &a, sel.q.service ? sel.q.service : "merged", &o, NULL, &err);
    spaa_api_out_answer(resp, &o, rc, view_media_of(kind, &a), &err);
  } else {
    spaa_resp_err(resp, &err);
  }
  spaa_vset_free(&v);
  spaa_api_sel_free(&sel);
}

void spaa_api_merged_top(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_merged_view(req, resp, SPAA_VIEW_TOP);
}
void spaa_api_merged_flamegraph(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_merged_view(req, resp, SPAA_VIEW_FLAMEGRAPH);
}
void spaa_api_merged_collapsed(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_merged_view(req, resp, SPAA_VIEW_COLLAPSED);
}
void spaa_api_merged_summary(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_merged_view(req, resp, SPAA_VIEW_SUMMARY);
}
