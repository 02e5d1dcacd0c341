/* The diff of two selections or profiles (GET /api/v1/diff) and discovery: services, label
 * keys and values with counts, one stack with its frames and how many profiles hold it. */
#include "server/api_discover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rfc3339.h"
#include "server/api.h"
#include "server/api_json.h"
#include "server/api_select.h"
#include "server/api_views.h"
#include "spaa/view.h"

/* ---- diff ----------------------------------------------------------------------------------- */

/* Where the metric a side is weighed by comes from. */
enum diff_metric_origin {
  DIFF_METRIC_GIVEN,     /* metric= */
  DIFF_METRIC_DEFAULT,   /* the base's own default (its first metric) */
  DIFF_METRIC_FROM_BASE, /* the target takes the base's default */
};

/* One side of a diff: profile `side`=ID, else the `side.` filters, parsed and checked
 * before anything is read. */
struct diff_side {
  const char *name;       /* "base" or "target" */
  const char *id;         /* side=ID, or NULL for a selection */
  struct spaa_api_sel sel;
  int sel_parsed;
};

/* Read and check a side's parameters: 0, or answered 400/404 and -1. */
static int diff_side_parse(const struct spaa_req *req, struct diff_side *d,
                           struct spaa_resp *resp)
{
  char prefix[16], under[80];
  snprintf(prefix, sizeof(prefix), "%s.", d->name);
  d->id = spaa_req_query(req, d->name);
  if (d->id) {
    if (spaa_api_param_under(req, prefix, under, sizeof(under))) {
      spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "conflicting '%s' and '%.64s': give %s=ID or "
                      "a %s<filter>= selection, not both", d->name, under, d->name, prefix);
      return -1;
    }
    if (!spaa_query_id_ok(d->id)) {
      spaa_resp_error(resp, SPAA_E_NOT_FOUND, "no profile with id '%.64s' (parameter '%s')",
                      d->id, d->name);
      return -1;
    }
    return 0;
  }
  d->sel_parsed = 1;
  if (spaa_api_sel_parse(req, prefix, req->received_ns, &d->sel, resp))
    return -1;
  if (!d->sel.any) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "missing '%s': give %s=ID or %s.<filter>=... "
                    "(service, source, event, from, to, label)", d->name, d->name, d->name);
    return -1;
  }
  return 0;
}

/* 0 when every selection side matches a stored profile; else answered and -1: a 404 that
 * names the side (both, when both are empty) and its filters, since a diff against nothing
 * would read as every function gone or new; or the store's error. */
static int diff_sides_match(const struct spaa_req *req, const struct diff_side *sides,
                            struct spaa_resp *resp)
{
  char what[2][180]; /* both fit the answer's 512-byte detail */
  int empty[2] = {0, 0};
  size_t i;
  for (i = 0; i < 2; i++) {
    struct spaa_err err;
    int any = 1;
    if (sides[i].id)
      continue; /* a profile: read below, a 404 of its own when it is missing */
    spaa_err_clear(&err);
    if (spaa_api_sel_any(req->app->store, &sides[i].sel.q, &any, &err)) {
      spaa_resp_err(resp, &err);
      return -1;
    }
    if (!any) {
      empty[i] = 1;
      spaa_api_sel_describe(&sides[i].sel.q, what[i], sizeof(what[i]));
    }
  }
  if (empty[0] && empty[1])
    spaa_resp_error(resp, SPAA_E_NOT_FOUND, "neither side matches a stored profile: the base "
                    "selection (%s) and the target selection (%s) match none", what[0], what[1]);
  else if (empty[0] || empty[1])
    spaa_resp_error(resp, SPAA_E_NOT_FOUND, "the %s selection matches no stored profile (%s)",
                    sides[empty[0] ? 0 : 1].name, what[empty[0] ? 0 : 1]);
  return empty[0] || empty[1] ? -1 : 0;
}

/* A side without the metric asked of it: say which side, which metric and where it came
 * from. */
