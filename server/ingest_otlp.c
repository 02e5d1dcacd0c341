/* OTLP/HTTP profiles export (see ingest_otlp.h): content type and decoding into conversion
 * options, ids made unique within a request, answers as ExportProfilesServiceResponse or
 * google.rpc.Status in the request's content type. Storing and counting: the ingest flow. */
#include "server/ingest_otlp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>
#include <xxhash.h>

#include "base/limits.h"
#include "base/utf8.h"
#include "otlp/otlp.h"
#include "server/log.h"

/* google.rpc.Code values used in Status bodies */
#define RPC_INVALID_ARGUMENT 3
#define RPC_RESOURCE_EXHAUSTED 8
#define RPC_INTERNAL 13
#define RPC_UNAVAILABLE 14
#define RPC_UNAUTHENTICATED 16


/* ---- content types ---------------------------------------------------------------------- */

enum ctype { CT_OTHER = 0, CT_PROTO, CT_PROTO_PLAIN, CT_JSON };

/* The media type of a Content-Type value, parameters and case ignored. */
static enum ctype parse_ctype(const char *v)
{
  static const struct {
    const char *name;
    enum ctype t;
  } known[] = {{"application/x-protobuf", CT_PROTO},
               {"application/protobuf", CT_PROTO_PLAIN},
               {"application/json", CT_JSON}};
  size_t i, n;
  if (!v)
    return CT_OTHER;
  while (*v == ' ' || *v == '\t')
    v++;
  n = strcspn(v, ";");
  while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
    n--;
  for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
    if (strlen(known[i].name) == n && strncasecmp(v, known[i].name, n) == 0)
      return known[i].t;
  return CT_OTHER;
}

/* The content type to answer in: the request's, protobuf when it named neither. */
static const char *answer_ctype(enum ctype t)
{
  return t == CT_JSON ? "application/json"
         : t == CT_PROTO_PLAIN ? "application/protobuf"
                               : "application/x-protobuf";
}

/* ---- answers ---------------------------------------------------------------------------- */

static int rpc_code(int status)
{
  switch (status) {
  case 401:
    return RPC_UNAUTHENTICATED;
  case 413:
    return RPC_RESOURCE_EXHAUSTED;
  case 503:
    return RPC_UNAVAILABLE;
  default:
    return status >= 500 ? RPC_INTERNAL : RPC_INVALID_ARGUMENT;
  }
}

/* Answer `status` with a google.rpc.Status {code, message} in content type t. */
static void answer_status(struct spaa_resp *resp, enum ctype t, int status, const char *msg)
{
  struct spaa_buf b;
  struct spaa_err err;
  char clean[SPAA_OTLP_MAX_MSG];
  msg = msg ? msg : "";
  spaa_utf8_clean(clean, sizeof(clean), msg, strlen(msg));
  spaa_buf_init(&b, 0);
  if (otlp_encode_status(t == CT_JSON, rpc_code(status), clean, &b, &err)) {
    spaa_buf_free(&b);
    spaa_resp_bytes(resp, 500, "text/plain", "cannot encode the answer", 24);
    return;
  }
  spaa_resp_bytes(resp, status, answer_ctype(t), b.p ? b.p : "", b.len);
  spaa_buf_free(&b);
  if (status == 503 || status == 429)
    spaa_resp_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
  if (status == 401)
    spaa_resp_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
}

/* The HTTP status of an error code in this dialect: every client fault is a 400 (the OTLP
 * specification has no 422), except the caps (413), media types (415) and auth (401). */
static int otlp_status(int code)
{
  int s = spaa_err_status(code);
  if (s == 413 || s == 415 || s == 401 || s == 503 || s >= 500)
    return s;
  return 400;
}

/* ---- storing ---------------------------------------------------------------------------- */

/* The id of entry k: a profile id that already came earlier in this request (two profiles
 * carrying one profile_id) is derived anew from it and the entry's position; a profile
 * without one gets an id derived from the request's bytes and its position. Both are
 * deterministic, so that a retried request dedups in the store instead of storing its
 * profiles twice (a request stored in several batches may fail after some of them). */
