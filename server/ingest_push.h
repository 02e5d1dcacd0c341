/* Pyroscope's push API over the Connect protocol (unary, HTTP/1.1): POST
 * /push.v1.PusherService/Push with a push.v1 PushRequest as application/proto or
 * application/json (Content-Encoding gzip undone by the HTTP core). Its hooks for the ingest
 * flow (ingest.h); the converter is "pprof-push" (codecs/pprof/pprof_push.c), which sends
 * every sample's raw profile through the pprof converter. */
#ifndef SPAA_SERVER_INGEST_PUSH_H
#define SPAA_SERVER_INGEST_PUSH_H

#include "server/ingest.h"

/* The dialect of POST /push.v1.PusherService/Push (format "pprof-push", stored as source
 * "pprof", one profile per sample, its ID kept). Answers 200 with an empty PushResponse in
 * the request's content type; errors as Connect error JSON {"code":"invalid_argument",
 * "message":"..."} with the HTTP status Connect gives the code (400, 401, 415, 429, 500, 503
 * with Retry-After). */
extern const struct spaa_dialect spaa_dialect_pyroscope_push;
/* The same for gRPC's push.v1.PusherService/Push on the h2c listener (server/grpc.c): the
 * message is protobuf (no Content-Type read), the answer an empty PushResponse, errors the
 * same Connect JSON, which grpc.c turns into grpc-status and grpc-message. */
extern const struct spaa_dialect spaa_dialect_pyroscope_push_proto;

/* The Connect code and HTTP status of an error code (SPAA_E_*); exposed for tests. */
const char *spaa_push_connect_code(int code, int *http_status);

#endif
