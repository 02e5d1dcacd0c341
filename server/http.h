/* The HTTP core on libmicrohttpd: a routing table (method + path pattern with {params}),
 * bearer auth, request bodies accumulated under a cap, Content-Encoding undone under a cap,
 * JSON error answers, and the daemon's life cycle (start, quiesce, drain, stop).
 * Handlers see a struct spaa_req and fill a struct spaa_resp; they know nothing of MHD. */
#ifndef SPAA_SERVER_HTTP_H
#define SPAA_SERVER_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/limits.h"
#include "config/config.h"

struct spaa_store;
struct spaa_metrics;
struct spaa_dialect;
struct MHD_Connection;

/* What every handler may use: read-only after start. */
struct spaa_app {
  const struct spaa_config *cfg; /* the configuration (borrowed) */
  struct spaa_store *store;      /* the profile store (borrowed) */
  struct spaa_metrics *metrics;  /* the metrics registry (borrowed), or NULL: not counted */
  struct spaa_retention *retention; /* the retention thread (borrowed), or NULL: none runs */
  struct spaa_budget *budget;   /* the memory budget (borrowed), or NULL: the HTTP core makes
                                 * its own from cfg->memory_budget (gRPC then has none) */
};

struct spaa_route;
struct spaa_retention;
struct spaa_budget;

/* One request, as a handler sees it. Everything is borrowed and valid during the call. */
struct spaa_req {
  const char *method;            /* "GET", "POST"... ("HEAD" reaches GET routes) */
  const char *path;              /* normalized: runs of '/' folded, no trailing '/' */
  const struct spaa_route *route;/* the route that matched */
  size_t n_params;               /* {params} of the pattern, in order */
  struct {
    const char *name;            /* the name between the braces (not NUL-terminated) */
    size_t name_len;
    const char *value;           /* the path segment (NUL-terminated) */
  } params[SPAA_HTTP_MAX_PARAMS];
  const uint8_t *body;           /* decoded body (raw when route->raw_body), NUL-terminated;
                                  * the handler may give back the pages of what it has read
                                  * (spaa_mem_discard): nobody reads it after the handler */
  size_t body_len;               /* bytes in body */
  size_t wire_len;               /* body bytes as received, before decoding */
  const char *content_encoding;  /* Content-Encoding as sent, or NULL */
  int body_decoded;              /* 1 when the core undid a Content-Encoding */
  int body_file;                 /* 1: body is the private mapping of a file (a large body
                                  * as received): pages given back are read from the file
                                  * again if touched, so a handler may give back what it
                                  * will read later */
  const struct spaa_app *app;    /* config and store */
  struct spaa_meter *meter;      /* what the request's models may hold (spaa.h), or NULL */
  int64_t received_ns;           /* unix time the request arrived, ns */
  struct MHD_Connection *conn;   /* for the lookups below; opaque to handlers */
  /* Optional (the HTTP core sets it): free the body now, leaving body "" and body_len 0, for
   * a handler that has taken what it needs from a large one before its slow part. */
  void (*drop_body)(const struct spaa_req *req);
};

/* The answer a handler fills. Starts as 200, no content type, empty body. */
struct spaa_resp {
  int status;                    /* HTTP status */
  const char *content_type;      /* static string, or NULL for none */
  struct spaa_buf body;          /* the body (owned; capped at SPAA_HTTP_RESP_MAX) */
  int has_file;                  /* 1: the body is instead file_len bytes of file_fd (owned;
                                    a spooled answer, see spool.h) */
  int file_fd;
  uint64_t file_len;
  size_t n_headers;              /* extra headers in use */
  struct {
    char name[48];
    char value[208];
  } headers[SPAA_HTTP_MAX_HEADERS];
  size_t long_at;                /* 1 + the index of the header whose value is long_value
                                    (too long for its slot), or 0 */
  char long_value[SPAA_HTTP_LONG_HEADER + 1];
};

/* The value of extra header i of r (spaa_resp_header put it in its slot, or in long_value). */
static inline const char *spaa_resp_header_at(const struct spaa_resp *r, size_t i)
{
  return r->long_at == i + 1 ? r->long_value : r->headers[i].value;
}

