/* The pprof dialects (see pprof.h): Pyroscope's /ingest and the Collector's /v1/pprof. Each
 * request: read the query, find the pprof bytes (raw or in a multipart field), convert with
 * the pprof codec, add the request's metadata, store, answer as the sender expects. */
#include "server/ingest_pprof.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spaa/convert.h"
#include "pprof/pprof.h"
#include "server/ingest.h"
#include "server/log.h"
#include "server/multipart.h"
#include "server/api.h"

#define STC_MAX (64u * 1024) /* bytes of a sample_type_config field */

static struct spaa_pprof_stats g_stats; /* updated with __atomic builtins only */

static void bump(uint64_t *field, uint64_t n) { __atomic_add_fetch(field, n, __ATOMIC_RELAXED); }

void spaa_pprof_stats_get(struct spaa_pprof_stats *out)
{
  out->requests = __atomic_load_n(&g_stats.requests, __ATOMIC_RELAXED);
  out->stored = __atomic_load_n(&g_stats.stored, __ATOMIC_RELAXED);
  out->bad_request = __atomic_load_n(&g_stats.bad_request, __ATOMIC_RELAXED);
  out->invalid = __atomic_load_n(&g_stats.invalid, __ATOMIC_RELAXED);
  out->too_large = __atomic_load_n(&g_stats.too_large, __ATOMIC_RELAXED);
  out->busy = __atomic_load_n(&g_stats.busy, __ATOMIC_RELAXED);
  out->failed = __atomic_load_n(&g_stats.failed, __ATOMIC_RELAXED);
  out->bytes = __atomic_load_n(&g_stats.bytes, __ATOMIC_RELAXED);
}

