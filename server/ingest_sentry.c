/* The Sentry dialect (see ingest_sentry.h): credentials and the envelope into conversion
 * options, answers and errors shaped as Relay's. Storing and counting: the ingest flow. */
#include "server/ingest_sentry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sentry/sentry.h"
#include "base/hex.h"
#include "base/limits.h"
#include "server/ingest.h"
#include "server/log.h"

#define SENTRY_MAX_VERSION 7  /* newest protocol version understood */

/* ---- CORS, as Relay's store/envelope endpoints answer browsers --------------------------- */

/* The methods of the route, for Allow and Access-Control-Allow-Methods. */
#define SENTRY_METHODS "POST, OPTIONS"
/* What a browser may send on the POST (Relay's list): the SDKs' content-type and
 * x-sentry-auth, tracing headers, and what proxies and older SDKs add. */
#define SENTRY_CORS_ALLOW_HEADERS                                                            \
  "content-type, content-encoding, authorization, x-sentry-auth, x-requested-with, "         \
  "x-forwarded-for, origin, referer, accept, authentication, x-csrftoken, sentry-trace, "    \
  "baggage"
/* What the page's script may read of an answer: the SDK's rate-limit handling */
#define SENTRY_CORS_EXPOSE "x-sentry-error, x-sentry-rate-limits, retry-after"
#define SENTRY_CORS_MAX_AGE "3600"

/* The CORS headers of every answer of the route (two of SPAA_HTTP_MAX_HEADERS: a 429 holds
 * Retry-After, X-Sentry-Rate-Limits, these, and the ingest flow's two X-Spaa-Profile-*). */
static void cors(struct spaa_resp *resp)
{
  spaa_resp_header(resp, "Access-Control-Allow-Origin", "*");
  spaa_resp_header(resp, "Access-Control-Expose-Headers", SENTRY_CORS_EXPOSE);
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
  case SPAA_E_BUSY: /* back-pressure (queue, connections, memory): a rate limit, as Relay */
    return 429;
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
  case SPAA_E_METHOD:
    return "method not allowed";
  default:
    return spaa_err_default(code);
  }
}

/* Answer `code` as Relay would: {"detail":SUMMARY,"causes":[cause]}; log it. */
static void sentry_fail(const struct spaa_req *req, struct spaa_resp *resp, int code,
                        const char *cause)
{
  json_t *o = json_object(), *causes = json_array();
  int status = status_of(code);
  char qd[600];
  const char *project = spaa_req_param(req, "project_id");
  json_object_set_new(o, "detail", json_string(summary_of(code)));
  if (cause && cause[0]) {
    json_t *s = json_string(cause);
    json_array_append_new(causes, s ? s : json_string("(the message is not valid UTF-8)"));
  }
  json_object_set_new(o, "causes", causes);
  spaa_resp_json(resp, status, o);
  if (status == 503 || status == 429)
    spaa_resp_header(resp, "Retry-After", "1");
  if (status == 429) /* retry_after:categories (all):scope:reason, as Relay writes it */
    spaa_resp_header(resp, "X-Sentry-Rate-Limits", "1::organization:server_busy");
  cors(resp);
  /* debug: the core's "request" line carries the answer (one line per request) */
  spaa_log(SPAA_LOG_DEBUG, "sentry envelope refused",
           "project=%s status=%d code=%s detail=\"%s\"", project ? project : "-", status,
           spaa_err_name(code), spaa_log_q(qd, sizeof(qd), cause));
}

