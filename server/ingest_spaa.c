/* Direct SPAA upload (see ingest_spaa.h): convert with the "spaa" converter, store, answer. */
#include "server/ingest_spaa.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "codecs/convert.h"
#include "server/log.h"
#include "server/query.h"
#include "storage/storage.h"

void spaa_ingest_new_id(char *out)
{
  static const char hex[] = "0123456789abcdef";
  unsigned char r[16];
  size_t i, got = 0;
  while (got < sizeof(r)) {
    ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  if (got < sizeof(r)) { /* no entropy source: fall back to time and address bits */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (i = 0; i < sizeof(r); i++)
      r[i] = (unsigned char)((uint64_t)ts.tv_nsec >> (i % 4 * 8) ^ (uint64_t)ts.tv_sec >> i ^
                             (uintptr_t)&ts >> (i % 8));
  }
  for (i = 0; i < sizeof(r); i++) {
    out[2 * i] = hex[r[i] >> 4];
    out[2 * i + 1] = hex[r[i] & 15];
  }
  out[32] = 0;
}

static int64_t unit_ns(const char *unit)
{
  if (!unit || strcmp(unit, "nanoseconds") == 0)
    return 1;
  if (strcmp(unit, "microseconds") == 0)
    return 1000;
  if (strcmp(unit, "milliseconds") == 0)
    return 1000000;
  if (strcmp(unit, "seconds") == 0)
    return 1000000000;
  return 0;
}

/* Fill start/end from the profile header's time_range when the converter gave none. */
static void header_range(const struct spaa_profile *p, int64_t *start, int64_t *end)
{
  int64_t m = unit_ns(p->header.time_unit);
  if (*start || *end || !p->header.has_time_range || !m)
    return;
  *start = (int64_t)(spaa_num_as_double(p->header.start) * (double)m);
  *end = (int64_t)(spaa_num_as_double(p->header.end) * (double)m);
}

/* Merge the labels of the request into the converter's (request labels win). */
static json_t *merged_labels(json_t *conv, json_t *req)
{
  json_t *all;
  if (!req)
    return json_incref(conv);
  if (!conv)
    return json_incref(req);
  all = json_deep_copy(conv);
  if (all)
    json_object_update(all, req);
  return all;
}

void spaa_ingest_spaa(const struct spaa_req *req, struct spaa_resp *resp)
{
  struct spaa_conv_list list;
  struct spaa_convert_opts o;
  struct spaa_err err;
  spaa_convert_fn fn = spaa_converter("spaa");
  json_t *req_labels = NULL, *ids = NULL;
  const char *service;
  size_t i;
  int rc;
  memset(&list, 0, sizeof(list));
  memset(&o, 0, sizeof(o));
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
  for (i = 0; i < list.n; i++) {
    struct spaa_converted *c = &list.v[i];
    struct spaa_meta meta;
    char id[64];
    json_t *labels;
    if (!c->profile) {
      spaa_resp_error(resp, c->err.code ? c->err.code : SPAA_E_INVALID, "profile %zu: %s", i,
                      c->err.msg[0] ? c->err.msg : c->reason);
      goto out;
    }
    memset(&meta, 0, sizeof(meta));
    if (c->id[0] && spaa_query_id_ok(c->id))
      snprintf(id, sizeof(id), "%s", c->id);
    else
      spaa_ingest_new_id(id);
    labels = merged_labels(c->labels, req_labels);
    meta.id = id;
    meta.service = c->service ? c->service : o.service ? o.service : "unknown";
    meta.source = "spaa";
    meta.received_ns = req->received_ns;
    meta.start_ns = c->start_ns;
    meta.end_ns = c->end_ns;
    header_range(c->profile, &meta.start_ns, &meta.end_ns);
    meta.payload_bytes = req->wire_len;
    meta.labels = labels;
    meta.attrs = c->attrs;
    rc = spaa_store_put(req->app->store, c->profile, &meta, &err);
    json_decref(labels);
    if (rc < 0) {
      if (rc == SPAA_E_BUSY || rc == SPAA_E_SHUTDOWN)
        spaa_resp_error(resp, rc, "%s", err.msg[0] ? err.msg : spaa_err_default(rc));
      else
        spaa_resp_err(resp, &err);
      spaa_log(SPAA_LOG_WARN, "store failed", "id=%s code=%s detail=\"%s\"", id,
               spaa_err_name(rc), err.msg);
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
