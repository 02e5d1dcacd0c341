/* What the web page needs beyond the query API: the count of profiles over time for a
 * selection (GET /api/v1/timeline), the merged speedscope export (GET /api/v1/speedscope)
 * and whether the read API wants a token and the one sent is good (GET /api/v1/access,
 * open, so that the page asks for a token without provoking a 401). */
#ifndef SPAA_SERVER_API_PAGE_H
#define SPAA_SERVER_API_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "server/http.h"

#define SPAA_API_TIMELINE_MAX_BUCKETS 1000   /* buckets= upper bound */
#define SPAA_API_TIMELINE_MAX_PROFILES 4000000 /* profiles one timeline may count */

/* GET /api/v1/timeline?<list filters>&buckets=N (1..1000, 60): the selection's profiles
 * counted by time, each at its start (its received time when the start is unknown):
 * {"from":ns,"to":ns,"bucket_ns":W,"buckets":N,"counts":[N integers],"profiles":total}.
 * from/to are the filters' when given, else the selection's earliest and latest times (a
 * profile overlapping `from` but starting before it counts in the first bucket);
 * bucket i holds [from + i*W, from + (i+1)*W). An empty selection has from = to = 0 and
 * every count 0. 400 for a bad parameter or over SPAA_API_TIMELINE_MAX_PROFILES profiles. */
void spaa_api_timeline(const struct spaa_req *req, struct spaa_resp *resp);

/* GET /api/v1/speedscope?<list filters>&<view parameters>: the merged view as speedscope's
 * file format (as /api/v1/profiles/{id}/speedscope writes one profile). */
void spaa_api_merged_speedscope(const struct spaa_req *req, struct spaa_resp *resp);

/* GET /api/v1/access: {"read_token_required":bool,"authorized":bool}; authorized says
 * whether the request's bearer token (or its absence, when none is required) is good for
 * the read API. Never a 401. */
void spaa_api_access(const struct spaa_req *req, struct spaa_resp *resp);

/* Count times[0..n) (unix ns) into `buckets` counts over [from, to] (from <= to; a time
 * outside counts in the nearest end's bucket): *width receives the bucket width, at least
 * 1 ns. Pure. */
void spaa_api_timeline_count(const int64_t *times, size_t n, int64_t from, int64_t to,
                             size_t buckets, int64_t *width, int64_t *counts);

#endif
