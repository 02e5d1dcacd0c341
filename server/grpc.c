/* OTLP over gRPC (see grpc.h): the gRPC rules of a unary call on top of the h2c listener
 * (h2.h) - content type, grpc-timeout, method, grpc-encoding, bearer token, the message
 * prefix - and the OTLP ingest flow on the message, its answer framed as a gRPC response.
 * Where gRPC itself refuses a call, the answer is grpc-go's (the OpenTelemetry Collector's
 * gRPC server), HTTP status included; each such answer names its rule where it is made.
 * A Connect call of the push method (not application/grpc) goes to grpc_connect.c. */
#include "server/grpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/compress.h"
#include "base/limits.h"
#include "server/budget.h"
#include "server/grpc_connect.h"
#include "server/grpc_wire.h"
#include "server/h2.h"
#include "server/ingest.h"
#include "server/ingest_otlp.h"
#include "server/ingest_push.h"
#include "server/log.h"

#define GRPC_CT "application/grpc"
#define GRPC_CT_MAX 96 /* bytes of an answer's content type: the request's subtype echoed */

struct spaa_grpc {
  const struct spaa_app *app;    /* borrowed */
  struct spaa_h2 *h2;            /* the listener */
};

#define OTLP_METHOD(version)                                                                 \
  {"POST", "/opentelemetry.proto.collector.profiles." version ".ProfilesService/Export",    \
   spaa_ingest, .auth = SPAA_AUTH_INGEST, .on_error = spaa_ingest_on_error, .format = "otlp", \
   .dialect = &spaa_dialect_otlp_proto}

/* The methods served: rows of the HTTP routing table's shape, so that the ingest flow sees
 * a route (format, dialect, and the pattern as the metrics' route label). */
static const struct spaa_route grpc_methods[] = {
    OTLP_METHOD("v1development"),
    OTLP_METHOD("v1experimental"),
    /* Pyroscope's push API as a gRPC service (its Connect form is on the HTTP listener) */
    {"POST", "/push.v1.PusherService/Push", spaa_ingest, .auth = SPAA_AUTH_INGEST,
     .on_error = spaa_ingest_on_error, .format = "pprof-push",
     .dialect = &spaa_dialect_pyroscope_push_proto},
};

static const struct spaa_route *find_method(const char *path)
{
  size_t i;
  for (i = 0; path && i < sizeof(grpc_methods) / sizeof(grpc_methods[0]); i++)
    if (strcmp(grpc_methods[i].pattern, path) == 0)
      return &grpc_methods[i];
  return NULL;
}

/* ---- answers -------------------------------------------------------------------------------- */

/* The content type of an answer to h, as grpc-go gives it: the request's content-subtype
 * kept ("application/grpc+json" to a call sent as such, whose message was read as protobuf
 * all the same), "application/grpc" when it has none or is no gRPC request; written into
 * out (size n) when it differs from GRPC_CT. */
static const char *answer_ctype(const struct spaa_h2_req *h, char *out, size_t n)
{
  const char *sub;
  int w;
  if (!spaa_grpc_content_subtype(spaa_h2_header(h, "content-type"), &sub) || !sub[0])
    return GRPC_CT;
  w = snprintf(out, n, "%s+%s", GRPC_CT, sub);
  return w > 0 && (size_t)w < n ? out : GRPC_CT;
}

/* Trailers-only answer to h: HTTP `status` (200, or grpc-go's 4xx for a call it refuses at
 * the HTTP layer), grpc-status and grpc-message. */
static void answer_status(struct spaa_h2_answer *a, const struct spaa_h2_req *h, int status,
                          int code, const char *msg)
{
  char num[12], enc[SPAA_H2_VALUE_MAX], ct[GRPC_CT_MAX];
  snprintf(num, sizeof(num), "%d", code);
  a->status = status;
  spaa_h2_answer_field(a, 0, "content-type", answer_ctype(h, ct, sizeof(ct)));
  spaa_h2_answer_field(a, 0, "grpc-accept-encoding", SPAA_GRPC_ACCEPT_ENCODING);
  spaa_h2_answer_field(a, 1, "grpc-status", num);
  if (msg && msg[0]) {
    spaa_grpc_pct_encode(enc, sizeof(enc), msg);
    spaa_h2_answer_field(a, 1, "grpc-message", enc);
  }
}

