/* Query endpoints over the store (see query.h). */
#include "server/api.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/compress.h"
#include "base/limits.h"
#include "base/rfc3339.h"
#include "codecs/registry.h"
#include "server/api_json.h"
#include "server/api_select.h"
#include "server/api_views.h"
#include "server/routes.h"
#include "storage/storage.h"

/* ".123456789" -> ns; advances. */
static int64_t fraction_ns(const char **p)
{
  int64_t ns = 0, scale = 100000000;
  if (**p != '.')
    return 0;
  (*p)++;
  while (isdigit((unsigned char)**p)) {
    ns += (**p - '0') * scale;
    scale /= 10;
    (*p)++;
  }
  return ns;
}

int spaa_query_parse_time(const char *s, int64_t *ns)
{
  const char *p = s;
  int64_t t, frac;
  if (!s || !*s)
    return -1;
  if (strspn(s, "0123456789.") == strlen(s)) { /* unix seconds */
    int64_t v = 0;
    if (!isdigit((unsigned char)*p) || strspn(s, "0123456789") > 11)
      return -1;
    while (isdigit((unsigned char)*p))
      v = v * 10 + (*p++ - '0');
    if (*p == '.' && !isdigit((unsigned char)p[1]))
      return -1;
    frac = fraction_ns(&p);
    /* past 2262-04-11T23:47:16.854775807Z there is no int64 nanosecond */
    if (*p || v > (INT64_MAX - frac) / 1000000000LL)
      return -1;
    *ns = v * 1000000000LL + frac;
    return 0;
  }
  /* RFC 3339; before 1970 is not a time any stored profile has */
  if (spaa_rfc3339_parse(s, strlen(s), &t) || t < 0)
    return -1;
  *ns = t;
  return 0;
}

int spaa_query_id_ok(const char *id)
{
  size_t n = id ? strlen(id) : 0, i;
  if (n == 0 || n > SPAA_QUERY_MAX_ID)
    return 0;
  for (i = 0; i < n; i++)
    if (!isalnum((unsigned char)id[i]) && id[i] != '-' && id[i] != '_')
      return 0;
  return 1;
}

struct label_ctx {
  json_t *obj;          /* collected labels */
  int bad;              /* an item was malformed */
  char what[96];        /* the first bad item */
  char twice[256];      /* a key given two values, or "" */
};

static void label_item(struct label_ctx *lc, const char *s, size_t n)
{
  const char *colon = memchr(s, ':', n);
  char key[SPAA_QUERY_MAX_LABEL_ITEM];
  char *val;
  if (lc->bad)
    return;
  if (!colon || colon == s || n >= sizeof(key) ||
      json_object_size(lc->obj) >= SPAA_QUERY_MAX_LABELS) {
    lc->bad = 1;
    snprintf(lc->what, sizeof(lc->what), "%.*s", (int)(n > 80 ? 80 : n), s);
    return;
  }
  memcpy(key, s, (size_t)(colon - s));
  key[colon - s] = 0;
  val = strndup(colon + 1, n - (size_t)(colon - s) - 1);
  if (val && json_object_get(lc->obj, key) &&
      strcmp(json_string_value(json_object_get(lc->obj, key)), val) != 0) {
    /* a profile has one value per key: both would match nothing, the last alone half of it */
    lc->bad = 1;
    snprintf(lc->twice, sizeof(lc->twice), "label '%.40s' given two values ('%.40s' and "
             "'%.40s'): a profile has one value per key", key,
             json_string_value(json_object_get(lc->obj, key)), val);
    free(val);
    return;
  }
  if (!val || json_object_set_new(lc->obj, key, json_string(val))) {
    lc->bad = 1;
    snprintf(lc->what, sizeof(lc->what), "%.*s", (int)(n > 80 ? 80 : n), s);
  }
  free(val);
}

static void on_label(void *ctx, const char *v) { label_item(ctx, v, strlen(v)); }

static void on_labels(void *ctx, const char *v)
{
  const char *p = v;
  for (;;) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    if (n)
      label_item(ctx, p, n);
    if (!e)
      break;
    p = e + 1;
  }
}

