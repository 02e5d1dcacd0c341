/* pprof (perftools.profiles.Profile) in: gzip detected by magic and inflated under a cap,
 * protoc-c unpack into an arena, validation of every index and id, and conversion to the
 * SPAA model. The mapping of fields is documented in docs/pprof-mapping.md. */
#ifndef SPAA_PPROF_H
#define SPAA_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "spaa/convert.h"
#include "spaa/export.h"
#include "base/err.h"
#include "base/limits.h"
#include "spaa/spaa.h"

/* A decoded and validated pprof profile (its protobuf-c message and id maps: pprof_int.h). */
struct spaa_pprof;

/* 1 when `buf` starts with the gzip magic (1f 8b): spaa_is_gzip of base/compress.h, kept
 * for the pprof dialect's callers. Decoding goes through spaa_decompress. */
int spaa_pprof_is_gzip(const uint8_t *buf, size_t len);

/* Decode `len` bytes of pprof, gzipped or not, into a new struct (*out, owned by the caller,
 * freed with spaa_pprof_free; it may read buf until then). A gzip input over
 * SPAA_PPROF_STREAM_OVER bytes is inflated in windows at each read instead of held whole,
 * and its samples are checked when spaa_pprof_to_spaa reads them (the same errors, from
 * there). Returns 0, or:
 *   SPAA_E_TOO_LARGE       over SPAA_PPROF_MAX_RAW after gunzip, or SPAA_PPROF_MAX_DECODED;
 *   SPAA_E_BAD_COMPRESSION a corrupt gzip stream;
 *   SPAA_E_BAD_PROTOBUF    bytes that are not a Profile message;
 *   SPAA_E_INVALID         a Profile that breaks a rule (err names the sample, location,
 *                          function or mapping index at fault, and the string index);
 *   SPAA_E_NOMEM. */
int spaa_pprof_decode(const uint8_t *buf, size_t len, struct spaa_pprof **out,
                      struct spaa_err *err);
/* NULL-safe. Frees the arena and with it msg when decode made it; a msg the caller set
 * with arena == NULL stays the caller's. */
void spaa_pprof_free(struct spaa_pprof *d);

/* Convert a validated profile to a new, normalized SPAA model (*out, owned by the caller).
 * start_ns/end_ns (may be NULL) receive the unix-ns time range, 0 when unknown.
 * 0, SPAA_E_TOO_LARGE (stacks deeper than SPAA_PPROF_MAX_DEPTH or more frame references
 * than SPAA_PPROF_MAX_FRAME_REFS in all), SPAA_E_NOMEM. */
int spaa_pprof_to_spaa(const struct spaa_pprof *d, struct spaa_profile **out, int64_t *start_ns,
                       int64_t *end_ns, struct spaa_err *err);

/* ---- Pyroscope metadata (pprof_pyroscope.c) ------------------------------------------ */

/* A parsed Pyroscope application name, `app.cpu{env=staging,region=x}`. */
struct spaa_pprof_name {
  char service[SPAA_PPROF_MAX_NAME]; /* the part before '{', the type suffix taken off */
  char app[SPAA_PPROF_MAX_NAME];     /* the part before '{' as sent ("app.cpu") */
  const char *type;                  /* the known profile type suffix ("cpu"), or NULL */
  json_t *labels;                    /* owned object key -> value, or NULL when none */
};

/* Parse `name` into out (labels owned by out: spaa_pprof_name_clear). The application part
 * is 1+ characters of [A-Za-z0-9_.-]; labels are `key=value` separated by ',' inside one
 * pair of braces at the end, keys of [A-Za-z0-9_.] (the reserved `__name__` refused), values
 * 1+ bytes of valid UTF-8 without ',', '{', '}', '=' or control characters; a key at most
 * once. The type suffix is the text after the last '.' when it is a known pprof/Pyroscope
 * type (cpu, wall, alloc_objects, inuse_space, ...) and something precedes it.
 * 0, or SPAA_E_BAD_REQUEST with err saying what is wrong and at which byte (NULL or "":
 * "the query parameter 'name' is required"); SPAA_E_NOMEM. */