/* The gRPC code of an HTTP status, when the answer carries no google.rpc.Status. */
static int code_of_status(int status)
{
  switch (status) {
  case 401:
    return SPAA_GRPC_UNAUTHENTICATED;
  case 413:
    return SPAA_GRPC_RESOURCE_EXHAUSTED;
  case 503:
  case 429:
    return SPAA_GRPC_UNAVAILABLE;
  default:
    return status >= 500 ? SPAA_GRPC_INTERNAL : SPAA_GRPC_INVALID_ARGUMENT;
  }
}

/* The gRPC code of a Connect error answer ({"code":"invalid_argument","message":...}: the
 * push dialect's), its message into msg; 0 when it is none. */
static int connect_error(const struct spaa_resp *resp, char *msg, size_t n)
{
  json_t *e = json_loadb(resp->body.p, resp->body.len, 0, NULL);
  const char *name = json_string_value(json_object_get(e, "code"));
  const char *m = json_string_value(json_object_get(e, "message"));
  int code = 0, c;
  char upper[32];
  size_t i;
  for (i = 0; name && name[i] && i + 1 < sizeof(upper); i++)
    upper[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
  upper[name ? i : 0] = 0;
  for (c = 1; c <= SPAA_GRPC_UNAUTHENTICATED && upper[0]; c++)
    if (strcmp(spaa_grpc_status_name(c), upper) == 0)
      code = c;
  if (strcmp(upper, "CANCELED") == 0) /* Connect spells it with one L */
    code = SPAA_GRPC_CANCELLED;
  snprintf(msg, n, "%s", m ? m : "");
  json_decref(e);
  return code;
}

/* The flow's answer as a gRPC answer to h: 200 = the response message and status OK;
 * otherwise the google.rpc.Status the dialect wrote, as grpc-status and grpc-message, its
 * code replaced by `force` when that is not 0 (the dialect's message kept). */
static void from_resp(struct spaa_resp *resp, const struct spaa_h2_req *h, int force,
                      struct spaa_h2_answer *a)
{
  uint8_t prefix[SPAA_GRPC_PREFIX];
  char msg[SPAA_OTLP_MAX_MSG], ct[GRPC_CT_MAX];
  int32_t code = 0;
  size_t i;
  if (resp->status == 200) {
    a->status = 200;
    spaa_h2_answer_field(a, 0, "content-type", answer_ctype(h, ct, sizeof(ct)));
    spaa_h2_answer_field(a, 0, "grpc-accept-encoding", SPAA_GRPC_ACCEPT_ENCODING);
    spaa_grpc_prefix(prefix, (uint32_t)resp->body.len);
    spaa_buf_init(&a->body, 0);
    if (spaa_buf_add(&a->body, prefix, sizeof(prefix)) ||
        spaa_buf_add(&a->body, resp->body.p ? resp->body.p : "", resp->body.len)) {
      spaa_h2_answer_clear(a);
      answer_status(a, h, 200, SPAA_GRPC_RESOURCE_EXHAUSTED, "out of memory for the answer");
      return;
    }
    spaa_h2_answer_field(a, 1, "grpc-status", "0");
    return;
  }
  if (resp->body.len && resp->body.p[0] == '{')
    code = connect_error(resp, msg, sizeof(msg));
  else if (spaa_grpc_status_read((const uint8_t *)resp->body.p, resp->body.len, &code, msg,
                                 sizeof(msg)))
    code = 0;
  if (code <= 0)
    code = code_of_status(resp->status);
  answer_status(a, h, 200, force ? force : code, msg);
  for (i = 0; i < resp->n_headers; i++) /* the HTTP route's Retry-After, as gRPC says it */
    if (strcasecmp(resp->headers[i].name, "Retry-After") == 0)
      spaa_h2_answer_field(a, 1, "grpc-retry-pushback-ms", "1000");
}

/* ---- calls ---------------------------------------------------------------------------------- */

/* The request as the ingest flow sees it (no HTTP connection behind it). */
static void flow_req(const struct spaa_grpc *g, const struct spaa_route *rt,
                     const struct spaa_h2_req *h, struct spaa_req *req, struct spaa_resp *resp)
{
  memset(req, 0, sizeof(*req));
  req->method = "POST";
  req->path = rt->pattern;
  req->route = rt;
  req->body = (const uint8_t *)"";
  req->wire_len = h->body_len; /* the message as received: set by call_run once framed */
  req->app = g->app;
  req->received_ns = h->received_ns;
  memset(resp, 0, sizeof(*resp));
  resp->status = 200;
  spaa_buf_init(&resp->body, SPAA_HTTP_RESP_MAX);
}

/* A refusal before the converter ran, answered and counted by the route's dialect (its
 * gRPC code replaced by `force` when that is not 0). */
static void refuse_answer(const struct spaa_grpc *g, const struct spaa_route *rt,
                          const struct spaa_h2_req *h, int code, const char *detail, int force,
                          struct spaa_h2_answer *a)
{
  struct spaa_req req;
  struct spaa_resp resp;
  flow_req(g, rt, h, &req, &resp);
  spaa_ingest_on_error(&req, &resp, code, detail);
  from_resp(&resp, h, force, a);
  spaa_buf_free(&resp.body);
}

/* refuse_answer, logged. */
static void refuse_flow(const struct spaa_grpc *g, const struct spaa_route *rt,
                        const struct spaa_h2_req *h, int code, const char *detail, int force,
                        struct spaa_h2_answer *a)
{
  char q[600];
  refuse_answer(g, rt, h, code, detail, force, a);
  spaa_log(SPAA_LOG_INFO, "grpc call refused", "method=%s code=%s detail=\"%s\"", rt->pattern,
           spaa_err_name(code), spaa_log_q(q, sizeof(q), detail));
}

/* 1 for a Connect unary call (grpc_connect.h): the push method, not as gRPC. */
static int is_connect(const struct spaa_h2_req *h)
{
  const char *sub;
  return h->path && strcmp(h->path, SPAA_CONNECT_PUSH_PATH) == 0 &&
         !spaa_grpc_content_subtype(spaa_h2_header(h, "content-type"), &sub);
}

static int call_check(void *ctx, const struct spaa_h2_req *h, struct spaa_h2_answer *a,
                      struct spaa_h2_intake *in)
{
  const struct spaa_grpc *g = ctx;
  const struct spaa_config *cfg = g->app->cfg;
  const struct spaa_route *rt = find_method(h->path);
  const char *ctype = spaa_h2_header(h, "content-type"), *sub;
  const char *enc = spaa_h2_header(h, "grpc-encoding");
  const char *timeout = spaa_h2_header(h, "grpc-timeout");
  char msg[512];
  int64_t ns = 0;
  if (is_connect(h))
    return spaa_connect_check(g->app, h, a, in);
  /* The checks grpc-go's transport makes on the headers, in its order (content type, other
   * headers, method), each answered with an HTTP status and a grpc-status. gRPC over HTTP/2
   * (PROTOCOL-HTTP2.md): a content type that does not begin with application/grpc gets HTTP
   * 415, which a plain HTTP/2 client cannot take for a success as it could a gRPC error
   * under 200; grpc-go sends INVALID_ARGUMENT with it. A content-subtype is no reason to
   * refuse: grpc-go reads a message whose subtype names a codec it lacks (json, ...) with its
   * default one, protobuf, and answers in the request's content type; so does this one. */
  if (!spaa_grpc_content_subtype(ctype, &sub)) {
    snprintf(msg, sizeof(msg), "invalid gRPC request content-type \"%.100s\": this listener "
             "speaks gRPC (application/grpc); OTLP over plain HTTP goes to the HTTP listener",
             ctype ? ctype : "");
    answer_status(a, h, 415, SPAA_GRPC_INVALID_ARGUMENT, msg);
    return 1;
  }
  /* grpc-go: a malformed grpc-timeout is a header error, HTTP 400 and INTERNAL */
  if (timeout && spaa_grpc_timeout(timeout, &ns)) {
    snprintf(msg, sizeof(msg), "malformed grpc-timeout '%.20s': expected 1 to 8 digits and "
             "a unit (H, M, S, m, u, n)", timeout);
    answer_status(a, h, 400, SPAA_GRPC_INTERNAL, msg);
    return 1;
  }
  /* grpc-go: a :method other than POST (gRPC's only one) is HTTP 405 and INTERNAL */
  if (strcmp(h->method, "POST") != 0) {
    snprintf(msg, sizeof(msg), "the call's :method is %.20s, which should be POST", h->method);
    answer_status(a, h, 405, SPAA_GRPC_INTERNAL, msg);
    spaa_h2_answer_field(a, 0, "allow", "POST");
    return 1;
  }
  /* then the server's: an unknown method, an encoding it has no decompressor for */
  if (!rt) {
    snprintf(msg, sizeof(msg), "unknown method %.200s: this server serves "
             "opentelemetry.proto.collector.profiles.{v1development,v1experimental}"
             ".ProfilesService/Export and push.v1.PusherService/Push", h->path);
    answer_status(a, h, 200, SPAA_GRPC_UNIMPLEMENTED, msg);
    return 1;
  }
  if (spaa_grpc_coding(enc) < 0) {
    snprintf(msg, sizeof(msg), "grpc-encoding '%.40s' is not supported: send one of %s", enc,
             SPAA_GRPC_ACCEPT_ENCODING);
    answer_status(a, h, 200, SPAA_GRPC_UNIMPLEMENTED, msg);
    return 1;
  }
  /* Basic too (the token as the password), as on OTLP/HTTP: the Collector's basicauth
   * client extension sends it on gRPC as well */
  if (!spaa_grpc__token_ok(cfg, spaa_h2_header(h, "authorization"), 1)) {
    refuse_flow(g, rt, h, SPAA_E_UNAUTHORIZED, "send metadata 'authorization: Bearer "
                "<ingest token>' (or Basic with the token as the password)", 0, a);
    return 1;
  }
  if (timeout) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    in->deadline_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    in->deadline_ns = ns > INT64_MAX - in->deadline_ns ? INT64_MAX : in->deadline_ns + ns;
  }
  in->max_body = cfg->grpc_max_message + SPAA_GRPC_PREFIX;
  in->framed = 1; /* the message's length is charged to the memory budget from its prefix */
  return 0;
}

