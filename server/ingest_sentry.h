/* The Sentry dialect: POST /api/{project_id}/envelope/ as Relay answers it. Its hooks for
 * the ingest flow (ingest.h): credentials and the envelope (parse), Relay-shaped answers
 * {"id":…,"profiles":[…]} and errors {"detail":"…","causes":["…"]}. */
#ifndef SPAA_SERVER_SENTRY_H
#define SPAA_SERVER_SENTRY_H

#include "server/ingest.h"

/* The dialect of the route POST /api/{project_id}/envelope (format "sentry", no core auth,
 * body decoded by the core). Credentials: X-Sentry-Auth, Authorization: Sentry, the query
 * string, else the envelope header's dsn; exactly one place (401 for none or two),
 * sentry_version <= 7 (400), a key configured for the project when any key is configured
 * (403), a dsn agreeing with the request (400); a project id that is not a number is a 404.
 * Answers 200 {"id":EVENT_ID,"profiles":[...]} also when a profile is dropped (its reason is
 * in "profiles"), 400 for a bad envelope (and for an unknown Content-Encoding: Relay's "bad
 * compression"), 413 for two profile items or one over 50 MB, 503 + Retry-After when the
 * store is busy. Logs every outcome. */
extern const struct spaa_dialect spaa_dialect_sentry;
/* 1 when an envelope cannot hold a profile item (the text "profile" appears nowhere in it):
 * transactions, errors and sessions without profiles, most of what SDKs send. Such an
 * envelope is answered where it was read (struct spaa_route's quick). A false "maybe" only
 * sends it to a worker; the same handler runs either way. */
int spaa_sentry_quick(const void *body, size_t len);

#endif
