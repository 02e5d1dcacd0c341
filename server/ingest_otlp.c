/* OTLP/HTTP profiles export (see otlp.h): content type, decode, convert, store each profile,
 * answer ExportProfilesServiceResponse or google.rpc.Status in the request's content type. */
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
#include "server/ingest.h"
#include "server/log.h"

/* google.rpc.Code values used in Status bodies */
#define RPC_INVALID_ARGUMENT 3
#define RPC_RESOURCE_EXHAUSTED 8
#define RPC_INTERNAL 13
#define RPC_UNAVAILABLE 14
#define RPC_UNAUTHENTICATED 16

static struct spaa_otlp_stats g_stats;

#define COUNT(field, n) __atomic_add_fetch(&g_stats.field, (uint64_t)(n), __ATOMIC_RELAXED)

void spaa_otlp_stats(struct spaa_otlp_stats *out)
{
#define LOAD(f) out->f = __atomic_load_n(&g_stats.f, __ATOMIC_RELAXED)
  LOAD(requests);
  LOAD(requests_json);
  LOAD(requests_v1exp);
  LOAD(ok);
  LOAD(partial);
  LOAD(bad_request);
  LOAD(refused);
  LOAD(unavailable);
  LOAD(failed);
  LOAD(profiles_stored);
  LOAD(profiles_duplicate);
  LOAD(profiles_rejected);
#undef LOAD
}

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

static void count_status(int status)
{
  if (status == 400)
    COUNT(bad_request, 1);
  else if (status == 503)
    COUNT(unavailable, 1);
  else if (status >= 500)
    COUNT(failed, 1);
  else
    COUNT(refused, 1);
}

void spaa_otlp_error(const struct spaa_req *req, struct spaa_resp *resp, int code,
                     const char *detail)
{
  enum ctype t = parse_ctype(spaa_req_header(req, MHD_HTTP_HEADER_CONTENT_TYPE));
  int status = otlp_status(code);
  count_status(status);
  answer_status(resp, t, status, detail && detail[0] ? detail : spaa_err_default(code));
}

/* ---- storing ---------------------------------------------------------------------------- */

/* When a profile id already came earlier in this request (two profiles carrying one
 * profile_id), derive another from it and the entry's position: deterministic, so that a
 * retried request dedups in the store instead of storing the profile twice. */
static void unique_id(struct spaa_conv_list *l, size_t k)
{
  char *id = l->v[k].id;
  size_t i;
  if (!id[0])
    return;
  for (i = 0; i < k; i++)
    if (strcmp(l->v[i].id, id) == 0) {
      char key[96];
      XXH128_hash_t h;
      int n = snprintf(key, sizeof(key), "%s/%zu", id, k);
      h = XXH3_128bits(key, (size_t)n);
      snprintf(id, sizeof(l->v[k].id), "%016llx%016llx", (unsigned long long)h.high64,
               (unsigned long long)h.low64);
      return;
    }
}

