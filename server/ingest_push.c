/* Pyroscope's push API over Connect (see ingest_push.h): the content type checked, the
 * PushRequest converted by the pprof-push converter, answers and errors in Connect's unary
 * shapes. Storing and counting: the ingest flow. */
#include "server/ingest_push.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/utf8.h"
#include "server/decode.h"
#include "server/log.h"

enum push_ctype { PUSH_OTHER = 0, PUSH_PROTO, PUSH_JSON };

/* The media type of a Content-Type value, parameters and case ignored. */
static enum push_ctype push_ctype(const char *v)
{
  size_t n;
  if (!v)
    return PUSH_OTHER;
  while (*v == ' ')
    v++;
  n = strcspn(v, "; ");
  if (n == strlen("application/proto") && strncasecmp(v, "application/proto", n) == 0)
    return PUSH_PROTO;
  if (n == strlen("application/json") && strncasecmp(v, "application/json", n) == 0)
    return PUSH_JSON;
  return PUSH_OTHER;
}

const char *spaa_push_connect_code(int code, int *http_status)
{
  switch (code) {
  case SPAA_E_UNAUTHORIZED:
    *http_status = 401;
    return "unauthenticated";
  case SPAA_E_FORBIDDEN:
    *http_status = 403;
    return "permission_denied";
  case SPAA_E_NOT_FOUND:
  case SPAA_E_METHOD:
    *http_status = 404;
    return "unimplemented";
  case SPAA_E_TOO_LARGE:
    *http_status = 429;
    return "resource_exhausted";
  case SPAA_E_MEDIA_TYPE:
    *http_status = 415;
    return "invalid_argument";
  case SPAA_E_BUSY:
  case SPAA_E_SHUTDOWN:
  case SPAA_E_NOMEM:
    *http_status = 503;
    return "unavailable";
  case SPAA_E_IO:
  case SPAA_E_INTERNAL:
  case SPAA_E_STORE:
    *http_status = 500;
    return "internal";
  default:
    *http_status = 400;
    return "invalid_argument";
  }
}

int spaa_push_media(const char *content_type, const char *protocol_version, int *json,
                    struct spaa_err *err)
{
  enum push_ctype t = push_ctype(content_type);
  if (protocol_version && strcmp(protocol_version, "1") != 0)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "Connect-Protocol-Version '%.16s' is "
                        "not supported: send 1", protocol_version);
  if (t == PUSH_OTHER) {
    char shown[96];
    const char *ct = content_type ? content_type : "";
    spaa_utf8_clean(shown, sizeof(shown), ct, strlen(ct));
    return spaa_err_set(err, SPAA_E_MEDIA_TYPE, 0, 0, "Content-Type '%s' is not supported: "
                        "send application/proto or application/json", shown);
  }
  *json = t == PUSH_JSON;
  return 0;
}

/* The body of a request whose content type was checked: a JSON one must hold a JSON object;
 * the profiles are stored as pprof. */
static int push_body(struct spaa_ingest *x, int json, struct spaa_err *err)
{
  size_t i = 0;
  x->source = "pprof"; /* the push is an envelope: what it carries are pprof profiles */
  while (i < x->body_len && (x->body[i] == ' ' || x->body[i] == '\n' || x->body[i] == '\r' ||
                             x->body[i] == '\t'))
    i++;
  if (json && (i == x->body_len || x->body[i] != '{'))
    return spaa_err_set(err, SPAA_E_BAD_JSON, i, 0, "the body is not a JSON object, as "
                        "Content-Type application/json says");
  /* the converter reads JSON wherever it finds it; protobuf was announced (Connect's
   * application/proto, or gRPC) and no PushRequest in protobuf starts with '{' (field 15 as
   * a group): Connect and gRPC servers decode with the codec the request names, and fail */
  if (!json && x->body_len && x->body[0] == '{')
    return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0, "the body is JSON, but protobuf was "
                        "announced (Content-Type application/proto, or gRPC): send JSON as a "
                        "Connect call with Content-Type application/json");
  x->state = (void *)(json ? "application/json" : "application/proto");
  return 0;
}

