/* Pyroscope's push API over the Connect protocol (unary, HTTP/1.1 here; HTTP/2 on the h2c
 * listener, server/grpc_connect.c): POST
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
 * "message":"..."} with the HTTP status Connect gives the code (400, 401, 415, 429, 500, 501
 * for a Content-Encoding it does not take, 503 with Retry-After). */
extern const struct spaa_dialect spaa_dialect_pyroscope_push;
/* The same for requests whose headers the caller checked (with spaa_push_media), as on the
 * h2c listener, where there is no HTTP connection to read them from: a protobuf
 * PushRequest (gRPC's push.v1.PusherService/Push, whose Connect error grpc.c turns into
 * grpc-status and grpc-message; Connect application/proto over HTTP/2) or a JSON one
 * (Connect application/json over HTTP/2). Answers and errors as above. */
extern const struct spaa_dialect spaa_dialect_pyroscope_push_proto;
extern const struct spaa_dialect spaa_dialect_pyroscope_push_json;

/* The header checks of a Connect unary push: Connect-Protocol-Version (NULL or "1") and the
 * Content-Type (application/proto or application/json, parameters and case ignored; NULL =
 * absent). 0 with *json set (1 for JSON), or SPAA_E_BAD_REQUEST / SPAA_E_MEDIA_TYPE with err
 * saying what was sent and what is taken. */
int spaa_push_media(const char *content_type, const char *protocol_version, int *json,
                    struct spaa_err *err);

/* The Connect code and HTTP status of an error code (SPAA_E_*); exposed for tests. */
const char *spaa_push_connect_code(int code, int *http_status);

#endif
