/* Direct SPAA upload (see ingest_spaa.h): convert with the "spaa" converter, store, answer. */
#include "server/ingest_spaa.h"

#include <stdio.h>
#include <string.h>

#include "codecs/registry.h"
#include "server/ingest.h"
#include "server/log.h"
#include "server/api.h"
#include "storage/storage.h"

void spaa_ingest_spaa(const struct spaa_req *req, struct spaa_resp *resp)
{
  struct spaa_conv_list list;
  struct spaa_convert_opts o;
  struct spaa_err err;
  struct spaa_ingest_info info;
  spaa_convert_fn fn = spaa_converter("spaa");
  json_t *req_labels = NULL, *ids = NULL;
  const char *service;
  size_t i;
  int rc;
  memset(&list, 0, sizeof(list));
  memset(&o, 0, sizeof(o));
  memset(&info, 0, sizeof(info));
  spaa_err_clear(&err);
  service = spaa_req_query(req, "service");
  if (!service || !service[0])
    service = spaa_req_header(req, "X-Service-Name");
  o.service = service && service[0] ? service : NULL;
  if ((rc = spaa_query_labels(req, &req_labels, &err))) {
    spaa_resp_err(resp, &err);
    return;
  }
  if (!fn) {
    spaa_resp_error(resp, SPAA_E_INTERNAL, "no SPAA converter is built in");
    goto out;
  }
  if ((rc = fn(req->body, req->body_len, &o, &list, &err))) {
    spaa_resp_err(resp, &err);
    goto out;
  }
  if (list.n == 0) {
    spaa_resp_error(resp, SPAA_E_INVALID, "the body holds no profile");
    goto out;
  }
  ids = json_array();
  info.source = "spaa";
  info.service = o.service;
  info.labels = req_labels;
  for (i = 0; i < list.n; i++) {
    struct spaa_converted *c = &list.v[i];
    char id[64];
    if (!c->profile) {
      spaa_resp_error(resp, c->err.code ? c->err.code : SPAA_E_INVALID, "profile %zu: %s", i,
                      c->err.msg[0] ? c->err.msg : c->reason);
      goto out;
    }
    rc = spaa_ingest_store(req, c, &info, id, &err);
    if (rc < 0) {
      spaa_resp_err(resp, &err);
      goto out;
    }
    json_array_append_new(ids, json_string(id));
  }
  {
    json_t *o_ans = json_object();
    json_object_set(o_ans, "id", json_array_get(ids, 0));
    if (json_array_size(ids) > 1)
      json_object_set(o_ans, "ids", ids);
    spaa_resp_json(resp, 200, o_ans);
  }
out:
  json_decref(ids);
  json_decref(req_labels);
  spaa_conv_list_free(&list);
}