/* The message of the call, framed. 0, or a SPAA_E_* with err set and *force the gRPC code
 * to answer instead of the error's own (0: the error's). grpc-go answers INTERNAL when the
 * message stream breaks gRPC's framing: no message on a unary call, or more than one (its
 * "cardinality violation"); the stream ending inside a message (io.ErrUnexpectedEOF); a
 * flag byte other than 0 and 1; the compressed flag with no grpc-encoding, or identity. A
 * message over the cap stays RESOURCE_EXHAUSTED. */
static int call_message(const struct spaa_config *cfg, const struct spaa_h2_req *h,
                        struct spaa_grpc_msg *m, struct spaa_err *err, int *force)
{
  int rc = spaa_grpc_frame(h->body, h->body_len, cfg->grpc_max_message, m, err);
  const char *enc = spaa_h2_header(h, "grpc-encoding");
  *force = SPAA_GRPC_INTERNAL;
  if (rc == SPAA_GRPC_MORE && h->body_len == 0)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the call carries no request message: "
                        "a unary call carries exactly one");
  if (rc == SPAA_GRPC_MORE && h->body_len < SPAA_GRPC_PREFIX)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, h->body_len, "the call ends inside the "
                        "gRPC message's 5-byte prefix (%zu bytes)", h->body_len);
  if (rc == SPAA_GRPC_MORE)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, h->body_len, "the call ends inside the "
                        "gRPC message: %zu of its %u bytes arrived",
                        h->body_len - SPAA_GRPC_PREFIX, m->len);
  if (rc == SPAA_E_TOO_LARGE)
    *force = 0;
  if (rc || !m->compressed)
    return rc;
  if (spaa_grpc_coding(enc) <= SPAA_GRPC_IDENTITY)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the message is flagged compressed "
                        "but the call has %s", enc && enc[0] ? "grpc-encoding identity"
                                                             : "no grpc-encoding");
  return 0;
}

