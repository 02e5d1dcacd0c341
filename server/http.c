/* The HTTP core on libmicrohttpd (see http.h): routing, auth, capped bodies, decoding,
 * JSON errors, and the daemon's start, quiesce and stop.
 *
 * Threading: MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL with a thread pool of
 * SPAA_HTTP_IO_THREADS (MHD_OPTION_THREAD_POOL_SIZE), and MHD_ALLOW_SUSPEND_RESUME.
 * Why this mode: an epoll loop holds thousands of connections for the price of their
 * buffers, not a thread (and a stack) each, and MHD's own loop spares us an event loop
 * on the external-select API; epoll rather than MHD_USE_AUTO so that the mode does not
 * change under us (AUTO may pick poll, whose cost grows with every idle connection). A few
 * I/O threads keep reading sockets while one is busy. They only read, route and answer:
 * the CPU and disk work of a finished body (decode, convert, store, and every handler but
 * the cheap ones marked on_io_thread, such as /healthz) runs on the bounded worker pool
 * (pool.h) with the connection suspended (MHD_suspend_connection), and the worker resumes
 * it when the answer is ready. Deadlines that MHD has no option for (a head within
 * header_timeout, a body at a minimum rate) are kept by conns.h; the idle timeout is
 * MHD_OPTION_CONNECTION_TIMEOUT. Connections over max_connections get a 503 (MHD's own hard
 * limit sits a margin above it, where it can only close). Bytes held by requests in flight
 * are charged to a memory budget; over it, a 503 (or the dialect's equivalent). */
#include "server/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "base/base64.h"
#include "base/compress.h"
#include "base/limits.h"
#include "base/utf8.h"
#include "server/budget.h"
#include "server/conns.h"
#include "server/decode.h"
#include "server/http_edge.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/pool.h"
#include "server/spool.h"

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
  struct spaa_pool *pool;            /* runs finished bodies (decode, handler) */
  struct spaa_conns *conns;          /* open connections, deadlines, counted events */
  unsigned max_conns;                /* connections beyond this get a 503 */
  struct spaa_budget *budget;        /* the memory budget: the app's, or own_budget */
  struct spaa_budget *own_budget;    /* made here when the app brings none */
};

/* One request (MHD's con_cls), from its first callback to its completion. */
struct http_rq {
  struct spaa_http *h;               /* the server */
  struct spaa_req req;               /* what the handler sees */
  char path[SPAA_HTTP_MAX_PATH];     /* normalized path */
  char scratch[SPAA_HTTP_MAX_PATH];  /* path copy holding {param} values */
  struct spaa_buf body;              /* the body as received, capped at max_body; a body
                                      * past SPAA_HTTP_FILE_BODY is in bfile instead, and
                                      * once complete body.p/len are its mapping (cap 0) */
  struct spaa_bodyfile bfile;        /* a large body, in an unlinked file */
  struct spaa_buf decoded;           /* the body with its Content-Encoding undone; past
                                      * SPAA_HTTP_FILE_BODY in dfile, then its mapping */
  struct spaa_bodyfile dfile;        /* a large decoded body, in an unlinked file */
  size_t max_body;                   /* cap on the body as received */
  size_t max_decoded;                /* cap on the decoded body */
  size_t received;                   /* body bytes received, kept or not */
  int over;                          /* body passed the cap: discarding the rest */
  unsigned long long declared_over;  /* a Content-Length over the cap, read and thrown away */
  unsigned long long declared_busy;  /* a Content-Length over the budget, likewise */
  int nomem;                         /* could not keep the body */
  int body_io;                       /* could not keep the body in its file: errno */
  int needs_decode;                  /* Content-Encoding to undo */
  int answered;                      /* a response was queued */
  uint64_t sent;                     /* its body's bytes, for the log */
  int status;                        /* its status, for the log */
  char answer[200];                  /* the start of an error answer's body, for the log */
  char ids[208];                     /* the answer's X-Spaa-Profile-Ids, for the log */
  int64_t start_ns;                  /* monotonic start, for the log */
  struct spaa_conn *sconn;           /* the connection's bookkeeping (conns.h), or NULL */
  struct MHD_Connection *mconn;      /* the connection, for the worker's resume */
  struct spaa_pool_job job;          /* the worker pool's link */
  int state;                         /* atomic: enum rq_state */
  struct spaa_resp resp;             /* the worker's answer, queued on resume */
  size_t charged;                    /* bytes charged to the memory budget (the body's) */
  size_t declared;                   /* the Content-Length accepted, or 0 */
  struct spaa_budget_work work;      /* the conversion's charge and its models' meter */
  int over_budget;                   /* a chunked body passed the budget: 503 at its end */
  int close;                         /* close the connection after the answer */
};

enum rq_state { RQ_READING = 0, RQ_QUEUED, RQ_DONE };

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
  size_t i = resp->n_headers, len = strlen(value);
  int is_long = len >= sizeof(resp->headers[i].value);
  if (i >= SPAA_HTTP_MAX_HEADERS || strlen(name) >= sizeof(resp->headers[i].name) ||
      (is_long && (resp->long_at || len >= sizeof(resp->long_value))))
    return -1;
  strcpy(resp->headers[i].name, name);
  if (is_long) {
    memcpy(resp->long_value, value, len + 1);
    resp->headers[i].value[0] = 0;
    resp->long_at = i + 1;
  } else {
    strcpy(resp->headers[i].value, value);
  }
  resp->n_headers++;
  return 0;
}

