/* Pyroscope's metadata for a pprof: the application name grammar (`app.cpu{env=prod}` ->
 * service, profile type, labels), its time format (from/until read by magnitude),
 * sampleRate and sample_type_config, parsed into struct spaa_pprof_opts and applied to the
 * converted profile by spaa_convert_pprof (see pprof.h, docs/pprof-mapping.md). */
#include "pprof/pprof.h"

#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "pprof/pprof_int.h"

/* ---- the application name -------------------------------------------------------------- */

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

void spaa_pprof_name_clear(struct spaa_pprof_name *n)
{
  if (!n)
    return;
  json_decref(n->labels);
  n->labels = NULL;
}

#define NAME_ERR(at, ...) \
  (spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, (size_t)(at), __VA_ARGS__))

/* The labels between the braces: s[0..n) (without them); off = offset of s in the name. As
 * Pyroscope reads them: spaces around keys and values are not part of them, a value runs to
 * the next ',' ('=' included), and a label whose value is empty is left out (an empty value is
 * no value: a client's tag from an unset variable, `hostname=`). */
static int parse_labels(const char *s, size_t n, size_t off, struct spaa_pprof_name *out,
                        struct spaa_err *err)
{
  size_t i = 0;
  while (i < n) {
    char key[SPAA_PPROF_MAX_LABEL_VALUE + 1], val[SPAA_PPROF_MAX_LABEL_VALUE + 1];
    size_t k0, v0, kl, vl;
    while (i < n && s[i] == ' ')
      i++;
    k0 = i;
    while (i < n && key_char((unsigned char)s[i]))
      i++;
    kl = i - k0;
    if (kl == 0)
      return NAME_ERR(off + i, "bad name: expected a label key ([A-Za-z0-9_.]) at byte %zu",
                      off + i);
    if (kl > SPAA_PPROF_MAX_LABEL_VALUE)
      return NAME_ERR(off + k0, "bad name: the label key at byte %zu is longer than %d bytes",
                      off + k0, SPAA_PPROF_MAX_LABEL_VALUE);
    while (i < n && s[i] == ' ')
      i++;
    if (i >= n || s[i] != '=')
      return NAME_ERR(off + i, "bad name: expected '=' after label key '%.*s' at byte %zu",
                      (int)kl, s + k0, off + i);
    memcpy(key, s + k0, kl);
    key[kl] = 0;
    i++;
    while (i < n && s[i] == ' ')
      i++;
    v0 = i;
    while (i < n && s[i] != ',') {
      unsigned char c = (unsigned char)s[i];
      size_t l = spaa_utf8_seq((const unsigned char *)s + i, n - i);
      if (c < 0x20 || c == 0x7f || l == 0)
        return NAME_ERR(off + i, "bad name: byte %zu of the value of label '%s' is not "
                        "allowed (no control characters or invalid UTF-8)", off + i, key);
      i += l;
    }
    for (vl = i - v0; vl && s[v0 + vl - 1] == ' '; vl--)
      ;
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
    if (vl && json_object_set_new(out->labels, key, json_string(val)))
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

int spaa_pprof_name_service(const struct spaa_pprof_name *n, const char *app, size_t app_len,
                            char **service, json_t **labels)
{
  json_t *sn = n->labels ? json_object_get(n->labels, "service_name") : NULL;
  json_t *l = NULL;
  char *svc;
  *service = NULL;
  *labels = NULL;
  /* a label's value is never empty (parse_labels leaves those out) */
  svc = sn ? strdup(json_string_value(sn)) : strndup(app, app_len);
  if (!svc || (n->labels && !(l = json_deep_copy(n->labels))))
    goto nomem;
  if (sn && (json_object_del(l, "service_name") ||
             (!json_object_get(l, "app_name") &&
              json_object_set_new(l, "app_name", json_stringn(app, app_len)))))
    goto nomem;
  if (l && json_object_size(l) == 0) {
    json_decref(l);
    l = NULL;
  }
  *service = svc;
  *labels = l;
  return 0;
nomem:
  free(svc);
  json_decref(l);
  return SPAA_E_NOMEM;
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
    return -2;
  {
    /* read by magnitude: below 1e11 seconds, 1e14 milliseconds, 1e17 microseconds */
    int64_t mult = v < 100000000000ULL      ? 1000000000LL
                   : v < 100000000000000ULL ? 1000000LL
                   : v < 100000000000000000ULL ? 1000LL : 1;
    if (v > (uint64_t)(INT64_MAX / mult))
      return -2; /* past 2262: no int64 ns for it */
    *ns = (int64_t)v * mult;
    return 0;
  }
}

/* ---- the options ------------------------------------------------------------------------ */

void spaa_pprof_opts_clear(struct spaa_pprof_opts *o)
{
  if (!o)
    return;
  free(o->name_raw);
  spaa_pprof_name_clear(&o->name);
  json_decref(o->sample_type_config);
  memset(o, 0, sizeof(*o));
}

int spaa_pprof_opts_name(struct spaa_pprof_opts *o, const char *name, struct spaa_err *err)
{
  struct spaa_pprof_name n;
  char *raw;
  int rc = spaa_pprof_parse_name(name, &n, err);
  if (rc)
    return rc;
  if (!(raw = strdup(name))) {
    spaa_pprof_name_clear(&n);
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  free(o->name_raw);
  spaa_pprof_name_clear(&o->name);
  o->name_raw = raw;
  o->name = n;
  return 0;
}

#define TIME_HINT "expected unix time in seconds, milliseconds, microseconds or nanoseconds " \
                  "(digits), or 'now'"

int spaa_pprof_opts_range(struct spaa_pprof_opts *o, const char *from, const char *until,
                          int64_t now_ns, struct spaa_err *err)
{
  int64_t f = 0, u = 0;
  int rf = from && *from ? spaa_pprof_parse_time(from, now_ns, &f) : 0;
  int ru = !rf && until && *until ? spaa_pprof_parse_time(until, now_ns, &u) : 0;
  if (rf == -2 || ru == -2)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "%s '%.40s' is past "
                        "2262-04-11T23:47:16Z, the last time nanoseconds since 1970 hold in 64 "
                        "bits (read by magnitude: below 1e11 seconds, 1e14 milliseconds, 1e17 "
                        "microseconds, else nanoseconds)", rf ? "from" : "until",
                        rf ? from : until);
  if (rf)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad from '%.40s': " TIME_HINT, from);
  if (ru)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad until '%.40s': " TIME_HINT, until);
  if (!f)
    f = u ? u : now_ns;
  if (!u)
    u = f > now_ns ? f : now_ns;
  if (u < f)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "until (%lld ns) is before from (%lld ns)",
                        (long long)u, (long long)f);
  o->has_range = 1;
  o->from_ns = f;
  o->until_ns = u;
  return 0;
}

int spaa_pprof_opts_sample_rate(struct spaa_pprof_opts *o, const char *hz,
                                struct spaa_err *err)
{
  char *end;
  long long r;
  if (!hz || !*hz)
    return 0;
  /* As Pyroscope: 0 (pyroscope-go sends it for heap, mutex, block and goroutine uploads)
   * and anything that is not a decimal number mean "not given" */
  errno = 0;
  r = strtoll(hz, &end, 10);
  if (*end || r <= 0 || !isdigit((unsigned char)*hz) || (errno == ERANGE && r != LLONG_MAX))
    return 0;
  if (r > SPAA_PPROF_MAX_SAMPLE_RATE)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad sampleRate '%.40s': over the "
                        "largest rate, %lld Hz", hz, (long long)SPAA_PPROF_MAX_SAMPLE_RATE);
  o->sample_rate = r;
  return 0;
}

