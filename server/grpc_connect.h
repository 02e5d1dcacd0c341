/* Connect's unary protocol over the h2c listener (internal to server/grpc.c): POST
 * /push.v1.PusherService/Push with a content type other than application/grpc is answered
 * exactly as the HTTP/1.1 route answers it (server/ingest_push.c): plain body, optional
 * Content-Encoding, the same ingest flow, Connect's error JSON with Connect's HTTP status. */
#ifndef SPAA_SERVER_GRPC_CONNECT_H
#define SPAA_SERVER_GRPC_CONNECT_H

#include <stddef.h>
#include <stdint.h>

#include "server/h2.h"
#include "server/http.h"

#define SPAA_CONNECT_PUSH_PATH "/push.v1.PusherService/Push"

/* 1 when `auth` (an authorization value, NULL = absent) carries `Bearer T`, or when
 * allow_basic `Basic` with password T, with T a configured ingest token (each compared in
 * constant time); 1 as well when no ingest token is configured. */
int spaa_grpc__token_ok(const struct spaa_config *cfg, const char *auth, int allow_basic);

/* The h2 service hooks (h2.h) for a Connect call; app is borrowed. check never blocks and
 * sets no deadline (the HTTP route has none either). */
int spaa_connect_check(const struct spaa_app *app, const struct spaa_h2_req *h,
                       struct spaa_h2_answer *a, struct spaa_h2_intake *in);
void spaa_connect_run(const struct spaa_app *app, const struct spaa_h2_req *h,
                      struct spaa_h2_answer *a);
void spaa_connect_refuse(const struct spaa_app *app, const struct spaa_h2_req *h,
                         enum spaa_h2_refusal why, struct spaa_h2_answer *a);

#endif
