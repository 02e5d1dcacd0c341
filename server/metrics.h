/* The metrics registry: a fixed set of metric families (counters, gauges) with Prometheus
 * names and at most two labels each, counted into with atomics from any thread, and written
 * out whole in the Prometheus text exposition format. The ingest flow and the dialects
 * count into it (server/ingest.c); docs/ingest-flow.md lists what each family counts. */
#ifndef SPAA_SERVER_METRICS_H
#define SPAA_SERVER_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/limits.h"

/* Every family, in exposition order: XX(ID, KIND, NAME, HELP, LABEL0, LABEL1), the labels
 * NULL when unused (LABEL1 only with LABEL0). KIND is COUNTER or GAUGE. */
#define SPAA_METRIC_FAMILIES(XX)                                                             \
  XX(REQUESTS, COUNTER, "spaa_relay_requests_total",                                         \
     "Ingest requests answered, by route pattern and HTTP status (refusals before the body "  \
     "was read included).", "route", "status")                                               \
  XX(REQUEST_BYTES, COUNTER, "spaa_relay_request_bytes_total",                               \
     "Body bytes of the ingest requests that reached their handler, as received (before "     \
     "Content-Encoding was undone), by route pattern.", "route", NULL)                       \
  XX(INGEST_IN_FLIGHT, GAUGE, "spaa_relay_ingest_in_flight",                                 \
     "Ingest requests being parsed, converted or stored now, by route pattern.", "route",     \
     NULL)                                                                                   \
  XX(PROFILES_STORED, COUNTER, "spaa_relay_profiles_stored_total",                           \
     "Profiles stored, by source format.", "source", NULL)                                   \
  XX(PROFILES_DUPLICATE, COUNTER, "spaa_relay_profiles_duplicate_total",                     \
     "Profiles whose id was already stored (nothing written), by source format.", "source",   \
     NULL)                                                                                   \
  XX(PROFILES_REJECTED, COUNTER, "spaa_relay_profiles_rejected_total",                       \
     "Profiles rejected on their own while the rest of the upload was answered (a Sentry "    \
     "drop, an OTLP partial success), by source format and reason.", "source", "reason")     \
  XX(PARTIAL_SUCCESS, COUNTER, "spaa_relay_partial_success_total",                           \
     "Uploads answered 200 with some profiles rejected or warned about, by source format.",   \
     "source", NULL)                                                                         \
  XX(OTLP_REQUESTS, COUNTER, "spaa_relay_otlp_requests_total",                               \
     "OTLP export requests that reached the handler, by body encoding (protobuf, json, "      \
     "other) and protocol version (v1development, v1experimental, - when undecoded).",        \
     "encoding", "version")

/* One family. */
enum spaa_metric {
#define SPAA_METRIC_ENUM(id, kind, name, help, l0, l1) SPAA_METRIC_##id,
  SPAA_METRIC_FAMILIES(SPAA_METRIC_ENUM)
#undef SPAA_METRIC_ENUM
  SPAA_METRIC__COUNT
};

#define SPAA_METRICS_OVERFLOW "_overflow" /* label values of the series past the cap */

struct spaa_metrics;

/* A new registry, every series at zero (*out, owned by the caller: spaa_metrics_free).
 * 0 or SPAA_E_NOMEM. */
int spaa_metrics_new(struct spaa_metrics **out);
/* NULL-safe. No thread may be counting into it any more. */
void spaa_metrics_free(struct spaa_metrics *m);

/* Add `delta` to the series of family `f` with label values l0, l1 (NULL for a label the
 * family does not have; values are copied, cut at SPAA_METRICS_MAX_VALUE - 1 bytes). A
 * counter ignores a negative delta. Lock-free and thread-safe; a no-op when m is NULL. Past
 * SPAA_METRICS_MAX_SERIES distinct value pairs in a family, new pairs all count into one
 * series labelled SPAA_METRICS_OVERFLOW. Never fails. */
void spaa_metrics_add(struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                      const char *l1, int64_t delta);

/* The sum of the series of family `f` whose labels match l0 and l1, NULL matching any value
 * (both NULL: the whole family). 0 when m is NULL or nothing matches. Each series is read
 * atomically; the sum is not one instant. */
int64_t spaa_metrics_sum(const struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                         const char *l1);

/* Append the whole registry to `out` in the Prometheus text exposition format (version
 * 0.0.4): per family "# HELP" and "# TYPE" lines, then one line per series, sorted by label
 * values (a family without labels always has its one line, 0 included). 0, or
 * SPAA_E_NOMEM / SPAA_E_TOO_LARGE (out's cap), out then holding part of it. */
int spaa_metrics_write(const struct spaa_metrics *m, struct spaa_buf *out);

#endif
