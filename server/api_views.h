/* Views over stored profiles: the exports of one profile (GET /api/v1/profiles/{id}/pprof,
 * /collapsed, /speedscope, /top, /flamegraph, /summary) and the views merged over a
 * selection with the list's filters (GET /api/v1/top, /flamegraph, /collapsed, /summary).
 * Every parameter is checked: an unknown one or a bad value is a 400 naming it. */
#ifndef SPAA_SERVER_API_VIEWS_H
#define SPAA_SERVER_API_VIEWS_H

#include <stddef.h>

#include "base/buf.h"
#include "server/http.h"
#include "server/spool.h"
#include "spaa/view.h"
#include "storage/storage.h"

#define SPAA_API_MAX_TOP 10000      /* most rows of a top answer (limit=) */
#define SPAA_API_MAX_NODES 100000   /* most nodes of a flamegraph (max_nodes=) */
#define SPAA_API_MAX_BUDGET 1048576 /* largest summary budget, bytes */
#define SPAA_API_MAX_STACKS 4000000 /* distinct stacks a merged view may hold */

enum spaa_api_view {
  SPAA_VIEW_TOP,
  SPAA_VIEW_FLAMEGRAPH,
  SPAA_VIEW_COLLAPSED,
  SPAA_VIEW_SPEEDSCOPE,
  SPAA_VIEW_SUMMARY
};

/* One profile's exports ({id} in the route). */
void spaa_api_pprof(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_collapsed(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_speedscope(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_top(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_flamegraph(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_summary(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_profile_view(const struct spaa_req *req, struct spaa_resp *resp,
                           enum spaa_api_view kind);
void spaa_api_profile_pprof(const struct spaa_req *req, struct spaa_resp *resp);

/* Merged over a selection. */
void spaa_api_merged_top(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_merged_flamegraph(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_merged_collapsed(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_merged_summary(const struct spaa_req *req, struct spaa_resp *resp);
/* GET /api/v1/pprof (api_pprof.c): the selection's stacks summed by id as one gzipped pprof
 * of one sample type (metric=, else the first metric met); focus=/ignore= apply. */
void spaa_api_merged_pprof(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_api_merged_view(const struct spaa_req *req, struct spaa_resp *resp,
                          enum spaa_api_view kind);

/* Fill v with the stacks of the profiles q selects, weighed by `metric` (NULL = the first
 * metric the scan meets, which is the primary of the newest profile's first stack), summed
 * by stack id; q->event also keeps only the stacks of that event (selected profiles without
 * any stack: an empty set named by the newest one's primary metric). *profiles (may be NULL)
 * receives the count of profiles visited. A metric no stack has that one of the first
 * profiles of the selection declares (an all-zero sample type, spaa/view.h) gives an empty
 * set. 0, SPAA_E_NOT_FOUND when q selects no stored profile (err: "no stored profile matches
 * the selection (service=x, ...)", naming q's filters), SPAA_E_BAD_REQUEST (a metric no stack
 * has and none of those declares), SPAA_E_TOO_LARGE (more than SPAA_API_MAX_STACKS distinct
 * stacks), the store's errors. */
int spaa_api_merged_vset(struct spaa_store *store, const struct spaa_list_query *q,
                         const char *metric, int by_frame, struct spaa_vset *v,
                         size_t *profiles, struct spaa_err *err);

/* *any = 1 when q (its metric and paging ignored) selects at least one stored profile, else
 * 0: one indexed list query of one row. 0, or the store's errors (err filled, *any 0). */
int spaa_api_sel_any(struct spaa_store *store, const struct spaa_list_query *q, int *any,
                     struct spaa_err *err);

/* An answer being written: a spool (memory, then a file past SPAA_SPOOL_MEM) behind an
 * optional compressing sink, so that no answer is held whole in memory. */
struct spaa_api_out {
  struct spaa_spool body;
  struct spaa_csink *z;
  int enc;               /* 0 identity, 1 gzip, 2 zstd */
  spaa_sink_cb sink;     /* write here */
  void *ctx;
};
/* Start an answer; with `compress` the coding is picked from Accept-Encoding. 0 or err. */
int spaa_api_out_open(const struct spaa_req *req, struct spaa_api_out *o, int compress,
                      struct spaa_err *err);
/* Finish: on rc == 0 the body becomes resp's (200, media_type, Content-Encoding), else
 * resp answers err. Releases o either way. */
void spaa_api_out_answer(struct spaa_resp *resp, struct spaa_api_out *o, int rc,
                         const char *media_type, struct spaa_err *err);

#endif