int spaa_otlp_store_list(const struct spaa_req *req, const struct otlp_request *r,
                         struct spaa_conv_list *list, size_t *stored, size_t *dups,
                         size_t *failed_at, struct spaa_err *err)
{
  struct spaa_converted **c = NULL;
  struct spaa_ingest_info *info = NULL;
  char (*ids)[64] = NULL;
  int *rcs = NULL;
  struct spaa_err *errs = NULL;
  size_t *pos = NULL, i, n = 0;
  int rc = 0;
  *stored = *dups = 0;
  *failed_at = list->n;
  if (!list->n)
    return 0;
  if (!(c = calloc(list->n, sizeof(*c))) || !(info = calloc(list->n, sizeof(*info))) ||
      !(ids = calloc(list->n, sizeof(*ids))) || !(rcs = calloc(list->n, sizeof(*rcs))) ||
      !(errs = calloc(list->n, sizeof(*errs))) || !(pos = calloc(list->n, sizeof(*pos)))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  for (i = 0; i < list->n; i++) {
    struct otlp_origin o;
    unique_id(list, i);
    if (!list->v[i].profile)
      continue;
    c[n] = &list->v[i];
    info[n].source = "otlp";
    if (!otlp_request_origin(r, i, &o) && o.payload) {
      info[n].original = o.payload;
      info[n].original_len = o.payload_len;
    }
    pos[n++] = i;
  }
  /* together, so they share group commits */
  spaa_ingest_store_many(req, c, info, n, ids, rcs, errs);
  for (i = 0; i < n; i++) {
    if (rcs[i] == 0)
      (*stored)++;
    else if (rcs[i] == 1)
      (*dups)++;
    else if (!rc) {
      rc = rcs[i];
      *failed_at = pos[i];
      *err = errs[i];
    }
  }
out:
  free(c);
  free(info);
  free(ids);
  free(rcs);
  free(errs);
  free(pos);
  return rc;
}

void spaa_otlp_export(const struct spaa_req *req, struct spaa_resp *resp)
{
  const char *ct = spaa_req_header(req, MHD_HTTP_HEADER_CONTENT_TYPE);
  enum ctype t = parse_ctype(ct);
  struct otlp_request *r = NULL;
  struct spaa_conv_list list;
  struct spaa_err err;
  struct spaa_buf out;
  char msg[SPAA_OTLP_MAX_MSG], clean[SPAA_OTLP_MAX_MSG];
  size_t i, stored = 0, dups = 0, rejected = 0, failed_at;
  int rc, status = 200;
  memset(&list, 0, sizeof(list));
  msg[0] = 0;
  spaa_err_clear(&err);
  spaa_buf_init(&out, 0);
  COUNT(requests, 1);
  if (t == CT_OTHER) {
    char shown[96];
    spaa_utf8_clean(shown, sizeof(shown), ct ? ct : "", ct ? strlen(ct) : 0);
    snprintf(msg, sizeof(msg), "Content-Type '%s' is not supported: send "
             "application/x-protobuf, application/protobuf or application/json", shown);
    status = 415;
    COUNT(refused, 1);
    answer_status(resp, t, status, msg);
    goto log;
  }
  if (t == CT_JSON)
    COUNT(requests_json, 1);
  if ((rc = otlp_decode(req->body, req->body_len, &r, &err)) ||
      (rc = otlp_convert(r, NULL, &list, &err))) {
    status = otlp_status(rc);
    count_status(status);
    snprintf(msg, sizeof(msg), "%s", err.msg[0] ? err.msg : spaa_err_default(rc));
    answer_status(resp, t, status, msg);
    goto log;
  }
  if (otlp_request_version(r) == OTLP_V1EXPERIMENTAL)
    COUNT(requests_v1exp, 1);
  for (i = 0; i < list.n; i++)
    if (!list.v[i].profile) {
      rejected++;
      spaa_log(SPAA_LOG_WARN, "otlp profile rejected", "reason=%s detail=\"%s\"",
               list.v[i].reason, list.v[i].err.msg);
    }
  rc = spaa_otlp_store_list(req, r, &list, &stored, &dups, &failed_at, &err);
  if (rc < 0) {
    /* the sender retries the whole request on 503; the profiles stored meanwhile that carry
     * a profile_id are then found already stored */
    status = otlp_status(rc);
    if (rc == SPAA_E_NOMEM || rc == SPAA_E_SHUTDOWN)
      status = 503;
    count_status(status);
    snprintf(msg, sizeof(msg), "profile %zu of %zu could not be stored: %s", failed_at + 1,
             list.n, err.msg[0] ? err.msg : spaa_err_default(rc));
    answer_status(resp, t, status, msg);
    goto log;
  }
  /* every profile stored, or rejected alone: 200, with partial_success when some were
   * rejected (even all of them: a fault of one profile is reported there) or warned about */
  rejected = otlp_summarize(&list, 0, list.n, msg, sizeof(msg));
  spaa_utf8_clean(clean, sizeof(clean), msg, strlen(msg));
  if (otlp_encode_response(t == CT_JSON, (int64_t)rejected, clean, &out, &err)) {
    status = 500;
    COUNT(failed, 1);
    answer_status(resp, t, status, "cannot encode the answer");
    goto log;
  }
  spaa_resp_bytes(resp, 200, answer_ctype(t), out.p ? out.p : "", out.len);
  if (clean[0])
    COUNT(partial, 1);
  else
    COUNT(ok, 1);
log:
  COUNT(profiles_stored, stored);
  COUNT(profiles_duplicate, dups);
  COUNT(profiles_rejected, rejected);
  spaa_log(status == 200 ? SPAA_LOG_INFO : SPAA_LOG_WARN, "otlp export",
           "status=%d format=%s version=%s profiles=%zu stored=%zu duplicates=%zu "
           "rejected=%zu detail=\"%s\"",
           status, t == CT_JSON ? "json" : t == CT_OTHER ? "-" : "protobuf",
           !r ? "-" : otlp_request_version(r) == OTLP_V1EXPERIMENTAL ? "v1experimental"
                                                                     : "v1development",
           list.n, stored, dups, rejected, msg);
  spaa_buf_free(&out);
  spaa_conv_list_free(&list);
  otlp_request_free(r);
}