static void sentry_on_fail(struct spaa_ingest *x, enum spaa_ingest_stage stage, int code,
                           const char *detail)
{
  (void)stage;
  sentry_fail(x->req, x->resp, code, detail);
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

/* 1 when project id `a` (configured, or from a dsn) names project `b` (normalized): as
 * numbers, so "0042" is 42; an `a` that is not a u64 is compared as text. */
static int same_project(const char *a, const char *b)
{
  char n[SENTRY_MAX_PROJECT + 1];
  if (sentry_project_id_normalize(a, strlen(a), n) == 0)
    return strcmp(n, b) == 0;
  return strcmp(a, b) == 0;
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
    if (same_project(cfg->sentry_keys[i].project, project))
      ok |= spaa_http_ct_equal(key, strlen(key), cfg->sentry_keys[i].key,
                               strlen(cfg->sentry_keys[i].key));
  return ok;
}

/* ---- the endpoint ----------------------------------------------------------------------- */

/* The project id of the path, normalized into out as Relay reads it (a u64: "0042" is 42):
 * 0, or SPAA_E_NOT_FOUND when it is not a decimal number below 2^64. */
static int check_project(const char *project, char out[SENTRY_MAX_PROJECT + 1],
                         struct spaa_err *err)
{
  if (!project || sentry_project_id_normalize(project, strlen(project), out))
    return spaa_err_set(err, SPAA_E_NOT_FOUND, 0, 0, "the project id in the path must be a "
                        "number (decimal digits, below 2^64)");
  return 0;
}

/* Credentials from the request, checked before the body is looked at: 0 with *n the places
 * that held them (0 or 1, c filled when 1), or an error. */
static void count_only(void *ctx, const char *value)
{
  (void)ctx;
  (void)value;
}

static int check_request_creds(const struct spaa_req *req, const char *project, struct creds *c,
                               int *n, struct spaa_err *err)
{
  static const char *const once[] = {"sentry_key", "sentry_secret", "sentry_version"};
  char places[96];
  size_t i, k;
  *n = 0;
  for (i = 0; i < sizeof(once) / sizeof(once[0]); i++) /* which one would count? */
    if ((k = spaa_req_query_each(req, once[i], count_only, NULL)) > 1)
      return spaa_err_set(err, SPAA_E_UNAUTHORIZED, 0, 0, "%s given %zu times in the query "
                          "string: send it once", once[i], k);
  *n = find_creds(req, c, places, sizeof(places), err);
  if (*n < 0)
    return *n;
  if (*n > 1)
    return spaa_err_set(err, SPAA_E_UNAUTHORIZED, 0, 0, "credentials in more than one place "
                        "(%s): send them once", places);
  if (*n == 1 && c->a.version > SENTRY_MAX_VERSION)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "sentry_version %d is not supported "
                        "(at most %d)", c->a.version, SENTRY_MAX_VERSION);
  if (*n == 1 && !key_allowed(req->app->cfg, project, c->a.key))
    return spaa_err_set(err, SPAA_E_FORBIDDEN, 0, 0, "the key from the %s is not configured "
                        "for project %s", c->where, project);
  return 0;
}

/* The envelope's dsn: the credentials of last resort, and never in conflict with the
 * request's (n of them, in c). */
static int check_dsn(const struct spaa_config *cfg, const struct sentry_envelope *env,
                     const char *project, const struct creds *c, int n, struct spaa_err *err)
{
  if (env->has_dsn && !same_project(env->dsn.project_id, project))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the envelope's dsn names project %s, "
                        "the request project %s", env->dsn.project_id, project);
  if (n == 1 && env->has_dsn && strcmp(env->dsn.public_key, c->a.key) != 0)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the envelope's dsn has another key "
                        "than the %s", c->where);
  if (n == 0 && !env->has_dsn)
    return spaa_err_set(err, SPAA_E_UNAUTHORIZED, 0, 0, "no credentials: send X-Sentry-Auth, "
                        "sentry_key in the query string, or a dsn in the envelope header");
  if (n == 0 && !key_allowed(cfg, project, env->dsn.public_key))
    return spaa_err_set(err, SPAA_E_FORBIDDEN, 0, 0, "the key from the dsn is not configured "
                        "for project %s", project);
  return 0;
}

/* What parse leaves for the converter and the answer (x->state). */
struct sentry_state {
  struct sentry_envelope env;
  char project[SENTRY_MAX_PROJECT + 1]; /* the path's project id, normalized: the service */
};