void spaa_resp_body_release(struct spaa_resp *resp)
{
  spaa_buf_free(&resp->body);
  if (resp->has_file)
    close(resp->file_fd);
  resp->has_file = 0;
  resp->file_len = 0;
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
    static const char failed[] = "{\"error\":\"internal\",\"detail\":\"cannot encode the "
                                 "answer\"}";
    spaa_resp_bytes(resp, 500, "application/json", failed, sizeof(failed) - 1);
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
  if (code == SPAA_E_BUSY || code == SPAA_E_SHUTDOWN || code == SPAA_E_UNAVAILABLE)
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
  char msg[300], q[620];
  size_t l;
  vsnprintf(msg, sizeof(msg), fm, ap);
  l = strlen(msg);
  while (l && (msg[l - 1] == '\n' || msg[l - 1] == '\r' || msg[l - 1] == '.'))
    msg[--l] = 0;
  if (h->starting)
    snprintf(h->start_msg, sizeof(h->start_msg), "%.190s", msg);
  if (!h->starting && strstr(msg, "connection limit")) {
    spaa_conns_note(h->conns, SPAA_CONNS_MHD_LIMIT); /* logged once per interval */
    return;
  }
  if (!h->starting && h->conns) { /* per-connection news (resets, closures): counted */
    spaa_conns_note(h->conns, SPAA_CONNS_MHD_MSG);
    spaa_log(SPAA_LOG_DEBUG, "libmicrohttpd", "detail=\"%s\"", spaa_log_q(q, sizeof(q), msg));
    return;
  }
  spaa_log(SPAA_LOG_WARN, "libmicrohttpd", "detail=\"%s\"", spaa_log_q(q, sizeof(q), msg));
}

/* How much past the cap a body is read (and thrown away) so that the sender gets its 413;
 * beyond that the connection is dropped: max(cap, 64 MiB). */
static size_t discard_max(size_t cap)
{
  return cap > SPAA_HTTP_MIN_DISCARD ? cap : SPAA_HTTP_MIN_DISCARD;
}

/* The stored profile ids an answer names (its X-Spaa-Profile-Ids) into out (size n) for the
 * log, "-" when none. A list longer than out, or one the answer itself cut (fewer ids than
 * its X-Spaa-Profile-Count), ends in ",...": whole ids, then the mark. */
static void resp_ids(const struct spaa_resp *r, char *out, size_t n)
{
  const char *ids = NULL, *count = NULL, *p;
  size_t i, listed = 0, len;
  int cut;
  for (i = 0; i < r->n_headers; i++) {
    if (strcasecmp(r->headers[i].name, "X-Spaa-Profile-Ids") == 0 &&
        spaa_resp_header_at(r, i)[0])
      ids = spaa_resp_header_at(r, i);
    else if (strcasecmp(r->headers[i].name, "X-Spaa-Profile-Count") == 0)
      count = spaa_resp_header_at(r, i);
  }
  if (!ids) {
    snprintf(out, n, "-");
    return;
  }
  for (p = ids, listed = 1; *p; p++)
    listed += *p == ',';
  len = strlen(ids);
  cut = count && strtoull(count, NULL, 10) > listed;
  if (len < n && !cut) {
    memcpy(out, ids, len + 1);
    return;
  }
  /* the whole ids that leave room for ",...", then the mark */
  if (len > n - 5) { /* n is the log copy's 208: room for ",...\0" */
    len = n - 5;
    while (len && ids[len] != ',')
      len--;
  }
  memcpy(out, ids, len);
  snprintf(out + len, n - len, "%s...", len ? "," : "");
}

static enum MHD_Result queue(struct http_rq *rq, struct MHD_Connection *conn,
                             struct spaa_resp *resp)
{
  struct MHD_Response *r;
  enum MHD_Result ok;
  size_t len = 0, i;
  char *body;
  if (resp->status >= 400 && resp->body.p) {
    /* quotes and backslashes escaped: the text goes in a quoted log value */
    size_t o = 0;
    for (i = 0; i < resp->body.len && o + 3 < sizeof(rq->answer); i++) {
      char ch = resp->body.p[i];
      if (ch == '"' || ch == '\\')
        rq->answer[o++] = '\\';
      rq->answer[o++] = ch;
    }
    rq->answer[o] = 0;
  }
  resp_ids(resp, rq->ids, sizeof(rq->ids));
  rq->sent = resp->has_file ? resp->file_len : resp->body.len;
  if (resp->has_file) { /* MHD owns the descriptor from here, also when this fails */
    resp->has_file = 0;
    r = MHD_create_response_from_fd64(resp->file_len, resp->file_fd);
    if (!r)
      close(resp->file_fd);
    body = NULL;
  } else if ((body = spaa_buf_steal(&resp->body, &len)))
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
    MHD_add_response_header(r, resp->headers[i].name, spaa_resp_header_at(resp, i));
  if (rq->close || __atomic_load_n(&rq->h->quiesced, __ATOMIC_ACQUIRE))
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
  ok = MHD_queue_response(conn, (unsigned)resp->status, r);
  MHD_destroy_response(r);
  rq->answered = 1;
  rq->status = resp->status;
  return ok;
}

/* Fill resp for an error the core found, in the route's dialect when it has one. */
static void fail_into(struct http_rq *rq, struct spaa_resp *resp, int code, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));
static void fail_into(struct http_rq *rq, struct spaa_resp *resp, int code, const char *fmt,
                      ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (rq->req.route && rq->req.route->on_error)
    rq->req.route->on_error(&rq->req, resp, code, msg);
  else
    resp_error_msg(resp, code, msg);
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
  fail_into(rq, &resp, code, "%s", msg);
  ok = queue(rq, conn, &resp);
  spaa_buf_free(&resp.body);
  return ok;
}

/* Answer an HTTP-level error (no route's dialect: the request may name none) with our JSON
 * {"error": name, "detail": ...} and `status`; the connection is closed after it. */
static enum MHD_Result fail_http(struct http_rq *rq, struct MHD_Connection *conn,
                                 unsigned status, const char *name, const char *detail)
{
  struct spaa_resp resp;
  enum MHD_Result ok;
  json_t *o = json_object();
  resp_init(&resp);
  json_object_set_new(o, "error", json_string(name));
  json_object_set_new(o, "detail", json_string(detail));
  spaa_resp_json(&resp, (int)status, o);
  rq->close = 1;
  ok = queue(rq, conn, &resp);
  spaa_buf_free(&resp.body);
  return ok;
}

/* Adds the length of one query argument (key=value&) to *(size_t *)cls. */
static enum MHD_Result count_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
  (void)kind;
  *(size_t *)cls += strlen(key) + (value ? strlen(value) + 1 : 0) + 1;
  return MHD_YES;
}