/* A handler: read req, fill resp. Errors are answers (spaa_resp_error), not return codes. */
typedef void (*spaa_handler_cb)(const struct spaa_req *req, struct spaa_resp *resp);
/* Formats an answer for an error the core found before the handler ran (cap, encoding,
 * auth): fill resp for `code` (SPAA_E_*) with `detail`. Routes of dialects with their own
 * error shape (Sentry, OTLP) set one; the default is spaa_resp_error's JSON. */
typedef void (*spaa_error_cb)(const struct spaa_req *req, struct spaa_resp *resp, int code,
                              const char *detail);

enum spaa_auth {
  SPAA_AUTH_NONE = 0, /* open (the route checks for itself, if at all) */
  SPAA_AUTH_READ,     /* Bearer read token, when any is configured */
  SPAA_AUTH_INGEST,   /* Bearer ingest token, or the token as Basic password, when configured */
  SPAA_AUTH_ADMIN,    /* Bearer admin token; with none configured the route is refused (403) */
};

/* One row of the routing table. Patterns are absolute paths whose segments are literal or
 * {name} (one non-empty segment). Matching folds runs of '/' and ignores a trailing '/' on
 * both sides. Fields left out are zero and take the defaults, so a row is one line (name
 * at least one field, e.g. .auth, to keep -Wmissing-field-initializers quiet):
 *   {"POST", "/v1/pprof", pprof_push, .auth = SPAA_AUTH_INGEST}, */
struct spaa_route {
  const char *method;      /* "GET", "POST", ... */
  const char *pattern;     /* "/api/v1/profiles/{id}/spaa" */
  spaa_handler_cb fn;      /* the handler */
  enum spaa_auth auth;     /* checked from the headers, before the body is read */
  int raw_body;            /* 1: leave Content-Encoding to the handler (no 415 by the core) */
  size_t max_body;         /* cap on the body as received; 0 = config max_body */
  size_t max_decoded;      /* cap on the decoded body; 0 = config max_decompressed */
  int zstd_body;           /* 1: a body that is itself a zstd frame once its Content-Encoding
                            * is undone (SPAA's .spaa.zst) is decoded here too, under the
                            * same cap, instead of by the handler's reader without one */
  size_t model_factor;     /* memory budget charge per decoded byte while the handler runs;
                            * 0 = SPAA_HTTP_MODEL_FACTOR */
  int reads;               /* 1: the handler builds models of stored profiles (views,
                            * exports): charged SPAA_BUDGET_READ_COST in advance, its models
                            * and JSON values metered as they grow (spaa_req.meter) */
  spaa_error_cb on_error;  /* NULL = JSON {"error","detail"} */
  const char *format;      /* ingest routes: the converter's name (codecs/registry.h) */
  const struct spaa_dialect *dialect; /* ingest routes: the dialect's hooks (ingest.h) */
  int on_io_thread;        /* 1: a cheap handler run where the request was read (ops), so
                            * it answers while the worker pool is saturated; 0: the
                            * handler runs on the worker pool */
  int ops;                 /* 1: answered past max_connections too, like the routes run on
                            * the I/O thread: monitoring still sees a saturated server */
  int (*quick)(const void *body, size_t len); /* optional: 1 when this body (unencoded, at
                            * most SPAA_HTTP_QUICK_MAX bytes) is cheap to answer where it was
                            * read, e.g. a Sentry envelope without profile items; the hand-off
                            * to a worker costs more than such a request's whole work */
};

/* ---- request lookups ---------------------------------------------------------------- */
/* The value of a {param}, or NULL. */
const char *spaa_req_param(const struct spaa_req *req, const char *name);
/* The first query parameter `key` (percent-decoded), or NULL; "" for "?key" or "?key=". */
const char *spaa_req_query(const struct spaa_req *req, const char *key);
/* Call cb for every query parameter named `key`, in order; returns how many there were. */
typedef void (*spaa_query_cb)(void *ctx, const char *value);
size_t spaa_req_query_each(const struct spaa_req *req, const char *key, spaa_query_cb cb,
                           void *ctx);
/* A request header (case-insensitive name), or NULL. */
const char *spaa_req_header(const struct spaa_req *req, const char *name);