/* Answer an error (JSON {"error","detail"}), count it by status and log it. */
static void reject(const struct spaa_req *req, struct spaa_resp *resp, int code,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void reject(const struct spaa_req *req, struct spaa_resp *resp, int code,
                   const char *fmt, ...)
{
  char msg[512];
  int status = spaa_err_status(code);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (code == SPAA_E_BUSY || code == SPAA_E_SHUTDOWN)
    bump(&g_stats.busy, 1);
  else if (status == 413)
    bump(&g_stats.too_large, 1);
  else if (status == 422)
    bump(&g_stats.invalid, 1);
  else if (status >= 500)
    bump(&g_stats.failed, 1);
  else
    bump(&g_stats.bad_request, 1);
  spaa_log(status >= 500 ? SPAA_LOG_WARN : SPAA_LOG_INFO, "pprof upload rejected",
           "path=\"%s\" status=%d error=%s detail=\"%s\"", req->path, status,
           spaa_err_name(code), msg);
  spaa_resp_error(resp, code, "%s", msg);
}

static void reject_err(const struct spaa_req *req, struct spaa_resp *resp,
                       const struct spaa_err *err)
{
  reject(req, resp, err->code ? err->code : SPAA_E_INTERNAL, "%s",
         err->msg[0] ? err->msg : spaa_err_default(err->code));
}

/* ---- the Pyroscope name ------------------------------------------------------------------ */

/* Profile types a Pyroscope application name may end in (".cpu"): Go, Java (async-profiler),
 * .NET, Python, Ruby, Node.js and eBPF clients. */
static const char *const known_types[] = {
    "cpu", "wall", "itimer", "samples", "alloc_objects", "alloc_space", "inuse_objects",
    "inuse_space", "goroutine", "goroutines", "mutex_count", "mutex_duration", "block_count",
    "block_duration", "contentions", "delay", "lock_count", "lock_duration", "lock_time",
    "exception", "exceptions", "alloc_samples", "alloc_size", "alloc_in_new_tlab_objects",
    "alloc_in_new_tlab_bytes", "alloc_outside_tlab_objects", "alloc_outside_tlab_bytes",
    "inuse", "alloc", "live",
};

static int app_char(int c) { return isalnum(c) || c == '_' || c == '.' || c == '-'; }
static int key_char(int c) { return isalnum(c) || c == '_' || c == '.'; }

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
  unsigned c = s[0];
  size_t l, i;
  unsigned cp;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    l = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    l = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    l = 4, cp = c & 0x07;
  else
    return 0;
  if (n < l)
    return 0;
  for (i = 1; i < l; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((l == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (l == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return l;
}

void spaa_pprof_name_clear(struct spaa_pprof_name *n)
{
  if (!n)
    return;
  json_decref(n->labels);
  n->labels = NULL;
}

#define NAME_ERR(at, ...) \
  (spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, (size_t)(at), __VA_ARGS__))

/* The labels between the braces: s[0..n) (without them); off = offset of s in the name. */
static int parse_labels(const char *s, size_t n, size_t off, struct spaa_pprof_name *out,
                        struct spaa_err *err)
{
  size_t i = 0;
  while (i < n) {
    char key[SPAA_PPROF_MAX_LABEL_VALUE + 1], val[SPAA_PPROF_MAX_LABEL_VALUE + 1];
    size_t k0 = i, v0, kl, vl;
    while (i < n && key_char((unsigned char)s[i]))
      i++;
    kl = i - k0;
    if (kl == 0)
      return NAME_ERR(off + i, "bad name: expected a label key ([A-Za-z0-9_.]) at byte %zu",
                      off + i);
    if (kl > SPAA_PPROF_MAX_LABEL_VALUE)
      return NAME_ERR(off + k0, "bad name: the label key at byte %zu is longer than %d bytes",
                      off + k0, SPAA_PPROF_MAX_LABEL_VALUE);
    if (i >= n || s[i] != '=')
      return NAME_ERR(off + i, "bad name: expected '=' after label key '%.*s' at byte %zu",
                      (int)kl, s + k0, off + i);
    memcpy(key, s + k0, kl);
    key[kl] = 0;
    v0 = ++i;
    while (i < n && s[i] != ',') {
      unsigned char c = (unsigned char)s[i];
      size_t l = utf8_len((const unsigned char *)s + i, n - i);
      if (c < 0x20 || c == 0x7f || c == '{' || c == '}' || c == '=' || l == 0)
        return NAME_ERR(off + i, "bad name: byte %zu of the value of label '%s' is not "
                        "allowed (no control characters, braces, '=' or invalid UTF-8)",
                        off + i, key);
      i += l;
    }
    vl = i - v0;
    if (vl == 0)
      return NAME_ERR(off + v0, "bad name: label '%s' has an empty value", key);
    if (vl > SPAA_PPROF_MAX_LABEL_VALUE)
      return NAME_ERR(off + v0, "bad name: the value of label '%s' is longer than %d bytes",
                      key, SPAA_PPROF_MAX_LABEL_VALUE);
    memcpy(val, s + v0, vl);
    val[vl] = 0;
    if (strcmp(key, "__name__") == 0)
      return NAME_ERR(off + k0, "bad name: the label key '__name__' is reserved");
    if (!out->labels && !(out->labels = json_object()))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    if (json_object_get(out->labels, key))
      return NAME_ERR(off + k0, "bad name: label '%s' is given twice", key);
    if (json_object_size(out->labels) >= SPAA_PPROF_MAX_LABELS)
      return NAME_ERR(off + k0, "bad name: more than %d labels", SPAA_PPROF_MAX_LABELS);
    if (json_object_set_new(out->labels, key, json_string(val)))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    if (i < n) { /* at ',' */
      i++;
      if (i == n)
        return NAME_ERR(off + i, "bad name: a label list must not end in ','");
    }
  }
  return 0;
}

int spaa_pprof_parse_name(const char *name, struct spaa_pprof_name *out, struct spaa_err *err)
{
  size_t n = name ? strlen(name) : 0, a = 0, i;
  const char *dot;
  int rc;
  memset(out, 0, sizeof(*out));
  if (n == 0)
    return NAME_ERR(0, "the query parameter 'name' is required (e.g. name=app.cpu{env=prod})");
  if (n > SPAA_PPROF_MAX_NAME - 1)
    return NAME_ERR(0, "bad name: longer than %d bytes", SPAA_PPROF_MAX_NAME - 1);
  while (a < n && name[a] != '{') {
    if (!app_char((unsigned char)name[a]))
      return NAME_ERR(a, "bad name: byte %zu ('%c') is not allowed in an application name "
                      "([A-Za-z0-9_.-])", a, isprint((unsigned char)name[a]) ? name[a] : '?');
    a++;
  }
  if (a == 0)
    return NAME_ERR(0, "bad name: the application name before '{' is empty");
  memcpy(out->app, name, a);
  out->app[a] = 0;
  memcpy(out->service, name, a + 1);
  out->service[a] = 0;
  dot = strrchr(out->app, '.');
  if (dot && dot > out->app)
    for (i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++)
      if (strcmp(dot + 1, known_types[i]) == 0) {
        out->type = known_types[i];
        out->service[dot - out->app] = 0;
        break;
      }
  if (a < n) {
    if (name[n - 1] != '}')
      rc = NAME_ERR(n, "bad name: the label list opened at byte %zu must end the name with '}'",
                    a);
    else if (memchr(name + a + 1, '{', n - a - 2) || memchr(name + a + 1, '}', n - a - 2))
      rc = NAME_ERR(a, "bad name: braces inside the label list");
    else
      rc = parse_labels(name + a + 1, n - a - 2, a + 1, out, err);
    if (rc) {
      spaa_pprof_name_clear(out);
      return rc;
    }
  }
  return 0;
}

int spaa_pprof_parse_time(const char *s, int64_t now_ns, int64_t *ns)
{
  uint64_t v = 0;
  size_t i;
  if (!s || !*s)
    return -1;
  if (strcmp(s, "now") == 0) {
    *ns = now_ns;
    return 0;
  }
  for (i = 0; s[i]; i++) {
    if (s[i] < '0' || s[i] > '9' || i >= 19)
      return -1;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  if (v > (uint64_t)INT64_MAX)
    return -1;
  if (v < 100000000000ULL) {        /* below 1e11: seconds */
    if (v > (uint64_t)INT64_MAX / 1000000000ULL)
      return -1;                      /* past 2262: no int64 ns for it */
    *ns = (int64_t)v * 1000000000LL;
  }
  else if (v < 100000000000000ULL)  /* below 1e14: milliseconds */
    *ns = (int64_t)v * 1000000LL;
  else if (v < 100000000000000000ULL) /* below 1e17: microseconds */
    *ns = (int64_t)v * 1000LL;
  else
    *ns = (int64_t)v;
  return 0;
}

/* ---- one upload ---------------------------------------------------------------------------- */

/* What the request says besides the pprof bytes. */
struct upload {
  const char *service;       /* service name, or NULL */
  json_t *labels;            /* owned, or NULL */
  json_t *attrs;             /* owned object (never NULL once set up) */
  int64_t from_ns, until_ns; /* the sender's time range, 0 when not given */
  int64_t sample_rate;       /* Hz from the query, 0 when not given */
  json_t *stc;               /* sample_type_config (owned object), or NULL */
  int ok_status;             /* 200 (Pyroscope) or 204 (Collector) */
};

static int jset(json_t *o, const char *k, json_t *v) { return v ? json_object_set_new(o, k, v) : -1; }

/* Copy sample_type_config entries onto the events they name; for events with no period
 * of their own, the query's sampleRate as sampling frequency. */
static int annotate_events(struct spaa_profile *p, const struct upload *u)
{
  size_t i;
  for (i = 0; i < p->header.n_events; i++) {
    struct spaa_event *e = &p->header.events[i];
    json_t *cfg = u->stc ? json_object_get(u->stc, e->name) : NULL;
    static const char *const keys[][2] = {
        {"display-name", "x_pyroscope_display_name"}, {"units", "x_pyroscope_units"},
        {"aggregation", "x_pyroscope_aggregation"},   {"cumulative", "x_pyroscope_cumulative"},
        {"sampled", "x_pyroscope_sampled"},
    };
    size_t k;
    if (cfg)
      for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        json_t *v = json_object_get(cfg, keys[k][0]);
        if (!v)
          continue;
        if (!e->extra && !(e->extra = json_object()))
          return SPAA_E_NOMEM;
        if (json_object_set(e->extra, keys[k][1], v))
          return SPAA_E_NOMEM;
      }
    if (u->sample_rate > 0 && !e->has_sample_period && !e->has_frequency_hz &&
        e->kind && strcmp(e->kind, "timer") == 0) {
      e->mode = "frequency";
      e->has_frequency_hz = 1;
      e->frequency_hz = spaa_int(u->sample_rate);
    }
  }
  return 0;
}

/* Convert `len` bytes of pprof, add the upload's metadata, store, answer. */
static void store_pprof(const struct spaa_req *req, struct spaa_resp *resp, const uint8_t *buf,
                        size_t len, struct upload *u)
{
  struct spaa_conv_list list;
  struct spaa_convert_opts o;
  struct spaa_ingest_info info;
  struct spaa_converted *c;
  struct spaa_err err;
  char id[64];
  int rc;
  memset(&list, 0, sizeof(list));
  memset(&o, 0, sizeof(o));
  memset(&info, 0, sizeof(info));
  spaa_err_clear(&err);
  if (len == 0) {
    reject(req, resp, SPAA_E_BAD_REQUEST, "the body is empty: expected a pprof profile "
           "(protobuf, gzipped or not)");
    return;
  }
  o.service = u->service;
  if ((rc = spaa_convert_pprof(buf, len, &o, &list, &err))) {
    reject_err(req, resp, &err);
    goto out;
  }
  c = &list.v[0];
  if (jset(u->attrs, "pprof_gzip", json_boolean(spaa_pprof_is_gzip(buf, len))) ||
      annotate_events(c->profile, u)) {
    reject(req, resp, SPAA_E_NOMEM, "out of memory");
    goto out;
  }
  if (!c->start_ns && !c->end_ns && (u->from_ns || u->until_ns)) {
    /* the pprof carries no time of its own: the sender's range */
    struct spaa_header *h = &c->profile->header;
    c->start_ns = u->from_ns ? u->from_ns : u->until_ns;
    c->end_ns = u->until_ns ? u->until_ns : u->from_ns;
    h->has_time_range = 1;
    h->start = spaa_int(c->start_ns);
    h->end = spaa_int(c->end_ns);
    h->time_unit = "nanoseconds";
  }
  c->attrs = json_incref(u->attrs);
  info.source = "pprof";
  info.service = u->service;
  info.labels = u->labels;
  info.original = buf;
  info.original_len = len;
  rc = spaa_ingest_store(req, c, &info, id, &err);
  if (rc < 0) {
    reject_err(req, resp, &err);
    goto out;
  }
  bump(&g_stats.stored, 1);
  bump(&g_stats.bytes, req->wire_len);
  resp->status = u->ok_status;
  resp->body.len = 0;
out:
  spaa_conv_list_free(&list);
}

/* ---- POST /ingest -------------------------------------------------------------------------- */

/* sample_type_config: an object of objects whose known keys have the right JSON types. */
static int parse_stc(const uint8_t *data, size_t len, json_t **out, struct spaa_err *err)
{
  json_error_t je;
  json_t *root, *v;
  const char *k;
  if (len > STC_MAX)
    return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0,
                        "sample_type_config is %zu bytes, over the %u-byte cap", len, STC_MAX);
  root = json_loadb((const char *)data, len, 0, &je);
  if (!root)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, (size_t)je.position,
                        "sample_type_config is not valid JSON: %s (line %d, column %d)",
                        je.text, je.line, je.column);
  if (!json_is_object(root)) {
    json_decref(root);
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                        "sample_type_config must be a JSON object of sample type -> config");
  }
  json_object_foreach(root, k, v) {
    static const char *const strs[] = {"units", "display-name", "aggregation"};
    static const char *const bools[] = {"cumulative", "sampled"};
    size_t i;
    const char *bad = NULL;
    if (!json_is_object(v))
      bad = "(the entry)";
    for (i = 0; !bad && i < 3; i++)
      if (json_object_get(v, strs[i]) && !json_is_string(json_object_get(v, strs[i])))
        bad = strs[i];
    for (i = 0; !bad && i < 2; i++)
      if (json_object_get(v, bools[i]) && !json_is_boolean(json_object_get(v, bools[i])))
        bad = bools[i];
    if (bad) {
      spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                   "sample_type_config['%.64s']: %s has the wrong type (units, display-name, "
                   "aggregation are strings; cumulative, sampled booleans)", k, bad);
      json_decref(root);
      return SPAA_E_BAD_REQUEST;
    }
  }
  *out = root;
  return 0;
}

