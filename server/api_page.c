/* Endpoints for the web page (see api_page.h): a timeline of profile counts read from the
 * list's pages, merged speedscope, and the access check. */
#include "server/api_page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api_select.h"
#include "server/api_views.h"
#include "storage/storage.h"

void spaa_api_timeline_count(const int64_t *times, size_t n, int64_t from, int64_t to,
                             size_t buckets, int64_t *width, int64_t *counts)
{
  /* the span counted in unsigned arithmetic: to - from may not fit an int64_t */
  uint64_t span = (uint64_t)to - (uint64_t)from + 1, w = span / buckets;
  size_t i;
  if (w * buckets < span)
    w++;
  if (w == 0)
    w = 1;
  *width = (int64_t)w;
  memset(counts, 0, buckets * sizeof(*counts));
  for (i = 0; i < n; i++) { /* a profile that began before `from` overlaps it: first bucket */
    int64_t x = times[i] < from ? from : times[i] > to ? to : times[i];
    uint64_t k = ((uint64_t)x - (uint64_t)from) / w;
    counts[k < buckets ? k : buckets - 1]++;
  }
}

/* Times of the selection's profiles: every page of the list, in turn. */
struct times {
  int64_t *v;
  size_t n, cap;
};

/* The time a profile is counted at: its start on profile time (time=profile; received when
 * it has none), else when it was received (the list filters' default). */
static int times_add(struct times *t, const struct spaa_store_page *pg, int profile_time,
                     struct spaa_err *err)
{
  size_t i;
  if (t->n + pg->n > SPAA_API_TIMELINE_MAX_PROFILES)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the selection holds more than %d "
                        "profiles: narrow it", SPAA_API_TIMELINE_MAX_PROFILES);
  if (t->n + pg->n > t->cap) {
    size_t cap = t->cap ? t->cap : 1024;
    int64_t *v;
    while (cap < t->n + pg->n)
      cap *= 2;
    if (!(v = realloc(t->v, cap * sizeof(*v))))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    t->v = v;
    t->cap = cap;
  }
  for (i = 0; i < pg->n; i++)
    t->v[t->n++] = profile_time && pg->profiles[i].start_ns ? pg->profiles[i].start_ns
                                                            : pg->profiles[i].received_ns;
  return 0;
}

static int collect_times(struct spaa_store *store, struct spaa_list_query q, int profile_time,
                         struct times *t, struct spaa_err *err)
{
  struct spaa_store_page pg;
  struct spaa_store_cursor after;
  char last[SPAA_QUERY_MAX_CURSOR / 2 + 1];
  int rc;
  q.limit = SPAA_QUERY_MAX_PAGE;
  q.after = NULL;
  for (;;) {
    memset(&pg, 0, sizeof(pg));
    if ((rc = spaa_store_list(store, &q, &pg, err)) ||
        (rc = times_add(t, &pg, profile_time, err)) ||
        !pg.has_next) {
      spaa_store_page_free(&pg);
      return rc;
    }
    /* the cursor borrows the page's last id: keep a copy past the page's release */
    snprintf(last, sizeof(last), "%s", pg.next.id);
    after.received_ns = pg.next.received_ns;
    after.id = last;
    q.after = &after;
    spaa_store_page_free(&pg);
  }
}

static json_t *timeline_json(const struct times *t, const struct spaa_list_query *q,
                             int profile_time, size_t buckets, int64_t *counts)
{
  int64_t from = profile_time ? q->from_ns : q->received_from_ns;
  int64_t to = profile_time ? q->to_ns : q->received_to_ns, width = 1;
  json_t *o = json_object(), *arr = json_array();
  size_t i;
  if (!from || !to) { /* an open end: the selection's own earliest and latest */
    int64_t lo = 0, hi = 0;
    for (i = 0; i < t->n; i++) {
      if (!i || t->v[i] < lo)
        lo = t->v[i];
      if (!i || t->v[i] > hi)
        hi = t->v[i];
    }
    from = from ? from : lo;
    to = to ? to : (hi > from ? hi : from);
  }
  spaa_api_timeline_count(t->v, t->n, from, to, buckets, &width, counts);
  for (i = 0; arr && i < buckets; i++)
    json_array_append_new(arr, json_integer(counts[i]));
  json_object_set_new(o, "from", json_integer(from));
  json_object_set_new(o, "to", json_integer(to));
  json_object_set_new(o, "bucket_ns", json_integer(width));
  json_object_set_new(o, "buckets", json_integer((json_int_t)buckets));
  json_object_set_new(o, "counts", arr);
  json_object_set_new(o, "profiles", json_integer((json_int_t)t->n));
  return o;
}

void spaa_api_timeline(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const own[] = {"buckets", NULL};
  static const char *const *const lists[] = {spaa_api_filter_params, own, NULL};
  struct spaa_api_sel sel;
  struct times t = {NULL, 0, 0};
  struct spaa_err err;
  int64_t *counts = NULL;
  size_t buckets;
  if (spaa_api_params_check(req, lists, NULL, resp) ||
      spaa_api_size_param(req, "buckets", 1, SPAA_API_TIMELINE_MAX_BUCKETS, 60, &buckets, resp))
    return;
  if (spaa_api_sel_parse(req, "", req->received_ns, &sel, resp))
    goto out;
  spaa_err_clear(&err);
  if (collect_times(req->app->store, sel.q, sel.profile_time, &t, &err)) {
    spaa_resp_err(resp, &err);
    goto out;
  }
  if (!(counts = malloc(buckets * sizeof(*counts)))) {
    spaa_resp_error(resp, SPAA_E_NOMEM, "out of memory");
    goto out;
  }
  spaa_resp_json(resp, 200, timeline_json(&t, &sel.q, sel.profile_time, buckets, counts));
out:
  free(counts);
  free(t.v);
  spaa_api_sel_free(&sel);
}

void spaa_api_merged_speedscope(const struct spaa_req *req, struct spaa_resp *resp)
{
  spaa_api_merged_view(req, resp, SPAA_VIEW_SPEEDSCOPE);
}

void spaa_api_access(const struct spaa_req *req, struct spaa_resp *resp)
{
  const struct spaa_config *cfg = req->app->cfg;
  json_t *o = json_object();
  json_object_set_new(o, "read_token_required", json_boolean(cfg->n_read_tokens > 0));
  json_object_set_new(o, "authorized", json_boolean(spaa_http_token_ok(
                                           req, cfg->read_tokens, cfg->n_read_tokens, 0)));
  spaa_resp_json(resp, 200, o);
}
