/* The Sentry envelope endpoint (see sentry.h): credentials, envelope, profiles -> store,
 * answers shaped as Relay's, and the outcome counters. */
#include "server/ingest_sentry.h"

#include <stdio.h>
#include <string.h>

#include "base/hex.h"
#include "base/limits.h"
#include "server/ingest.h"
#include "server/log.h"

#define SENTRY_MAX_VERSION 7  /* newest protocol version understood */

/* ---- counters ------------------------------------------------------------------------ */

static struct spaa_sentry_counters counters; /* updated with __atomic builtins only */
_Static_assert(sizeof(struct spaa_sentry_counters) % sizeof(uint64_t) == 0,
               "the counters are read as an array of uint64_t");

static void bump(uint64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }

void spaa_sentry_counters_read(struct spaa_sentry_counters *out)
{
  const uint64_t *src = (const uint64_t *)&counters;
  uint64_t *dst = (uint64_t *)out;
  size_t i;
  for (i = 0; i < sizeof(counters) / sizeof(uint64_t); i++)
    dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

static void count_status(int status)
{
  if (status == 200)
    bump(&counters.accepted);
  else if (status == 401)
    bump(&counters.unauthorized);
  else if (status == 403)
    bump(&counters.forbidden);
  else if (status == 413)
    bump(&counters.too_large);
  else if (status == 503)
    bump(&counters.busy);
  else if (status >= 500)
    bump(&counters.failed);
  else
    bump(&counters.bad_request);
}

static void count_rejected(const char *reason)
{
  size_t i;
  for (i = 0; i < SENTRY_N_REASONS; i++)
    if (strcmp(sentry_reason_at(i), reason) == 0) {
      bump(&counters.profiles_rejected[i]);
      return;
    }
  bump(&counters.profiles_rejected_other);
}

/* ---- errors in Relay's shape ---------------------------------------------------------- */

/* The status of a code in this dialect. */
static int status_of(int code)
{
  switch (code) {
  case SPAA_E_MEDIA_TYPE: /* an unknown Content-Encoding: a bad body, as Relay says */
  case SPAA_E_BAD_COMPRESSION:
  case SPAA_E_INVALID:
  case SPAA_E_UNSUPPORTED:
    return 400;
  default:
    return spaa_err_status(code);
  }
}

/* The one-line summary ("detail") of a code; the specific message goes into "causes". */
static const char *summary_of(int code)
{
  switch (code) {
  case SPAA_E_BAD_ENVELOPE:
    return "invalid envelope";
  case SPAA_E_BAD_JSON:
    return "invalid JSON";
  case SPAA_E_MEDIA_TYPE:
  case SPAA_E_BAD_COMPRESSION:
    return "invalid body encoding";
  case SPAA_E_UNAUTHORIZED:
    return "missing or invalid authorization";
  case SPAA_E_FORBIDDEN:
    return "the key is not allowed for this project";
  case SPAA_E_TOO_LARGE:
    return "envelope exceeded size limits";
  case SPAA_E_BUSY:
    return "the profile store is busy, retry later";
  case SPAA_E_NOT_FOUND:
    return "no such endpoint";
  default:
    return spaa_err_default(code);
  }
}

/* Answer `code` as Relay would: {"detail":SUMMARY,"causes":[cause]}; log and count it. */
static void sentry_fail(const struct spaa_req *req, struct spaa_resp *resp, int code,
                        const char *cause)
{
  json_t *o = json_object(), *causes = json_array();
  int status = status_of(code);
  const char *project = spaa_req_param(req, "project_id");
  json_object_set_new(o, "detail", json_string(summary_of(code)));
  if (cause && cause[0]) {
    json_t *s = json_string(cause);
    json_array_append_new(causes, s ? s : json_string("(the message is not valid UTF-8)"));
  }
  json_object_set_new(o, "causes", causes);
  spaa_resp_json(resp, status, o);
  if (status == 503)
    spaa_resp_header(resp, "Retry-After", "1");
  count_status(status);
  spaa_log(status >= 500 ? SPAA_LOG_WARN : SPAA_LOG_INFO, "sentry envelope refused",
           "project=%s status=%d code=%s detail=\"%s\"", project ? project : "-", status,
           spaa_err_name(code), cause ? cause : "");
}

void spaa_sentry_on_error(const struct spaa_req *req, struct spaa_resp *resp, int code,
                          const char *detail)
{
  sentry_fail(req, resp, code, detail);
}

/* ---- credentials ------------------------------------------------------------------------ */

/* Where the credentials came from. */
struct creds {
  struct sentry_auth a;  /* the credentials */
  const char *where;     /* "X-Sentry-Auth", "Authorization", "query string", "dsn" */
};

/* The sentry_* query parameters, re-encoded as a query string for the codec's grammar
 * (the core has already split and percent-decoded them). "" when there are none. */
static void query_string(const struct spaa_req *req, char *out, size_t n)
{
  static const char *const names[] = {"sentry_key", "sentry_version", "sentry_secret",
                                      "sentry_client"};
  size_t i, o = 0;
  out[0] = 0;
  for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    const char *v = spaa_req_query(req, names[i]);
    int w;
    if (!v)
      continue;
    w = snprintf(out + o, n - o, "%s%s=", o ? "&" : "", names[i]);
    if (w < 0 || (size_t)w >= n - o)
      return;
    o += (size_t)w;
    for (; *v; v++) {
      unsigned char c = (unsigned char)*v;
      int plain = (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') || c == '-' ||
                  c == '.' || c == '_' || c == '~';
      if (o + (plain ? 1 : 3) >= n)
        return; /* over-long: cut, the codec then sees a shorter value */
      if (plain) {
        out[o++] = (char)c;
      } else {
        out[o++] = '%';
        out[o++] = spaa_hex_digits[c >> 4]; /* the codec decodes either case */
        out[o++] = spaa_hex_digits[c & 15];
      }
    }
    out[o] = 0;
  }
}

/* Look for credentials in the headers and the query string. Returns how many places held
 * them (c filled from the first), or a negative code with err filled (malformed value). */
static int find_creds(const struct spaa_req *req, struct creds *c, char *places, size_t pn,
                      struct spaa_err *err)
{
  static const char *const headers[] = {"X-Sentry-Auth", "Authorization"};
  struct sentry_auth t;
  char qs[1024];
  size_t i;
  int n = 0, rc;
  places[0] = 0;
  for (i = 0; i < 3; i++) {
    const char *where;
    if (i < 2) {
      const char *v = spaa_req_header(req, headers[i]);
      if (!v)
        continue;
      rc = sentry_auth_parse_header(v, strlen(v), &t, err);
      where = headers[i];
    } else {
      query_string(req, qs, sizeof(qs));
      rc = sentry_auth_parse_query(qs, strlen(qs), &t, err);
      where = "query string";
    }
    if (rc < 0) {
      char m[sizeof(err->msg)];
      snprintf(m, sizeof(m), "%s", err->msg);
      return spaa_err_set(err, rc, 0, 0, "%s: %s", where, m);
    }
    if (rc == 1) {
      if (n++ == 0) {
        c->a = t;
        c->where = where;
      }
      snprintf(places + strlen(places), pn - strlen(places), "%s%s", places[0] ? ", " : "",
               where);
    }
  }
  return n;
}

/* 1 when `key` may post to `project`: any key when no key is configured at all, else one of
 * the keys configured for that project (compared in constant time). */
static int key_allowed(const struct spaa_config *cfg, const char *project, const char *key)
{
  size_t i;
  int ok = 0;
  if (cfg->n_sentry_keys == 0)
    return 1;
  for (i = 0; i < cfg->n_sentry_keys; i++)
    if (strcmp(cfg->sentry_keys[i].project, project) == 0)
      ok |= spaa_http_ct_equal(key, strlen(key), cfg->sentry_keys[i].key,
                               strlen(cfg->sentry_keys[i].key));
  return ok;
}

/* ---- the endpoint ----------------------------------------------------------------------- */

/* Store the converted profile (or report why it was dropped) and add its entry to `list`.
 * 0, or a negative code with err filled when the store failed (the request then fails). */
static int one_profile(const struct spaa_req *req, const struct sentry_envelope *env,
                       struct spaa_converted *c, const char *project, json_t *list,
                       struct spaa_err *err)
{
  json_t *e = json_object();
  int rc = 0;
  json_array_append_new(list, e);
  if (!c->profile) {
    json_t *d = json_string(c->err.msg);
    json_object_set_new(e, "id", c->id[0] ? json_string(c->id) : json_null());
    json_object_set_new(e, "stored", json_false());
    json_object_set_new(e, "reason", json_string(c->reason[0] ? c->reason : "invalid"));
    json_object_set_new(e, "detail", d ? d : json_string("(not valid UTF-8)"));
    count_rejected(c->reason);
    spaa_log(SPAA_LOG_INFO, "sentry profile dropped",
             "project=%s id=%s reason=%s detail=\"%s\"", project, c->id[0] ? c->id : "-",
             c->reason, c->err.msg);
  } else {
    struct spaa_ingest_info info;
    long k = sentry_envelope_find(env, SENTRY_ITEM_PROFILE);
    char id[64];
    if (k < 0)
      k = sentry_envelope_find(env, SENTRY_ITEM_CHUNK);
    memset(&info, 0, sizeof(info));
    info.source = "sentry";
    info.service = project;
    if (k >= 0) { /* keep the item payload as it came, for a later converter */
      info.original = env->items[k].payload;
      info.original_len = env->items[k].payload_len;
    }
    rc = spaa_ingest_store(req, c, &info, id, err);
    if (rc < 0)
      return rc;
    json_object_set_new(e, "id", json_string(id));
    json_object_set_new(e, "stored", json_true());
    if (rc == 1)
      json_object_set_new(e, "duplicate", json_true());
    bump(rc == 1 ? &counters.profiles_duplicate : &counters.profiles_stored);
    rc = 0;
  }
  return rc;
}

void spaa_sentry_envelope(const struct spaa_req *req, struct spaa_resp *resp)
{
  const struct spaa_config *cfg = req->app->cfg;
  const char *project = spaa_req_param(req, "project_id");
  struct sentry_envelope env;
  struct spaa_conv_list list;
  struct spaa_convert_opts o;
  struct spaa_err err;
  struct creds c;
  char places[96];
  json_t *ans = NULL, *profiles = NULL;
  size_t i;
  int n, rc;
  memset(&env, 0, sizeof(env));
  memset(&list, 0, sizeof(list));
  memset(&c, 0, sizeof(c));
  spaa_err_clear(&err);
  if (!project || !project[0] || strspn(project, "0123456789") != strlen(project) ||
      strlen(project) > SENTRY_MAX_PROJECT) {
    sentry_fail(req, resp, SPAA_E_NOT_FOUND, "the project id in the path must be a number");
    return;
  }
  /* credentials from the request, checked before the body is looked at */
  n = find_creds(req, &c, places, sizeof(places), &err);
  if (n < 0) {
    sentry_fail(req, resp, n, err.msg);
    return;
  }
  if (n > 1) {
    char m[160];
    snprintf(m, sizeof(m), "credentials in more than one place (%s): send them once", places);
    sentry_fail(req, resp, SPAA_E_UNAUTHORIZED, m);
    return;
  }
  if (n == 1 && c.a.version > SENTRY_MAX_VERSION) {
    char m[128];
    snprintf(m, sizeof(m), "sentry_version %d is not supported (at most %d)", c.a.version,
             SENTRY_MAX_VERSION);
    sentry_fail(req, resp, SPAA_E_BAD_REQUEST, m);
    return;
  }
  if (n == 1 && !key_allowed(cfg, project, c.a.key)) {
    char m[160];
    snprintf(m, sizeof(m), "the key from the %s is not configured for project %s", c.where,
             project);
    sentry_fail(req, resp, SPAA_E_FORBIDDEN, m);
    return;
  }
  if (req->body_len == 0) {
    sentry_fail(req, resp, SPAA_E_BAD_ENVELOPE, "the request body is empty");
    return;
  }
  if ((rc = sentry_envelope_parse(req->body, req->body_len, &env, &err))) {
    sentry_fail(req, resp, rc, err.msg);
    goto out;
  }
  /* the envelope's dsn: the credentials of last resort, and never in conflict */
  if (env.has_dsn && strcmp(env.dsn.project_id, project) != 0) {
    char m[160];
    snprintf(m, sizeof(m), "the envelope's dsn names project %s, the request project %s",
             env.dsn.project_id, project);
    sentry_fail(req, resp, SPAA_E_BAD_REQUEST, m);
    goto out;
  }
  if (n == 1 && env.has_dsn && strcmp(env.dsn.public_key, c.a.key) != 0) {
    char m[160];
    snprintf(m, sizeof(m), "the envelope's dsn has another key than the %s", c.where);
    sentry_fail(req, resp, SPAA_E_BAD_REQUEST, m);
    goto out;
  }
  if (n == 0) {
    if (!env.has_dsn) {
      sentry_fail(req, resp, SPAA_E_UNAUTHORIZED,
                  "no credentials: send X-Sentry-Auth, sentry_key in the query string, or a "
                  "dsn in the envelope header");
      goto out;
    }
    if (!key_allowed(cfg, project, env.dsn.public_key)) {
      char m[160];
      snprintf(m, sizeof(m), "the key from the dsn is not configured for project %s", project);
      sentry_fail(req, resp, SPAA_E_FORBIDDEN, m);
      goto out;
    }
  }
  memset(&o, 0, sizeof(o));
  o.service = project;
  if ((rc = sentry_envelope_convert(&env, &o, &list, &err))) {
    sentry_fail(req, resp, rc, err.msg);
    goto out;
  }
  ans = json_object();
  if (env.event_id[0])
    json_object_set_new(ans, "id", json_string(env.event_id));
  if (list.n)
    json_object_set_new(ans, "profiles", profiles = json_array());
  for (i = 0; i < list.n; i++)
    if ((rc = one_profile(req, &env, &list.v[i], project, profiles, &err))) {
      sentry_fail(req, resp, rc, err.msg);
      goto out;
    }
  count_status(200);
  spaa_log(SPAA_LOG_INFO, "sentry envelope", "project=%s event_id=%s items=%zu profiles=%zu",
           project, env.event_id[0] ? env.event_id : "-", env.n_items, list.n);
  spaa_resp_json(resp, 200, ans);
  ans = NULL;
out:
  json_decref(ans);
  spaa_conv_list_free(&list);
  sentry_envelope_free(&env);
}
