/* /healthz and /readyz (see ops.h). */
#include "server/ops.h"

#include "storage/storage.h"

void spaa_ops_healthz(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char ok[] = "{\"status\":\"ok\"}";
  spaa_resp_bytes(resp, 200, "application/json", ok, sizeof(ok) - 1);
}

void spaa_ops_readyz(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char ready[] = "{\"status\":\"ready\"}";
  if (req->app->store && spaa_store_ready(req->app->store))
    spaa_resp_bytes(resp, 200, "application/json", ready, sizeof(ready) - 1);
  else
    spaa_resp_error(resp, SPAA_E_SHUTDOWN, "the store is not ready (closed or its writer "
                    "stopped)");
}