static void entry_id(struct spaa_conv_list *l, size_t k, XXH128_hash_t body)
{
  char *id = l->v[k].id, key[96];
  XXH128_hash_t h;
  size_t i;
  int n;
  if (!id[0]) {
    n = snprintf(key, sizeof(key), "%016llx%016llx/%zu", (unsigned long long)body.high64,
                 (unsigned long long)body.low64, k);
  } else {
    for (i = 0; i < k && strcmp(l->v[i].id, id); i++)
      ;
    if (i == k)
      return;
    n = snprintf(key, sizeof(key), "%s/%zu", id, k);
  }
  h = XXH3_128bits(key, (size_t)n);
  snprintf(id, sizeof(l->v[k].id), "%016llx%016llx", (unsigned long long)h.high64,
           (unsigned long long)h.low64);
}

/* What the dialect keeps of one request between its hooks. */
struct otlp_state {
  enum ctype t;              /* the request's content type: the answer's */
  struct otlp_request *r;    /* the decoded request (owned), or NULL once converted */
  const char *version;       /* its version, for the log ("-" when it was not decoded) */
  size_t count;              /* profiles in the request */
  XXH128_hash_t body_hash;   /* of the request's bytes: ids of profiles without one */
  char msg[SPAA_OTLP_MAX_MSG];    /* what the answer said (partial_success or Status message) */
};

/* 1 when the body holds nothing but white space. */
static int blank(const struct spaa_ingest *x)
{
  size_t i;
  for (i = 0; i < x->body_len; i++)
    if (x->body[i] != ' ' && x->body[i] != '\t' && x->body[i] != '\r' && x->body[i] != '\n')
      return 0;
  return 1;
}

/* When a body could not be decoded and does not look like what its Content-Type says (JSON
 * sent as protobuf, or the reverse), say that the Content-Type is the problem, before the
 * decoder's message; over gRPC (grpc), whose messages are protobuf whatever their
 * content-subtype, say where JSON goes instead. Returns rc. */
static int blame_ctype(const struct spaa_ingest *x, enum ctype t, int grpc, int rc,
                       struct spaa_err *err)
{
  size_t i = 0;
  int looks_json;
  char was[sizeof(err->msg)];
  while (i < x->body_len && (x->body[i] == ' ' || x->body[i] == '\t' || x->body[i] == '\r' ||
                             x->body[i] == '\n'))
    i++;
  looks_json = i < x->body_len && (x->body[i] == '{' || x->body[i] == '[');
  if (rc != SPAA_E_BAD_PROTOBUF && rc != SPAA_E_BAD_JSON)
    return rc;
  memcpy(was, err->msg, sizeof(was));
  if (grpc && looks_json)
    spaa_err_set(err, rc, 0, 0, "the gRPC message looks like JSON: gRPC carries OTLP as "
                 "protobuf, whatever the content-subtype; OTLP/JSON goes to POST "
                 "/v1development/profiles over HTTP (%.200s)", was);
  else if (t != CT_JSON && looks_json)
    spaa_err_set(err, rc, 0, 0, "Content-Type says protobuf but the body looks like JSON: "
                 "send Content-Type: application/json for OTLP/JSON (%.200s)", was);
  else if (t == CT_JSON && i < x->body_len && strchr("[\"tfn-0123456789", x->body[i]))
    spaa_err_set(err, SPAA_E_BAD_JSON, 0, 0, "the body is not a JSON object: an OTLP/JSON "
                 "request is one ({\"resourceProfiles\": [...]})");
  else if (t == CT_JSON && !looks_json)
    spaa_err_set(err, rc, 0, 0, "Content-Type says application/json but the body is not JSON: "
                 "send Content-Type: application/x-protobuf for protobuf (%.200s)", was);
  return rc;
}

/* The body decoded as content type t (grpc: a gRPC message); the request goes to the
 * converter. */
