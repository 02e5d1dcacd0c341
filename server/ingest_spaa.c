/* Direct SPAA upload (see ingest_spaa.h): service and labels from the request; the flow
 * converts with the "spaa" converter and stores; the answer names the ids. */
#include "server/ingest_spaa.h"

#include <string.h>

#include "server/api.h"

static int spaa_parse(struct spaa_ingest *x, struct spaa_err *err)
{
  const char *service = spaa_req_query(x->req, "service");
  if (!service || !service[0])
    service = spaa_req_header(x->req, "X-Service-Name");
  x->opts.service = service && service[0] ? service : NULL;
  return spaa_query_labels(x->req, &x->labels, err);
}

/* accept: a body with no profile, or one that did not convert, is refused whole. */
static int spaa_accept(struct spaa_ingest *x, struct spaa_err *err)
{
  size_t i;
  if (x->list.n == 0)
    return spaa_err_set(err, SPAA_E_INVALID, 0, 0, "the body holds no profile");
  for (i = 0; i < x->list.n; i++) {
    const struct spaa_converted *c = &x->list.v[i];
    if (!c->profile)
      return spaa_err_set(err, c->err.code ? c->err.code : SPAA_E_INVALID, 0, 0,
                          "profile %zu: %s", i, c->err.msg[0] ? c->err.msg : c->reason);
  }
  return 0;
}

static void spaa_answer(struct spaa_ingest *x)
{
  json_t *ans = json_object(), *ids = json_array();
  size_t i;
  for (i = 0; i < x->list.n; i++)
    json_array_append_new(ids, json_string(x->ids[i]));
  json_object_set(ans, "id", json_array_get(ids, 0));
  if (json_array_size(ids) > 1)
    json_object_set(ans, "ids", ids);
  json_decref(ids);
  spaa_resp_json(x->resp, 200, ans);
}

static void spaa_fail(struct spaa_ingest *x, enum spaa_ingest_stage stage, int code,
                      const char *detail)
{
  (void)stage;
  spaa_resp_error(x->resp, code, "%s", detail && detail[0] ? detail : spaa_err_default(code));
}

const struct spaa_dialect spaa_dialect_spaa = {
    .name = "spaa",
    .body_spent = SPAA_BODY_SPENT_CONVERTED, /* the reader copies what the model keeps */
    .parse = spaa_parse,
    .accept = spaa_accept,
    .answer = spaa_answer,
    .fail = spaa_fail,
};
