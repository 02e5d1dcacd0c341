/* OTLP profiles: decode an ExportProfilesServiceRequest (v1development or v1experimental,
 * protobuf or OTLP/JSON), validate it, convert each Profile to a SPAA model, and encode the
 * OTLP/HTTP answers. Pure: bytes in, structs out. Mapping in docs/otlp-mapping.md. */
#ifndef SPAA_OTLP_H
#define SPAA_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "spaa/convert.h"
#include "base/err.h"
#include "base/limits.h" /* OTLP_MAX_*: caps on what a request may make us build */

enum otlp_version {
  OTLP_V1DEVELOPMENT = 1, /* opentelemetry.proto.*.profiles.v1development, proto v1.10/v1.11 */
  OTLP_V1EXPERIMENTAL = 2 /* opentelemetry.proto.*.profiles.v1experimental, proto v1.3.0 */
};

/* A decoded request (opaque). Owns the decoded messages; borrowed pointers handed out by the
 * functions below live as long as it does. A v1development protobuf request leaves its
 * samples in the buffer it was decoded from (they are read from there as each profile is
 * checked and converted): that buffer must outlive it. */
struct otlp_request;

/* Decode `len` bytes: JSON when the first non-space byte is '{', else protobuf; the version
 * (v1development or v1experimental) is detected from the wire or the JSON keys, whatever path
 * the body came on. On success *out is a new request owned by the caller (free it with
 * otlp_request_free). Errors, with err naming where: SPAA_E_BAD_PROTOBUF / SPAA_E_BAD_JSON
 * (undecodable, too deeply nested, invalid UTF-8), SPAA_E_UNSUPPORTED (a v1.8 or v1.9 body,
 * or another pre-v1.10 v1development layout: the message names the version and which
 * Collector / proto versions send it), SPAA_E_TOO_LARGE (a JSON array over the cap),
 * SPAA_E_NOMEM. An empty body is a valid empty request. */
int otlp_decode(const uint8_t *buf, size_t len, struct otlp_request **out, struct spaa_err *err);
/* The same, with flags: OTLP_DECODE_REFETCH when buf is the private mapping of a file, whose
 * pages given back are read from the file again when touched: the samples' pages then go
 * back as they are read (once to check them here, then by the converter), so that a large
 * request is never resident whole. */
#define OTLP_DECODE_REFETCH 1u
int otlp_decode_ex(const uint8_t *buf, size_t len, unsigned flags, struct otlp_request **out,
                   struct spaa_err *err);
/* NULL-safe. */
void otlp_request_free(struct otlp_request *r);

enum otlp_version otlp_request_version(const struct otlp_request *r);
int otlp_request_is_json(const struct otlp_request *r);
/* Number of entries otlp_convert() appends: one per OTLP Profile (a v1experimental profile
 * with k sample types counts k). */
size_t otlp_request_count(const struct otlp_request *r);

/* Where the k-th converted entry came from, and its original payload (borrowed from r). */
struct otlp_origin {
  size_t resource;            /* index in resource_profiles */
  size_t scope;               /* index in scope_profiles */
  size_t profile;             /* index in profiles */
  size_t sample_type;         /* v1experimental: index in sample_type; 0 otherwise */
  const uint8_t *payload;     /* original_payload bytes, NULL when none */
  size_t payload_len;         /* its length */
  const char *payload_format; /* original_payload_format, "" when none; never NULL */
};
/* 0, or SPAA_E_USAGE when k >= otlp_request_count(r). */
int otlp_request_origin(const struct otlp_request *r, size_t k, struct otlp_origin *o);

/* Validate and convert: appends exactly otlp_request_count(r) entries to `out`, in request
 * order; with o->keep_original a converted entry's original is its original_payload
 * (borrowed from r), when it has one. A profile that fails validation gets profile == NULL,
 * a machine `reason` and an err.msg naming "profile P of scope S of resource R" and the
 * fault; the others convert.
 * Converted entries carry id (32 hex of profile_id, "" when absent), service, start_ns /
 * end_ns, labels (resource attributes as strings) and attrs (scope, origin, warnings such as
 * timestamps outside the profile window). With o->each, that consumer is called after each
 * converted or rejected profile (it may take the models away); its error stops the
 * conversion and is returned, the entries made so far left in the list. Returns 0,
 * SPAA_E_INVALID when the shared dictionary itself is broken (nothing appended), the
 * consumer's error, or SPAA_E_NOMEM. */
int otlp_convert(const struct otlp_request *r, const struct spaa_convert_opts *o,
                 struct spaa_conv_list *out, struct spaa_err *err);

/* Summarize entries [first, first + n) of a list for an ExportProfilesPartialSuccess:
 * returns the number rejected and writes into msg (cap bytes, always NUL-terminated) the
 * first OTLP_MAX_REPORTED rejections, or, when none was rejected, the warnings ("" when there
 * is nothing to say). */
size_t otlp_summarize(const struct spaa_conv_list *l, size_t first, size_t n, char *msg,
                      size_t cap);

/* ExportProfilesServiceResponse into `out` (appending): as protobuf when !json, else as
 * OTLP/JSON ({"partialSuccess":{"rejectedProfiles":"N","errorMessage":"..."}}).
 * partial_success is omitted when rejected == 0 and message is NULL or "" (full success).
 * 0, SPAA_E_NOMEM or SPAA_E_TOO_LARGE (out's cap). */
int otlp_encode_response(int json, int64_t rejected, const char *message, struct spaa_buf *out,
                         struct spaa_err *err);
/* google.rpc.Status {code, message} (code 3 = INVALID_ARGUMENT for a 400) into `out`, as
 * protobuf or JSON ({"code":3,"message":"..."}). Same returns. */
int otlp_encode_status(int json, int32_t code, const char *message, struct spaa_buf *out,
                       struct spaa_err *err);

/* The converter entry point (convert.h): otlp_decode + otlp_convert; with o->otlp_req (the
 * request the caller already decoded from buf) only otlp_convert of it, buf is not read.
 * Original payloads are not copied: with o->keep_original an entry's original points into
 * the request, which lives only during this call unless it was given as o->otlp_req. */
int spaa_convert_otlp(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                      struct spaa_conv_list *out, struct spaa_err *err);

#endif
