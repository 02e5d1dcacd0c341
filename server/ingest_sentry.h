/* The Sentry dialect: POST /api/{project_id}/envelope/ as Relay answers it (credentials,
 * envelope, profile items -> SPAA -> store), with Relay-shaped errors
 * {"detail":"…","causes":["…"]} and counters of every outcome. */
#ifndef SPAA_SERVER_SENTRY_H
#define SPAA_SERVER_SENTRY_H

#include <stdint.h>

#include "sentry/sentry.h"
#include "server/http.h"

/* Outcomes of the envelope endpoint since start. A snapshot: plain numbers. */
struct spaa_sentry_counters {
  uint64_t accepted;                           /* envelopes answered 200 */
  uint64_t profiles_stored;                    /* profile items stored (new) */
  uint64_t profiles_duplicate;                 /* profile items whose id was already stored */
  uint64_t profiles_rejected[SENTRY_N_REASONS];/* dropped, by reason (sentry_reason_at(i)) */
  uint64_t profiles_rejected_other;            /* dropped for a reason not in that list */
  uint64_t bad_request;                        /* answered 400 (also 404 on a bad project id) */
  uint64_t unauthorized;                       /* answered 401 */
  uint64_t forbidden;                          /* answered 403 */
  uint64_t too_large;                          /* answered 413 */
  uint64_t busy;                               /* answered 503 (store queue full, shutdown) */
  uint64_t failed;                             /* answered 5xx for other reasons */
};

/* Copy the current counters into *out (each read atomically; the set is not one instant).
 * Never fails. For the /metrics endpoint. */
void spaa_sentry_counters_read(struct spaa_sentry_counters *out);

/* The handler of POST /api/{project_id}/envelope (route row in routes.c, body decoded by
 * the core, .on_error = spaa_sentry_on_error). Credentials: X-Sentry-Auth, Authorization:
 * Sentry, the query string, else the envelope header's dsn; exactly one place (401 for
 * none or two), sentry_version <= 7 (400), a key configured for the project when any key is
 * configured (403), a dsn agreeing with the request (400). Answers 200 {"id":EVENT_ID,
 * "profiles":[...]} also when a profile is dropped (its reason is in "profiles"), 400 for a
 * bad envelope, 413 for two profile items or one over 50 MB, 503 + Retry-After when the
 * store is busy. Logs and counts every outcome. */
void spaa_sentry_envelope(const struct spaa_req *req, struct spaa_resp *resp);

/* Errors the core finds on that route (cap, Content-Encoding): the same Relay shape, the
 * same counters. An unknown Content-Encoding is a 400 here (Relay's "bad compression"). */
void spaa_sentry_on_error(const struct spaa_req *req, struct spaa_resp *resp, int code,
                          const char *detail);

#endif
