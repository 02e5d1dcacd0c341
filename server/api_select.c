/* Strict query parameters and selections of stored profiles (see api_select.h). */
#include "server/api_select.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "base/rfc3339.h"
#include "server/api.h"

const char *const spaa_api_filter_params[] = {
    "service", "project", "source", "event", "metric", "from", "to", "time", "label", "labels",
    "transaction", "release", "environment", "trace_id", NULL};

/* Names a query may give more than once (each value adds a filter), with or without prefix */
static const char *const repeatable_params[] = {"label", "labels", NULL};

#define PARAMS_SEEN_MAX 256

struct params_check {
  const char *const *const *plain;    /* names accepted as they are */
  const char *const *const *prefixed; /* names accepted under one of prefixes */
  const char *const *prefixes;
  const char *seen[PARAMS_SEEN_MAX];  /* the list entries met so far ... */
  int seen_prefix[PARAMS_SEEN_MAX];   /* ... and under which prefix (-1: none) */
  size_t n_seen;
  char bad[200];                      /* the answer's detail for the first bad parameter */
};

/* The list entry `key` names, with *prefix the index of its prefix (-1 for none), or NULL. */
static const char *name_match(const struct params_check *pc, const char *key, int *prefix)
{
  size_t i, j, k;
  for (i = 0; pc->plain && pc->plain[i]; i++)
    for (j = 0; pc->plain[i][j]; j++)
      if (strcmp(pc->plain[i][j], key) == 0) {
        *prefix = -1;
        return pc->plain[i][j];
      }
  for (k = 0; pc->prefixes && pc->prefixes[k]; k++) {
    size_t pl = strlen(pc->prefixes[k]);
    if (strncmp(key, pc->prefixes[k], pl) != 0)
      continue;
    for (i = 0; pc->prefixed && pc->prefixed[i]; i++)
      for (j = 0; pc->prefixed[i][j]; j++)
        if (strcmp(key + pl, pc->prefixed[i][j]) == 0) {
          *prefix = (int)k;
          return pc->prefixed[i][j];
        }
  }
  return NULL;
}

/* 1 when s is one of the NULL-terminated list. */
static int in_list(const char *const *list, const char *s)
{
  for (; *list; list++)
    if (strcmp(*list, s) == 0)
      return 1;
  return 0;
}

/* Every name known, none with a NUL byte in its name or value, a single-valued one given
 * once: the first that is not stops the walk with its detail in pc->bad. */
static enum MHD_Result params_it(void *cls, enum MHD_ValueKind kind, const char *key,
                                 size_t key_size, const char *value, size_t value_size)
{
  struct params_check *pc = cls;
  const char *entry;
  int prefix = -1;
  size_t i;
  (void)kind;
  if (!key || (!key_size && (!value || !*value)))
    return MHD_YES; /* "?&limit=1" or "a=1&&b=2": an empty piece, as a trailing '&' */
  if (strlen(key) != key_size) {
    snprintf(pc->bad, sizeof(pc->bad), "bad parameter name '%.64s': it contains a NUL byte",
             key);
    return MHD_NO;
  }
  if (!(entry = name_match(pc, key, &prefix))) {
    snprintf(pc->bad, sizeof(pc->bad), "unknown parameter '%.80s'",
             key[0] ? key : "(empty name)");
    return MHD_NO;
  }
  if (value && strlen(value) != value_size) {
    snprintf(pc->bad, sizeof(pc->bad), "bad '%.80s': the value contains a NUL byte", key);
    return MHD_NO;
  }
  if (in_list(repeatable_params, entry))
    return MHD_YES;
  for (i = 0; i < pc->n_seen; i++)
    if (pc->seen[i] == entry && pc->seen_prefix[i] == prefix) {
      snprintf(pc->bad, sizeof(pc->bad), "parameter '%.80s' given twice", key);
      return MHD_NO;
    }
  if (pc->n_seen < PARAMS_SEEN_MAX) { /* more distinct names than any endpoint knows */
    pc->seen[pc->n_seen] = entry;
    pc->seen_prefix[pc->n_seen++] = prefix;
  }
  return MHD_YES;
}

int spaa_api_params_check_prefixed(const struct spaa_req *req,
                                   const char *const *const *plain,
                                   const char *const *const *prefixed,
                                   const char *const *prefixes, struct spaa_resp *resp)
{
  struct params_check pc;
  memset(&pc, 0, sizeof(pc));
  pc.plain = plain;
  pc.prefixed = prefixed;
  pc.prefixes = prefixes;
  if (req->conn)
    MHD_get_connection_values_n(req->conn, MHD_GET_ARGUMENT_KIND, params_it, &pc);
  if (!pc.bad[0])
    return 0;
  spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "%s", pc.bad);
  return -1;
}

int spaa_api_params_check(const struct spaa_req *req, const char *const *const *lists,
                          const char *const *prefixes, struct spaa_resp *resp)
{
  return spaa_api_params_check_prefixed(req, lists, prefixes ? lists : NULL, prefixes, resp);
}

struct prefixed_find {
  const char *prefix;
  char *name;
  size_t cap;
  int found;
};

