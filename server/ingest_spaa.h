/* POST /api/v1/spaa: upload a SPAA file directly (plain NDJSON, zstd NDJSON, or under any
 * Content-Encoding). Query: service (or header X-Service-Name), label=k:v (repeatable).
 * Auth: an ingest token when any is configured. Answers 200 {"id":"..."}. */
#ifndef SPAA_SERVER_INGEST_SPAA_H
#define SPAA_SERVER_INGEST_SPAA_H

#include "server/http.h"

void spaa_ingest_spaa(const struct spaa_req *req, struct spaa_resp *resp);

#endif