/* parse: Connect-Protocol-Version and the content type from the HTTP request, then the body. */
static int push_parse(struct spaa_ingest *x, struct spaa_err *err)
{
  int json = 0, rc;
  x->source = "pprof";
  rc = spaa_push_media(spaa_req_header(x->req, "Content-Type"),
                       spaa_req_header(x->req, "Connect-Protocol-Version"), &json, err);
  return rc ? rc : push_body(x, json, err);
}

/* parse of a protobuf PushRequest whose headers the caller checked (gRPC, Connect on h2c). */
static int push_proto_parse(struct spaa_ingest *x, struct spaa_err *err)
{
  return push_body(x, 0, err);
}

/* parse of a JSON PushRequest whose headers the caller checked (Connect on h2c). */
static int push_json_parse(struct spaa_ingest *x, struct spaa_err *err)
{
  return push_body(x, 1, err);
}

/* answer: an empty PushResponse in the request's content type. */
static void push_answer(struct spaa_ingest *x)
{
  const char *ct = x->state;
  if (ct && strcmp(ct, "application/json") == 0)
    spaa_resp_bytes(x->resp, 200, "application/json", "{}", 2);
  else
    spaa_resp_bytes(x->resp, 200, "application/proto", "", 0);
}

/* fail: Connect's error JSON, with the status Connect gives its code. */
static void push_fail(struct spaa_ingest *x, enum spaa_ingest_stage stage, int code,
                      const char *detail)
{
  const char *msg = detail && detail[0] ? detail : spaa_err_default(code);
  char full[sizeof(((struct spaa_err *)0)->msg) + 64], qd[2 * sizeof(full)];
  int status;
  const char *cc = spaa_push_connect_code(code, &status);
  struct spaa_err coding;
  json_t *body;
  /* Connect: a Content-Encoding the server does not support is "unimplemented" (HTTP 501),
   * with the encodings it does support in the message. The HTTP core and the h2c route
   * check the encoding before the content type, so a media type refused while the encoding
   * is unusable is the encoding. */
  if (code == SPAA_E_MEDIA_TYPE && x->req &&
      spaa_decode_needed(x->req->content_encoding, &coding) < 0) {
    cc = "unimplemented";
    status = 501;
  }
  if (stage == SPAA_INGEST_STORE)
    snprintf(full, sizeof(full), "sample %zu of %zu could not be stored: %s", x->failed_at + 1,
             x->list.n, msg);
  else
    snprintf(full, sizeof(full), "%s", msg);
  /* debug: the core's "request" line carries the answer (one line per request) */
  spaa_log(SPAA_LOG_DEBUG, "pyroscope push rejected",
           "status=%d code=%s detail=\"%s\"", status, cc, spaa_log_q(qd, sizeof(qd), full));
  body = json_pack("{s:s, s:s}", "code", cc, "message", full);
  if (!body) {
    spaa_resp_bytes(x->resp, 500, "application/json", "{\"code\":\"internal\"}", 19);
    return;
  }
  spaa_resp_json(x->resp, status, body);
  if (status == 503)
    spaa_resp_header(x->resp, "Retry-After", "1");
}

const struct spaa_dialect spaa_dialect_pyroscope_push = {
    .name = "pyroscope-push",
    .body_spent = SPAA_BODY_SPENT_CONVERTED,
    .parse = push_parse,
    .answer = push_answer,
    .fail = push_fail,
};

const struct spaa_dialect spaa_dialect_pyroscope_push_proto = {
    .name = "pyroscope-push",
    .body_spent = SPAA_BODY_SPENT_CONVERTED,
    .parse = push_proto_parse,
    .answer = push_answer,
    .fail = push_fail,
};

const struct spaa_dialect spaa_dialect_pyroscope_push_json = {
    .name = "pyroscope-push",
    .body_spent = SPAA_BODY_SPENT_CONVERTED,
    .parse = push_json_parse,
    .answer = push_answer,
    .fail = push_fail,
};
