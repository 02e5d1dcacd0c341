/* The metrics registry: a fixed set of metric families (counters, gauges, histograms) with
 * Prometheus names and at most two labels each, counted into with atomics from any thread,
 * and written out whole in the Prometheus text exposition format. The HTTP core, the
 * connection bookkeeping, the ingest flow and the dialects count into it; docs/metrics.md
 * lists every family. */
#ifndef SPAA_SERVER_METRICS_H
#define SPAA_SERVER_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/limits.h"

/* Every family, in exposition order: XX(ID, KIND, NAME, HELP, LABEL0, LABEL1), the labels
 * NULL when unused (LABEL1 only with LABEL0). KIND is COUNTER, GAUGE or HISTOGRAM (seconds,
 * observed with spaa_metrics_observe_ns, buckets SPAA_METRICS_BUCKETS). */
#define SPAA_METRIC_FAMILIES(XX)                                                             \
  XX(REQUESTS, COUNTER, "spaa_relay_requests_total",                                         \
     "Requests answered, by route pattern (- when none matched) and HTTP status; gRPC "       \
     "calls by method. Refusals before the body was read included.", "route", "status")       \
  XX(HTTP_DURATION, HISTOGRAM, "spaa_relay_http_request_duration_seconds",                   \
     "Time from a request's head to the end of its answer, by route pattern (- when none "    \
     "matched); gRPC calls by method, to their answer.", "route", NULL)                      \
  XX(REQUEST_BYTES, COUNTER, "spaa_relay_request_bytes_total",                               \
     "Body bytes of the ingest requests that reached their handler, as received (before "     \
     "Content-Encoding was undone), by route pattern.", "route", NULL)                       \
  XX(REQUEST_DECODED_BYTES, COUNTER, "spaa_relay_request_decoded_bytes_total",               \
     "Body bytes of the same requests once Content-Encoding was undone (as received when "    \
     "they came unencoded), by route pattern.", "route", NULL)                               \
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
     "encoding", "version")                                                                  \
  XX(CONNECTIONS_OPEN, GAUGE, "spaa_relay_connections_open",                                 \
     "Connections open now on the HTTP listener (not the gRPC one).", NULL, NULL)                                               \
  XX(CONNECTIONS_REFUSED, COUNTER, "spaa_relay_connections_refused_total",                   \
     "Connections refused: answered 503 over max_connections (max_connections), or closed "   \
     "unanswered at libmicrohttpd's hard limit above it (hard_limit); on the gRPC "           \
     "listener, answered UNAVAILABLE then GOAWAY (grpc_max_connections), or closed when too "  \
     "many of those wait (grpc_hard_limit).", "reason", NULL)                               \
  XX(CONNECTIONS_DROPPED, COUNTER, "spaa_relay_connections_dropped_total",                   \
     "Connections dropped: a request head not complete within header_timeout "               \
     "(header_timeout), a body slower than body_min_rate (body_min_rate); on the gRPC "      \
     "listener, a frame not whole in time (grpc_frame_timeout), a stream's header block or "  \
     "message too slow (grpc_stream_too_slow).", "reason", NULL)                            \
  XX(REQUESTS_BUSY, COUNTER, "spaa_relay_requests_busy_total",                               \
     "Requests answered 503/429 for want of room: the memory budget for requests in flight "  \
     "was full (memory_budget), or the worker queue (worker_queue).", "reason", NULL)        \
  XX(BUDGET_USED, GAUGE, "spaa_relay_memory_budget_used_bytes",                              \
     "Bytes of the memory budget that requests in flight hold now (bodies, and the "          \
     "conversions running on them).", NULL, NULL)                                            \
  XX(BUDGET_LIMIT, GAUGE, "spaa_relay_memory_budget_limit_bytes",                            \
     "The memory budget for requests in flight (memory_budget; a quarter of RAM by "          \
     "default).", NULL, NULL)

/* One family. */
enum spaa_metric {
#define SPAA_METRIC_ENUM(id, kind, name, help, l0, l1) SPAA_METRIC_##id,
  SPAA_METRIC_FAMILIES(SPAA_METRIC_ENUM)
#undef SPAA_METRIC_ENUM
  SPAA_METRIC__COUNT
};

#define SPAA_METRICS_OVERFLOW "_overflow" /* label values of the series past the cap */
/* Upper bounds of the histogram buckets, in seconds (Prometheus' defaults), then +Inf. */
#define SPAA_METRICS_BUCKETS 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10

struct spaa_metrics;

/* A new registry, every series at zero (*out, owned by the caller: spaa_metrics_free).
 * 0 or SPAA_E_NOMEM. */
int spaa_metrics_new(struct spaa_metrics **out);
/* NULL-safe. No thread may be counting into it any more. */
void spaa_metrics_free(struct spaa_metrics *m);

/* Add `delta` to the series of family `f` with label values l0, l1 (NULL for a label the
 * family does not have; values are copied, cut at SPAA_METRICS_MAX_VALUE - 1 bytes). A
 * counter ignores a negative delta, a histogram any. Lock-free and thread-safe; a no-op when
 * m is NULL. Past SPAA_METRICS_MAX_SERIES distinct value pairs in a family, new pairs all
 * count into one series labelled SPAA_METRICS_OVERFLOW. Never fails. */
void spaa_metrics_add(struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                      const char *l1, int64_t delta);
/* Set the series of gauge `f` to v (other kinds: a no-op); as spaa_metrics_add otherwise. */
void spaa_metrics_set(struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                      const char *l1, int64_t v);
/* Observe a duration of `ns` nanoseconds (negative: 0) in histogram `f` (other kinds: a
 * no-op); as spaa_metrics_add otherwise. */
void spaa_metrics_observe_ns(struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                             const char *l1, int64_t ns);

/* The sum of the series of family `f` whose labels match l0 and l1, NULL matching any value
 * (both NULL: the whole family); for a histogram, the observations counted. 0 when m is NULL
 * or nothing matches. Each series is read atomically; the sum is not one instant. */
int64_t spaa_metrics_sum(const struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                         const char *l1);

/* Append the whole registry to `out` in the Prometheus text exposition format (version
 * 0.0.4): per family "# HELP" and "# TYPE" lines, then one line per series, sorted by label
 * values (a family without labels always has its one line, 0 included); a histogram's
 * series as cumulative _bucket lines (le="..." up to "+Inf"), _sum and _count. 0, or
 * SPAA_E_NOMEM / SPAA_E_TOO_LARGE (out's cap), out then holding part of it. */
int spaa_metrics_write(const struct spaa_metrics *m, struct spaa_buf *out);

#endif
