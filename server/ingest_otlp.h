/* The OTLP/HTTP profiles dialect: POST /v1development/profiles and /v1experimental/profiles,
 * protobuf or OTLP/JSON, answered with ExportProfilesServiceResponse (partial_success for the
 * profiles that were rejected) or a google.rpc.Status in the request's content type. */
#ifndef SPAA_SERVER_OTLP_H
#define SPAA_SERVER_OTLP_H

#include <stdint.h>

#include "base/limits.h"
#include "server/http.h"

/* Outcomes since start, counted atomically (a snapshot of them for /metrics). */
struct spaa_otlp_stats {
  uint64_t requests;          /* export requests that reached the handler */
  uint64_t requests_json;     /* ... of which OTLP/JSON (by Content-Type) */
  uint64_t requests_v1exp;    /* ... of which decoded as v1experimental */
  uint64_t ok;                /* 200 with every profile stored (or an empty request) */
  uint64_t partial;           /* 200 with partial_success (rejections or warnings) */
  uint64_t bad_request;       /* 400: undecodable, broken dictionary, v1.8/v1.9 layouts */
  uint64_t refused;           /* 401, 413, 415 (found by the core or the handler) */
  uint64_t unavailable;       /* 503: store queue full, shutting down, out of memory */
  uint64_t failed;            /* 500: storage or internal errors */
  uint64_t profiles_stored;   /* profiles stored */
  uint64_t profiles_duplicate;/* profiles whose id was already stored (nothing written) */
  uint64_t profiles_rejected; /* profiles rejected alone (named in partial_success) */
};

/* Copy the counters into *out (each read atomically). Never fails. */
void spaa_otlp_stats(struct spaa_otlp_stats *out);

/* The handler of both export routes (see http.h for the handler contract). Decodes the
 * body whatever version it holds (a v1experimental body on the v1development path is
 * accepted, and the other way round), stores each converted profile with
 * spaa_ingest_store (source "otlp", the profile's original_payload when it has one) and
 * answers 200 / 400 / 415 / 500 / 503 in the request's content type. */
void spaa_otlp_export(const struct spaa_req *req, struct spaa_resp *resp);

struct otlp_request;
struct spaa_conv_list;
/* Store every converted entry of `list` (rejected entries skipped) with
 * spaa_ingest_store_many, source "otlp", the profile's original_payload (borrowed from r) as
 * the original: all together, so they share group commits. A profile id that repeats inside the list is replaced by
 * one derived from it and the entry's position (deterministic, so a retry dedups). Counts
 * into *stored and *dups. Returns 0, or the code of the lowest failing entry (*failed_at,
 * else list->n) with err filled: SPAA_E_BUSY / SPAA_E_SHUTDOWN (answer 503), SPAA_E_STORE...;
 * entries other than the failing ones may have been stored. */
int spaa_otlp_store_list(const struct spaa_req *req, const struct otlp_request *r,
                         struct spaa_conv_list *list, size_t *stored, size_t *dups,
                         size_t *failed_at, struct spaa_err *err);

/* The routes' on_error: errors the core found before the handler ran (401, 413, 415 for a
 * Content-Encoding, 400 for a corrupt one) answered as google.rpc.Status. */
void spaa_otlp_error(const struct spaa_req *req, struct spaa_resp *resp, int code,
                     const char *detail);

#endif
