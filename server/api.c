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
    if (*p)
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
  struct label_ctx lc;
  memset(&lc, 0, sizeof(lc));
  *out = NULL;
  if (!(lc.obj = json_object()))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  spaa_req_query_each(req, "label", on_label, &lc);
  spaa_req_query_each(req, "labels", on_labels, &lc);
  if (lc.bad) {
    json_decref(lc.obj);
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                        "bad label '%s': expected key:value (at most %d labels, keys under "
                        "%d bytes, UTF-8)",
                        lc.what, SPAA_QUERY_MAX_LABELS, SPAA_QUERY_MAX_LABEL_ITEM);
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

/* The list query's filters from the request; 0, or an error answer is set in resp. */
static int list_filters(const struct spaa_req *req, struct spaa_list_query *q,
                        struct spaa_resp *resp)
{
  const char *v;
  q->service = spaa_req_query(req, "service");
  if (!q->service)
    q->service = spaa_req_query(req, "project");
  q->source = spaa_req_query(req, "source");
  q->event = spaa_req_query(req, "event");
  if ((v = spaa_req_query(req, "from")) && spaa_query_parse_time(v, &q->from_ns) &&
      spaa_api_parse_relative(v, req->received_ns, &q->from_ns)) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad 'from' time '%.64s': expected unix "
                    "seconds or RFC 3339", v);
    return -1;
  }
  if ((v = spaa_req_query(req, "to")) && spaa_query_parse_time(v, &q->to_ns) &&
      spaa_api_parse_relative(v, req->received_ns, &q->to_ns)) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad 'to' time '%.64s': expected unix seconds "
                    "or RFC 3339", v);
    return -1;
  }
  if (q->from_ns && q->to_ns && q->to_ns < q->from_ns) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "'to' is before 'from'");
    return -1;
  }
  if ((v = spaa_req_query(req, "limit"))) {
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < 1 || n > SPAA_QUERY_MAX_PAGE) {
      spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad 'limit' '%.32s': expected 1 to %d", v,
                      SPAA_QUERY_MAX_PAGE);
      return -1;
    }
    q->limit = (size_t)n;
  }
  return 0;
}

/* The label object (string values) as filters, borrowing its strings. 0 or
 * SPAA_E_BAD_REQUEST when it has more than SPAA_QUERY_MAX_LABELS members. */
static int label_filters(const json_t *labels, struct spaa_store_label_filter *f, size_t cap,
                         size_t *n, struct spaa_err *err)
{
  const char *k;
  json_t *v;
  *n = 0;
  json_object_foreach((json_t *)labels, k, v) {
    if (*n == cap)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "more than %zu label filters", cap);
    f[*n].key = k;
    f[(*n)++].value = json_string_value(v);
  }
  return 0;
}

void spaa_query_list(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const paging[] = {"limit", "cursor", NULL};
  static const char *const *const lists[] = {spaa_api_filter_params, paging, NULL};
  struct spaa_store_label_filter filters[SPAA_QUERY_MAX_LABELS];
  char cur_id[SPAA_QUERY_MAX_CURSOR / 2 + 1];
  struct spaa_store_cursor after;
  struct spaa_list_query q;
  struct spaa_store_page page;
  struct spaa_err err;
  json_t *labels = NULL, *out = NULL;
  const char *cursor = spaa_req_query(req, "cursor");
  int rc;
  memset(&q, 0, sizeof(q));
  memset(&page, 0, sizeof(page));
  spaa_err_clear(&err);
  if (spaa_api_params_check(req, lists, NULL, resp) || list_filters(req, &q, resp))
    return;
  if ((rc = spaa_query_labels(req, &labels, &err)) ||
      (rc = label_filters(labels, filters, SPAA_QUERY_MAX_LABELS, &q.n_labels, &err)))
    goto out;
  q.labels = filters;
  /* too many label filters is the store's first complaint, before a bad cursor */
  if (cursor && cursor[0] && q.n_labels <= SPAA_QUERY_MAX_LABELS) {
    if ((rc = spaa_api_cursor_decode(cursor, &after.received_ns, cur_id, sizeof(cur_id), &err)))
      goto out;
    after.id = cur_id;
    q.after = &after;
  }
  if ((rc = spaa_store_list(req->app->store, &q, &page, &err)) ||
      (rc = spaa_api_page_json(&page, &out, &err)))
    goto out;
  spaa_resp_json(resp, 200, out);
out:
  if (rc)
    spaa_resp_err(resp, &err);
  spaa_store_page_free(&page);
  json_decref(labels);
}

void spaa_query_meta(const struct spaa_req *req, struct spaa_resp *resp)
{
  const char *id = spaa_req_param(req, "id");
  struct spaa_store_profile_info pi;
  struct spaa_err err;
  json_t *out;
  memset(&pi, 0, sizeof(pi));
  spaa_err_clear(&err);
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
  struct spaa_csink *z = NULL;
  struct spaa_buf body;
  struct spaa_err err;
  int enc, rc;
  spaa_err_clear(&err);
  spaa_buf_init(&body, SPAA_HTTP_RESP_MAX);
  if (!spaa_query_id_ok(id)) {
    spaa_resp_error(resp, SPAA_E_NOT_FOUND, "no profile with id '%.64s'", id ? id : "");
    return;
  }
  if (!x) {
    spaa_resp_error(resp, SPAA_E_INTERNAL, "no \"spaa\" exporter is registered");
    return;
  }
  if (spaa_store_get(req->app->store, id, &p, &err)) {
    spaa_resp_err(resp, &err);
    return;
  }
  enc = spaa_query_pick_encoding(spaa_req_header(req, "Accept-Encoding"));
  /* the exporter streams into the answer, through a compressing sink when one is asked for */
  if (enc && (rc = spaa_csink_open(enc == 2 ? SPAA_CODING_ZSTD : SPAA_CODING_GZIP,
                                   enc == 2 ? 3 : 6, spaa_buf_sink, &body, &z, &err))) {
    spaa_resp_err(resp, &err);
    goto out;
  }
  if ((rc = x->fn(p, NULL, z ? spaa_csink_write : spaa_buf_sink, z ? (void *)z : &body, &err)) ||
      (z && (rc = spaa_csink_finish(z, &err)))) {
    spaa_resp_err(resp, &err);
    goto out;
  }
  spaa_buf_free(&resp->body);
  resp->body = body;
  spaa_buf_init(&body, 0);
  resp->status = 200;
  resp->content_type = x->media_type;
  if (enc)
    spaa_resp_header(resp, "Content-Encoding", enc == 2 ? "zstd" : "gzip");
  spaa_resp_header(resp, "Vary", "Accept-Encoding");
out:
  spaa_csink_free(z);
  spaa_buf_free(&body);
  spaa_profile_free(p);
}
