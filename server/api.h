/* The read path: GET /api/v1/profiles (list with filters and cursor pages),
 * GET /api/v1/profiles/{id} (metadata) and GET /api/v1/profiles/{id}/spaa (the stored
 * profile as SPAA NDJSON, zstd or gzip when Accept-Encoding asks). */
#ifndef SPAA_SERVER_QUERY_H
#define SPAA_SERVER_QUERY_H

#include <stdint.h>

#include <jansson.h>

#include "base/limits.h"
#include "server/http.h"

void spaa_query_list(const struct spaa_req *req, struct spaa_resp *resp);
/* DELETE /api/v1/profiles?<filters>|all=true[&limit=N] (admin token): what it deleted. */
void spaa_api_delete(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_query_meta(const struct spaa_req *req, struct spaa_resp *resp);
void spaa_query_spaa(const struct spaa_req *req, struct spaa_resp *resp);

/* Parse a time: unix seconds (digits, optional fraction) or RFC 3339
 * ("2026-11-21T12:00:00.5Z", "...+02:00"). 0 with *ns set, or -1. */
int spaa_query_parse_time(const char *s, int64_t *ns);

/* The request's label filters: every `label=k:v` query parameter and every item of
 * `labels=k:v,k2:v2`. *out is a new object (NULL when there are none). 0, or
 * SPAA_E_BAD_REQUEST with err naming the bad item. */
int spaa_query_labels(const struct spaa_req *req, json_t **out, struct spaa_err *err);
/* The same for prefix + "label" and prefix + "labels" (a diff's "base." and "target."). */
int spaa_query_labels_prefixed(const struct spaa_req *req, const char *prefix, json_t **out,
                               struct spaa_err *err);

/* Pick the response coding from an Accept-Encoding value: 2 zstd, 1 gzip, 0 identity.
 * Highest q wins; zstd before gzip before identity at equal q; q=0 refuses. */
int spaa_query_pick_encoding(const char *accept_encoding);

/* 1 when `id` is a plausible profile id: 1 to 64 of [0-9A-Za-z_-]. */
int spaa_query_id_ok(const char *id);

#endif