int spaa_pprof_parse_name(const char *name, struct spaa_pprof_name *out, struct spaa_err *err);
/* Free the labels; NULL-safe, idempotent. */
void spaa_pprof_name_clear(struct spaa_pprof_name *n);

/* The service and labels Pyroscope's /ingest gives the profile of name n, whose application
 * name without its type suffix is the app_len bytes at app (n->service for a pprof; folded
 * stacks know more suffixes): with a `service_name` label, its value is the service and the
 * label is not kept among the labels (as the push API stores it), and `app_name` = app is
 * added unless the name has an `app_name` label; without one, app is the service. *service
 * (malloc'd) and *labels (a new object, NULL when there are no labels) are the caller's.
 * 0, or SPAA_E_NOMEM with nothing left to free. */
int spaa_pprof_name_service(const struct spaa_pprof_name *n, const char *app, size_t app_len,
                            char **service, json_t **labels);

/* Parse a Pyroscope time: "now" (-> now_ns), or unix time as decimal digits, read by
 * magnitude: below 1e11 seconds, below 1e14 milliseconds, below 1e17 microseconds, else
 * nanoseconds. 0 with *ns set, -1 (empty, a sign, a non-digit, more than 19 digits) or -2 (a
 * time past int64 ns). */
int spaa_pprof_parse_time(const char *s, int64_t now_ns, int64_t *ns);

/* What a Pyroscope push says of a pprof besides its bytes (the /ingest query and multipart
 * fields; the same as `spaa-relay convert --from pprof` flags), applied by
 * spaa_convert_pprof when passed as spaa_convert_opts.pprof. Start zeroed, fill with the
 * setters below (each parses one parameter as Pyroscope's /ingest reads it), release with
 * spaa_pprof_opts_clear. What was not set is not applied. */
struct spaa_pprof_opts {
  char *name_raw;               /* the application name as given (malloc'd), or NULL */
  struct spaa_pprof_name name;  /* name_raw parsed (valid when name_raw != NULL) */
  int has_range;                /* 1 once spaa_pprof_opts_range succeeded */
  int64_t from_ns, until_ns;    /* the sender's time range, unix ns (with has_range) */
  int64_t sample_rate;          /* sampling frequency, Hz; 0 when not given */
  json_t *sample_type_config;   /* sample type -> config object (owned), or NULL */
};

/* Set the application name (`app.cpu{env=prod}`): parsed by spaa_pprof_parse_name, same
 * errors (NULL or "" is refused: a push names its application). */
int spaa_pprof_opts_name(struct spaa_pprof_opts *o, const char *name, struct spaa_err *err);
/* Set the time range from Pyroscope's `from` and `until` (spaa_pprof_parse_time; NULL or ""
 * = not given): a missing from is until, else now_ns; a missing until is the later of from
 * and now_ns. 0, or SPAA_E_BAD_REQUEST ("bad from '...'", "bad until '...'", until before
 * from). */
int spaa_pprof_opts_range(struct spaa_pprof_opts *o, const char *from, const char *until,
                          int64_t now_ns, struct spaa_err *err);
/* Set the sampling frequency from `sampleRate` (decimal digits, 1 to
 * SPAA_PPROF_MAX_SAMPLE_RATE Hz). NULL, "", "0" and anything that is not a decimal number
 * mean "not given", as Pyroscope reads it (o is left alone). 0, or SPAA_E_BAD_REQUEST for
 * a number over the largest rate. */
int spaa_pprof_opts_sample_rate(struct spaa_pprof_opts *o, const char *hz,
                                struct spaa_err *err);
/* Set sample_type_config from `len` bytes of JSON: an object of sample type -> object whose
 * "units", "display-name", "aggregation" are strings and "cumulative", "sampled" booleans
 * (other keys ignored). 0, SPAA_E_TOO_LARGE over SPAA_PPROF_MAX_STC bytes,
 * SPAA_E_BAD_REQUEST (not JSON, not such an object; err says where), SPAA_E_NOMEM. */
int spaa_pprof_opts_stc(struct spaa_pprof_opts *o, const uint8_t *json, size_t len,
                        struct spaa_err *err);
