/* POST /api/v1/spaa: upload a SPAA file directly (plain NDJSON, zstd NDJSON, or under any
 * Content-Encoding). Query: service (or header X-Service-Name), label=k:v (repeatable).
 * Auth: an ingest token when any is configured. Answers 200 {"id":"..."}. */
#ifndef SPAA_SERVER_INGEST_SPAA_H
#define SPAA_SERVER_INGEST_SPAA_H

#include "server/ingest.h"

/* The dialect of that route (format "spaa"): errors as JSON {"error","detail"}; every
 * profile of the body must convert (else 422 naming it, nothing stored); the answer lists
 * the ids ({"id":first} plus "ids":[...] when there are several). */
extern const struct spaa_dialect spaa_dialect_spaa;

#endif
