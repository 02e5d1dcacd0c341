/* Query parameters of the read API: strict checking (an unknown parameter is a 400 that
 * names it), numbers in a range, and a selection of stored profiles from the list's filters
 * (optionally under a prefix such as "base." or "target." for diffs). */
#ifndef SPAA_SERVER_API_SELECT_H
#define SPAA_SERVER_API_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/limits.h"
#include "server/http.h"
#include "storage/storage.h"

/* The filters every merged view and the list take (without prefix), NULL-terminated. */
extern const char *const spaa_api_filter_params[];

/* 0 when every query parameter of req is named in one of the NULL-terminated lists (each
 * also accepted under each prefix of `prefixes`, NULL-terminated, when given), is given once
 * (label and labels, prefixed or not, may repeat) and has no NUL byte (%00) in its name or
 * value; else answers 400 naming the first parameter that is not ("unknown parameter 'X'",
 * "parameter 'X' given twice", "bad 'X': the value contains a NUL byte") and returns -1. */
int spaa_api_params_check(const struct spaa_req *req, const char *const *const *lists,
                          const char *const *prefixes, struct spaa_resp *resp);
/* The same with the names of `plain` accepted only as they are and those of `prefixed` only
 * under one of `prefixes` (a diff: its own parameters bare, the filters under a side). */
int spaa_api_params_check_prefixed(const struct spaa_req *req,
                                   const char *const *const *plain,
                                   const char *const *const *prefixed,
                                   const char *const *prefixes, struct spaa_resp *resp);

/* 1, with the name copied to name (cap bytes), when some query parameter of req starts
 * with prefix (the first such); else 0. */
int spaa_api_param_under(const struct spaa_req *req, const char *prefix, char *name, size_t cap);

/* The size parameter `name`: *out = def when absent, else decimal digits in [min, max].
 * 0, or answers 400 naming the parameter and returns -1. */
int spaa_api_size_param(const struct spaa_req *req, const char *name, size_t min, size_t max,
                        size_t def, size_t *out, struct spaa_resp *resp);

/* A selection of stored profiles: the list query and the storage its strings need. */
struct spaa_api_sel {
  struct spaa_list_query q;      /* filters (strings borrowed from the request or labels) */
  struct spaa_store_label_filter filters[SPAA_QUERY_MAX_LABELS];
  struct spaa_store_label_filter attr_filters[SPAA_QUERY_MAX_ATTRS];
  json_t *labels;                /* the label filters as an object (owned), or NULL */
  int profile_time;              /* from/to are on profile time (time=profile) */
  int any;                       /* 1 when some filter was given */
};

/* Read the selection's filters, each named prefix + filter ("" for none): service (or
 * project), source (sentry, otlp, pprof, folded or spaa), event, metric, from, to (unix seconds,
 * RFC 3339, "now", "now-90s", "now-15m", "now-1h", "now-7d"; on received time, or on profile
 * time with time=profile),
 * label=k:v (repeatable), labels=k:v,... , and Sentry's transaction, release, environment,
 * trace_id (exact matches on the profile's attrs). now_ns is the request's arrival. 0, or
 * answers 400 naming the parameter and returns -1. Release with spaa_api_sel_free. */
int spaa_api_sel_parse(const struct spaa_req *req, const char *prefix, int64_t now_ns,
                       struct spaa_api_sel *sel, struct spaa_resp *resp);
void spaa_api_sel_free(struct spaa_api_sel *sel); /* NULL-safe */

/* The filters of q for a person, "service=shop, source=pprof, from=2026-01-02T03:04:05Z,
 * label=env:prod" (time=profile named when from/to are on profile time; the metric, a view
 * parameter, left out), into out (cap bytes, at least 16; a value over 48 bytes cut on a
 * UTF-8 character boundary and marked "...", and the filters that do not fit given as
 * ", ..."). Returns how many entries describe q, those cut included (time=profile counts as
 * one): 0 when q has no filter, out then "". */
size_t spaa_api_sel_describe(const struct spaa_list_query *q, char *out, size_t cap);

/* Parse a relative time "now" or "now-<N><s|m|h|d>" against now_ns. 0 or -1. */
int spaa_api_parse_relative(const char *s, int64_t now_ns, int64_t *ns);

#endif