int spaa_query_labels(const struct spaa_req *req, json_t **out, struct spaa_err *err)
{
  return spaa_query_labels_prefixed(req, "", out, err);
}

int spaa_query_labels_prefixed(const struct spaa_req *req, const char *prefix, json_t **out,
                               struct spaa_err *err)
{
  struct label_ctx lc;
  char k[64];
  memset(&lc, 0, sizeof(lc));
  *out = NULL;
  if (!(lc.obj = json_object()))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  snprintf(k, sizeof(k), "%slabel", prefix);
  spaa_req_query_each(req, k, on_label, &lc);
  snprintf(k, sizeof(k), "%slabels", prefix);
  spaa_req_query_each(req, k, on_labels, &lc);
  if (lc.bad && lc.twice[0]) {
    json_decref(lc.obj);
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad '%slabel': %s", prefix, lc.twice);
  }
  if (lc.bad) {
    json_decref(lc.obj);
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                        "bad '%slabel' '%s': expected key:value (at most %d labels, keys under "
                        "%d bytes, UTF-8)",
                        prefix, lc.what, SPAA_QUERY_MAX_LABELS, SPAA_QUERY_MAX_LABEL_ITEM);
  }
  if (json_object_size(lc.obj) == 0) {
    json_decref(lc.obj);
    return 0;
  }
  *out = lc.obj;
  return 0;
}

int spaa_query_pick_encoding(const char *ae)
{
  double zq = -1, gq = -1, star = -1; /* -1 = not named */
  const char *p = ae;
  if (!ae)
    return 0;
  while (*p) {
    const char *b = p, *e = strchr(p, ','), *end, *semi;
    double qv = 1.0;
    size_t l;
    end = e ? e : p + strlen(p);
    while (b < end && (*b == ' ' || *b == '\t'))
      b++;
    semi = memchr(b, ';', (size_t)(end - b));
    l = (size_t)((semi ? semi : end) - b);
    while (l && (b[l - 1] == ' ' || b[l - 1] == '\t'))
      l--;
    if (semi) {
      const char *qs = semi + 1;
      while (qs < end && *qs == ' ')
        qs++;
      if (end - qs >= 2 && (qs[0] == 'q' || qs[0] == 'Q') && qs[1] == '=')
        qv = strtod(qs + 2, NULL);
    }
    if (l == 4 && strncasecmp(b, "zstd", 4) == 0)
      zq = qv;
    else if ((l == 4 && strncasecmp(b, "gzip", 4) == 0) ||
             (l == 6 && strncasecmp(b, "x-gzip", 6) == 0))
      gq = qv;
    else if (l == 1 && *b == '*')
      star = qv;
    if (!e)
      break;
    p = e + 1;
  }
  if (zq < 0)
    zq = star > 0 ? star : 0;
  if (gq < 0)
    gq = star > 0 ? star : 0;
  /* a coding the client offers beats identity; zstd wins ties */
  if (zq <= 0 && gq <= 0)
    return 0;
  return zq >= gq ? 2 : 1;
}

/* ---- handlers ---------------------------------------------------------------------------- */

void spaa_query_list(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const paging[] = {"limit", "cursor", NULL};
  static const char *const *const lists[] = {spaa_api_filter_params, paging, NULL};
  char cur_id[SPAA_QUERY_MAX_CURSOR / 2 + 1];
  struct spaa_store_cursor after;
  struct spaa_api_sel sel;
  struct spaa_store_page page;
  struct spaa_err err;
  json_t *out = NULL;
  const char *cursor = spaa_req_query(req, "cursor");
  size_t limit;
  int rc = 0;
  memset(&page, 0, sizeof(page));
  spaa_err_clear(&err);
  if (spaa_api_params_check(req, lists, NULL, resp) ||
      spaa_api_sel_parse(req, "", req->received_ns, &sel, resp))
    return;
  if (spaa_api_size_param(req, "limit", 1, SPAA_QUERY_MAX_PAGE, 0, &limit, resp))
    goto done;
  sel.q.limit = limit;
  if (cursor && cursor[0]) {
    if ((rc = spaa_api_cursor_decode(cursor, &after.received_ns, cur_id, sizeof(cur_id), &err)))
      goto out;
    after.id = cur_id;
    sel.q.after = &after;
  }
  if ((rc = spaa_store_list(req->app->store, &sel.q, &page, &err)) ||
      (rc = spaa_api_page_json(&page, &out, &err)))
    goto out;
  spaa_resp_json(resp, 200, out);
out:
  if (rc)
    spaa_resp_err(resp, &err);
done:
  spaa_store_page_free(&page);
  spaa_api_sel_free(&sel);
}