static enum MHD_Result prefixed_it(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
  struct prefixed_find *f = cls;
  (void)kind;
  (void)value;
  if (!key || strncmp(key, f->prefix, strlen(f->prefix)) != 0)
    return MHD_YES;
  snprintf(f->name, f->cap, "%s", key);
  f->found = 1;
  return MHD_NO;
}

int spaa_api_param_under(const struct spaa_req *req, const char *prefix, char *name, size_t cap)
{
  struct prefixed_find f = {prefix, name, cap, 0};
  if (cap)
    name[0] = 0;
  if (req->conn)
    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, prefixed_it, &f);
  return f.found;
}

int spaa_api_size_param(const struct spaa_req *req, const char *name, size_t min, size_t max,
                        size_t def, size_t *out, struct spaa_resp *resp)
{
  const char *v = spaa_req_query(req, name);
  unsigned long long n = 0;
  size_t i;
  *out = def;
  if (!v)
    return 0;
  for (i = 0; v[i] && i < 12; i++) {
    if (!isdigit((unsigned char)v[i]))
      break;
    n = n * 10 + (unsigned)(v[i] - '0');
  }
  if (!v[0] || v[i] || n < min || n > max) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad '%s' '%.32s': expected %zu to %zu", name, v,
                    min, max);
    return -1;
  }
  *out = (size_t)n;
  return 0;
}

int spaa_api_parse_relative(const char *s, int64_t now_ns, int64_t *ns)
{
  int64_t n = 0, unit;
  size_t i = 4;
  if (strcmp(s, "now") == 0) {
    *ns = now_ns;
    return 0;
  }
  if (strncmp(s, "now-", 4) != 0 || !isdigit((unsigned char)s[4]))
    return -1;
  for (; isdigit((unsigned char)s[i]) && i < 12; i++)
    n = n * 10 + (s[i] - '0');
  switch (s[i]) {
  case 's': unit = 1; break;
  case 'm': unit = 60; break;
  case 'h': unit = 3600; break;
  case 'd': unit = 86400; break;
  default: return -1;
  }
  if (s[i + 1] || n > now_ns / (unit * 1000000000LL)) /* no overflow, not before 1970 */
    return -1;
  *ns = now_ns - n * unit * 1000000000LL;
  return 0;
}

static int sel_time(const struct spaa_req *req, const char *key, int64_t now_ns, int64_t *out,
                    struct spaa_resp *resp)
{
  const char *v = spaa_req_query(req, key);
  if (!v)
    return 0;
  if (spaa_query_parse_time(v, out) && spaa_api_parse_relative(v, now_ns, out)) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad '%s' time '%.64s': expected unix seconds, "
                    "RFC 3339 (from 1970 to 2262) or now-<N>s|m|h|d", key, v);
    return -1;
  }
  return 0;
}

/* Sentry's event fields kept in a profile's attrs, filtered on by name */
static const char *const attr_params[] = {"transaction", "release", "environment", "trace_id",
                                          NULL};

/* from/to on received time, or on profile time with time=profile. 0 or -1 (answered). */
static int sel_times(const struct spaa_req *req, const char *prefix, int64_t now_ns,
                     struct spaa_api_sel *sel, struct spaa_resp *resp)
{
  char k[64];
  const char *v;
  int64_t from = 0, to = 0;
  snprintf(k, sizeof(k), "%stime", prefix);
  if ((v = spaa_req_query(req, k)) && strcmp(v, "profile") != 0 && strcmp(v, "received") != 0) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad '%s' '%.32s': expected received or profile",
                    k, v);
    return -1;
  }
  sel->profile_time = v && strcmp(v, "profile") == 0;
  snprintf(k, sizeof(k), "%sfrom", prefix);
  if (sel_time(req, k, now_ns, &from, resp))
    return -1;
  snprintf(k, sizeof(k), "%sto", prefix);
  if (sel_time(req, k, now_ns, &to, resp))
    return -1;
  if (from && to && to < from) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "'%sto' is before '%sfrom'", prefix, prefix);
    return -1;
  }
  if (sel->profile_time) {
    sel->q.from_ns = from;
    sel->q.to_ns = to;
  } else {
    sel->q.received_from_ns = from;
    sel->q.received_to_ns = to;
  }
  return 0;
}

/* label=k:v, labels=k:v,... (one parser for ingest and queries) and the attribute filters. */
static int sel_labels_attrs(const struct spaa_req *req, const char *prefix,
                            struct spaa_api_sel *sel, struct spaa_resp *resp)
{
  struct spaa_err err;
  const char *key, *v;
  json_t *val;
  char k[64];
  size_t i;
  spaa_err_clear(&err);
  if (spaa_query_labels_prefixed(req, prefix, &sel->labels, &err)) {
    spaa_resp_err(resp, &err);
    return -1;
  }
  json_object_foreach(sel->labels, key, val) {
    sel->filters[sel->q.n_labels].key = key;
    sel->filters[sel->q.n_labels++].value = json_string_value(val);
  }
  sel->q.labels = sel->filters;
  for (i = 0; attr_params[i]; i++) {
    snprintf(k, sizeof(k), "%s%s", prefix, attr_params[i]);
    if (!(v = spaa_req_query(req, k)))
      continue;
    sel->attr_filters[sel->q.n_attrs].key = attr_params[i];
    sel->attr_filters[sel->q.n_attrs++].value = v;
  }
  sel->q.attrs = sel->attr_filters;
  return 0;
}

