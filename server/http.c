/* The HTTP core on libmicrohttpd (see http.h): routing, auth, capped bodies, decoding,
 * JSON errors, and the daemon's start, quiesce and stop.
 *
 * Threading: MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, with
 * MHD_OPTION_CONNECTION_LIMIT = cfg->workers. Ingest handlers block until their profile is
 * committed (spaa_store_put waits on a condition variable for the writer thread), and
 * blocking is only harmless when no other connection shares the thread: with a thread pool
 * each blocked handler would stall every connection of its thread, and the alternative
 * (MHD_suspend_connection plus a completion callback) turns every handler inside out.
 * One thread per connection keeps handlers straight-line code; the connection limit bounds
 * the threads, and the idle timeout (MHD_OPTION_CONNECTION_TIMEOUT) frees silent ones. */
#include "server/http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "base/base64.h"
#include "base/limits.h"
#include "server/decode.h"
#include "server/log.h"

struct spaa_http {
  struct MHD_Daemon *d;              /* the daemon */
  const struct spaa_app *app;        /* handed to handlers (borrowed) */
  const struct spaa_route *routes;   /* the routing table (borrowed) */
  size_t n_routes;
  uint16_t port;                     /* bound port */
  int quiesced;                      /* atomic: no longer accepting; answers close */
  size_t inflight;                   /* atomic: requests begun and not completed */
  char start_msg[200];               /* last MHD log line during start, for errors */
  int starting;                      /* 1 while MHD_start_daemon runs */
};

/* One request (MHD's con_cls), from its first callback to its completion. */
struct http_rq {
  struct spaa_http *h;               /* the server */
  struct spaa_req req;               /* what the handler sees */
  char path[SPAA_HTTP_MAX_PATH];     /* normalized path */
  char scratch[SPAA_HTTP_MAX_PATH];  /* path copy holding {param} values */
  struct spaa_buf body;              /* the body as received, capped at max_body */
  size_t max_body;                   /* cap on the body as received */
  size_t max_decoded;                /* cap on the decoded body */
  size_t received;                   /* body bytes received, kept or not */
  int over;                          /* body passed the cap: discarding the rest */
  int nomem;                         /* could not keep the body */
  int needs_decode;                  /* Content-Encoding to undo */
  int answered;                      /* a response was queued */
  int status;                        /* its status, for the log */
  int64_t start_ns;                  /* monotonic start, for the log */
};