/* The one-profile endpoints without parameters: 0, or answered 400 and -1. */
static int no_params(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const none[] = {NULL};
  static const char *const *const lists[] = {none, NULL};
  return spaa_api_params_check(req, lists, NULL, resp);
}

/* 1 when `id`, taken from /api/v1/profiles/{id}, is in fact the name of a view of one profile
 * (a GET route /api/v1/profiles/{id}/<id>): the request was /api/v1/profiles//<view> with
 * the id left empty, and the core folded the empty segment away. No stored id is a view's
 * name (ids are hex, UUIDs or the store's own). */
static int names_a_view(const char *id)
{
  static const char prefix[] = "/api/v1/profiles/{id}/";
  size_t i;
  if (!id || !*id)
    return 0;
  for (i = 0; i < spaa_n_routes; i++)
    if (strcmp(spaa_routes[i].method, "GET") == 0 &&
        strncmp(spaa_routes[i].pattern, prefix, sizeof(prefix) - 1) == 0 &&
        strcmp(spaa_routes[i].pattern + sizeof(prefix) - 1, id) == 0)
      return 1;
  return 0;
}

void spaa_query_meta(const struct spaa_req *req, struct spaa_resp *resp)
{
  const char *id = spaa_req_param(req, "id");
  struct spaa_store_profile_info pi;
  struct spaa_err err;
  json_t *out;
  memset(&pi, 0, sizeof(pi));
  spaa_err_clear(&err);
  if (names_a_view(id)) { /* before the parameters: those are the view's, not checked here */
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "the profile id is empty: GET "
                    "/api/v1/profiles/{id}/%s needs a profile id before '/%s'", id, id);
    return;
  }
  if (no_params(req, resp))
    return;
  if (!spaa_query_id_ok(id)) {
    spaa_resp_error(resp, SPAA_E_NOT_FOUND, "no profile with id '%.64s'", id ? id : "");
    return;
  }
  if (spaa_store_meta(req->app->store, id, &pi, &err)) {
    spaa_resp_err(resp, &err);
  } else if (!(out = spaa_api_profile_json(&pi))) {
    spaa_err_set(&err, SPAA_E_NOMEM, 0, 0, NULL);
    spaa_resp_err(resp, &err);
  } else {
    spaa_resp_json(resp, 200, out);
  }
  spaa_store_profile_info_free(&pi);
}

void spaa_query_spaa(const struct spaa_req *req, struct spaa_resp *resp)
{
  const char *id = spaa_req_param(req, "id");
  const struct spaa_exporter *x = spaa_exporter("spaa");
  struct spaa_profile *p = NULL;
  struct spaa_api_out o;
  struct spaa_err err;
  spaa_err_clear(&err);
  if (no_params(req, resp))
    return;
  if (!spaa_query_id_ok(id)) {
    spaa_resp_error(resp, SPAA_E_NOT_FOUND, "no profile with id '%.64s'", id ? id : "");
    return;
  }
  if (!x) {
    spaa_resp_error(resp, SPAA_E_INTERNAL, "no \"spaa\" exporter is registered");
    return;
  }
  if (spaa_store_get_metered(req->app->store, id, req->meter, &p, &err)) {
    spaa_resp_err(resp, &err);
    return;
  }
  /* the exporter streams into the answer's spool, through a compressing sink when asked */
  if (spaa_api_out_open(req, &o, 1, &err))
    spaa_resp_err(resp, &err);
  else
    spaa_api_out_answer(resp, &o, x->fn(p, NULL, o.sink, o.ctx, &err), x->media_type, &err);
  spaa_profile_free(p);
}