/* The first key of one sample_type_config entry whose value has the wrong JSON type, or
 * NULL when the entry is well-formed. */
static const char *stc_bad_key(const json_t *v)
{
  static const char *const strs[] = {"units", "display-name", "aggregation"};
  static const char *const bools[] = {"cumulative", "sampled"};
  size_t i;
  if (!json_is_object(v))
    return "(the entry)";
  for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
    if (json_object_get(v, strs[i]) && !json_is_string(json_object_get(v, strs[i])))
      return strs[i];
  for (i = 0; i < sizeof(bools) / sizeof(bools[0]); i++)
    if (json_object_get(v, bools[i]) && !json_is_boolean(json_object_get(v, bools[i])))
      return bools[i];
  return NULL;
}

int spaa_pprof_opts_stc(struct spaa_pprof_opts *o, const uint8_t *json, size_t len,
                        struct spaa_err *err)
{
  json_error_t je;
  json_t *root, *v;
  const char *k, *bad;
  if (len > SPAA_PPROF_MAX_STC)
    return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0,
                        "sample_type_config is %zu bytes, over the %u-byte cap", len,
                        SPAA_PPROF_MAX_STC);
  root = json_loadb((const char *)(json ? json : (const uint8_t *)""), len, 0, &je);
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
    if ((bad = stc_bad_key(v))) {
      spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                   "sample_type_config['%.64s']: %s has the wrong type (units, display-name, "
                   "aggregation are strings; cumulative, sampled booleans)", k, bad);
      json_decref(root);
      return SPAA_E_BAD_REQUEST;
    }
  }
  json_decref(o->sample_type_config);
  o->sample_type_config = root;
  return 0;
}

/* ---- applying them ---------------------------------------------------------------------- */

static int jset(json_t *o, const char *k, json_t *v)
{
  return v && json_object_set_new(o, k, v) == 0 ? 0 : SPAA_E_NOMEM;
}

static const char *const stc_keys[][2] = {
    {"display-name", "x_pyroscope_display_name"}, {"units", "x_pyroscope_units"},
    {"aggregation", "x_pyroscope_aggregation"},   {"cumulative", "x_pyroscope_cumulative"},
    {"sampled", "x_pyroscope_sampled"},
};

/* Copy the keys of one sample_type_config entry into *dst (made when needed) as
 * x_pyroscope_*. 0 or SPAA_E_NOMEM. */