static int64_t now_ns(clockid_t clk)
{
  struct timespec ts;
  clock_gettime(clk, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- responses ------------------------------------------------------------------------ */

static void resp_init(struct spaa_resp *resp)
{
  memset(resp, 0, sizeof(*resp));
  resp->status = 200;
  spaa_buf_init(&resp->body, SPAA_HTTP_RESP_MAX);
}

int spaa_resp_header(struct spaa_resp *resp, const char *name, const char *value)
{
  size_t i = resp->n_headers;
  if (i >= SPAA_HTTP_MAX_HEADERS || strlen(name) >= sizeof(resp->headers[i].name) ||
      strlen(value) >= sizeof(resp->headers[i].value))
    return -1;
  strcpy(resp->headers[i].name, name);
  strcpy(resp->headers[i].value, value);
  resp->n_headers++;
  return 0;
}

void spaa_resp_bytes(struct spaa_resp *resp, int status, const char *content_type,
                     const void *data, size_t len)
{
  resp->status = status;
  resp->content_type = content_type;
  resp->body.len = 0;
  if (spaa_buf_add(&resp->body, data, len)) {
    spaa_buf_free(&resp->body);
    resp->status = 500;
    resp->content_type = "application/json";
    spaa_buf_adds(&resp->body, "{\"error\":\"nomem\",\"detail\":\"response too large\"}");
  }
}

void spaa_resp_json(struct spaa_resp *resp, int status, json_t *value)
{
  char *s = value ? json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  json_decref(value);
  if (!s) {
    spaa_resp_bytes(resp, 500, "application/json",
                    "{\"error\":\"internal\",\"detail\":\"cannot encode the answer\"}", 55);
    return;
  }
  spaa_resp_bytes(resp, status, "application/json", s, strlen(s));
  free(s);
}

static void resp_error_msg(struct spaa_resp *resp, int code, const char *detail)
{
  json_t *o = json_object();
  json_object_set_new(o, "error", json_string(spaa_err_name(code)));
  json_object_set_new(o, "detail", json_string(detail ? detail : spaa_err_default(code)));
  if (!json_object_get(o, "detail")) /* not valid UTF-8: say so rather than nothing */
    json_object_set_new(o, "detail", json_string(spaa_err_default(code)));
  spaa_resp_json(resp, spaa_err_status(code), o);
  if (code == SPAA_E_BUSY || code == SPAA_E_SHUTDOWN)
    spaa_resp_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
  if (code == SPAA_E_UNAUTHORIZED)
    spaa_resp_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
}

void spaa_resp_error(struct spaa_resp *resp, int code, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  resp_error_msg(resp, code, msg);
}

void spaa_resp_err(struct spaa_resp *resp, const struct spaa_err *err)
{
  int code = err->code ? err->code : SPAA_E_INTERNAL;
  resp_error_msg(resp, code, err->msg[0] ? err->msg : NULL);
}

/* ---- request lookups -------------------------------------------------------------------- */

const char *spaa_req_param(const struct spaa_req *req, const char *name)
{
  size_t i, n = strlen(name);
  for (i = 0; i < req->n_params; i++)
    if (req->params[i].name_len == n && memcmp(req->params[i].name, name, n) == 0)
      return req->params[i].value;
  return NULL;
}

const char *spaa_req_query(const struct spaa_req *req, const char *key)
{
  const char *v;
  if (!req->conn)
    return NULL;
  v = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
  if (v)
    return v;
  /* "?key" has a NULL value in MHD: tell it apart from absence */
  return MHD_lookup_connection_value_n(req->conn, MHD_GET_ARGUMENT_KIND, key, strlen(key), NULL,
                                       NULL) == MHD_YES
             ? ""
             : NULL;
}

struct query_each {
  const char *key;    /* the name looked for */
  spaa_query_cb cb;   /* called per value */
  void *ctx;
  size_t n;           /* values seen */
};

static enum MHD_Result query_each_it(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
  struct query_each *q = cls;
  if (key && strcmp(key, q->key) == 0) {
    q->n++;
    if (q->cb)
      q->cb(q->ctx, value ? value : "");
  }
  return MHD_YES;
}

size_t spaa_req_query_each(const struct spaa_req *req, const char *key, spaa_query_cb cb,
                           void *ctx)
{
  struct query_each q = {key, cb, ctx, 0};
  if (req->conn)
    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, query_each_it, &q);
  return q.n;
}

const char *spaa_req_header(const struct spaa_req *req, const char *name)
{
  return req->conn ? MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name) : NULL;
}

/* ---- auth ------------------------------------------------------------------------------- */

int spaa_http_ct_equal(const char *given, size_t given_len, const char *secret,
                       size_t secret_len)
{
  volatile unsigned char diff = (unsigned char)(given_len != secret_len);
  size_t i;
  for (i = 0; i < secret_len; i++) {
    unsigned char g = i < given_len ? (unsigned char)given[i] : 0;
    diff |= (unsigned char)(g ^ (unsigned char)secret[i]);
  }
  return diff == 0;
}

int spaa_http_token_ok(const struct spaa_req *req, char *const *tokens, size_t n,
                       int allow_basic)
{
  const char *a, *cand = NULL;
  char basic[512];
  size_t i, cl = 0;
  int ok = 0;
  if (n == 0)
    return 1;
  a = spaa_req_header(req, MHD_HTTP_HEADER_AUTHORIZATION);
  if (!a)
    return 0;
  while (*a == ' ')
    a++;
  if (strncasecmp(a, "Bearer ", 7) == 0) {
    cand = a + 7;
    while (*cand == ' ')
      cand++;
    cl = strlen(cand);
    while (cl && cand[cl - 1] == ' ')
      cl--;
  } else if (allow_basic && strncasecmp(a, "Basic ", 6) == 0) {
    const char *b64 = a + 6 + strspn(a + 6, " ");
    size_t bl;
    char *colon = spaa_base64_decode(basic, sizeof(basic), b64, strlen(b64), &bl) == 0
                      ? memchr(basic, ':', bl) : NULL;
    if (!colon)
      return 0;
    cand = colon + 1;
    cl = bl - (size_t)(cand - basic);
  }
  if (!cand || !cl)
    return 0;
  for (i = 0; i < n; i++) /* no early exit: every token is compared */
    ok |= spaa_http_ct_equal(cand, cl, tokens[i], strlen(tokens[i]));
  return ok;
}

/* ---- routing ------------------------------------------------------------------------- */