static void diff_metric_missing(struct spaa_err *err, const struct diff_side *d,
                                const char *metric, enum diff_metric_origin origin)
{
  char what[96];
  if (d->id)
    snprintf(what, sizeof(what), "no stack of profile '%.40s' has it", d->id);
  else
    snprintf(what, sizeof(what), "no stack of the %s selection has it", d->name);
  spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "%s lacks metric '%.64s' (%s): %s", d->name,
               metric,
               origin == DIFF_METRIC_GIVEN ? "named by 'metric'"
               : origin == DIFF_METRIC_FROM_BASE
                   ? "the base's metric, chosen by default as no 'metric' was given; "
                     "metric= names one both sides have"
                   : "chosen by default",
               what);
}

/* Weigh one side into v by metric (NULL: its default). 0, or answered and -1. */
static int diff_side_load(const struct spaa_req *req, const struct diff_side *d,
                          const char *metric, enum diff_metric_origin origin, int by_frame,
                          struct spaa_vset *v, struct spaa_resp *resp)
{
  struct spaa_profile *p = NULL;
  struct spaa_err err;
  size_t profiles = 0;
  int rc;
  spaa_err_clear(&err);
  if (d->id) {
    if (!(rc = spaa_store_get_metered(req->app->store, d->id, req->meter, &p, &err)))
      rc = spaa_vset_from_profile(v, p, NULL, metric, by_frame, &err);
    spaa_profile_free(p);
    if (rc == SPAA_E_USAGE && metric && strncmp(err.msg, "no stack of event", 17) == 0)
      diff_metric_missing(&err, d, metric, origin);
    else if (rc == SPAA_E_USAGE)
      err.code = SPAA_E_BAD_REQUEST;
  } else {
    rc = spaa_api_merged_vset(req->app->store, &d->sel.q, metric, by_frame, v, &profiles,
                              &err);
    /* the merged scan's "bad 'metric'": the selection has profiles, none with the metric */
    if (rc == SPAA_E_BAD_REQUEST && metric && profiles &&
        strncmp(err.msg, "bad 'metric'", 12) == 0)
      diff_metric_missing(&err, d, metric, origin);
  }
  if (rc)
    spaa_resp_err(resp, &err);
  return rc ? -1 : 0;
}