/* libmicrohttpd read a request line: what its URI holds before the %XX escapes are decoded
 * (SPAA_URI_* on the connection, for head_checks). Returns no request context. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  unsigned flags = 0;
  int in_path = 1;
  size_t i, arg = 0, arg_n = 0; /* the current argument's start; the flagged one's length */
  const char *param = NULL;
  (void)cls;
  for (i = 0; uri && uri[i]; i++) {
    if (uri[i] == '?' || (!in_path && uri[i] == '&')) {
      in_path = 0;
      arg = i + 1;
    } else if (uri[i] == '%' && uri[i + 1] && uri[i + 2]) {
      if (uri[i + 1] == '0' && uri[i + 2] == '0' && in_path) {
        flags |= SPAA_URI_NUL;
      } else if (uri[i + 1] == '0' && uri[i + 2] == '0' && !param) {
        flags |= SPAA_URI_ARG_NUL;
        param = uri + arg;
        arg_n = strcspn(param, "=&");
      } else if (in_path && uri[i + 1] == '2' && (uri[i + 2] == 'F' || uri[i + 2] == 'f')) {
        flags |= SPAA_URI_SLASH;
      }
    }
  }
  spaa_conn_set_uri_flags(ci ? ci->socket_context : NULL, flags, param, arg_n);
  return NULL;
}

/* Adds 1 to *(unsigned *)cls for each Content-Length header line. */
static enum MHD_Result count_clen(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
  (void)kind;
  (void)value;
  if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
    ++*(unsigned *)cls;
  return MHD_YES;
}

/* What libmicrohttpd lets through but HTTP does not, before routing: a URI or a head over our
 * caps (414, 431; MHD answers heads over SPAA_HTTP_MHD_MEMORY itself, made JSON by
 * http_edge.c), HTTP/1.1 without Host (400).
 * 0 when fine; 1 when an answer was queued (or could not be). */
static int head_checks(struct http_rq *rq, struct MHD_Connection *conn, const char *url,
                       const char *version)
{
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
  size_t uri = url ? strlen(url) : 0;
  char msg[160];
  MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, count_arg, &uri);
  snprintf(rq->path, sizeof(rq->path), "%.64s%s", url ? url : "", uri > 64 ? "..." : "");
  if (uri > SPAA_HTTP_MAX_URI) {
    snprintf(msg, sizeof(msg), "the request URI is about %zu bytes, over the %d-byte cap", uri,
             SPAA_HTTP_MAX_URI);
    fail_http(rq, conn, 414, "uri_too_long", msg);
    return 1;
  }
  if (ci && ci->header_size > SPAA_HTTP_MAX_HEAD) {
    snprintf(msg, sizeof(msg), "the request head is %zu bytes, over the %d-byte cap",
             ci->header_size, SPAA_HTTP_MAX_HEAD);
    fail_http(rq, conn, 431, "headers_too_large", msg);
    return 1;
  }
  if (version && strcmp(version, MHD_HTTP_VERSION_1_1) == 0 &&
      !MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)) {
    fail_http(rq, conn, 400, "bad_request", "an HTTP/1.1 request must carry a Host header");
    return 1;
  }
  rq->path[0] = 0;
  return 0;
}

/* What the request line and head hold that libmicrohttpd lets through and HTTP refuses (the
 * route known, so that the answer is in its dialect: a browser's Sentry SDK reads a refusal
 * of the envelope route only with its CORS headers): an encoded NUL or '/' where decoding
 * would end or split the path or a value (400), two lengths or a length beside a transfer
 * coding (400, the connection closed), a transfer coding other than chunked (501). 0 when
 * fine; 1 when an answer was queued (or could not be). */
static int framing_checks(struct http_rq *rq, struct MHD_Connection *conn)
{
  const char *te;
  char msg[160], param[SPAA_URI_PARAM_MAX + 1], shown[2 * SPAA_URI_PARAM_MAX];
  unsigned uri_flags = spaa_conn_uri_flags(rq->sconn, param), clen = 0;
  /* libmicrohttpd decodes %00 into a NUL that ends the path early (a profile's id would name
   * the collection) and %2F into a separator the client did not write */
  if (uri_flags & SPAA_URI_NUL) {
    fail(rq, conn, SPAA_E_BAD_REQUEST, "the request path holds an encoded NUL byte (%%00)");
    return 1;
  }
  if (uri_flags & SPAA_URI_ARG_NUL) {
    spaa_utf8_clean(shown, sizeof(shown), param, strlen(param));
    snprintf(msg, sizeof(msg), strstr(param, "%00") ? "a query parameter's name ('%s') holds "
             "an encoded NUL byte (%%00)" : "the query parameter '%s' holds an encoded NUL "
             "byte (%%00)", shown);
    fail(rq, conn, SPAA_E_BAD_REQUEST, "%s", msg);
    return 1;
  }
  if (uri_flags & SPAA_URI_SLASH) {
    fail(rq, conn, SPAA_E_BAD_REQUEST, "the request path holds an encoded '/' (%%2F): no name "
         "served here has one");
    return 1;
  }
  /* RFC 9112 section 6.3: more than one length, or a length beside a transfer coding, leaves
   * where the body ends in doubt (libmicrohttpd takes the first): refused, and the connection
   * closed, so that nothing after it is read as a request of its own */
  MHD_get_connection_values(conn, MHD_HEADER_KIND, count_clen, &clen);
  te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
  if (clen > 1 || (clen && te)) {
    rq->close = 1;
    fail(rq, conn, SPAA_E_BAD_REQUEST, "%s", clen > 1 ? "the request has more than one "
         "Content-Length header" : "the request has both Content-Length and Transfer-Encoding: "
         "send one of them");
    return 1;
  }
  if (te && strcasecmp(te, "chunked") != 0) {
    /* RFC 9112 section 6.1: a transfer coding the server does not know is a 501; libmicrohttpd
     * would wait for a body it cannot delimit until the idle timeout */
    snprintf(msg, sizeof(msg), "Transfer-Encoding '%.40s' is not supported: only chunked (a "
             "compressed body goes in Content-Encoding)", te);
    fail_http(rq, conn, 501, "not_implemented", msg);
    return 1;
  }
  return 0;
}

/* First callback: headers only. Route, auth, encoding and declared length are checked
 * here so that a refusal goes out before any body byte is read. */