/* Optional query string parameter into attrs[key]. */
static int attr_str(const struct spaa_req *req, json_t *attrs, const char *param,
                    const char *key)
{
  const char *v = spaa_req_query(req, param);
  if (!v || !*v)
    return 0;
  return jset(attrs, key, json_string(v)) ? -1 : 0;
}

void spaa_pprof_ingest(const struct spaa_req *req, struct spaa_resp *resp)
{
  struct upload u;
  struct spaa_pprof_name nm;
  struct spaa_err err;
  const char *format, *v, *ct;
  const uint8_t *buf = req->body;
  size_t len = req->body_len;
  bump(&g_stats.requests, 1);
  memset(&u, 0, sizeof(u));
  memset(&nm, 0, sizeof(nm));
  spaa_err_clear(&err);
  u.ok_status = 200;
  format = spaa_req_query(req, "format");
  if (format && *format && strcasecmp(format, "pprof") != 0) {
    reject(req, resp, SPAA_E_UNSUPPORTED, "format '%.40s' is not supported here; this server "
           "accepts: pprof", format);
    return;
  }
  if (spaa_pprof_parse_name(spaa_req_query(req, "name"), &nm, &err)) {
    reject_err(req, resp, &err);
    return;
  }
  if (!(u.attrs = json_object()) || jset(u.attrs, "pyroscope_name", json_string(spaa_req_query(req, "name")))) {
    reject(req, resp, SPAA_E_NOMEM, "out of memory");
    goto out;
  }
  u.service = nm.service;
  u.labels = json_incref(nm.labels);
  if (nm.type) {
    if (!u.labels && !(u.labels = json_object())) {
      reject(req, resp, SPAA_E_NOMEM, "out of memory");
      goto out;
    }
    json_object_set_new(u.labels, "__name__", json_string(nm.type));
    json_object_set_new(u.attrs, "profile_type", json_string(nm.type));
  }
  if ((v = spaa_req_query(req, "from")) && *v &&
      spaa_pprof_parse_time(v, req->received_ns, &u.from_ns)) {
    reject(req, resp, SPAA_E_BAD_REQUEST, "bad from '%.40s': expected unix time in seconds, "
           "milliseconds, microseconds or nanoseconds (digits), or 'now'", v);
    goto out;
  }
  if ((v = spaa_req_query(req, "until")) && *v &&
      spaa_pprof_parse_time(v, req->received_ns, &u.until_ns)) {
    reject(req, resp, SPAA_E_BAD_REQUEST, "bad until '%.40s': expected unix time in seconds, "
           "milliseconds, microseconds or nanoseconds (digits), or 'now'", v);
    goto out;
  }
  if (!u.from_ns)
    u.from_ns = u.until_ns ? u.until_ns : req->received_ns;
  if (!u.until_ns)
    u.until_ns = u.from_ns > req->received_ns ? u.from_ns : req->received_ns;
  if (u.until_ns < u.from_ns) {
    reject(req, resp, SPAA_E_BAD_REQUEST, "until (%lld ns) is before from (%lld ns)",
           (long long)u.until_ns, (long long)u.from_ns);
    goto out;
  }
  if ((v = spaa_req_query(req, "sampleRate")) && *v) {
    char *end;
    long long r = strtoll(v, &end, 10);
    if (*end || r <= 0 || r > 1000000000LL || !isdigit((unsigned char)*v)) {
      reject(req, resp, SPAA_E_BAD_REQUEST, "bad sampleRate '%.40s': expected a positive "
             "integer (Hz)", v);
      goto out;
    }
    u.sample_rate = r;
  }
  if (jset(u.attrs, "from_ns", json_integer(u.from_ns)) ||
      jset(u.attrs, "until_ns", json_integer(u.until_ns)) ||
      (u.sample_rate && jset(u.attrs, "sample_rate", json_integer(u.sample_rate))) ||
      attr_str(req, u.attrs, "spyName", "spy_name") || attr_str(req, u.attrs, "units", "units") ||
      attr_str(req, u.attrs, "aggregationType", "aggregation_type") ||
      attr_str(req, u.attrs, "aggregrationType", "aggregation_type")) {
    reject(req, resp, SPAA_E_NOMEM, "out of memory");
    goto out;
  }
  ct = spaa_req_header(req, "Content-Type");
  if (spaa_multipart_is_form(ct)) {
    struct spaa_multipart *m; /* 6 KiB: on the heap, not on a connection thread's stack */
    const struct spaa_multipart_part *pp;
    char boundary[SPAA_MULTIPART_MAX_BOUNDARY + 1];
    if (!(m = malloc(sizeof(*m)))) {
      reject(req, resp, SPAA_E_NOMEM, "out of memory");
      goto out;
    }
    if (spaa_multipart_boundary(ct, boundary, sizeof(boundary), &err) ||
        spaa_multipart_parse(buf, len, boundary, m, &err)) {
      free(m);
      reject_err(req, resp, &err);
      goto out;
    }
    if ((pp = spaa_multipart_get(m, "prev_profile")) && pp->len > 0) {
      free(m);
      reject(req, resp, SPAA_E_UNSUPPORTED, "unsupported client version: the multipart field "
             "'prev_profile' (cumulative profiles sent as two snapshots) is not supported; "
             "upgrade the client");
      goto out;
    }
    if ((pp = spaa_multipart_get(m, "sample_type_config")) &&
        parse_stc(pp->data, pp->len, &u.stc, &err)) {
      free(m);
      reject_err(req, resp, &err);
      goto out;
    }
    if (u.stc && json_object_set(u.attrs, "sample_type_config", u.stc)) {
      free(m);
      reject(req, resp, SPAA_E_NOMEM, "out of memory");
      goto out;
    }
    if (!(pp = spaa_multipart_get(m, "profile"))) {
      free(m);
      reject(req, resp, SPAA_E_BAD_REQUEST, "the multipart body has no 'profile' field");
      goto out;
    }
    buf = pp->data;
    len = pp->len;
    free(m);
  }
  store_pprof(req, resp, buf, len, &u);
out:
  json_decref(u.labels);
  json_decref(u.attrs);
  json_decref(u.stc);
  spaa_pprof_name_clear(&nm);
}

/* ---- POST /v1/pprof ------------------------------------------------------------------------ */

void spaa_pprof_collector(const struct spaa_req *req, struct spaa_resp *resp)
{
  struct upload u;
  struct spaa_err err;
  const char *service;
  bump(&g_stats.requests, 1);
  memset(&u, 0, sizeof(u));
  spaa_err_clear(&err);
  u.ok_status = 204;
  service = spaa_req_query(req, "service");
  if (!service || !*service)
    service = spaa_req_header(req, "X-Service-Name");
  u.service = service && *service ? service : NULL;
  if (spaa_query_labels(req, &u.labels, &err)) {
    reject_err(req, resp, &err);
    return;
  }
  if (!(u.attrs = json_object())) {
    reject(req, resp, SPAA_E_NOMEM, "out of memory");
    goto out;
  }
  store_pprof(req, resp, req->body, req->body_len, &u);
out:
  json_decref(u.labels);
  json_decref(u.attrs);
}
