/* Connect unary calls on the h2c listener (see grpc_connect.h): the HTTP core's checks for the
 * push route (method, ingest token, Content-Encoding, body cap) and the push dialect's header
 * checks made on the HTTP/2 request, then the ingest flow, its struct spaa_resp sent back as
 * an HTTP/2 answer. */
#include "server/grpc_connect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base64.h"
#include "base/limits.h"
#include "server/budget.h"
#include "server/decode.h"
#include "server/ingest.h"
#include "server/ingest_push.h"
#include "server/log.h"

/* The push route as the HTTP routing table has it, one row per body type: the dialect of a
 * Connect call on HTTP/2 cannot read headers, so its type is chosen from them here. */
#define PUSH_ROUTE(d)                                                                        \
  {"POST", SPAA_CONNECT_PUSH_PATH, spaa_ingest, .auth = SPAA_AUTH_INGEST,                    \
   .on_error = spaa_ingest_on_error, .format = "pprof-push", .dialect = &(d)}
static const struct spaa_route push_proto = PUSH_ROUTE(spaa_dialect_pyroscope_push_proto);
static const struct spaa_route push_json = PUSH_ROUTE(spaa_dialect_pyroscope_push_json);

int spaa_grpc__token_ok(const struct spaa_config *cfg, const char *auth, int allow_basic)
{
  const char *cand = NULL;
  char basic[512];
  size_t i, cl = 0;
  int ok = 0;
  if (!cfg->n_ingest_tokens)
    return 1;
  if (!auth)
    return 0;
  while (*auth == ' ')
    auth++;
  if (strncasecmp(auth, "Bearer ", 7) == 0) {
    cand = auth + 7 + strspn(auth + 7, " ");
    cl = strlen(cand);
    while (cl && cand[cl - 1] == ' ')
      cl--;
  } else if (allow_basic && strncasecmp(auth, "Basic ", 6) == 0) {
    const char *b64 = auth + 6 + strspn(auth + 6, " ");
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
  for (i = 0; i < cfg->n_ingest_tokens; i++) /* no early exit: every token is compared */
    ok |= spaa_http_ct_equal(cand, cl, cfg->ingest_tokens[i], strlen(cfg->ingest_tokens[i]));
  return ok;
}

/* The HTTP answer as an HTTP/2 one: status, Content-Type, Content-Length, the headers (names
 * lowercase, as HTTP/2 wants them), the body. */
static void answer_from(const struct spaa_resp *r, struct spaa_h2_answer *a)
{
  char name[sizeof(r->headers[0].name)], len[24];
  size_t i, j;
  a->status = r->status;
  if (r->content_type)
    spaa_h2_answer_field(a, 0, "content-type", r->content_type);
  snprintf(len, sizeof(len), "%zu", r->body.len);
  spaa_h2_answer_field(a, 0, "content-length", len);
  for (i = 0; i < r->n_headers; i++) {
    for (j = 0; r->headers[i].name[j] && j + 1 < sizeof(name); j++)
      name[j] = (char)(r->headers[i].name[j] >= 'A' && r->headers[i].name[j] <= 'Z'
                           ? r->headers[i].name[j] + 32 : r->headers[i].name[j]);
    name[j] = 0;
    spaa_h2_answer_field(a, 0, name, spaa_resp_header_at(r, i));
  }
  spaa_buf_init(&a->body, 0);
  if (r->body.len && spaa_buf_add(&a->body, r->body.p, r->body.len)) {
    spaa_h2_answer_clear(a);
    a->status = 503;
    spaa_h2_answer_field(a, 0, "content-type", "application/json");
    spaa_h2_answer_field(a, 0, "retry-after", "1");
  }
}

/* The request as the ingest flow sees it (no HTTP connection behind it: header lookups answer
 * NULL, which is why the route's dialect takes its body type from `json`). */
static void flow_req(const struct spaa_app *app, const struct spaa_h2_req *h, int json,
                     struct spaa_req *req, struct spaa_resp *resp)
{
  memset(req, 0, sizeof(*req));
  req->method = "POST";
  req->path = SPAA_CONNECT_PUSH_PATH;
  req->route = json ? &push_json : &push_proto;
  req->body = (const uint8_t *)"";
  req->app = app;
  req->received_ns = h->received_ns;
  req->content_encoding = spaa_h2_header(h, "content-encoding");
  memset(resp, 0, sizeof(*resp));
  resp->status = 200;
  spaa_buf_init(&resp->body, SPAA_HTTP_RESP_MAX);
}

/* Answer an error before the flow ran, as the HTTP core does (the route's on_error: the push
 * dialect's Connect error, counted in the metrics). */
static void refuse_flow(const struct spaa_app *app, const struct spaa_h2_req *h, int code,
                        const char *detail, struct spaa_h2_answer *a)
{
  struct spaa_req req;
  struct spaa_resp resp;
  flow_req(app, h, 0, &req, &resp);
  spaa_ingest_on_error(&req, &resp, code, detail);
  answer_from(&resp, a);
  spaa_buf_free(&resp.body);
}

int spaa_connect_check(const struct spaa_app *app, const struct spaa_h2_req *h,
                       struct spaa_h2_answer *a, struct spaa_h2_intake *in)
{
  const struct spaa_config *cfg = app->cfg;
  const char *cl = spaa_h2_header(h, "content-length");
  struct spaa_err err;
  char msg[160];
  int json, rc;
  spaa_err_clear(&err);
  if (strcmp(h->method, "POST") != 0) { /* the HTTP core's 405 */
    struct spaa_resp resp;
    memset(&resp, 0, sizeof(resp));
    spaa_buf_init(&resp.body, SPAA_HTTP_RESP_MAX);
    spaa_resp_error(&resp, SPAA_E_METHOD, "%s is not allowed on %s; allowed: POST", h->method,
                    SPAA_CONNECT_PUSH_PATH);
    spaa_resp_header(&resp, "Allow", "POST");
    answer_from(&resp, a);
    spaa_buf_free(&resp.body);
    return 1;
  }
  if (!spaa_grpc__token_ok(cfg, spaa_h2_header(h, "authorization"), 1)) {
    refuse_flow(app, h, SPAA_E_UNAUTHORIZED,
                "this endpoint needs 'Authorization: Bearer <ingest token>'", a);
    return 1;
  }
  if ((rc = spaa_decode_needed(spaa_h2_header(h, "content-encoding"), &err)) < 0) {
    refuse_flow(app, h, rc, err.msg, a);
    return 1;
  }
  if (cl) {
    char *end;
    unsigned long long v = strtoull(cl, &end, 10);
    if (end != cl && v > cfg->max_body) {
      snprintf(msg, sizeof(msg), "the body is %llu bytes, over the %zu-byte cap on this "
               "endpoint", v, cfg->max_body);
      refuse_flow(app, h, SPAA_E_TOO_LARGE, msg, a);
      return 1;
    }
  }
  /* the push dialect's header checks, which it cannot make on an HTTP/2 request */
  if ((rc = spaa_push_media(spaa_h2_header(h, "content-type"),
                            spaa_h2_header(h, "connect-protocol-version"), &json, &err))) {
    refuse_flow(app, h, rc, err.msg, a);
    return 1;
  }
  in->max_body = cfg->max_body; /* a Content-Length is charged to the budget at once */
  return 0;
}

void spaa_connect_run(const struct spaa_app *app, const struct spaa_h2_req *h,
                      struct spaa_h2_answer *a)
{
  struct spaa_budget_work w;
  struct spaa_err err;
  struct spaa_buf dec;
  struct spaa_req req;
  struct spaa_resp resp;
  size_t size;
  int json = 0, rc, decode;
  spaa_err_clear(&err);
  spaa_buf_init(&dec, 0);
  memset(&w, 0, sizeof(w));
  if (spaa_push_media(spaa_h2_header(h, "content-type"), NULL, &json, &err))
    json = 0; /* check refused it: cannot happen */
  flow_req(app, h, json, &req, &resp);
  req.wire_len = h->body_len;
  req.body = h->body;
  req.body_len = h->body_len;
  /* the conversion's charge, and the meter of its models, as on the HTTP listener: taken
   * before the body is decoded (its decoded size guessed as the HTTP listener guesses it,
   * its decoder metered), with the body's own charge (the transport's) as this request's */
  size = h->body_len;
  if ((decode = spaa_decode_needed(req.content_encoding, &err) > 0))
    size = size > app->cfg->max_decompressed / SPAA_HTTP_GUESS_RATIO
               ? app->cfg->max_decompressed : size * SPAA_HTTP_GUESS_RATIO;
  if (spaa_budget_work_begin(&w, app->budget, h->charged,
                             spaa_budget_cost(size, req.route->model_factor),
                             SPAA_HTTP_BUDGET_WAIT_MS)) {
    spaa_metrics_add(app->metrics, SPAA_METRIC_REQUESTS_BUSY, "memory_budget", NULL, 1);
    spaa_ingest_on_error(&req, &resp, SPAA_E_BUSY, "the server is holding its memory budget "
                         "for requests in flight; retry later");
    goto out;
  }
  if (decode) {
    if ((rc = spaa_decode(req.content_encoding, h->body, h->body_len, app->cfg->max_decompressed,
                          &dec, &err))) {
      if (w.b && w.meter.refused) /* its decoder's window did not fit: the budget's answer */
        spaa_ingest_on_error(&req, &resp, w.meter.refused, w.meter.why.msg);
      else
        spaa_ingest_on_error(&req, &resp, rc, err.msg);
      goto out;
    }
    req.body = (const uint8_t *)(dec.p ? dec.p : "");
    req.body_len = dec.len;
    req.body_decoded = 1;
    spaa_budget_work_adjust(&w, spaa_budget_cost(dec.len, req.route->model_factor));
  }
  req.meter = w.b ? &w.meter : NULL;
  spaa_ingest(&req, &resp);
out:
  spaa_budget_work_give(&w);
  answer_from(&resp, a);
  spaa_buf_free(&resp.body);
  spaa_buf_free(&dec);
}

void spaa_connect_refuse(const struct spaa_app *app, const struct spaa_h2_req *h,
                         enum spaa_h2_refusal why, struct spaa_h2_answer *a)
{
  char msg[160];
  switch (why) {
  case SPAA_H2_TOO_LARGE: /* h->body_len: the bytes received when the cap was passed */
    snprintf(msg, sizeof(msg), "the body passed the %zu-byte cap on this endpoint (%zu bytes "
             "received)", app->cfg->max_body, h->body_len);
    refuse_flow(app, h, SPAA_E_TOO_LARGE, msg, a);
    return;
  case SPAA_H2_SHUTDOWN:
    refuse_flow(app, h, SPAA_E_SHUTDOWN, "the server is shutting down", a);
    return;
  case SPAA_H2_OVER_BUDGET: /* the HTTP route's answer */
    snprintf(msg, sizeof(msg), "a %zu-byte body does not fit in what is left of the memory "
             "budget for requests in flight; retry later", h->body_len);
    refuse_flow(app, h, SPAA_E_BUSY, msg, a);
    return;
  case SPAA_H2_CONNS:
    snprintf(msg, sizeof(msg), "too many connections (max_connections %u): retry later",
             app->cfg->max_connections);
    refuse_flow(app, h, SPAA_E_BUSY, msg, a);
    return;
  case SPAA_H2_DEADLINE: /* no deadline is set for a Connect call */
  case SPAA_H2_BUSY:
  default:
    refuse_flow(app, h, SPAA_E_BUSY, "too many requests in flight: retry later", a);
    return;
  }
}