static enum MHD_Result begin(struct http_rq *rq, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version)
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
  if (head_checks(rq, conn, url, version))
    return rq->answered ? MHD_YES : MHD_NO;
  if (spaa_http_normalize_path(url, rq->path, sizeof(rq->path))) {
    snprintf(rq->path, sizeof(rq->path), "%.64s...", url ? url : "");
    return fail(rq, conn, SPAA_E_BAD_REQUEST, "the path must start with '/' and be shorter "
                "than %d bytes", SPAA_HTTP_MAX_PATH);
  }
  r = spaa_http_route(h->routes, h->n_routes, method, rq->path, rq->scratch, &rq->req, &known,
                      allow, sizeof(allow));
  rq->req.route = r;
  if (framing_checks(rq, conn))
    return rq->answered ? MHD_YES : MHD_NO;
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
  if (!r->on_io_thread && !r->ops && spaa_conns_count(h->conns) > h->max_conns) {
    spaa_conns_note(h->conns, SPAA_CONNS_OVER_LIMIT);
    rq->close = 1;
    return fail(rq, conn, SPAA_E_BUSY, "the server holds %zu connections, over its limit of "
                "%u; retry later", spaa_conns_count(h->conns), h->max_conns);
  }
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
    const char *expect = spaa_req_header(&rq->req, MHD_HTTP_HEADER_EXPECT);
    if (end != cl && v > rq->max_body && !expect &&
        v <= rq->max_body + discard_max(rq->max_body)) {
      /* a client that does not wait for 100-continue is sending the body now: answering
       * before reading it would close a connection with unread bytes, and the reset can
       * reach the client before the 413 does. Read it, keep nothing, answer at the end. */
      rq->over = 1;
      rq->declared_over = v;
      return MHD_YES;
    }
    if (end != cl && v > rq->max_body)
      return fail(rq, conn, SPAA_E_TOO_LARGE,
                  "the body is %llu bytes, over the %zu-byte cap on this endpoint", v,
                  rq->max_body);
    if (end != cl && v) {
      if (spaa_budget_take(h->budget, (size_t)v, 0, 0)) {
        if (!expect && v <= discard_max(rq->max_body)) {
          /* as for a body over the cap: read it, keep nothing, answer 503 at the end, so
           * that the client reads its Retry-After instead of a reset connection */
          rq->over_budget = 1;
          rq->declared_busy = v;
          return MHD_YES;
        }
        spaa_conns_note(h->conns, SPAA_CONNS_OVER_BUDGET);
        return fail(rq, conn, SPAA_E_BUSY, "a %llu-byte body does not fit in what is left of "
                    "the memory budget for requests in flight; retry later", v);
      }
      rq->charged = rq->declared = (size_t)v;
    }
  }
  spaa_buf_init(&rq->body, rq->max_body);
  return MHD_YES;
}

/* ---- running a finished body ------------------------------------------------------------- */

/* The route's budget charge per decoded byte (0: the default). */
static size_t model_factor(const struct http_rq *rq)
{
  return rq->req.route ? rq->req.route->model_factor : 0;
}

/* Where a large body's file is made: the data directory (as large answers' are), or NULL
 * for spaa_bodyfile's own choice; body_dir names it for an answer. */
static const char *file_dir(const struct http_rq *rq)
{
  const struct spaa_config *cfg = rq->h->app ? rq->h->app->cfg : NULL;
  return cfg ? cfg->data_dir : NULL;
}

static const char *body_dir(const struct http_rq *rq)
{
  return file_dir(rq) ? file_dir(rq) : "the temporary directory";
}

/* A body as received (body, bfile) or decoded (decoded, dfile) is held in its buffer b while
 * small and in its file f once large. These move it, map it and let it go. */

/* Append n bytes to f, what b held first moving there. 0, or -1 with rq->body_io set. */
static int held_to_file(struct http_rq *rq, struct spaa_bodyfile *f, struct spaa_buf *b,
                        const void *data, size_t n)
{
  if ((b->len && spaa_bodyfile_add(f, file_dir(rq), b->p, b->len)) ||
      spaa_bodyfile_add(f, file_dir(rq), data, n)) {
    rq->body_io = f->errno_saved ? f->errno_saved : EIO;
    return -1;
  }
  spaa_buf_free(b);
  return 0;
}

/* When held in f: mapped, as b->p/len (cap 0: not the buffer's). 0, or -1 with rq->body_io. */
static int held_map(struct http_rq *rq, struct spaa_bodyfile *f, struct spaa_buf *b)
{
  char *m;
  if (f->fd < 0 || f->map)
    return 0;
  if (!(m = spaa_bodyfile_map(f))) {
    rq->body_io = f->errno_saved ? f->errno_saved : EIO;
    return -1;
  }
  b->p = m;
  b->len = (size_t)f->len;
  b->cap = 0;
  return 0;
}

/* Let go of the buffer, or of the file and its mapping. */
static void held_free(struct spaa_bodyfile *f, struct spaa_buf *b)
{
  if (f->fd >= 0) {
    spaa_bodyfile_free(f);
    b->p = NULL; /* the mapping's, not the buffer's */
    b->len = b->cap = 0;
  }
  spaa_buf_free(b);
}

static void body_free(struct http_rq *rq) { held_free(&rq->bfile, &rq->body); }
static void decoded_free(struct http_rq *rq) { held_free(&rq->dfile, &rq->decoded); }

/* spaa_decode_to's sink: the decoded bytes in memory while small, in dfile once they pass
 * SPAA_HTTP_FILE_BODY. */
static int decoded_piece(void *ctx, const void *data, size_t n)
{
  struct http_rq *rq = ctx;
  if (rq->dfile.fd < 0 && rq->decoded.len + n <= SPAA_HTTP_FILE_BODY)
    return spaa_buf_add(&rq->decoded, data, n) ? SPAA_E_NOMEM : 0;
  return held_to_file(rq, &rq->dfile, &rq->decoded, data, n) ? SPAA_E_IO : 0;
}

/* Undo the Content-Encoding into rq->decoded: through spaa_decode_to, a large result kept in
 * a file and mapped; or, for what only spaa_decode undoes (snappy, lz4, a list of codings) or
 * a route that may decode the result again (zstd_body), in memory. 0 or an error with err. */
