/* Strict query parameters and selections of stored profiles (see api_select.h). */
#include "server/api_select.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "server/api.h"

const char *const spaa_api_filter_params[] = {
    "service", "project", "source", "event", "metric", "from", "to", "time", "label", "labels",
    "transaction", "release", "environment", "trace_id", NULL};

struct params_check {
  const char *const *const *lists;
  const char *const *prefixes;
  char bad[80];                  /* the first unknown name */
};

static int name_known(const struct params_check *pc, const char *key)
{
  size_t i, j, k;
  for (i = 0; pc->lists[i]; i++)
    for (j = 0; pc->lists[i][j]; j++) {
      if (strcmp(pc->lists[i][j], key) == 0)
        return 1;
      for (k = 0; pc->prefixes && pc->prefixes[k]; k++) {
        size_t pl = strlen(pc->prefixes[k]);
        if (strncmp(key, pc->prefixes[k], pl) == 0 && strcmp(key + pl, pc->lists[i][j]) == 0)
          return 1;
      }
    }
  return 0;
}

static enum MHD_Result params_it(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
  struct params_check *pc = cls;
  (void)kind;
  (void)value;
  if (!pc->bad[0] && key && !name_known(pc, key))
    snprintf(pc->bad, sizeof(pc->bad), "%s", key[0] ? key : "(empty name)");
  return MHD_YES;
}

int spaa_api_params_check(const struct spaa_req *req, const char *const *const *lists,
                          const char *const *prefixes, struct spaa_resp *resp)
{
  struct params_check pc;
  memset(&pc, 0, sizeof(pc));
  pc.lists = lists;
  pc.prefixes = prefixes;
  if (req->conn)
    MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, params_it, &pc);
  if (!pc.bad[0])
    return 0;
  spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "unknown parameter '%s'", pc.bad);
  return -1;
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
                    "RFC 3339 or now-<N>s|m|h|d", key, v);
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

int spaa_api_sel_parse(const struct spaa_req *req, const char *prefix, int64_t now_ns,
                       struct spaa_api_sel *sel, struct spaa_resp *resp)
{
  char k[64];
  memset(sel, 0, sizeof(*sel));
#define KEY(name) (snprintf(k, sizeof(k), "%s%s", prefix, name), k)
  sel->q.service = spaa_req_query(req, KEY("service"));
  if (!sel->q.service)
    sel->q.service = spaa_req_query(req, KEY("project"));
  sel->q.source = spaa_req_query(req, KEY("source"));
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

void spaa_api_sel_free(struct spaa_api_sel *sel)
{
  if (!sel)
    return;
  json_decref(sel->labels);
  sel->labels = NULL;
}