/* The sources a stored profile can have (the ingest paths' names). */
static const char *const sources[] = {"sentry", "otlp", "pprof", "folded", "spaa", NULL};
#define SPAA_API_SOURCES_TEXT "sentry, otlp, pprof, folded or spaa"

int spaa_api_sel_parse(const struct spaa_req *req, const char *prefix, int64_t now_ns,
                       struct spaa_api_sel *sel, struct spaa_resp *resp)
{
  char k[64];
  memset(sel, 0, sizeof(*sel));
#define KEY(name) (snprintf(k, sizeof(k), "%s%s", prefix, name), k)
  sel->q.service = spaa_req_query(req, KEY("service"));
  {
    const char *svc = sel->q.service, *project = spaa_req_query(req, KEY("project"));
    if (svc && project && strcmp(svc, project) != 0) { /* one name, two words for it */
      spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "'%sservice' '%.64s' and '%s' '%.64s' name "
                      "two services: 'project' is another name for 'service', give one",
                      prefix, svc, k, project);
      return -1;
    }
    if (!svc)
      sel->q.service = project;
  }
  sel->q.source = spaa_req_query(req, KEY("source"));
  if (sel->q.source && !in_list(sources, sel->q.source)) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad '%s' '%.32s': expected %s", k,
                    sel->q.source, SPAA_API_SOURCES_TEXT);
    return -1;
  }
  sel->q.event = spaa_req_query(req, KEY("event"));
  sel->q.metric = spaa_req_query(req, KEY("metric"));
#undef KEY
  if (sel_times(req, prefix, now_ns, sel, resp) || sel_labels_attrs(req, prefix, sel, resp))
    return -1;
  sel->any = sel->q.service || sel->q.source || sel->q.event || sel->q.metric ||
             sel->q.from_ns || sel->q.to_ns || sel->q.received_from_ns ||
             sel->q.received_to_ns || sel->q.n_labels || sel->q.n_attrs;
  return 0;
}

/* Append ", key=value" (the value cut at 48 bytes) to the description being built. */
struct describe {
  char *out;
  size_t cap, len;
  size_t n;   /* filters described */
  int full;   /* one did not fit: ", ..." written, the rest dropped */
};

static void describe_add(struct describe *d, const char *key, const char *sep, const char *v)
{
  char item[160];
  size_t cut = strlen(v);
  int k;
  if (d->full) {
    d->n++;
    return;
  }
  if (cut > 48) /* cut on a character's first byte: the detail stays valid UTF-8 */
    for (cut = 48; cut > 0 && ((unsigned char)v[cut] & 0xC0) == 0x80; cut--)
      ;
  k = snprintf(item, sizeof(item), "%s%s%s%.*s%s", d->n ? ", " : "", key, sep, (int)cut, v,
               v[cut] ? "..." : "");
  if (k > 0 && d->len + (size_t)k + 6 < d->cap) { /* room for ", ..." and the NUL */
    memcpy(d->out + d->len, item, (size_t)k + 1);
    d->len += (size_t)k;
  } else {
    snprintf(d->out + d->len, d->cap - d->len, "%s...", d->n ? ", " : "");
    d->full = 1;
  }
  d->n++;
}

static void describe_time(struct describe *d, const char *key, int64_t ns)
{
  char t[SPAA_RFC3339_SIZE];
  if (!ns)
    return;
  spaa_rfc3339_format_ns(t, ns, 0);
  describe_add(d, key, "=", t);
}

size_t spaa_api_sel_describe(const struct spaa_list_query *q, char *out, size_t cap)
{
  struct describe d = {out, cap, 0, 0, 0};
  size_t i;
  out[0] = '\0';
  if (q->service)
    describe_add(&d, "service", "=", q->service);
  if (q->source)
    describe_add(&d, "source", "=", q->source);
  if (q->event)
    describe_add(&d, "event", "=", q->event);
  if (q->from_ns || q->to_ns)
    describe_add(&d, "time", "=", "profile");
  describe_time(&d, "from", q->from_ns ? q->from_ns : q->received_from_ns);
  describe_time(&d, "to", q->to_ns ? q->to_ns : q->received_to_ns);
  for (i = 0; i < q->n_labels; i++) {
    char kv[112];
    snprintf(kv, sizeof(kv), "%.52s:%.52s", q->labels[i].key, q->labels[i].value);
    describe_add(&d, "label", "=", kv);
  }
  for (i = 0; i < q->n_attrs; i++)
    describe_add(&d, q->attrs[i].key, "=", q->attrs[i].value);
  return d.n;
}

void spaa_api_sel_free(struct spaa_api_sel *sel)
{
  if (!sel)
    return;
  json_decref(sel->labels);
  sel->labels = NULL;
}
