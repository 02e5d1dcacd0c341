/* The Sentry dialect: POST /api/{project_id}/envelope/ as Relay answers it. Its hooks for
 * the ingest flow (ingest.h): credentials and the envelope (parse), Relay-shaped answers
 * {"id":…,"profiles":[…]} and errors {"detail":"…","causes":["…"]}. */
#ifndef SPAA_SERVER_SENTRY_H
#define SPAA_SERVER_SENTRY_H

#include "server/ingest.h"

/* The dialect of the route POST /api/{project_id}/envelope (format "sentry", no core auth,
 * body decoded by the core). Credentials: X-Sentry-Auth, Authorization: Sentry, the query
 * string, else the envelope header's dsn; exactly one place (401 for none or two),
 * sentry_version <= 7 (400; "7.0" is 7), a key configured for the project when any key is
 * configured (403), a dsn agreeing with the request (400). The project id is a u64 as Relay
 * reads it ("0042" is project 42, stored as service "42"); one that is not a decimal number
 * below 2^64 is a 404. Answers 200 {"id":EVENT_ID,"profiles":[...]} also when a profile is
 * dropped (its reason is in "profiles"), 400 for a bad envelope (and for an unknown
 * Content-Encoding: Relay's "bad compression"), 413 for two profile items or one over 50 MB,
 * 429 + Retry-After + X-Sentry-Rate-Limits when the store is busy. Every answer carries
 * Relay's CORS headers (Access-Control-Allow-Origin: *, Access-Control-Expose-Headers), so
 * browser SDKs can read it. Logs every outcome. */
extern const struct spaa_dialect spaa_dialect_sentry;
/* OPTIONS on the route: the CORS preflight of a browser SDK, 200 with no body and
 * Access-Control-Allow-Origin: *, -Allow-Methods POST, OPTIONS, -Allow-Headers (content-type,
 * x-sentry-auth, authorization, sentry-trace, baggage...), -Max-Age 3600. */
void spaa_sentry_preflight(const struct spaa_req *req, struct spaa_resp *resp);
/* Any other method on the route: 405 {"detail":"method not allowed","causes":[...]} with
 * Allow: POST, OPTIONS and the CORS headers. */
void spaa_sentry_method(const struct spaa_req *req, struct spaa_resp *resp);
/* The core's refusals (caps, encodings) on the route's OPTIONS and 405 rows, in Relay's
 * shape with the CORS headers (the POST row's go through the dialect: spaa_ingest_on_error). */
void spaa_sentry_on_error(const struct spaa_req *req, struct spaa_resp *resp, int code,
                          const char *detail);
/* 1 when an envelope cannot hold a profile item (the text "profile" appears nowhere in it):
 * transactions, errors and sessions without profiles, most of what SDKs send. Such an
 * envelope is answered where it was read (struct spaa_route's quick). A false "maybe" only
 * sends it to a worker; the same handler runs either way. */
int spaa_sentry_quick(const void *body, size_t len);

#endif
