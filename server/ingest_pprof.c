/* The pprof dialects (see ingest_pprof.h): Pyroscope's /ingest (pprof, or folded stacks) and
 * the Collector's /v1/pprof. Each turns its request into conversion options and the bytes to
 * convert (raw, or a multipart field), and answers as its sender expects; the flow converts
 * and stores. */
#include "server/ingest_pprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "folded/folded.h"
#include "pprof/pprof.h"
#include "server/api.h"
#include "server/log.h"
#include "server/multipart.h"

/* fail: JSON {"error","detail"}, logged. */
static void pprof_fail(struct spaa_ingest *x, enum spaa_ingest_stage stage, int code,
                       const char *detail)
{
  const char *msg = detail && detail[0] ? detail : spaa_err_default(code);
  int status = spaa_err_status(code);
  char qp[300], qd[600];
  (void)stage;
  /* debug: the core's "request" line carries the answer (a warning for a 4xx or 5xx, one
   * line per request); back-pressure is counted and logged once per interval by the core */
  spaa_log(SPAA_LOG_DEBUG, "pprof upload rejected",
           "path=\"%s\" status=%d error=%s detail=\"%s\"",
           spaa_log_q(qp, sizeof(qp), x->req->path ? x->req->path : "-"), status,
           spaa_err_name(code), spaa_log_q(qd, sizeof(qd), msg));
  spaa_resp_error(x->resp, code, "%s", msg);
}

#define PPROF_BODY "a pprof profile (protobuf, gzipped or not)"
#define FOLDED_BODY "folded stacks ('frame;frame;...;leaf COUNT' lines)"

/* An empty body is a valid (empty) Profile message, and never what a sender meant. */
static int check_body(const struct spaa_ingest *x, const char *expected, struct spaa_err *err)
{
  if (x->body_len == 0)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the body is empty: expected %s",
                        expected);
  return 0;
}

/* ---- POST /ingest -------------------------------------------------------------------------- */

/* Optional query string parameter into attrs[key]. */
static int attr_str(const struct spaa_req *req, json_t *attrs, const char *param,
                    const char *key)
{
  const char *v = spaa_req_query(req, param);
  json_t *s;
  if (!v || !*v)
    return 0;
  s = json_string(v);
  return s && json_object_set_new(attrs, key, s) == 0 ? 0 : SPAA_E_NOMEM;
}

/* The query parameters kept as they are, in the request's attrs. */
static int query_attrs(struct spaa_ingest *x, struct spaa_err *err)
{
  const struct spaa_req *req = x->req;
  if (!(x->attrs = json_object()) || attr_str(req, x->attrs, "spyName", "spy_name") ||
      attr_str(req, x->attrs, "units", "units") ||
      attr_str(req, x->attrs, "aggregationType", "aggregation_type") ||
      attr_str(req, x->attrs, "aggregrationType", "aggregation_type"))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  return 0;
}

/* A multipart/form-data body: the pprof is its field `profile` (x->body points there), the
 * field `sample_type_config` goes into the options. Any other body is the pprof itself. */