void spaa_api_diff(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const diff_params[] = {"base", "target", "metric", "format", "limit",
                                            "budget", "by", "focus", "ignore", "sort", NULL};
  static const char *const *const plain[] = {diff_params, NULL};
  static const char *const *const prefixed[] = {spaa_api_filter_params, NULL};
  static const char *const prefixes[] = {"base.", "target.", NULL};
  const char *fmt = spaa_req_query(req, "format"), *by = spaa_req_query(req, "by");
  const char *metric = spaa_req_query(req, "metric"), *sort = spaa_req_query(req, "sort");
  struct diff_side sides[2];
  struct spaa_vset base, target;
  struct spaa_api_out o;
  struct spaa_err err;
  size_t limit, budget, i;
  int format, rc, by_frame = by && strcmp(by, "frame") == 0;
  memset(sides, 0, sizeof(sides));
  sides[0].name = "base";
  sides[1].name = "target";
  /* a filter without a side would be ignored: say where it goes */
  for (i = 0; spaa_api_filter_params[i]; i++) {
    const char *f = spaa_api_filter_params[i];
    if (strcmp(f, "metric") != 0 && spaa_req_query(req, f)) {
      spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "parameter '%s' has no side: a diff selects "
                      "each side on its own, use base.%s= and/or target.%s=", f, f, f);
      return;
    }
  }
  for (i = 0; i < 2; i++) {
    char k[32];
    snprintf(k, sizeof(k), "%s.metric", sides[i].name);
    if (spaa_req_query(req, k)) {
      spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad '%s': both sides of a diff are weighed "
                      "by one metric, use metric=", k);
      return;
    }
  }
  if (spaa_api_params_check_prefixed(req, plain, prefixed, prefixes, resp) ||
      spaa_api_size_param(req, "limit", 1, SPAA_API_MAX_TOP, 50, &limit, resp) ||
      spaa_api_size_param(req, "budget", 256, SPAA_API_MAX_BUDGET, 4096, &budget, resp))
    return;
  format = !fmt || !strcmp(fmt, "json") ? SPAA_DIFF_JSON
         : !strcmp(fmt, "collapsed") ? SPAA_DIFF_COLLAPSED
         : !strcmp(fmt, "summary") ? SPAA_DIFF_SUMMARY : -1;
  if (format < 0 || (by && strcmp(by, "function") && strcmp(by, "frame"))) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, format < 0 ? "bad 'format' '%.32s': expected "
                    "json, collapsed or summary" : "bad 'by' '%.32s': expected function or frame",
                    format < 0 ? fmt : by);
    return;
  }
  if (sort && strcmp(sort, "delta") && strcmp(sort, "share")) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad 'sort' '%.32s': expected delta or share",
                    sort);
    return;
  }
  if (sort && !strcmp(sort, "share"))
    format |= SPAA_DIFF_BY_SHARE;
  spaa_err_clear(&err);
  spaa_vset_init(&base);
  spaa_vset_init(&target);
  base.meter = target.meter = req->meter;
  /* every parameter of both sides is checked before either is read */
  if (diff_side_parse(req, &sides[0], resp) || diff_side_parse(req, &sides[1], resp))
    rc = -1; /* answered */
  else if ((rc = spaa_vset_filters(&base, spaa_req_query(req, "focus"),
                                     spaa_req_query(req, "ignore"), &err)) ||
             (rc = spaa_vset_filters(&target, spaa_req_query(req, "focus"),
                                     spaa_req_query(req, "ignore"), &err))) {
    spaa_resp_err(resp, &err);
  } else if (diff_sides_match(req, sides, resp)) {
    rc = -1; /* answered: a side selects no profile */
  } else if (!diff_side_load(req, &sides[0], metric,
                             metric ? DIFF_METRIC_GIVEN : DIFF_METRIC_DEFAULT, by_frame, &base,
                             resp) &&
             !diff_side_load(req, &sides[1], metric ? metric : base.metric,
                             metric ? DIFF_METRIC_GIVEN : DIFF_METRIC_FROM_BASE, by_frame,
                             &target, resp)) {
    if (!(rc = spaa_api_out_open(req, &o, 1, &err))) {
      rc = spaa_view_diff(&base, &target, format, limit, budget, o.sink, o.ctx, &err);
      spaa_api_out_answer(resp, &o, rc, !(format & ~SPAA_DIFF_BY_SHARE) ? "application/json"
                                                                 : "text/plain; charset=utf-8",
                          &err);
    } else {
      spaa_resp_err(resp, &err);
    }
  }
  for (i = 0; i < 2; i++)
    if (sides[i].sel_parsed)
      spaa_api_sel_free(&sides[i].sel);
  spaa_vset_free(&base);
  spaa_vset_free(&target);
}

/* ---- discovery ---------------------------------------------------------------------------- */

static int no_params(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const none[] = {NULL};
  static const char *const *const lists[] = {none, NULL};
  return spaa_api_params_check(req, lists, NULL, resp);
}

/* Answer the rows as {"<key>":[{"name":..,"profiles":N,...}]}. */
static void names_answer(struct spaa_resp *resp, const char *key, const char *name_key,
                         struct spaa_store_name_count *v, size_t n)
{
  json_t *arr = json_array(), *out = json_object();
  size_t i;
  for (i = 0; arr && i < n; i++) {
    json_t *o = json_object();
    char t[SPAA_RFC3339_SIZE];
    json_object_set_new(o, name_key, json_string(v[i].name));
    json_object_set_new(o, "profiles", json_integer(v[i].count));
    if (v[i].sources) {
      json_t *src = json_array();
      char *save = NULL, *s = v[i].sources, *tok;
      for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        json_array_append_new(src, json_string(tok));
      json_object_set_new(o, "sources", src);
      spaa_rfc3339_format_ns(t, v[i].first_ns, 9);
      json_object_set_new(o, "first_received_at", json_string(t));
      spaa_rfc3339_format_ns(t, v[i].last_ns, 9);
      json_object_set_new(o, "last_received_at", json_string(t));
    }
    if (v[i].events_json) {
      json_t *ev = json_loads(v[i].events_json, 0, NULL);
      json_object_set_new(o, "events", ev ? ev : json_object());
    }
    json_array_append_new(arr, o);
  }
  json_object_set_new(out, key, arr);
  spaa_resp_json(resp, 200, out);
}

typedef int (*names_fn)(struct spaa_store *s, struct spaa_store_name_count **out, size_t *n,
                        struct spaa_err *err);

