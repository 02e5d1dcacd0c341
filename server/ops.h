/* Operational endpoints: GET /healthz (the process answers) and GET /readyz (the store is
 * open and its writer alive). */
#ifndef SPAA_SERVER_OPS_H
#define SPAA_SERVER_OPS_H

#include "server/http.h"

/* 200 {"status":"ok"}. */
void spaa_ops_healthz(const struct spaa_req *req, struct spaa_resp *resp);
/* 200 {"status":"ready"} when spaa_store_ready, else 503 {"error":"shutdown"...}. */
void spaa_ops_readyz(const struct spaa_req *req, struct spaa_resp *resp);
/* GET /metrics: the registry (server/metrics.h), then the store's and retention's figures
 * read at the scrape, in the Prometheus text format (docs/metrics.md lists them). */
void spaa_ops_metrics(const struct spaa_req *req, struct spaa_resp *resp);

#endif