static int decode_body(struct http_rq *rq, struct spaa_err *err)
{
  int rc = SPAA_E_USAGE;
  if (!rq->req.route->zstd_body)
    rc = spaa_decode_to(rq->req.content_encoding, (const uint8_t *)rq->body.p, rq->body.len,
                        rq->max_decoded, decoded_piece, rq, err);
  if (rc == SPAA_E_USAGE)
    return spaa_decode(rq->req.content_encoding, (const uint8_t *)rq->body.p, rq->body.len,
                       rq->max_decoded, &rq->decoded, err);
  if ((rc == SPAA_E_IO && rq->body_io) ||
      (!rc && held_map(rq, &rq->dfile, &rq->decoded)))
    rc = spaa_err_set(err, SPAA_E_BUSY, 0, 0, "the decoded body could not be kept in a file in "
                      "%s (%s); retry later", body_dir(rq), strerror(rq->body_io));
  else if (!rc && !rq->decoded.p && spaa_buf_reserve(&rq->decoded, 0))
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL); /* an empty result is "" as well */
  if (rc)
    decoded_free(rq);
  return rc;
}

/* spaa_req.drop_body: the body's buffers freed before the handler returns. */
static void drop_body(const struct spaa_req *req)
{
  struct http_rq *rq = (struct http_rq *)((char *)req - offsetof(struct http_rq, req));
  body_free(rq);
  decoded_free(rq);
  rq->req.body = (const uint8_t *)"";
  rq->req.body_len = 0;
}

/* The decoded body is itself a zstd frame (a .spaa.zst sent with Content-Encoding gzip, say):
 * decoded once more under the same cap. 0, or the decoder's code with err filled. */
static int zstd_again(struct http_rq *rq, struct spaa_err *err)
{
  struct spaa_buf again;
  int rc;
  spaa_buf_init(&again, 0);
  if ((rc = spaa_decode("zstd", (const uint8_t *)rq->decoded.p, rq->decoded.len,
                        rq->max_decoded, &again, err)))
    return rc;
  spaa_buf_free(&rq->decoded);
  rq->decoded = again;
  return 0;
}

/* Decode the body and run the handler into resp. Runs on a worker (or, for on_io_thread
 * routes, where the body was read). */
static void run(struct http_rq *rq, struct spaa_resp *resp)
{
  struct spaa_err err;
  resp_init(resp);
  spaa_buf_init(&rq->decoded, 0);
  rq->req.wire_len = rq->body.len;
  rq->req.drop_body = drop_body;
  if (!rq->needs_decode && rq->req.route->zstd_body && spaa_is_zstd(rq->body.p, rq->body.len)) {
    rq->req.content_encoding = "zstd"; /* a .spaa.zst sent as is: decoded under the cap */
    rq->needs_decode = 1;
  }
  if (rq->needs_decode) {
    spaa_err_clear(&err);
    if (decode_body(rq, &err) ||
        (rq->req.route->zstd_body && spaa_is_zstd(rq->decoded.p, rq->decoded.len) &&
         zstd_again(rq, &err))) {
      /* a decoder whose window the budget refused: the budget's answer (503, or 413) */
      if (rq->work.b && rq->work.meter.refused)
        fail_into(rq, resp, rq->work.meter.refused, "%s", rq->work.meter.why.msg);
      else
        fail_into(rq, resp, err.code, "%s", err.msg);
      return;
    }
    body_free(rq); /* keep one copy, not two */
    rq->req.body = (const uint8_t *)(rq->decoded.p ? rq->decoded.p : "");
    rq->req.body_len = rq->decoded.len;
    rq->req.body_decoded = 1;
    rq->req.body_file = rq->dfile.map != NULL;
    /* the decoded size known: charge what the conversion will hold, not the guess */
    spaa_budget_work_adjust(&rq->work, spaa_budget_cost(rq->decoded.len, model_factor(rq)));
  } else {
    rq->req.body = (const uint8_t *)(rq->body.p ? rq->body.p : "");
    rq->req.body_len = rq->body.len;
    rq->req.body_file = rq->bfile.map != NULL;
  }
  rq->req.route->fn(&rq->req, resp);
  drop_body(&rq->req);
  rq->req.body = NULL;
}

/* What a body will cost while it is converted: the decoded bytes and the model built from
 * them (the route's model_factor per decoded byte), guessed from the wire size when a
 * Content-Encoding is still to be undone, and from the gzip trailer (ISIZE, the size of the
 * last member mod 2^32: a hint) of a body that is itself gzip (a pprof). */
static size_t work_cost(const struct http_rq *rq)
{
  size_t dec = rq->body.len, n = rq->body.len;
  if (rq->needs_decode) {
    dec = n > rq->max_decoded / SPAA_HTTP_GUESS_RATIO ? rq->max_decoded
                                                       : n * SPAA_HTTP_GUESS_RATIO;
  } else {
    size_t hint = spaa_gzip_size_hint(rq->body.p, n);
    if (hint > rq->max_decoded)
      hint = rq->max_decoded;
    if (hint > dec)
      dec = hint;
  }
  return spaa_budget_cost(dec, model_factor(rq));
}

/* The worker's job: charge the budget (waiting a little), run, resume the connection. */
static void work(struct spaa_pool_job *job)
{
  struct http_rq *rq = (struct http_rq *)((char *)job - offsetof(struct http_rq, job));
  struct spaa_http *h = rq->h;
  int reads = rq->req.route->reads; /* builds models of stored profiles (no dialect) */
  size_t cost = rq->req.route->dialect || rq->body.len ? work_cost(rq)
                : reads                               ? SPAA_BUDGET_READ_COST : 0;
  if (cost && spaa_budget_work_begin(&rq->work, h->budget, rq->charged, cost,
                                     SPAA_HTTP_BUDGET_WAIT_MS)) {
    spaa_conns_note(h->conns, SPAA_CONNS_OVER_BUDGET);
    resp_init(&rq->resp);
    body_free(rq);
    fail_into(rq, &rq->resp, SPAA_E_BUSY, "the server is holding its memory budget for "
              "requests in flight; retry later");
  } else {
    rq->work.read = reads;
    rq->req.meter = rq->work.b ? &rq->work.meter : NULL;
    run(rq, &rq->resp);
    spaa_budget_work_end(&rq->work);
    rq->req.meter = NULL;
    if (reads && rq->work.meter.refused) {
      /* whatever the handler made of the allocation that failed (an error, or an answer with
       * a part missing), the answer is the budget's refusal (ingest dialects answer it) */
      spaa_resp_body_release(&rq->resp);
      resp_init(&rq->resp);
      resp_error_msg(&rq->resp, rq->work.meter.refused, rq->work.meter.why.msg);
    }
    if (rq->work.meter.refused == SPAA_E_BUSY) /* counted with the other budget refusals */
      spaa_conns_note(h->conns, SPAA_CONNS_OVER_BUDGET);
    /* a large answer (an export) left this thread's malloc arena holding the model it was
     * written from, tens of MB no later request may need: give the free pages back now
     * (uploads are trimmed through the budget, see spaa_budget_give) */
    if (rq->resp.body.len >= SPAA_HTTP_TRIM_ANSWER || rq->resp.file_len >= SPAA_HTTP_TRIM_ANSWER)
      malloc_trim(0);
  }
  __atomic_store_n(&rq->state, RQ_DONE, __ATOMIC_RELEASE);
  MHD_resume_connection(rq->mconn);
}