/* ---- responses ---------------------------------------------------------------------- */
/* Add a header; 0, or -1 when there are already SPAA_HTTP_MAX_HEADERS or it is too long: a
 * value over 207 bytes takes the answer's one long value (up to SPAA_HTTP_LONG_HEADER), once. */
int spaa_resp_header(struct spaa_resp *resp, const char *name, const char *value);
/* Answer `status` with a JSON value, which is taken over (decref'd here). */
void spaa_resp_json(struct spaa_resp *resp, int status, json_t *value);
/* Answer {"error":"<spaa_err_name(code)>","detail":"<printf>"} with spaa_err_status(code);
 * SPAA_E_BUSY and SPAA_E_SHUTDOWN also get Retry-After: 1. */
void spaa_resp_error(struct spaa_resp *resp, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, with a struct spaa_err (its code and message). */
void spaa_resp_err(struct spaa_resp *resp, const struct spaa_err *err);
/* Answer a raw body (copied) with a content type (static string). */
/* Release the body (memory or file) and leave resp with none. */
void spaa_resp_body_release(struct spaa_resp *resp);
void spaa_resp_bytes(struct spaa_resp *resp, int status, const char *content_type,
                     const void *data, size_t len);

/* ---- auth --------------------------------------------------------------------------- */
/* 1 when the request carries `Authorization: Bearer T` (or, when allow_basic, Basic with
 * password T) with T one of tokens[0..n); compared in constant time for a given configured
 * token. 1 as well when n == 0 (open). */
int spaa_http_token_ok(const struct spaa_req *req, char *const *tokens, size_t n,
                       int allow_basic);
/* Constant-time equality of a candidate with a secret (time depends on the secret's length
 * only). 1 equal, 0 not. */
int spaa_http_ct_equal(const char *given, size_t given_len, const char *secret,
                       size_t secret_len);

/* ---- routing (pure; exposed for tests) ------------------------------------------------ */
/* Fold runs of '/', drop a trailing '/' (but keep "/"); writes into out (size n).
 * 0, or -1 when the result does not fit or `path` does not start with '/'. */
int spaa_http_normalize_path(const char *path, char *out, size_t n);
/* Find the route for `method` and a normalized `path`. Returns the route and fills
 * req->params (values point into `scratch`, a copy of path of the same size) or NULL;
 * when NULL, *path_known tells whether some route has this path (405) and `allow` (size
 * allow_n) lists their methods ("GET, POST"). */
const struct spaa_route *spaa_http_route(const struct spaa_route *routes, size_t n_routes,
                                         const char *method, const char *path, char *scratch,
                                         struct spaa_req *req, int *path_known, char *allow,
                                         size_t allow_n);

/* ---- daemon --------------------------------------------------------------------------- */
struct spaa_http;

/* Start listening on cfg->listen_host:listen_port (0 = any free port) with the routing table
 * `routes` (borrowed; must outlive the daemon). Connections are read by a few event-driven
 * threads (up to cfg->max_connections answered, 503 beyond), closed after
 * cfg->idle_timeout seconds of silence, dropped when a head takes over cfg->header_timeout
 * seconds or a body stays under cfg->body_min_rate; finished bodies are handled by
 * cfg->workers threads, under the memory budget cfg->memory_budget (0: RAM/4). Raises the
 * process's open files limit to its hard limit.
 * 0, or SPAA_E_IO (err says why: address in use...) / SPAA_E_NOMEM. */
int spaa_http_start(const struct spaa_app *app, const struct spaa_route *routes,
                    size_t n_routes, struct spaa_http **out, struct spaa_err *err);
/* The port actually bound. */
uint16_t spaa_http_port(const struct spaa_http *h);
/* Stop accepting connections; requests in flight go on, and their answers close the
 * connection. Idempotent. */
void spaa_http_quiesce(struct spaa_http *h);
/* Requests started and not yet completed (answer sent or connection gone). */
size_t spaa_http_inflight(const struct spaa_http *h);
/* Finish the requests the workers hold, stop the daemon (closing whatever connections are
 * left) and free. NULL-safe. */
void spaa_http_stop(struct spaa_http *h);

#endif