/* parse: project, credentials, envelope; the parsed envelope goes to the converter. */
static int sentry_parse(struct spaa_ingest *x, struct spaa_err *err)
{
  char project[SENTRY_MAX_PROJECT + 1];
  struct sentry_state *st;
  struct creds c;
  int n, rc;
  memset(&c, 0, sizeof(c));
  if ((rc = check_project(spaa_req_param(x->req, "project_id"), project, err)) ||
      (rc = check_request_creds(x->req, project, &c, &n, err)))
    return rc;
  if (x->body_len == 0)
    return spaa_err_set(err, SPAA_E_BAD_ENVELOPE, 0, 0, "the request body is empty");
  if (!(st = calloc(1, sizeof(*st))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  x->state = st;
  memcpy(st->project, project, sizeof(project));
  if ((rc = sentry_envelope_parse(x->body, x->body_len, &st->env, err)) ||
      (rc = check_dsn(x->req->app->cfg, &st->env, project, &c, n, err)))
    return rc;
  x->opts.service = st->project;
  x->opts.sentry_env = &st->env;
  return 0;
}

/* The answer's entry for converted entry i: stored (maybe already), or dropped and why. */
static json_t *profile_entry(const struct spaa_ingest *x, size_t i, const char *project)
{
  char qd[600];
  const struct spaa_converted *c = &x->list.v[i];
  json_t *e = json_object();
  if (x->rcs[i] == SPAA_INGEST_REJECTED) {
    json_t *d = json_string(c->err.msg);
    json_object_set_new(e, "id", c->id[0] ? json_string(c->id) : json_null());
    json_object_set_new(e, "stored", json_false());
    json_object_set_new(e, "reason", json_string(c->reason[0] ? c->reason : "invalid"));
    json_object_set_new(e, "detail", d ? d : json_string("(not valid UTF-8)"));
    spaa_log(SPAA_LOG_INFO, "sentry profile dropped",
             "project=%s id=%s reason=%s detail=\"%s\"", project, c->id[0] ? c->id : "-",
             c->reason, spaa_log_q(qd, sizeof(qd), c->err.msg));
  } else {
    json_object_set_new(e, "id", json_string(x->ids[i]));
    json_object_set_new(e, "stored", json_true());
    if (x->rcs[i] == 1)
      json_object_set_new(e, "duplicate", json_true());
  }
  return e;
}

/* answer: 200 {"id":EVENT_ID,"profiles":[...]}, as Relay with the outcome of each profile. */
static void sentry_answer(struct spaa_ingest *x)
{
  const struct sentry_state *st = x->state;
  const struct sentry_envelope *env = &st->env;
  const char *project = st->project;
  json_t *ans, *profiles = NULL;
  size_t i;
  spaa_log(SPAA_LOG_INFO, "sentry envelope", "project=%s event_id=%s items=%zu profiles=%zu",
           project, env->event_id[0] ? env->event_id : "-", env->n_items, x->list.n);
  if (!x->list.n) { /* most envelopes (no profile): the answer written as is, no JSON tree */
    char body[64]; /* an event id is 32 hex digits (sentry_uuid_normalize) */
    int n = env->event_id[0] ? snprintf(body, sizeof(body), "{\"id\":\"%s\"}", env->event_id)
                             : snprintf(body, sizeof(body), "{}");
    spaa_resp_bytes(x->resp, 200, "application/json", body, (size_t)n);
    cors(x->resp);
    return;
  }
  ans = json_object();
  if (env->event_id[0])
    json_object_set_new(ans, "id", json_string(env->event_id));
  if (x->list.n)
    json_object_set_new(ans, "profiles", profiles = json_array());
  for (i = 0; i < x->list.n; i++)
    json_array_append_new(profiles, profile_entry(x, i, project));
  spaa_resp_json(x->resp, 200, ans);
  cors(x->resp);
}

static void sentry_done(struct spaa_ingest *x)
{
  struct sentry_state *st = x->state;
  if (st)
    sentry_envelope_free(&st->env);
  free(st);
  x->state = NULL;
}

const struct spaa_dialect spaa_dialect_sentry = {
    .name = "sentry",
    /* the answer reads what parse copied out of the envelope (event id, item count), not
     * the items: the body goes before the profiles are stored */
    .body_spent = SPAA_BODY_SPENT_CONVERTED,
    .parse = sentry_parse,
    .answer = sentry_answer,
    .fail = sentry_on_fail,
    .done = sentry_done,
};

int spaa_sentry_quick(const void *body, size_t len)
{
  return !memmem(body, len, "profile", 7);
}

void spaa_sentry_preflight(const struct spaa_req *req, struct spaa_resp *resp)
{
  (void)req;
  resp->status = 200;
  spaa_resp_header(resp, "Access-Control-Allow-Origin", "*");
  spaa_resp_header(resp, "Access-Control-Allow-Methods", SENTRY_METHODS);
  spaa_resp_header(resp, "Access-Control-Allow-Headers", SENTRY_CORS_ALLOW_HEADERS);
  spaa_resp_header(resp, "Access-Control-Expose-Headers", SENTRY_CORS_EXPOSE);
  spaa_resp_header(resp, "Access-Control-Max-Age", SENTRY_CORS_MAX_AGE);
  spaa_resp_header(resp, "Allow", SENTRY_METHODS);
}

void spaa_sentry_method(const struct spaa_req *req, struct spaa_resp *resp)
{
  char cause[256];
  snprintf(cause, sizeof(cause), "%.16s is not allowed on %.160s; allowed: " SENTRY_METHODS,
           req->method ? req->method : "-", req->path ? req->path : "-");
  sentry_fail(req, resp, SPAA_E_METHOD, cause);
  spaa_resp_header(resp, "Allow", SENTRY_METHODS);
}

void spaa_sentry_on_error(const struct spaa_req *req, struct spaa_resp *resp, int code,
                          const char *detail)
{
  sentry_fail(req, resp, code, detail);
}