/* Last callback: the whole body is in. Cheap routes run here; the others go to a worker
 * with the connection suspended (the answer is queued when it resumes). */
static enum MHD_Result finish(struct http_rq *rq, struct MHD_Connection *conn)
{
  struct spaa_resp resp;
  enum MHD_Result ok;
  spaa_conn_body_done(rq->sconn);
  if (rq->over && rq->declared_over)
    return fail(rq, conn, SPAA_E_TOO_LARGE,
                "the body is %llu bytes, over the %zu-byte cap on this endpoint",
                rq->declared_over, rq->max_body);
  if (rq->over)
    return fail(rq, conn, SPAA_E_TOO_LARGE,
                "the body passed the %zu-byte cap on this endpoint (%zu bytes received)",
                rq->max_body, rq->received);
  if (rq->nomem)
    return fail(rq, conn, SPAA_E_NOMEM, "out of memory while receiving the body");
  if (!rq->over_budget && !rq->body_io)
    (void)held_map(rq, &rq->bfile, &rq->body);
  if (rq->body_io == ENOSPC || rq->body_io == EDQUOT)
    return fail(rq, conn, SPAA_E_BUSY, "the disk holding %s is full: the %zu-byte body could "
                "not be kept in a file there; retry later", body_dir(rq), rq->received);
  if (rq->body_io)
    return fail(rq, conn, SPAA_E_BUSY, "the %zu-byte body could not be kept in a file in %s "
                "(%s); retry later", rq->received, body_dir(rq), strerror(rq->body_io));
  if (rq->over_budget) {
    spaa_conns_note(rq->h->conns, SPAA_CONNS_OVER_BUDGET);
    if (rq->declared_busy)
      return fail(rq, conn, SPAA_E_BUSY, "a %llu-byte body does not fit in what is left of "
                  "the memory budget for requests in flight; retry later", rq->declared_busy);
    return fail(rq, conn, SPAA_E_BUSY, "the body passed what is left of the memory budget "
                "for requests in flight; retry later");
  }
  if (rq->req.route->on_io_thread ||
      (rq->req.route->quick && !rq->needs_decode && rq->body.len <= SPAA_HTTP_QUICK_MAX &&
       rq->req.route->quick(rq->body.p ? rq->body.p : "", rq->body.len))) {
    run(rq, &resp);
    ok = queue(rq, conn, &resp);
    spaa_buf_free(&resp.body);
    return ok;
  }
  rq->mconn = conn;
  rq->job.fn = work;
  __atomic_store_n(&rq->state, RQ_QUEUED, __ATOMIC_RELEASE);
  MHD_suspend_connection(conn);
  if (spaa_pool_submit(rq->h->pool, &rq->job)) {
    int closing = __atomic_load_n(&rq->h->quiesced, __ATOMIC_ACQUIRE);
    if (!closing)
      spaa_conns_note(rq->h->conns, SPAA_CONNS_POOL_FULL);
    resp_init(&rq->resp);
    if (closing)
      fail_into(rq, &rq->resp, SPAA_E_SHUTDOWN, "the server is shutting down; retry later");
    else
      fail_into(rq, &rq->resp, SPAA_E_BUSY, "%zu requests are waiting for a worker; retry "
                "later", (size_t)SPAA_HTTP_POOL_QUEUE);
    __atomic_store_n(&rq->state, RQ_DONE, __ATOMIC_RELEASE);
    MHD_resume_connection(conn);
  }
  return MHD_YES;
}


/* A piece of the body: keep it under the caps and the budget, or count it and drop it. A
 * body longer than SPAA_HTTP_FILE_BODY (declared so, or grown so) goes to a file. */