static int copy_stc(json_t **dst, const json_t *cfg)
{
  size_t k;
  for (k = 0; k < sizeof(stc_keys) / sizeof(stc_keys[0]); k++) {
    json_t *v = json_object_get(cfg, stc_keys[k][0]);
    if (!v)
      continue;
    if (!*dst && !(*dst = json_object()))
      return SPAA_E_NOMEM;
    if (json_object_set(*dst, stc_keys[k][1], v))
      return SPAA_E_NOMEM;
  }
  return 0;
}

/* Whether a stack of event `ev` weighs metric `metric`. */
static int event_has_metric(const struct spaa_profile *p, const char *ev, const char *metric)
{
  size_t i;
  for (i = 0; i < p->n_stacks; i++)
    if (!strcmp(p->stacks[i].event, ev) && spaa_weights_find(&p->stacks[i].weights, metric))
      return 1;
  return 0;
}

/* The config entries of the event's other metrics (the sample types merged into it), as
 * x_pyroscope_metrics: {metric: {x_pyroscope_*}}. 0 or SPAA_E_NOMEM. */
static int annotate_metrics(struct spaa_profile *p, struct spaa_event *e, json_t *stc)
{
  const char *k;
  json_t *cfg, *all = NULL;
  int rc = 0;
  json_object_foreach(stc, k, cfg) {
    json_t *one = NULL;
    if (!strcmp(k, e->name) || !event_has_metric(p, e->name, k))
      continue;
    if ((rc = copy_stc(&one, cfg)) || !one)
      goto out;
    if ((!all && !(all = json_object())) || json_object_set_new(all, k, one)) {
      json_decref(one);
      rc = SPAA_E_NOMEM;
      goto out;
    }
  }
  if (all && ((!e->extra && !(e->extra = json_object())) ||
              json_object_set(e->extra, "x_pyroscope_metrics", all)))
    rc = SPAA_E_NOMEM;
out:
  json_decref(all);
  return rc;
}

/* Copy the sample_type_config entry of each event onto it, and those of its other metrics
 * under x_pyroscope_metrics; for timer events with no period or frequency of their own, the
 * sample rate as sampling frequency. */
static int annotate_events(struct spaa_profile *p, const struct spaa_pprof_opts *o)
{
  size_t i;
  for (i = 0; i < p->header.n_events; i++) {
    struct spaa_event *e = &p->header.events[i];
    json_t *cfg = o->sample_type_config ? json_object_get(o->sample_type_config, e->name) : NULL;
    if ((cfg && copy_stc(&e->extra, cfg)) ||
        (o->sample_type_config && annotate_metrics(p, e, o->sample_type_config)))
      return SPAA_E_NOMEM;
    if (o->sample_rate > 0 && !e->has_sample_period && !e->has_frequency_hz && e->kind &&
        strcmp(e->kind, "timer") == 0) {
      e->mode = "frequency";
      e->has_frequency_hz = 1;
      e->frequency_hz = spaa_int(o->sample_rate);
    }
  }
  return 0;
}

/* Service, labels and attrs from the name, the range and the other options. */
static int apply_meta(const struct spaa_pprof_opts *o, struct spaa_converted *c)
{
  json_t *a = c->attrs;
  if (o->name_raw) {
    char *service;
    json_t *labels;
    if (spaa_pprof_name_service(&o->name, o->name.service, strlen(o->name.service), &service,
                                &labels))
      return SPAA_E_NOMEM;
    if (!c->service)
      c->service = service;
    else
      free(service);
    if (!c->labels)
      c->labels = labels;
    else
      json_decref(labels);
    if (jset(a, "pyroscope_name", json_string(o->name_raw)))
      return SPAA_E_NOMEM;
  }
  if (o->name_raw && o->name.type) {
    if (!c->labels && !(c->labels = json_object()))
      return SPAA_E_NOMEM;
    if (jset(c->labels, "__name__", json_string(o->name.type)) ||
        jset(a, "profile_type", json_string(o->name.type)))
      return SPAA_E_NOMEM;
  }
  if (o->has_range && (jset(a, "from_ns", json_integer(o->from_ns)) ||
                       jset(a, "until_ns", json_integer(o->until_ns))))
    return SPAA_E_NOMEM;
  if (o->sample_rate && jset(a, "sample_rate", json_integer(o->sample_rate)))
    return SPAA_E_NOMEM;
  if (o->sample_type_config &&
      json_object_set(a, "sample_type_config", o->sample_type_config))
    return SPAA_E_NOMEM;
  return 0;
}

int spaa_pprof__pyroscope_apply(const struct spaa_pprof_opts *o, struct spaa_converted *c,
                                struct spaa_err *err)
{
  struct spaa_header *h = &c->profile->header;
  if (apply_meta(o, c) || annotate_events(c->profile, o))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if (o->has_range && !c->start_ns && !c->end_ns && (o->from_ns || o->until_ns)) {
    /* the pprof carries no time of its own: the sender's range */
    c->start_ns = o->from_ns ? o->from_ns : o->until_ns;
    c->end_ns = o->until_ns ? o->until_ns : o->from_ns;
    h->has_time_range = 1;
    h->start = spaa_int(c->start_ns);
    h->end = spaa_int(c->end_ns);
    h->time_unit = "nanoseconds";
  }
  return 0;
}
