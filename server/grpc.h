/* OTLP over gRPC: the h2c listener (h2.h) serving
 *   /opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export
 *   /opentelemetry.proto.collector.profiles.v1experimental.ProfilesService/Export
 *   /push.v1.PusherService/Push (Pyroscope's push API as a gRPC service)
 * as unary calls. A message goes through the same ingest flow as its HTTP route
 * (server/ingest.c: POST /v1development/profiles with the OTLP dialect in its protobuf form,
 * POST /push.v1.PusherService/Push with the push dialect), so a call stores what the HTTP
 * route stores and answers the same response message; an error's google.rpc.Status (or
 * Connect error) becomes grpc-status and grpc-message. */
#ifndef SPAA_SERVER_GRPC_H
#define SPAA_SERVER_GRPC_H

#include <stdint.h>

#include "base/err.h"
#include "server/http.h"

#define SPAA_GRPC_STOP_GRACE_MS 30000 /* longest wait for calls in flight at stop */
#define SPAA_GRPC_WORKERS_MAX 8       /* worker threads: min(workers, this) */

struct spaa_grpc;

/* Start the listener on app->cfg->grpc_host:grpc_port (*out stays NULL and 0 is returned
 * when grpc_host is NULL: the listener is off). app is borrowed and must outlive it.
 * 0, or SPAA_E_IO (err says why: address in use...) / SPAA_E_NOMEM. */
int spaa_grpc_start(const struct spaa_app *app, struct spaa_grpc **out, struct spaa_err *err);
/* The port bound (0 for NULL). */
uint16_t spaa_grpc_port(const struct spaa_grpc *g);
/* No new connections or calls (GOAWAY); calls in flight finish. NULL-safe, idempotent. */
void spaa_grpc_quiesce(struct spaa_grpc *g);
/* Calls in flight. */
size_t spaa_grpc_inflight(const struct spaa_grpc *g);
/* Wait for calls in flight (at most SPAA_GRPC_STOP_GRACE_MS), close everything, free.
 * NULL-safe. */
void spaa_grpc_stop(struct spaa_grpc *g);

#endif