static enum MHD_Result body_piece(struct http_rq *rq, const char *data, size_t n)
{
  char q[sizeof(rq->path) * 2];
  rq->received += n;
  spaa_conn_body_bytes(rq->sconn, n);
  if (!rq->over && !rq->nomem && !rq->over_budget && !rq->body_io) {
    size_t kept = rq->bfile.fd >= 0 ? (size_t)rq->bfile.len : rq->body.len;
    if (n > rq->max_body - kept) {
      rq->over = 1; /* keep nothing more: the answer will be 413 */
      body_free(rq);
    } else if (kept + n > rq->charged) {
      /* a body longer than declared (chunked): charge it as it grows, 1 MiB at a time */
      size_t more = kept + n - rq->charged + ((size_t)1 << 20);
      if (spaa_budget_take(rq->h->budget, more, 0, 0)) {
        rq->over_budget = 1;
        body_free(rq);
      } else {
        rq->charged += more;
      }
    }
    if (rq->over || rq->over_budget) {
      /* dropped */
    } else if (rq->bfile.fd >= 0 || rq->declared > SPAA_HTTP_FILE_BODY ||
               kept + n > SPAA_HTTP_FILE_BODY) {
      if (held_to_file(rq, &rq->bfile, &rq->body, data, n))
        body_free(rq);
    } else {
      /* a declared length is allocated once, exactly: doubling would hold up to twice it */
      if (!rq->body.p && rq->declared >= n)
        spaa_buf_presize(&rq->body, rq->declared); /* on failure, add below says so */
      if (spaa_buf_add(&rq->body, data, n)) {
        rq->nomem = 1;
        spaa_buf_free(&rq->body);
      }
    }
  }
  if ((rq->over || rq->nomem || rq->over_budget || rq->body_io) &&
      rq->received > rq->max_body + discard_max(rq->max_body)) {
    spaa_log(SPAA_LOG_WARN, "dropping connection: body far past the cap",
             "path=\"%s\" received=%zu cap=%zu", spaa_log_q(q, sizeof(q), rq->path), rq->received,
             rq->max_body);
    return MHD_NO;
  }
  return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
  struct spaa_http *h = cls;
  struct http_rq *rq = *con_cls;
  if (!rq) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (!(rq = calloc(1, sizeof(*rq))))
      return MHD_NO;
    rq->h = h;
    rq->start_ns = now_ns(CLOCK_MONOTONIC);
    rq->sconn = ci ? ci->socket_context : NULL;
    spaa_conn_head_done(rq->sconn);
    spaa_buf_init(&rq->body, 1);
    spaa_bodyfile_init(&rq->bfile);
    spaa_bodyfile_init(&rq->dfile);
    *con_cls = rq;
    __atomic_add_fetch(&h->inflight, 1, __ATOMIC_ACQ_REL);
    return begin(rq, conn, url, method, version);
  }
  if (__atomic_load_n(&rq->state, __ATOMIC_ACQUIRE) == RQ_DONE) { /* the worker is done */
    enum MHD_Result ok = queue(rq, conn, &rq->resp);
    spaa_resp_body_release(&rq->resp);
    return ok;
  }
  if (rq->answered) { /* refused from the headers: MHD discards what follows */
    spaa_conn_body_bytes(rq->sconn, *upload_data_size);
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (*upload_data_size) {
    size_t n = *upload_data_size;
    *upload_data_size = 0;
    return body_piece(rq, upload_data, n);
  }
  return finish(rq, conn);
}


/* A request's figures: its duration by route; its status by route, unless the ingest flow
 * counted it (routes with a dialect count their answers, refusals included, in ingest.c). */
static void count_request(struct spaa_http *h, const struct http_rq *rq, int64_t ns)
{
  const struct spaa_route *r = rq->req.route;
  const char *route = r && r->pattern ? r->pattern : "-";
  char status[12];
  if (!rq->answered) /* the client left first, or the connection was dropped: no answer */
    return;
  spaa_metrics_observe_ns(h->app->metrics, SPAA_METRIC_HTTP_DURATION, route, NULL, ns);
  if (r && r->dialect)
    return;
  snprintf(status, sizeof(status), "%d", rq->status);
  spaa_metrics_add(h->app->metrics, SPAA_METRIC_REQUESTS, route, status, 1);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
  struct spaa_http *h = cls;
  struct http_rq *rq = *con_cls;
  (void)conn;
  if (!rq)
    return;
  *con_cls = NULL;
  {
    int64_t us = (now_ns(CLOCK_MONOTONIC) - rq->start_ns) / 1000;
    const char *path = rq->req.path ? rq->req.path : "";
    /* answered by a handler, or at the edge (http_edge.c: bad chunked framing after the head) */
    int status = rq->answered ? rq->status : (int)spaa_conn_edge_status(rq->sconn);
    if (!rq->answered && status)
      snprintf(rq->answer, sizeof(rq->answer), "the body's framing was refused (the debug line "
               "by=libmicrohttpd says how)");
    char models[40] = "", pq[SPAA_HTTP_MAX_PATH + 64];
    enum spaa_log_level lv = SPAA_LOG_INFO;
    if (strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0)
      lv = SPAA_LOG_DEBUG;
    if (rq->answered && rq->status == 503)
      lv = SPAA_LOG_DEBUG; /* refusals are counted and logged once per interval */
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && lv < SPAA_LOG_INFO)
      lv = SPAA_LOG_INFO;
    if (status >= 400 && status != 503 && status != 429)
      lv = SPAA_LOG_WARN; /* a rejection: with what the client was told */
    if (rq->work.meter.peak) /* the most its conversion's models and JSON values held */
      snprintf(models, sizeof(models), " models_kib=%zu", (rq->work.meter.peak + 1023) / 1024);
    spaa_log(lv, "request",
             "method=%s path=\"%s\" status=%d bytes=%zu sent=%llu ms=%lld.%03lld%s%s "
             "route=\"%s\" ids=%s%s%.*s%s",
             rq->req.method ? rq->req.method : "-", spaa_log_q(pq, sizeof(pq), path),
             status, rq->received, (unsigned long long)rq->sent, (long long)(us / 1000),
             (long long)(us % 1000), models,
             toe == MHD_REQUEST_TERMINATED_COMPLETED_OK       ? ""
             : toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED  ? " end=timeout"
             : toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT     ? " end=client_abort"
             : toe == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN  ? " end=shutdown"
                                                              : " end=error",
             rq->req.route && rq->req.route->pattern ? rq->req.route->pattern : "-",
             rq->ids[0] ? rq->ids : "-", lv == SPAA_LOG_WARN ? " answer=\"" : "",
             lv == SPAA_LOG_WARN ? 200 : 0, lv == SPAA_LOG_WARN ? rq->answer : "",
             lv == SPAA_LOG_WARN ? "\"" : "");
  }
  count_request(h, rq, now_ns(CLOCK_MONOTONIC) - rq->start_ns);
  spaa_conn_request_end(rq->sconn);
  body_free(rq);
  decoded_free(rq);
  spaa_resp_body_release(&rq->resp);
  spaa_budget_give(h->budget, rq->charged, 0);
  spaa_budget_work_give(&rq->work);
  free(rq);
  __atomic_sub_fetch(&h->inflight, 1, __ATOMIC_ACQ_REL);
}

/* libmicrohttpd opened or is closing a connection: keep the bookkeeping of conns.h. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
  struct spaa_http *h = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    *socket_context = ci ? spaa_conns_open(h->conns, ci->connect_fd) : NULL;
  } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
    spaa_conns_close(h->conns, *socket_context);
    *socket_context = NULL;
  }
}

/* ---- daemon ------------------------------------------------------------------------------ */

/* Raise the soft limit on open files to the hard one, and return how many connections it
 * leaves room for (descriptors for the database, logs and listeners set aside). */
static unsigned fd_room(void)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl))
    return 1024;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1000000)
    return 1000000;
  return rl.rlim_cur > 128 ? (unsigned)rl.rlim_cur - 64 : 64;
}