/* A compressed message undone of its grpc-encoding into dec. 0, or a SPAA_E_* with err set
 * and *force as call_message sets it: INTERNAL for a message that does not decompress (as
 * grpc-go), the error's own for the cap (RESOURCE_EXHAUSTED) and no memory (UNAVAILABLE). */
static int call_inflate(const struct spaa_config *cfg, const struct spaa_h2_req *h,
                        const struct spaa_grpc_msg *m, struct spaa_buf *dec,
                        struct spaa_err *err, int *force)
{
  static const enum spaa_coding codings[] = {SPAA_CODING_GZIP, SPAA_CODING_GZIP,
                                             SPAA_CODING_DEFLATE, SPAA_CODING_ZSTD,
                                             SPAA_CODING_SNAPPY};
  static const char *const names[] = {"identity", "gzip", "deflate", "zstd", "snappy"};
  int coding = spaa_grpc_coding(spaa_h2_header(h, "grpc-encoding"));
  char was[sizeof(err->msg)];
  int rc = spaa_decompress(codings[coding], m->data, m->len, cfg->grpc_max_message, dec, err);
  *force = 0;
  if (rc != SPAA_E_BAD_COMPRESSION)
    return rc;
  *force = SPAA_GRPC_INTERNAL;
  memcpy(was, err->msg, sizeof(was));
  return spaa_err_set(err, rc, 0, err->offset, "the message does not decompress as %s: %s",
                      names[coding], was);
}