/* Release what the setters allocated and zero *o; NULL-safe, idempotent. */
void spaa_pprof_opts_clear(struct spaa_pprof_opts *o);

/* ---- the converter ------------------------------------------------------------------- */

/* The converter (spaa_convert_fn): decode, validate, convert; one entry appended to `out`.
 * Its attrs hold pprof_gzip; service is o->service (copied) when given. With o->pprof
 * (spaa_pprof_opts) the Pyroscope metadata is applied too:
 *   - service, when o->service is NULL: the name's `service_name` label, else the name's
 *     service (type suffix taken off) (spaa_pprof_name_service);
 *   - labels: the name's labels (`service_name` left out, `app_name` added with it), plus
 *     `__name__` = its type suffix when it has one;
 *   - attrs: pyroscope_name, profile_type, from_ns, until_ns, sample_rate,
 *     sample_type_config, for what was set;
 *   - events: each sample_type_config entry onto the event of that name as
 *     x_pyroscope_display_name, _units, _aggregation, _cumulative, _sampled; the sample
 *     rate as sampling frequency of the timer events that have no period of their own;
 *   - time range: from/until, when the pprof carries no time of its own (start_ns/end_ns
 *     and the header's time_range, in nanoseconds).
 * With o->keep_original the entry's original is buf. Errors as spaa_pprof_decode and
 * spaa_pprof_to_spaa, or SPAA_E_NOMEM; nothing is appended on error. */
int spaa_convert_pprof(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                       struct spaa_conv_list *out, struct spaa_err *err);

/* ---- the exporter (pprof_export.c) ----------------------------------------------------- */

/* "pprof" (spaa_export_fn): the chosen event (o->event, else the first declared) as one
 * gzipped perftools.profiles.Profile: one sample type per metric (the source's types, units
 * and order from x_pprof_sample_types when the profile came from pprof, else the metrics of
 * the event's stacks in order of first appearance), default_sample_type the primary metric,
 * a mapping per dso (the converter's "[unknown]" stand-in left out), a function per resolved
 * name, file and start line, a location per physical frame with its inline frames folded back
 * as lines, one sample per stack with its x_pprof_label_* context as labels, period, time
 * and comments from the header. Converting the output back gives the same stacks (ids and
 * weights) for a profile that came from pprof. Returns 0, SPAA_E_USAGE (no such event), the
 * sink's error, SPAA_E_NOMEM. */
int spaa_export_pprof(const struct spaa_profile *p, const struct spaa_export_opts *o,
                      spaa_sink_cb sink, void *sink_ctx, struct spaa_err *err);

/* ---- Pyroscope's push API (pprof_push.c) ---------------------------------------------- */

/* The converter of a push.v1 PushRequest (pprof_push.proto), protobuf or its JSON form
 * (when the first non-space byte is '{': {"series":[{"labels":[{"name","value"}],
 * "samples":[{"rawProfile":base64,"ID"}]}]}): every sample's raw_profile through
 * spaa_convert_pprof (o->service and o->pprof are not used), one entry per sample in request
 * order, each with
 *   - service: the series' `service_name` label (none: left to the caller);
 *   - labels: the series' other labels, `__name__` (the profile type) included;
 *   - id: the sample's ID when it is a valid profile id (1 to 63 of [A-Za-z0-9_-]), else "";
 *     attrs.pyroscope_id: the ID as sent, when it has one.
 * With o->keep_original a protobuf request's originals point into buf (the raw profiles as
 * sent); a JSON request keeps none (its bytes are decoded from base64 here).
 * The request is all or nothing: SPAA_E_BAD_PROTOBUF / SPAA_E_BAD_JSON (malformed, invalid
 * UTF-8 in a label, a rawProfile not base64), SPAA_E_BAD_REQUEST (no sample, a label name
 * twice, an empty label name), SPAA_E_TOO_LARGE (over SPAA_PPROF_PUSH_MAX_SAMPLES samples or
 * SPAA_PPROF_PUSH_MAX_LABELS labels in a series), or a sample's own error, each message
 * naming "series S sample K"; nothing is appended on error. */
int spaa_convert_pprof_push(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                            struct spaa_conv_list *out, struct spaa_err *err);

#endif