/* A discovery list with no parameters: the store's names answered under `key`. */
static void names_route(const struct spaa_req *req, struct spaa_resp *resp, names_fn fn,
                        const char *key)
{
  struct spaa_store_name_count *v = NULL;
  struct spaa_err err;
  size_t n = 0;
  spaa_err_clear(&err);
  if (no_params(req, resp))
    return;
  if (fn(req->app->store, &v, &n, &err))
    spaa_resp_err(resp, &err);
  else
    names_answer(resp, key, "name", v, n);
  spaa_store_names_free(v, n);
}

void spaa_api_services(const struct spaa_req *req, struct spaa_resp *resp)
{
  names_route(req, resp, spaa_store_services, "services");
}

void spaa_api_labels(const struct spaa_req *req, struct spaa_resp *resp)
{
  names_route(req, resp, spaa_store_label_keys, "labels");
}

void spaa_api_label_values(const struct spaa_req *req, struct spaa_resp *resp)
{
  const char *name = spaa_req_param(req, "name");
  struct spaa_store_name_count *v = NULL;
  struct spaa_err err;
  size_t n = 0;
  spaa_err_clear(&err);
  if (no_params(req, resp))
    return;
  if (spaa_store_label_values(req->app->store, name, &v, &n, &err))
    spaa_resp_err(resp, &err);
  else if (!n)
    spaa_resp_error(resp, SPAA_E_NOT_FOUND, "no profile has label '%.64s'", name ? name : "");
  else
    names_answer(resp, "values", "value", v, n);
  spaa_store_names_free(v, n);
}

/* The stack as JSON (the callback of spaa_store_stack_by_id). */
static int stack_json_cb(void *ctx, const struct spaa_store_stack_info *st)
{
  json_t **out = ctx, *frames = json_array();
  size_t i;
  *out = json_object();
  json_object_set_new(*out, "id", json_string(st->id));
  json_object_set_new(*out, "number", json_integer(st->number));
  json_object_set_new(*out, "event", json_string(st->event));
  json_object_set_new(*out, "stack_type", json_string(st->stack_type));
  for (i = 0; i < st->n_frames; i++) {
    const struct spaa_store_frame_info *f = &st->frames[i];
    json_t *o = json_object();
    char addr[32];
    json_object_set_new(o, "function", json_string(f->func));
    json_object_set_new(o, "dso", f->dso ? json_string(f->dso) : json_null());
    json_object_set_new(o, "srcline", f->srcline ? json_string(f->srcline) : json_null());
    json_object_set_new(o, "inline_depth", json_integer(f->inline_depth));
    json_object_set_new(o, "kind", json_string(f->kind));
    if (f->has_addr) {
      snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)f->addr);
      json_object_set_new(o, "address", json_string(addr));
    }
    json_array_append_new(frames, o);
  }
  json_object_set_new(*out, "frames", frames); /* leaf first */
  return 0;
}

struct holders {
  int64_t stack, last;
  int64_t profiles;
};

static int holders_cb(void *ctx, const struct spaa_store_scan_stack *st)
{
  struct holders *h = ctx;
  if (st->stack == h->stack && st->profile != h->last) {
    h->last = st->profile;
    h->profiles++;
  }
  return 0;
}

void spaa_api_stack(const struct spaa_req *req, struct spaa_resp *resp)
{
  struct spaa_list_query all;
  struct holders h = {0, -1, 0};
  struct spaa_err err;
  json_t *out = NULL;
  spaa_err_clear(&err);
  memset(&all, 0, sizeof(all));
  if (no_params(req, resp))
    return;
  if (spaa_store_stack_by_id(req->app->store, spaa_req_param(req, "stack_id"), stack_json_cb,
                             &out, &err)) {
    json_decref(out);
    spaa_resp_err(resp, &err);
    return;
  }
  h.stack = json_integer_value(json_object_get(out, "number"));
  if (spaa_store_scan_metered(req->app->store, &all, req->meter, holders_cb, &h, &err)) {
    json_decref(out);
    spaa_resp_err(resp, &err);
    return;
  }
  json_object_set_new(out, "profiles", json_integer(h.profiles));
  spaa_resp_json(resp, 200, out);
}
