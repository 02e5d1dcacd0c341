/* OTLP/HTTP answers: ExportProfilesServiceResponse (partial success) and google.rpc.Status,
 * as protobuf (protoc-c) or OTLP/JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spaa/canon.h"
#include "otlp/otlp_int.h"

static int pack_into(const ProtobufCMessage *m, struct spaa_buf *out, struct spaa_err *err)
{
  size_t n = protobuf_c_message_get_packed_size(m);
  int rc;
  if ((rc = spaa_buf_reserve(out, n + 1)))
    return spaa_err_set(err, rc, 0, 0, "response does not fit");
  protobuf_c_message_pack(m, (uint8_t *)out->p + out->len);
  out->len += n;
  out->p[out->len] = 0;
  return 0;
}

int otlp_encode_response(int json, int64_t rejected, const char *message, struct spaa_buf *out,
                         struct spaa_err *err)
{
  Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse resp;
  Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesPartialSuccess ps;
  int partial = rejected != 0 || (message && message[0]);
  int rc = 0;
  if (json) {
    if (!partial)
      rc = spaa_buf_adds(out, "{}");
    else {
      if (!(rc = spaa_buf_adds(out, "{\"partialSuccess\":{")) && rejected)
        rc = spaa_buf_addf(out, "\"rejectedProfiles\":\"%" PRId64 "\"%s", rejected,
                           message && message[0] ? "," : "");
      if (!rc && message && message[0] && !(rc = spaa_buf_adds(out, "\"errorMessage\":")))
        rc = spaa_canon_str(out, message, strlen(message));
      if (!rc)
        rc = spaa_buf_adds(out, "}}");
    }
    return rc ? spaa_err_set(err, rc, 0, 0, "response does not fit") : 0;
  }
  opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__init(&resp);
  opentelemetry__proto__collector__profiles__v1development__export_profiles_partial_success__init(&ps);
  if (partial) {
    ps.rejected_profiles = rejected;
    ps.error_message = (char *)(message ? message : "");
    resp.partial_success = &ps;
  }
  return pack_into(&resp.base, out, err);
}

int otlp_encode_status(int json, int32_t code, const char *message, struct spaa_buf *out,
                       struct spaa_err *err)
{
  Google__Rpc__Status st;
  int rc = 0;
  if (json) {
    rc = spaa_buf_adds(out, "{");
    if (!rc && code)
      rc = spaa_buf_addf(out, "\"code\":%" PRId32 "%s", code, message && message[0] ? "," : "");
    if (!rc && message && message[0] && !(rc = spaa_buf_adds(out, "\"message\":")))
      rc = spaa_canon_str(out, message, strlen(message));
    if (!rc)
      rc = spaa_buf_adds(out, "}");
    return rc ? spaa_err_set(err, rc, 0, 0, "response does not fit") : 0;
  }
  google__rpc__status__init(&st);
  st.code = code;
  st.message = (char *)(message ? message : "");
  return pack_into(&st.base, out, err);
}
