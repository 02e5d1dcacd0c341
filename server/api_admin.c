/* Deleting stored profiles: DELETE /api/v1/profiles?<filters> (admin token). The selection
 * takes the list's filters; at least one is required, or all=true to empty the store. The
 * delete goes through the store as retention's does: profiles in short transactions, then
 * the shared rows nothing references, then the space given back. */
#include <string.h>

#include <jansson.h>

#include "server/api.h"
#include "server/api_select.h"
#include "server/log.h"

void spaa_api_delete(const struct spaa_req *req, struct spaa_resp *resp)
{
  static const char *const own[] = {"all", "limit", NULL};
  static const char *const *const lists[] = {own, spaa_api_filter_params, NULL};
  const char *all = spaa_req_query(req, "all");
  struct spaa_api_sel sel;
  struct spaa_store_deleted d;
  struct spaa_err err;
  size_t limit;
  if (spaa_api_params_check(req, lists, NULL, resp) ||
      spaa_api_size_param(req, "limit", 1, (size_t)1 << 40, 0, &limit, resp))
    return;
  if (all && strcmp(all, "true") != 0) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "parameter 'all': expected true");
    return;
  }
  if (spaa_api_sel_parse(req, "", req->received_ns, &sel, resp)) {
    spaa_api_sel_free(&sel);
    return;
  }
  if (!sel.any && !all) {
    spaa_resp_error(resp, SPAA_E_BAD_REQUEST, "a delete needs a filter (service, source, "
                    "event, from, to, label) or all=true");
    spaa_api_sel_free(&sel);
    return;
  }
  sel.q.limit = limit;
  spaa_err_clear(&err);
  if (spaa_store_delete(req->app->store, &sel.q, &d, &err)) {
    spaa_resp_err(resp, &err);
  } else {
    spaa_log(SPAA_LOG_INFO, "profiles deleted", "profiles=%llu stacks=%llu frames=%llu "
             "dsos=%llu bytes_before=%lld bytes_after=%lld", (unsigned long long)d.profiles,
             (unsigned long long)d.stacks, (unsigned long long)d.frames,
             (unsigned long long)d.dsos, (long long)d.bytes_before, (long long)d.bytes_after);
    spaa_resp_json(resp, 200,
                   json_pack("{s:I, s:{s:I, s:I, s:I}, s:I, s:I}", "deleted",
                             (json_int_t)d.profiles, "swept", "stacks", (json_int_t)d.stacks,
                             "frames", (json_int_t)d.frames, "dsos", (json_int_t)d.dsos,
                             "bytes_before", (json_int_t)d.bytes_before, "bytes_after",
                             (json_int_t)d.bytes_after));
  }
  spaa_api_sel_free(&sel);
}