int spaa_http_normalize_path(const char *path, char *out, size_t n)
{
  size_t o = 0;
  const char *p;
  if (!path || path[0] != '/' || n < 2)
    return -1;
  for (p = path; *p; p++) {
    if (*p == '/' && o > 0 && out[o - 1] == '/')
      continue;
    if (o + 1 >= n)
      return -1;
    out[o++] = *p;
  }
  if (o > 1 && out[o - 1] == '/')
    o--;
  out[o] = 0;
  return 0;
}

/* Next non-empty segment of s: sets seg and len, advances s; 0 when none is left. */
static int next_seg(const char **s, const char **seg, size_t *len)
{
  const char *p = *s;
  while (*p == '/')
    p++;
  if (!*p)
    return 0;
  *seg = p;
  while (*p && *p != '/')
    p++;
  *len = (size_t)(p - *seg);
  *s = p;
  return 1;
}

/* Match pattern against path; on success fill req params (offsets into path). */
static int match_pattern(const char *pattern, const char *path, struct spaa_req *req,
                         size_t *offs, size_t *lens)
{
  const char *pp = pattern, *sp = path, *pseg = NULL, *sseg = NULL;
  size_t pl = 0, sl = 0, np = 0;
  for (;;) {
    int hp = next_seg(&pp, &pseg, &pl), hs = next_seg(&sp, &sseg, &sl);
    if (!hp || !hs) {
      if (hp != hs)
        return 0;
      req->n_params = np;
      return 1;
    }
    if (pl >= 2 && pseg[0] == '{' && pseg[pl - 1] == '}') {
      if (np >= SPAA_HTTP_MAX_PARAMS)
        return 0;
      req->params[np].name = pseg + 1;
      req->params[np].name_len = pl - 2;
      offs[np] = (size_t)(sseg - path);
      lens[np] = sl;
      np++;
    } else if (pl != sl || memcmp(pseg, sseg, pl) != 0) {
      return 0;
    }
  }
}

const struct spaa_route *spaa_http_route(const struct spaa_route *routes, size_t n_routes,
                                         const char *method, const char *path, char *scratch,
                                         struct spaa_req *req, int *path_known, char *allow,
                                         size_t allow_n)
{
  size_t i, offs[SPAA_HTTP_MAX_PARAMS], lens[SPAA_HTTP_MAX_PARAMS], al = 0;
  int is_head = strcmp(method, "HEAD") == 0;
  *path_known = 0;
  if (allow_n)
    allow[0] = 0;
  for (i = 0; i < n_routes; i++) {
    const struct spaa_route *r = &routes[i];
    size_t k;
    if (!match_pattern(r->pattern, path, req, offs, lens))
      continue;
    if (strcmp(r->method, method) == 0 || (is_head && strcmp(r->method, "GET") == 0)) {
      strcpy(scratch, path);
      for (k = 0; k < req->n_params; k++) {
        scratch[offs[k] + lens[k]] = 0;
        req->params[k].value = scratch + offs[k];
      }
      return r;
    }
    *path_known = 1;
    if (!strstr(allow, r->method)) { /* methods are distinct words: no false hits */
      int w = snprintf(allow + al, allow_n - al, "%s%s", al ? ", " : "", r->method);
      if (w > 0 && (size_t)w < allow_n - al)
        al += (size_t)w;
    }
  }
  req->n_params = 0;
  return NULL;
}

/* ---- the request cycle ------------------------------------------------------------------ */

static void log_mhd(void *cls, const char *fm, va_list ap)
{
  struct spaa_http *h = cls;
  char msg[300];
  size_t l;
  vsnprintf(msg, sizeof(msg), fm, ap);
  l = strlen(msg);
  while (l && (msg[l - 1] == '\n' || msg[l - 1] == '\r' || msg[l - 1] == '.'))
    msg[--l] = 0;
  if (h->starting)
    snprintf(h->start_msg, sizeof(h->start_msg), "%.190s", msg);
  spaa_log(SPAA_LOG_WARN, "libmicrohttpd", "detail=\"%s\"", msg);
}

static enum MHD_Result queue(struct http_rq *rq, struct MHD_Connection *conn,
                             struct spaa_resp *resp)
{
  struct MHD_Response *r;
  enum MHD_Result ok;
  size_t len = 0, i;
  char *body = spaa_buf_steal(&resp->body, &len);
  if (body)
    r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
  else
    r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (!r) {
    free(body);
    return MHD_NO;
  }
  if (resp->content_type)
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
  for (i = 0; i < resp->n_headers; i++)
    MHD_add_response_header(r, resp->headers[i].name, resp->headers[i].value);
  if (__atomic_load_n(&rq->h->quiesced, __ATOMIC_ACQUIRE))
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
  ok = MHD_queue_response(conn, (unsigned)resp->status, r);
  MHD_destroy_response(r);
  rq->answered = 1;
  rq->status = resp->status;
  return ok;
}