/* The pool, the bookkeeping and the budget; the connection limits from cfg and the
 * descriptors available. 0 or -1 (out of memory). */
static int start_parts(struct spaa_http *h, unsigned *hard_limit)
{
  const struct spaa_config *cfg = h->app->cfg;
  struct spaa_conns_opts co;
  unsigned room = fd_room(), margin;
  memset(&co, 0, sizeof(co));
  co.header_timeout_s = cfg->header_timeout;
  co.body_min_rate = cfg->body_min_rate;
  co.log_interval_s = SPAA_HTTP_LOG_INTERVAL_S;
  co.metrics = h->app->metrics;
  h->max_conns = cfg->max_connections;
  margin = h->max_conns / 16 > 64 ? h->max_conns / 16 : 64;
  if (h->max_conns + margin > room) {
    spaa_log(SPAA_LOG_WARN, "fewer file descriptors than connections: limit lowered",
             "max_connections=%u open_files_room=%u", h->max_conns, room);
    margin = room / 17 > 1 ? room / 17 : 1;
    h->max_conns = room - margin;
  }
  *hard_limit = h->max_conns + margin;
  if (!(h->budget = h->app->budget) &&
      spaa_budget_new(cfg->memory_budget, h->app->metrics, &h->own_budget))
    return -1;
  if (!h->budget)
    h->budget = h->own_budget;
  if (spaa_pool_new(cfg->workers, SPAA_HTTP_POOL_QUEUE, &h->pool))
    return -1;
  return spaa_conns_new(&co, &h->conns);
}

/* Free what start_parts made (the daemon stopped first). */
static void free_parts(struct spaa_http *h)
{
  spaa_conns_free(h->conns);
  spaa_budget_free(h->own_budget);
  free(h);
}

int spaa_http_start(const struct spaa_app *app, const struct spaa_route *routes,
                    size_t n_routes, struct spaa_http **out, struct spaa_err *err)
{
  const struct spaa_config *cfg = app->cfg;
  struct spaa_http *h;
  struct sockaddr_in sa4;
  struct sockaddr_in6 sa6;
  struct sockaddr *sa;
  const union MHD_DaemonInfo *info;
  unsigned hard_limit = 0;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                   MHD_USE_ERROR_LOG;
  const char *why;
  *out = NULL;
  if (http__edge_init(&why))
    return spaa_err_set(err, SPAA_E_IO, 0, 0, "%s", why);
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
  if (start_parts(h, &hard_limit)) {
    spaa_pool_free(h->pool);
    free_parts(h);
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "cannot start the worker threads");
  }
  h->starting = 1;
  h->d = MHD_start_daemon(flags, cfg->listen_port, NULL, NULL, on_request, h,
                          MHD_OPTION_EXTERNAL_LOGGER, log_mhd, h, /* first, as MHD asks */
                          MHD_OPTION_SOCK_ADDR, sa,
                          MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)SPAA_HTTP_IO_THREADS,
                          MHD_OPTION_CONNECTION_LIMIT, hard_limit,
                          MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, SPAA_HTTP_MHD_MEMORY,
                          MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cfg->idle_timeout,
                          MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
                          MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                          MHD_OPTION_URI_LOG_CALLBACK, on_uri, h, MHD_OPTION_END);
  h->starting = 0;
  if (!h->d) {
    spaa_err_set(err, SPAA_E_IO, 0, 0, "cannot listen on %s%s%s:%u: %s",
                 cfg->listen_ipv6 ? "[" : "", cfg->listen_host, cfg->listen_ipv6 ? "]" : "",
                 cfg->listen_port, h->start_msg[0] ? h->start_msg : "libmicrohttpd failed");
    spaa_pool_free(h->pool);
    free_parts(h);
    return SPAA_E_IO;
  }
  info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
  h->port = info ? info->port : cfg->listen_port;
  spaa_log(SPAA_LOG_INFO, "http core", "io_threads=%u workers=%u max_connections=%u "
           "hard_limit=%u header_timeout_s=%u body_min_rate=%zu memory_budget=%zu",
           (unsigned)SPAA_HTTP_IO_THREADS, cfg->workers, h->max_conns, hard_limit,
           cfg->header_timeout, cfg->body_min_rate, spaa_budget_cap(h->budget));
  *out = h;
  return 0;
bad_addr:
  free(h);
  return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "bad listen address '%s'", cfg->listen_host);
}

uint16_t spaa_http_port(const struct spaa_http *h) { return h->port; }

/* Stop accepting. Not with MHD_quiesce_daemon: in epoll mode with a thread pool it races
 * with the polling threads, which take the listening socket out of their epoll sets too, and
 * libmicrohttpd 0.9.75 aborts the process when it loses that race (epoll_ctl answers ENOENT
 * and it panics: an open defect, seen here as a rare abort of the unit test). Instead the
 * listening socket's descriptor is pointed at an eventfd that never becomes readable (dup2):
 * the socket itself is closed, so new connections are refused at once and the port is free,
 * while the daemon keeps a valid descriptor that never wakes it, and closes it at stop. */
void spaa_http_quiesce(struct spaa_http *h)
{
  const union MHD_DaemonInfo *di;
  int quiet;
  if (!h || __atomic_exchange_n(&h->quiesced, 1, __ATOMIC_ACQ_REL))
    return;
  di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_LISTEN_FD);
  if (!di || di->listen_fd == MHD_INVALID_SOCKET)
    return;
  quiet = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (quiet < 0 || dup2(quiet, di->listen_fd) < 0)
    spaa_log(SPAA_LOG_WARN, "http: still listening while requests finish",
             "error=\"%s\"", strerror(errno));
  if (quiet >= 0)
    close(quiet);
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
  /* run what is queued (every suspended connection is resumed); bodies finished from now on
   * are refused by the drained pool and answered 503 at once. The pool is freed only once
   * the daemon's threads, which submit to it, are gone. */
  spaa_pool_drain(h->pool);
  MHD_stop_daemon(h->d);
  spaa_pool_free(h->pool);
  h->pool = NULL;
  spaa_log(SPAA_LOG_INFO, "http core stopped", "memory_budget_peak=%zu",
           spaa_budget_peak(h->budget));
  free_parts(h);
}
