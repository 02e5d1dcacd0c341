/* Strict query parameters and selections of stored profiles (see api_select.h). */
#include "server/api_select.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "server/api.h"

const char *const spaa_api_filter_params[] = {"service", "project", "source", "event", "from",
                                              "to", "label", "labels", "time", NULL};

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

/* Add "k:v" items (one, or comma-separated when `list`) to sel->labels. 0 or -1. */
static int add_labels(struct spaa_api_sel *sel, const char *v, int list)
{
  const char *p = v;
  for (;;) {
    const char *e = list ? strchr(p, ',') : NULL;
    size_t n = e ? (size_t)(e - p) : strlen(p);
    const char *colon = memchr(p, ':', n);
    char key[SPAA_QUERY_MAX_LABEL_ITEM];
    if (!colon || colon == p || n >= sizeof(key) ||
        json_object_size(sel->labels) >= SPAA_QUERY_MAX_LABELS)
      return -1;
    memcpy(key, p, (size_t)(colon - p));
    key[colon - p] = 0;
    if (json_object_set_new(sel->labels, key,
                            json_stringn(colon + 1, n - (size_t)(colon - p) - 1)))
      return -1;
    if (!e)
      return 0;
    p = e + 1;
  }
}

struct label_walk {
  struct spaa_api_sel *sel;
  int list;
  int bad;
  char what[96];
};

static void on_label(void *ctx, const char *v)
{
  struct label_walk *lw = ctx;
  if (!lw->bad && add_labels(lw->sel, v, lw->list)) {
    lw->bad = 1;
    snprintf(lw->what, sizeof(lw->what), "%.80s", v);
  }
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

int spaa_api_sel_parse(const struct spaa_req *req, const char *prefix, int64_t now_ns,
                       struct spaa_api_sel *sel, struct spaa_resp *resp)
{
  char k[64];
  const char *v;
  struct label_walk lw;
  memset(sel, 0, sizeof(*sel));
#define KEY(name) (snprintf(k, sizeof(k), "%s%s", prefix, name), k)
  sel->q.service = spaa_req_query(req, KEY("service"));
  if (!sel->q.service)
    sel->q.service = spaa_req_query(req, KEY("project"));
  sel->q.source = spaa_req_query(req, KEY("source"));
  sel->q.event = spaa_req_query(req, KEY("event"));
  if ((v = spaa_req_query(req, KEY("time"))) && strcmp(v, "profile") != 0) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad '%s' '%.32s': expected profile", k, v);
    return -1;
  }
  if (sel_time(req, KEY("from"), now_ns, &sel->q.from_ns, resp) ||
      sel_time(req, KEY("to"), now_ns, &sel->q.to_ns, resp))
    return -1;
  if (sel->q.from_ns && sel->q.to_ns && sel->q.to_ns < sel->q.from_ns) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "'%sto' is before '%sfrom'", prefix, prefix);
    return -1;
  }
  if (!(sel->labels = json_object())) {
    spaa_resp_error(resp, SPAA_E_NOMEM, "out of memory");
    return -1;
  }
  memset(&lw, 0, sizeof(lw));
  lw.sel = sel;
  spaa_req_query_each(req, KEY("label"), on_label, &lw);
  lw.list = 1;
  spaa_req_query_each(req, KEY("labels"), on_label, &lw);
#undef KEY
  if (lw.bad) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "bad '%slabel' '%s': expected key:value (at most "
                    "%d labels)", prefix, lw.what, SPAA_QUERY_MAX_LABELS);
    return -1;
  }
  {
    const char *key;
    json_t *val;
    json_object_foreach(sel->labels, key, val) {
      sel->filters[sel->q.n_labels].key = key;
      sel->filters[sel->q.n_labels++].value = json_string_value(val);
    }
  }
  sel->q.labels = sel->filters;
  sel->any = sel->q.service || sel->q.source || sel->q.event || sel->q.from_ns ||
             sel->q.to_ns || sel->q.n_labels;
  return 0;
}

void spaa_api_sel_free(struct spaa_api_sel *sel)
{
  if (!sel)
    return;
  json_decref(sel->labels);
  sel->labels = NULL;
}