static int parse_as(struct spaa_ingest *x, enum ctype t, const char *ct, int grpc,
                    struct spaa_err *err)
{
  struct otlp_state *st = calloc(1, sizeof(*st));
  int rc;
  if (!st)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  x->state = st;
  st->t = t;
  if (st->t == CT_OTHER) {
    char shown[96];
    spaa_utf8_clean(shown, sizeof(shown), ct ? ct : "", ct ? strlen(ct) : 0);
    return spaa_err_set(err, SPAA_E_MEDIA_TYPE, 0, 0, "Content-Type '%s' is not supported: "
                        "send application/x-protobuf, application/protobuf or "
                        "application/json", shown);
  }
  if ((rc = otlp_decode_ex(x->body, x->body_len, x->opts.input_refetch ? OTLP_DECODE_REFETCH : 0,
                          &st->r, err)))
    return blame_ctype(x, st->t, grpc, rc, err);
  /* the codec reads JSON wherever it finds it; a gRPC message is protobuf, whatever its
   * content-subtype (grpc-go reads one it has no codec for as protobuf, and fails) */
  if (grpc && otlp_request_is_json(st->r))
    return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0, "the gRPC message is OTLP/JSON, not "
                        "protobuf: gRPC carries OTLP as protobuf, whatever the content-subtype; "
                        "OTLP/JSON goes to POST /v1development/profiles over HTTP");
  /* OTLP/HTTP: the body is what its Content-Type says, as a Collector's receiver reads it
   * (with the codec the Content-Type names); the codec reads JSON wherever it finds it */
  if (!grpc && st->t == CT_JSON && blank(x))
    return spaa_err_set(err, SPAA_E_BAD_JSON, 0, 0, "the body is empty: an OTLP/JSON request is "
                        "a JSON object ({} for no profiles)");
  if (!grpc && (st->t == CT_JSON) != (otlp_request_is_json(st->r) != 0))
    return spaa_err_set(err, st->t == CT_JSON ? SPAA_E_BAD_JSON : SPAA_E_BAD_PROTOBUF, 0, 0,
                        st->t == CT_JSON ? "Content-Type says application/json but the body is "
                        "OTLP protobuf: send Content-Type: application/x-protobuf"
                        : "Content-Type says protobuf but the body is OTLP/JSON: send "
                        "Content-Type: application/json");
  st->count = otlp_request_count(st->r);
  st->body_hash = XXH3_128bits(x->body, x->body_len);
  st->version = otlp_request_version(st->r) == OTLP_V1EXPERIMENTAL ? "v1experimental"
                                                                    : "v1development";
  x->opts.otlp_req = st->r;
  return 0;
}

/* parse: the content type, then the body. */
static int otlp_parse(struct spaa_ingest *x, struct spaa_err *err)
{
  const char *ct = spaa_req_header(x->req, MHD_HTTP_HEADER_CONTENT_TYPE);
  return parse_as(x, parse_ctype(ct), ct, 0, err);
}

/* parse for transports that carry protobuf only (gRPC): no content type to read. */
static int otlp_proto_parse(struct spaa_ingest *x, struct spaa_err *err)
{
  return parse_as(x, CT_PROTO, NULL, 1, err);
}

/* entry: the entry's id (entry_id); a rejected profile logged. */
static void otlp_entry(struct spaa_ingest *x, size_t k)
{
  struct otlp_state *st = x->state;
  const struct spaa_converted *e = &x->list.v[k];
  if (!spaa_converted_ok(e)) {
    char detail[600];
    spaa_log(SPAA_LOG_WARN, "otlp profile rejected", "reason=%s detail=\"%s\"", e->reason,
             spaa_log_q(detail, sizeof(detail), e->err.msg));
    return;
  }
  entry_id(&x->list, k, st->body_hash);
}

/* accept: the decoded request freed before the last profiles are stored when none points
 * into it (an original_payload). */
static int otlp_accept(struct spaa_ingest *x, struct spaa_err *err)
{
  struct otlp_state *st = x->state;
  size_t i;
  (void)err;
  for (i = 0; i < x->list.n && !x->list.v[i].original; i++)
    ;
  if (i == x->list.n) {
    otlp_request_free(st->r);
    st->r = NULL;
    x->opts.otlp_req = NULL;
  }
  return 0;
}

/* answer: every profile stored, or rejected alone: 200, with partial_success when some were
 * rejected (even all of them: a fault of one profile is reported there) or warned about. */