static int multipart_body(struct spaa_ingest *x, struct spaa_pprof_opts *po, struct spaa_err *err)
{
  const char *ct = spaa_req_header(x->req, "Content-Type");
  const struct spaa_multipart_part *pp;
  char boundary[SPAA_MULTIPART_MAX_BOUNDARY + 1];
  struct spaa_multipart *m; /* 6 KiB: on the heap, not on a connection thread's stack */
  int rc;
  if (!spaa_multipart_is_form(ct))
    return 0;
  if (!(m = malloc(sizeof(*m))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if ((rc = spaa_multipart_boundary(ct, boundary, sizeof(boundary), err)) ||
      (rc = spaa_multipart_parse(x->body, x->body_len, boundary, m, err)))
    goto out;
  if ((pp = spaa_multipart_get(m, "prev_profile")) && pp->len > 0) {
    rc = spaa_err_set(err, SPAA_E_UNSUPPORTED, 0, 0, "unsupported client version: the multipart "
                      "field 'prev_profile' (cumulative profiles sent as two snapshots) is not "
                      "supported; upgrade the client");
    goto out;
  }
  if ((pp = spaa_multipart_get(m, "sample_type_config")) &&
      (rc = spaa_pprof_opts_stc(po, pp->data, pp->len, err)))
    goto out;
  if (!(pp = spaa_multipart_get(m, "profile"))) {
    rc = spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the multipart body has no 'profile' field");
    goto out;
  }
  x->body = pp->data ? pp->data : (const uint8_t *)"";
  x->body_len = pp->len;
out:
  free(m);
  return rc;
}

/* What /ingest holds on to while a request goes through the flow. */
struct pyroscope_state {
  struct spaa_pprof_opts po;   /* name, from/until (and, for pprof, sampleRate, config) */
  struct spaa_folded_opts fo;  /* folded stacks: lines or not, sampleRate as read for them */
  enum spaa_folded_sniff sniff; /* why a body sent without `format` was read as a pprof
                                 * (SPAA_FOLDED_TEXT: it was not read so for that) */
  size_t sniff_at;             /* the offset of the byte at fault, for CONTROL and NOT_UTF8 */
  uint8_t sniff_byte;          /* that byte */
};

enum pyroscope_format { FMT_PPROF, FMT_FOLDED, FMT_LINES };

/* 1 when the media type of Content-Type value v is `type` (parameters and case ignored). */
static int media_is(const char *v, const char *type)
{
  size_t n;
  if (!v)
    return 0;
  while (*v == ' ')
    v++;
  n = strcspn(v, "; ");
  return n == strlen(type) && strncasecmp(v, type, n) == 0;
}

/* The format of the body, as Pyroscope's /ingest picks it: `format` when given (folded stacks
 * in a multipart body are its pprof form); else a multipart body is pprof, and any other is
 * folded stacks (Pyroscope's default), unless it is no text: then it is a pprof (gzip or
 * protobuf), as this server took bodies without `format` before it read folded stacks, and
 * *sniff says why (else SPAA_FOLDED_TEXT). */
static int pyroscope_format(const struct spaa_ingest *x, enum pyroscope_format *fmt,
                            enum spaa_folded_sniff *sniff, size_t *sniff_at,
                            struct spaa_err *err)
{
  const char *f = spaa_req_query(x->req, "format");
  const char *ct = spaa_req_header(x->req, "Content-Type"), *kind;
  int multipart = spaa_multipart_is_form(ct);
  if (f && *f) {
    if (strcasecmp(f, "pprof") == 0)
      *fmt = FMT_PPROF;
    else if (strcasecmp(f, "lines") == 0)
      *fmt = FMT_LINES;
    else if (strcasecmp(f, "folded") == 0 || strcasecmp(f, "groups") == 0)
      *fmt = multipart ? FMT_PPROF : FMT_FOLDED;
    else
      return spaa_err_set(err, SPAA_E_UNSUPPORTED, 0, 0, "format '%.40s' is not supported here; "
                          "this server accepts: pprof, folded (the default for text), lines", f);
    return 0;
  }
  kind = media_is(ct, "binary/octet-stream+trie")   ? "trie"
         : media_is(ct, "binary/octet-stream+tree") ? "tree"
                                                    : NULL;
  if (kind)
    return spaa_err_set(err, SPAA_E_UNSUPPORTED, 0, 0, "Content-Type binary/octet-stream+%s is "
                        "Pyroscope's %s format, which this server does not read; it accepts: "
                        "pprof, folded, lines", kind, kind);
  if (multipart) {
    *fmt = FMT_PPROF;
    return 0;
  }
  *sniff = spaa_folded_sniff(x->body, x->body_len, sniff_at);
  *fmt = *sniff == SPAA_FOLDED_TEXT ? FMT_FOLDED : FMT_PPROF;
  return 0;
}

/* parse: format, name, from/until, sampleRate into the options; the body. */
static int pyroscope_parse(struct spaa_ingest *x, struct spaa_err *err)
{
  const struct spaa_req *req = x->req;
  const char *format = spaa_req_query(req, "format");
  enum pyroscope_format fmt = FMT_PPROF;
  struct pyroscope_state *st;
  int rc;
  if (!(st = calloc(1, sizeof(*st))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  x->state = st;
  if ((rc = pyroscope_format(x, &fmt, &st->sniff, &st->sniff_at, err)))
    return rc;
  if (st->sniff == SPAA_FOLDED_CONTROL || st->sniff == SPAA_FOLDED_NOT_UTF8)
    st->sniff_byte = x->body[st->sniff_at];
  if (fmt != FMT_PPROF) /* converted, stored and counted as folded stacks */
    x->format = x->source = "folded";
  x->opts.pprof = &st->po;
  if ((rc = spaa_pprof_opts_name(&st->po, spaa_req_query(req, "name"), err)) ||
      (rc = spaa_pprof_opts_range(&st->po, spaa_req_query(req, "from"),
                                  spaa_req_query(req, "until"), req->received_ns, err)) ||
      (rc = query_attrs(x, err)))
    return rc;
  if (fmt == FMT_PPROF) {
    if ((rc = spaa_pprof_opts_sample_rate(&st->po, spaa_req_query(req, "sampleRate"), err)) ||
        (rc = multipart_body(x, &st->po, err)))
      return rc;
  } else {
    spaa_folded_opts_init(&st->fo);
    st->fo.lines = fmt == FMT_LINES;
    if ((rc = spaa_folded_opts_sample_rate(&st->fo, spaa_req_query(req, "sampleRate"), err)))
      return rc;
    x->opts.folded = &st->fo;
  }
  if (!format || !*format)
    return check_body(x, FOLDED_BODY " or " PPROF_BODY, err);
  return check_body(x, fmt == FMT_PPROF ? PPROF_BODY
                       : fmt == FMT_LINES ? "stacks, one 'frame;frame;...;leaf' per line"
                                          : FOLDED_BODY, err);
}

/* fail: a body sent without `format` that was read as a pprof because it is no text, and is
 * no pprof either, was perhaps folded stacks that Pyroscope reads (it takes every such body
 * as folded stacks): the answer says why it was not read so, and what would have it read so.
 * Which bodies are accepted does not change. */
static void pyroscope_fail(struct spaa_ingest *x, enum spaa_ingest_stage stage, int code,
                           const char *detail)
{
  const struct pyroscope_state *st = x->state;
  const char *msg = detail && detail[0] ? detail : spaa_err_default(code);
  int status = spaa_err_status(code);
  char full[512];
  if (stage != SPAA_INGEST_CONVERT || !st || st->sniff == SPAA_FOLDED_TEXT ||
      (status != 400 && status != 422)) {
    pprof_fail(x, stage, code, detail);
    return;
  }
  if (st->sniff == SPAA_FOLDED_GZIP)
    snprintf(full, sizeof(full), "%s; the body was read as a pprof because it is "
             "gzip-compressed and sent without Content-Encoding: send gzipped folded stacks "
             "with the header Content-Encoding: gzip", msg);
  else
    snprintf(full, sizeof(full), "%s; the body was read as a pprof because it is no text (at "
             "offset %zu, byte 0x%02x is %s): a body is read as folded stacks when it is UTF-8 "
             "without control characters other than tab, CR and LF, or when format=folded is "
             "given (which names the line at fault)", msg, st->sniff_at, st->sniff_byte,
             st->sniff == SPAA_FOLDED_CONTROL ? "a control character" : "not UTF-8");
  pprof_fail(x, stage, code, full);
}

static void pyroscope_answer(struct spaa_ingest *x)
{
  x->resp->status = 200;
  x->resp->body.len = 0;
}

static void pyroscope_done(struct spaa_ingest *x)
{
  struct pyroscope_state *st = x->state;
  if (st)
    spaa_pprof_opts_clear(&st->po);
  free(st);
  x->state = NULL;
}

const struct spaa_dialect spaa_dialect_pyroscope = {
    .name = "pyroscope",
    /* the options hold copies; x->body (a multipart field) is not used */
    .body_spent = SPAA_BODY_SPENT_CONVERTED,
    .parse = pyroscope_parse,
    .answer = pyroscope_answer,
    .fail = pyroscope_fail,
    .done = pyroscope_done,
};

/* ---- POST /v1/pprof ------------------------------------------------------------------------ */

/* parse: service from the query or the header, labels from the query. With neither, the
 * profile is stored under "unknown_service", the name OpenTelemetry's resource conventions
 * give a service that did not name itself (what a Collector pipeline shows downstream). */
static int collector_parse(struct spaa_ingest *x, struct spaa_err *err)
{
  const char *service = spaa_req_query(x->req, "service");
  int rc;
  if (!service || !*service)
    service = spaa_req_header(x->req, "X-Service-Name");
  x->opts.service = service && *service ? service : "unknown_service";
  if ((rc = spaa_query_labels(x->req, &x->labels, err)))
    return rc;
  return check_body(x, PPROF_BODY, err);
}

static void collector_answer(struct spaa_ingest *x)
{
  x->resp->status = 204;
  x->resp->body.len = 0;
}

const struct spaa_dialect spaa_dialect_collector = {
    .name = "collector",
    .body_spent = SPAA_BODY_SPENT_CONVERTED,
    .parse = collector_parse,
    .answer = collector_answer,
    .fail = pprof_fail,
};
