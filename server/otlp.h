/* The OTLP/HTTP profiles dialect: POST /v1development/profiles and /v1experimental/profiles,
 * protobuf or OTLP/JSON, answered with ExportProfilesServiceResponse (partial_success for the
 * profiles that were rejected) or a google.rpc.Status in the request's content type. */
#ifndef SPAA_SERVER_OTLP_H
#define SPAA_SERVER_OTLP_H

#include <stdint.h>

#include "server/http.h"

/* Cap on the body as received and after Content-Encoding is undone: 64 MiB, as the OTLP
 * specification recommends (413 past it). */
#define SPAA_OTLP_MAX_BODY ((size_t)64 << 20)

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

/* The routes' on_error: errors the core found before the handler ran (401, 413, 415 for a
 * Content-Encoding, 400 for a corrupt one) answered as google.rpc.Status. */
void spaa_otlp_error(const struct spaa_req *req, struct spaa_resp *resp, int code,
                     const char *detail);

#endif
