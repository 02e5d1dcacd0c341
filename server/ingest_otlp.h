/* The OTLP/HTTP profiles dialect: POST /v1development/profiles and /v1experimental/profiles,
 * protobuf or OTLP/JSON, answered with ExportProfilesServiceResponse (partial_success for the
 * profiles that were rejected) or a google.rpc.Status in the request's content type. Its
 * hooks for the ingest flow (ingest.h). */
#ifndef SPAA_SERVER_OTLP_H
#define SPAA_SERVER_OTLP_H

#include "base/limits.h"
#include "server/ingest.h"

/* The dialect of both export routes (format "otlp"). Decodes the body whatever version it
 * holds (a v1experimental body on the v1development path is accepted, and the other way
 * round); the flow stores each converted profile (source "otlp", its original_payload when
 * it has one), a profile id that repeats inside the request replaced by one derived from
 * it and the entry's position (deterministic, so that a retry dedups). Answers 200 (with
 * partial_success for rejections and warnings) / 400 / 401 / 413 / 415 / 500 / 503 in the
 * request's content type (errors as google.rpc.Status); counts
 * spaa_relay_otlp_requests_total and spaa_relay_partial_success_total{source="otlp"}. */
extern const struct spaa_dialect spaa_dialect_otlp;
/* The same for a transport whose messages are protobuf by definition (OTLP over gRPC,
 * server/grpc.c): the body is decoded as protobuf without a Content-Type to read, and the
 * answers (ExportProfilesServiceResponse, google.rpc.Status) are protobuf. */
extern const struct spaa_dialect spaa_dialect_otlp_proto;

#endif