static void call_run(void *ctx, const struct spaa_h2_req *h, struct spaa_h2_answer *a)
{
  const struct spaa_grpc *g = ctx;
  const struct spaa_config *cfg = g->app->cfg;
  const struct spaa_route *rt = find_method(h->path);
  struct spaa_grpc_msg m;
  struct spaa_buf dec;
  struct spaa_req req;
  struct spaa_resp resp;
  struct spaa_budget_work w;
  struct spaa_err err;
  size_t size;
  int rc, force;
  if (is_connect(h)) {
    spaa_connect_run(g->app, h, a);
    return;
  }
  memset(&w, 0, sizeof(w));
  spaa_err_clear(&err);
  spaa_buf_init(&dec, 0);
  if (!rt) { /* check let it through: cannot happen */
    answer_status(a, h, 200, SPAA_GRPC_INTERNAL, "no such method");
    return;
  }
  if ((rc = call_message(cfg, h, &m, &err, &force))) {
    refuse_flow(g, rt, h, rc, err.msg, force, a);
    goto out;
  }
  /* the conversion's charge, and the meter of its models, as on the HTTP listener: taken
   * before a compressed message is undone (its decoded size guessed from its length as the
   * HTTP listener guesses an encoded body's, and its decompressor metered), with the
   * message's own charge (the transport's) counted as this request's */
  size = m.len;
  if (m.compressed)
    size = m.len > cfg->grpc_max_message / SPAA_HTTP_GUESS_RATIO
               ? cfg->grpc_max_message : (size_t)m.len * SPAA_HTTP_GUESS_RATIO;
  if (spaa_budget_work_begin(&w, g->app->budget, h->charged,
                             spaa_budget_cost(size, rt->model_factor),
                             SPAA_HTTP_BUDGET_WAIT_MS)) {
    spaa_metrics_add(g->app->metrics, SPAA_METRIC_REQUESTS_BUSY, "memory_budget", NULL, 1);
    refuse_flow(g, rt, h, SPAA_E_BUSY, "the server is holding its memory budget for requests "
                "in flight; retry later", 0, a);
    goto out;
  }
  if (m.compressed) {
    if ((rc = call_inflate(cfg, h, &m, &dec, &err, &force))) {
      if (w.b && w.meter.refused) /* its decompressor's window did not fit: the budget's */
        refuse_flow(g, rt, h, w.meter.refused, w.meter.why.msg, 0, a);
      else
        refuse_flow(g, rt, h, rc, err.msg, force, a);
      goto out;
    }
    /* the decoded size known: charge what the conversion will hold, not the guess */
    spaa_budget_work_adjust(&w, spaa_budget_cost(dec.len, rt->model_factor));
  }
  flow_req(g, rt, h, &req, &resp);
  req.meter = w.b ? &w.meter : NULL;
  req.wire_len = m.len; /* the OTLP payload as sent, as the HTTP route counts its body */
  req.body = m.compressed ? (const uint8_t *)(dec.p ? dec.p : "") : m.data;
  req.body_len = m.compressed ? dec.len : m.len;
  req.body_decoded = m.compressed;
  req.content_encoding = m.compressed ? spaa_h2_header(h, "grpc-encoding") : NULL;
  spaa_ingest(&req, &resp);
  from_resp(&resp, h, 0, a);
  spaa_buf_free(&resp.body);
out:
  spaa_budget_work_give(&w);
  spaa_buf_free(&dec);
  { /* the call's time from its headers to its answer, in the same histogram as HTTP routes */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    spaa_metrics_observe_ns(g->app->metrics, SPAA_METRIC_HTTP_DURATION, rt->pattern, NULL,
                            (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - h->received_ns);
  }
}

static void call_refuse(void *ctx, const struct spaa_h2_req *h, enum spaa_h2_refusal why,
                        struct spaa_h2_answer *a)
{
  const struct spaa_grpc *g = ctx;
  const struct spaa_route *rt = find_method(h->path);
  char msg[160];
  if (is_connect(h)) {
    spaa_connect_refuse(g->app, h, why, a);
    return;
  }
  if (!rt) {
    answer_status(a, h, 200, SPAA_GRPC_INTERNAL, "no such method");
    return;
  }
  switch (why) {
  case SPAA_H2_TOO_LARGE:
    snprintf(msg, sizeof(msg), "the gRPC message is over the %zu-byte cap (grpc_max_message)",
             g->app->cfg->grpc_max_message);
    refuse_flow(g, rt, h, SPAA_E_TOO_LARGE, msg, 0, a);
    return;
  case SPAA_H2_DEADLINE:
    /* the conversion is not stopped halfway: its profiles may be stored by now, or soon */
    answer_status(a, h, 200, SPAA_GRPC_DEADLINE_EXCEEDED, "the deadline (grpc-timeout) passed "
                  "before the call was answered; its profiles may have been stored all the same "
                  "(sent again, a stored profile is found already stored)");
    spaa_metrics_add(g->app->metrics, SPAA_METRIC_REQUESTS, rt->pattern, "504", 1);
    spaa_log(SPAA_LOG_INFO, "grpc deadline exceeded", "method=%s", rt->pattern);
    return;
  case SPAA_H2_SHUTDOWN:
    refuse_flow(g, rt, h, SPAA_E_SHUTDOWN, "the server is shutting down", 0, a);
    return;
  case SPAA_H2_CONNS: /* counted and logged by the transport, once per interval */
    snprintf(msg, sizeof(msg), "too many gRPC connections (max_connections %u): retry later",
             g->app->cfg->max_connections);
    refuse_answer(g, rt, h, SPAA_E_BUSY, msg, 0, a);
    return;
  case SPAA_H2_OVER_BUDGET: /* the HTTP listener's answer to a body that does not fit */
    snprintf(msg, sizeof(msg), "the call's message (%zu bytes with its prefix) does not fit "
             "in what is left of the memory budget for requests in flight; retry later",
             h->body_len);
    refuse_flow(g, rt, h, SPAA_E_BUSY, msg, 0, a);
    return;
  case SPAA_H2_BUSY:
  default:
    refuse_flow(g, rt, h, SPAA_E_BUSY, "too many calls in flight: retry later", 0, a);
    return;
  }
}

/* ---- life cycle ----------------------------------------------------------------------------- */

int spaa_grpc_start(const struct spaa_app *app, struct spaa_grpc **out, struct spaa_err *err)
{
  const struct spaa_config *cfg = app->cfg;
  struct spaa_h2_service svc = {NULL, call_check, call_run, call_refuse};
  struct spaa_h2_opts o;
  struct spaa_grpc *g;
  int rc;
  *out = NULL;
  if (!cfg->grpc_host)
    return 0;
  if (!(g = calloc(1, sizeof(*g))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  g->app = app;
  svc.ctx = g;
  memset(&o, 0, sizeof(o));
  o.host = cfg->grpc_host;
  o.port = cfg->grpc_port;
  o.ipv6 = cfg->grpc_ipv6;
  o.max_streams = cfg->grpc_max_streams;
  o.workers = cfg->workers < SPAA_GRPC_WORKERS_MAX ? cfg->workers : SPAA_GRPC_WORKERS_MAX;
  o.queue_depth = cfg->queue_depth;
  o.budget = app->budget; /* the HTTP listener's: one budget for every request in flight */
  o.idle_timeout = cfg->idle_timeout;
  o.max_conns = cfg->max_connections;
  o.header_timeout = cfg->header_timeout;
  o.body_min_rate = cfg->body_min_rate;
  o.metrics = app->metrics;
  if ((rc = spaa_h2_start(&o, &svc, &g->h2, err))) {
    free(g);
    return rc;
  }
  *out = g;
  return 0;
}

uint16_t spaa_grpc_port(const struct spaa_grpc *g) { return g ? spaa_h2_port(g->h2) : 0; }

void spaa_grpc_quiesce(struct spaa_grpc *g)
{
  if (g)
    spaa_h2_quiesce(g->h2);
}

size_t spaa_grpc_inflight(const struct spaa_grpc *g) { return g ? spaa_h2_inflight(g->h2) : 0; }

void spaa_grpc_stop(struct spaa_grpc *g)
{
  if (!g)
    return;
  spaa_h2_stop(g->h2, SPAA_GRPC_STOP_GRACE_MS);
  free(g);
}
