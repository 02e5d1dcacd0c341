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

/* One side of a diff into v: profile `side`=ID, else the `side.` filters. */
static int diff_side(const struct spaa_req *req, const char *side, const char *metric,
                     int by_frame, struct spaa_vset *v, struct spaa_resp *resp)
{
  char prefix[16];
  const char *id = spaa_req_query(req, side);
  struct spaa_api_sel sel;
  struct spaa_profile *p = NULL;
  struct spaa_err err;
  int rc;
  spaa_err_clear(&err);
  snprintf(prefix, sizeof(prefix), "%s.", side);
  if (id) {
    if (!spaa_query_id_ok(id)) {
      spaa_resp_error(resp, SPAA_E_NOT_FOUND, "no profile with id '%.64s' (parameter '%s')", id,
                      side);
      return -1;
    }
    if ((rc = spaa_store_get_metered(req->app->store, id, req->meter, &p, &err)) ||
        (rc = spaa_vset_from_profile(v, p, NULL, metric, by_frame, &err))) {
      if (rc == SPAA_E_USAGE)
        err.code = SPAA_E_BAD_REQUEST;
      spaa_resp_err(resp, &err);
    }
    spaa_profile_free(p);
    return rc ? -1 : 0;
  }
  if (spaa_api_sel_parse(req, prefix, req->received_ns, &sel, resp)) {
    spaa_api_sel_free(&sel);
    return -1;
  }
  if (!sel.any) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "missing '%s': give %s=ID or %s.<filter>=... "
                    "(service, source, event, from, to, label)", side, side, side);
    spaa_api_sel_free(&sel);
    return -1;
  }
  rc = spaa_api_merged_vset(req->app->store, &sel.q, metric, by_frame, v, NULL, &err);
  if (rc)
    spaa_resp_err(resp, &err);
  spaa_api_sel_free(&sel);
  return rc ? -1 : 0;
}

void spaa_api_diff(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const diff_params[] = {"base", "target", "metric", "format", "limit",
                                            "budget", "by", "focus", "ignore", NULL};
  static const char *const *const lists[] = {diff_params, spaa_api_filter_params, NULL};
  static const char *const prefixes[] = {"base.", "target.", NULL};
  const char *fmt = spaa_req_query(req, "format"), *by = spaa_req_query(req, "by");
  struct spaa_vset base, target;
  struct spaa_api_out o;
  struct spaa_err err;
  size_t limit, budget;
  int format, rc, by_frame = by && strcmp(by, "frame") == 0;
  if (spaa_api_params_check(req, lists, prefixes, resp) ||
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
  spaa_err_clear(&err);
  spaa_vset_init(&base);
  spaa_vset_init(&target);
  base.meter = target.meter = req->meter;
  if ((rc = spaa_vset_filters(&base, spaa_req_query(req, "focus"), spaa_req_query(req, "ignore"),
                              &err)) ||
      (rc = spaa_vset_filters(&target, spaa_req_query(req, "focus"),
                              spaa_req_query(req, "ignore"), &err))) {
    spaa_resp_err(resp, &err);
  } else if (!diff_side(req, "base", spaa_req_query(req, "metric"), by_frame, &base, resp) &&
             !diff_side(req, "target", spaa_req_query(req, "metric") ? spaa_req_query(req, "metric")
                                                                     : base.metric,
                        by_frame, &target, resp)) {
    if (!(rc = spaa_api_out_open(req, &o, 1, &err))) {
      rc = spaa_view_diff(&base, &target, format, limit, budget, o.sink, o.ctx, &err);
      spaa_api_out_answer(resp, &o, rc, format == SPAA_DIFF_JSON ? "application/json"
                                                                 : "text/plain; charset=utf-8",
                          &err);
    } else {
      spaa_resp_err(resp, &err);
    }
  }
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