/* Answer an error the core found, in the route's dialect when it has one. */
static enum MHD_Result fail(struct http_rq *rq, struct MHD_Connection *conn, int code,
                            const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result fail(struct http_rq *rq, struct MHD_Connection *conn, int code,
                            const char *fmt, ...)
{
  struct spaa_resp resp;
  char msg[512];
  enum MHD_Result ok;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  resp_init(&resp);
  if (rq->req.route && rq->req.route->on_error)
    rq->req.route->on_error(&rq->req, &resp, code, msg);
  else
    resp_error_msg(&resp, code, msg);
  ok = queue(rq, conn, &resp);
  spaa_buf_free(&resp.body);
  return ok;
}

/* First callback: headers only. Route, auth, encoding and declared length are checked
 * here so that a refusal goes out before any body byte is read. */
static enum MHD_Result begin(struct http_rq *rq, struct MHD_Connection *conn, const char *url,
                             const char *method)
{
  struct spaa_http *h = rq->h;
  const struct spaa_config *cfg = h->app->cfg;
  const struct spaa_route *r;
  const char *cl, *ce;
  char allow[128];
  int known, nd;
  struct spaa_err err;
  rq->req.method = method;
  rq->req.app = h->app;
  rq->req.conn = conn;
  rq->req.received_ns = now_ns(CLOCK_REALTIME);
  rq->req.path = rq->path;
  if (spaa_http_normalize_path(url, rq->path, sizeof(rq->path))) {
    snprintf(rq->path, sizeof(rq->path), "%.64s...", url ? url : "");
    return fail(rq, conn, SPAA_E_BAD_REQUEST, "the path must start with '/' and be shorter "
                "than %d bytes", SPAA_HTTP_MAX_PATH);
  }
  r = spaa_http_route(h->routes, h->n_routes, method, rq->path, rq->scratch, &rq->req, &known,
                      allow, sizeof(allow));
  if (!r) {
    if (!known)
      return fail(rq, conn, SPAA_E_NOT_FOUND, "no such endpoint: %s %s", method, rq->path);
    {
      struct spaa_resp resp;
      enum MHD_Result ok;
      resp_init(&resp);
      spaa_resp_error(&resp, SPAA_E_METHOD, "%s is not allowed on %s; allowed: %s", method,
                      rq->path, allow);
      spaa_resp_header(&resp, MHD_HTTP_HEADER_ALLOW, allow);
      ok = queue(rq, conn, &resp);
      spaa_buf_free(&resp.body);
      return ok;
    }
  }
  rq->req.route = r;
  if (r->auth == SPAA_AUTH_READ &&
      !spaa_http_token_ok(&rq->req, cfg->read_tokens, cfg->n_read_tokens, 0))
    return fail(rq, conn, SPAA_E_UNAUTHORIZED,
                "this endpoint needs 'Authorization: Bearer <read token>'");
  if (r->auth == SPAA_AUTH_INGEST &&
      !spaa_http_token_ok(&rq->req, cfg->ingest_tokens, cfg->n_ingest_tokens, 1))
    return fail(rq, conn, SPAA_E_UNAUTHORIZED,
                "this endpoint needs 'Authorization: Bearer <ingest token>'");
  if (r->auth == SPAA_AUTH_ADMIN && !cfg->n_admin_tokens)
    return fail(rq, conn, SPAA_E_FORBIDDEN, "deletes are off: set admin_token (--admin-token, "
                "SPAA_RELAY_ADMIN_TOKENS) to allow them");
  if (r->auth == SPAA_AUTH_ADMIN &&
      !spaa_http_token_ok(&rq->req, cfg->admin_tokens, cfg->n_admin_tokens, 0))
    return fail(rq, conn, SPAA_E_UNAUTHORIZED,
                "this endpoint needs 'Authorization: Bearer <admin token>'");
  rq->max_body = r->max_body ? r->max_body : cfg->max_body;
  rq->max_decoded = r->max_decoded ? r->max_decoded : cfg->max_decompressed;
  ce = spaa_req_header(&rq->req, MHD_HTTP_HEADER_CONTENT_ENCODING);
  rq->req.content_encoding = ce;
  if (!r->raw_body) {
    spaa_err_clear(&err);
    nd = spaa_decode_needed(ce, &err);
    if (nd < 0)
      return fail(rq, conn, nd, "%s", err.msg);
    rq->needs_decode = nd;
  }
  cl = spaa_req_header(&rq->req, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (cl) {
    char *end;
    unsigned long long v = strtoull(cl, &end, 10);
    if (end != cl && v > rq->max_body)
      return fail(rq, conn, SPAA_E_TOO_LARGE,
                  "the body is %llu bytes, over the %zu-byte cap on this endpoint", v,
                  rq->max_body);
  }
  spaa_buf_init(&rq->body, rq->max_body);
  return MHD_YES;
}

/* Last callback: the whole body is in. Decode, run the handler, answer. */
static enum MHD_Result finish(struct http_rq *rq, struct MHD_Connection *conn)
{
  struct spaa_resp resp;
  struct spaa_buf decoded;
  struct spaa_err err;
  enum MHD_Result ok;
  if (rq->over)
    return fail(rq, conn, SPAA_E_TOO_LARGE,
                "the body passed the %zu-byte cap on this endpoint (%zu bytes received)",
                rq->max_body, rq->received);
  if (rq->nomem)
    return fail(rq, conn, SPAA_E_NOMEM, "out of memory while receiving the body");
  spaa_buf_init(&decoded, 0);
  rq->req.wire_len = rq->body.len;
  if (rq->needs_decode) {
    spaa_err_clear(&err);
    if (spaa_decode(rq->req.content_encoding, (const uint8_t *)rq->body.p, rq->body.len,
                    rq->max_decoded, &decoded, &err))
      return fail(rq, conn, err.code, "%s", err.msg);
    spaa_buf_free(&rq->body); /* keep one copy, not two */
    rq->req.body = (const uint8_t *)(decoded.p ? decoded.p : "");
    rq->req.body_len = decoded.len;
    rq->req.body_decoded = 1;
  } else {
    rq->req.body = (const uint8_t *)(rq->body.p ? rq->body.p : "");
    rq->req.body_len = rq->body.len;
  }
  resp_init(&resp);
  rq->req.route->fn(&rq->req, &resp);
  ok = queue(rq, conn, &resp);
  spaa_buf_free(&resp.body);
  spaa_buf_free(&decoded);
  rq->req.body = NULL;
  rq->req.body_len = 0;
  return ok;
}

/* How much past the cap a body is read (and thrown away) so that the sender gets its 413;
 * beyond that the connection is dropped: max(cap, 64 MiB). */
static size_t discard_max(size_t cap)
{
  return cap > SPAA_HTTP_MIN_DISCARD ? cap : SPAA_HTTP_MIN_DISCARD;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
  struct spaa_http *h = cls;
  struct http_rq *rq = *con_cls;
  if (!rq) {
    if (!(rq = calloc(1, sizeof(*rq))))
      return MHD_NO;
    rq->h = h;
    rq->start_ns = now_ns(CLOCK_MONOTONIC);
    spaa_buf_init(&rq->body, 1);
    *con_cls = rq;
    __atomic_add_fetch(&h->inflight, 1, __ATOMIC_ACQ_REL);
    return begin(rq, conn, url, method);
  }
  if (rq->answered) { /* refused from the headers: MHD discards what follows */
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (*upload_data_size) {
    size_t n = *upload_data_size;
    *upload_data_size = 0;
    rq->received += n;
    if (!rq->over && !rq->nomem) {
      if (n > rq->max_body - rq->body.len) {
        rq->over = 1; /* keep nothing more: the answer will be 413 */
        spaa_buf_free(&rq->body);
      } else if (spaa_buf_add(&rq->body, upload_data, n)) {
        rq->nomem = 1;
        spaa_buf_free(&rq->body);
      }
    }
    if ((rq->over || rq->nomem) && rq->received - rq->max_body > discard_max(rq->max_body)) {
      spaa_log(SPAA_LOG_WARN, "dropping connection: body far past the cap",
               "path=\"%s\" received=%zu cap=%zu", rq->path, rq->received, rq->max_body);
      return MHD_NO;
    }
    return MHD_YES;
  }
  return finish(rq, conn);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
  struct spaa_http *h = cls;
  struct http_rq *rq = *con_cls;
  if (!rq)
    return;
  *con_cls = NULL;
  {
    int64_t us = (now_ns(CLOCK_MONOTONIC) - rq->start_ns) / 1000;
    const char *path = rq->req.path ? rq->req.path : "";
    enum spaa_log_level lv = SPAA_LOG_INFO;
    if (strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0)
      lv = SPAA_LOG_DEBUG;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && lv < SPAA_LOG_INFO)
      lv = SPAA_LOG_INFO;
    spaa_log(lv, "request",
             "method=%s path=\"%s\" status=%d bytes=%zu ms=%lld.%03lld%s",
             rq->req.method ? rq->req.method : "-", path, rq->answered ? rq->status : 0,
             rq->received, (long long)(us / 1000), (long long)(us % 1000),
             toe == MHD_REQUEST_TERMINATED_COMPLETED_OK       ? ""
             : toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED  ? " end=timeout"
             : toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT     ? " end=client_abort"
             : toe == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN  ? " end=shutdown"
                                                              : " end=error");
  }
  spaa_buf_free(&rq->body);
  free(rq);
  __atomic_sub_fetch(&h->inflight, 1, __ATOMIC_ACQ_REL);
}

/* ---- daemon ------------------------------------------------------------------------------ */

int spaa_http_start(const struct spaa_app *app, const struct spaa_route *routes,
                    size_t n_routes, struct spaa_http **out, struct spaa_err *err)
{
  const struct spaa_config *cfg = app->cfg;
  struct spaa_http *h;
  struct sockaddr_in sa4;
  struct sockaddr_in6 sa6;
  struct sockaddr *sa;
  const union MHD_DaemonInfo *info;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                   MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_AUTO;
  *out = NULL;
  if (!(h = calloc(1, sizeof(*h))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  h->app = app;
  h->routes = routes;
  h->n_routes = n_routes;
  memset(&sa4, 0, sizeof(sa4));
  memset(&sa6, 0, sizeof(sa6));
  if (cfg->listen_ipv6) {
    sa6.sin6_family = AF_INET6;
    sa6.sin6_port = htons(cfg->listen_port);
    if (inet_pton(AF_INET6, cfg->listen_host, &sa6.sin6_addr) != 1)
      goto bad_addr;
    sa = (struct sockaddr *)&sa6;
    flags |= MHD_USE_IPv6;
  } else {
    sa4.sin_family = AF_INET;
    sa4.sin_port = htons(cfg->listen_port);
    if (inet_pton(AF_INET, cfg->listen_host, &sa4.sin_addr) != 1)
      goto bad_addr;
    sa = (struct sockaddr *)&sa4;
  }
  h->starting = 1;
  h->d = MHD_start_daemon(flags, cfg->listen_port, NULL, NULL, on_request, h,
                          MHD_OPTION_EXTERNAL_LOGGER, log_mhd, h, /* first, as MHD asks */
                          MHD_OPTION_SOCK_ADDR, sa,
                          MHD_OPTION_CONNECTION_LIMIT, (unsigned int)cfg->workers,
                          MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->idle_timeout,
                          MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_END);
  h->starting = 0;
  if (!h->d) {
    spaa_err_set(err, SPAA_E_IO, 0, 0, "cannot listen on %s%s%s:%u: %s",
                 cfg->listen_ipv6 ? "[" : "", cfg->listen_host, cfg->listen_ipv6 ? "]" : "",
                 cfg->listen_port, h->start_msg[0] ? h->start_msg : "libmicrohttpd failed");
    free(h);
    return SPAA_E_IO;
  }
  info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
  h->port = info ? info->port : cfg->listen_port;
  *out = h;
  return 0;
bad_addr:
  free(h);
  return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "bad listen address '%s'", cfg->listen_host);
}

uint16_t spaa_http_port(const struct spaa_http *h) { return h->port; }

void spaa_http_quiesce(struct spaa_http *h)
{
  MHD_socket fd;
  if (!h || __atomic_exchange_n(&h->quiesced, 1, __ATOMIC_ACQ_REL))
    return;
  fd = MHD_quiesce_daemon(h->d);
  if (fd != MHD_INVALID_SOCKET)
    close(fd);
}

size_t spaa_http_inflight(const struct spaa_http *h)
{
  return __atomic_load_n(&h->inflight, __ATOMIC_ACQUIRE);
}

void spaa_http_stop(struct spaa_http *h)
{
  if (!h)
    return;
  spaa_http_quiesce(h);
  MHD_stop_daemon(h->d);
  free(h);
}