static void otlp_answer(struct spaa_ingest *x)
{
  struct otlp_state *st = x->state;
  char clean[SPAA_OTLP_MAX_MSG];
  struct spaa_buf out;
  struct spaa_err err;
  size_t rejected = otlp_summarize(&x->list, 0, x->list.n, st->msg, sizeof(st->msg));
  spaa_utf8_clean(clean, sizeof(clean), st->msg, strlen(st->msg));
  spaa_buf_init(&out, 0);
  if (otlp_encode_response(st->t == CT_JSON, (int64_t)rejected, clean, &out, &err)) {
    snprintf(st->msg, sizeof(st->msg), "cannot encode the answer");
    answer_status(x->resp, st->t, 500, st->msg);
  } else {
    spaa_resp_bytes(x->resp, 200, answer_ctype(st->t), out.p ? out.p : "", out.len);
    if (clean[0])
      spaa_metrics_add(spaa_ingest_metrics(x->req), SPAA_METRIC_PARTIAL_SUCCESS, "otlp", NULL,
                       1);
  }
  spaa_buf_free(&out);
}

/* fail: a google.rpc.Status in the request's content type. A profile that could not be
 * stored fails the request: the sender retries it whole on 503, and the profiles stored
 * meanwhile that carry a profile_id are then found already stored. */
static void otlp_fail(struct spaa_ingest *x, enum spaa_ingest_stage stage, int code,
                      const char *detail)
{
  struct otlp_state *st = x->state;
  enum ctype t = st ? st->t : parse_ctype(spaa_req_header(x->req, MHD_HTTP_HEADER_CONTENT_TYPE));
  const char *d = detail && detail[0] ? detail : spaa_err_default(code);
  char msg[SPAA_OTLP_MAX_MSG];
  int status = otlp_status(code);
  if (stage == SPAA_INGEST_STORE) {
    if (code == SPAA_E_NOMEM || code == SPAA_E_SHUTDOWN)
      status = 503;
    snprintf(msg, sizeof(msg), "profile %zu of %zu could not be stored: %s", x->failed_at + 1,
             st ? st->count : x->list.n, d);
  } else {
    snprintf(msg, sizeof(msg), "%s", d);
  }
  answer_status(x->resp, t, status, msg);
  if (st)
    snprintf(st->msg, sizeof(st->msg), "%s", msg);
}

/* done: count and log the request, free what parse kept. */
static void otlp_done(struct spaa_ingest *x)
{
  struct otlp_state *st = x->state;
  const char *version;
  if (!st)
    return;
  char detail[600]; /* what the answer said: it may quote the client (a Content-Type...) */
  version = st->version ? st->version : "-";
  spaa_metrics_add(spaa_ingest_metrics(x->req), SPAA_METRIC_OTLP_REQUESTS,
                   st->t == CT_JSON ? "json" : st->t == CT_OTHER ? "other" : "protobuf", version,
                   1);
  /* a refusal for back-pressure (503, 429) at debug, as the core's request line: counted in
   * the metrics and summarized where it comes from, not logged per request */
  spaa_log(x->resp->status == 200                                ? SPAA_LOG_INFO
           : x->resp->status == 503 || x->resp->status == 429 ? SPAA_LOG_DEBUG
                                                                : SPAA_LOG_WARN,
           "otlp export",
           "status=%d format=%s version=%s profiles=%zu stored=%zu duplicates=%zu "
           "rejected=%zu detail=\"%s\"",
           x->resp->status, st->t == CT_JSON ? "json" : st->t == CT_OTHER ? "-" : "protobuf",
           version, x->list.n, x->stored, x->dups, x->rejected,
           spaa_log_q(detail, sizeof(detail), st->msg));
  otlp_request_free(st->r);
  free(st);
  x->state = NULL;
}

const struct spaa_dialect spaa_dialect_otlp = {
    .name = "otlp",
    /* the decoded request reads its samples from the body until it is converted */
    .body_spent = SPAA_BODY_SPENT_CONVERTED,
    .stream = 1, /* profiles stand alone in the answer (partial success) */
    .parse = otlp_parse,
    .entry = otlp_entry,
    .accept = otlp_accept,
    .answer = otlp_answer,
    .fail = otlp_fail,
    .done = otlp_done,
};

const struct spaa_dialect spaa_dialect_otlp_proto = {
    .name = "otlp",
    .body_spent = SPAA_BODY_SPENT_CONVERTED,
    .stream = 1,
    .parse = otlp_proto_parse,
    .entry = otlp_entry,
    .accept = otlp_accept,
    .answer = otlp_answer,
    .fail = otlp_fail,
    .done = otlp_done,
};
