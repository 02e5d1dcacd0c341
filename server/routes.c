/* The routing table (see http.h for what a row holds). To add an endpoint, add one row;
 * fields left out take the defaults: no auth, body decoded by the core, config caps,
 * JSON errors. Ingest routes all run spaa_ingest (ingest.h) with their format (the
 * converter's name) and dialect; spaa_ingest_on_error answers the core's refusals in the
 * dialect and counts them. */
#include "server/routes.h"

#include "server/api.h"
#include "server/api_discover.h"
#include "server/api_page.h"
#include "server/api_views.h"
#include "server/ingest.h"
#include "base/limits.h"
#include "server/ingest_spaa.h"
#include "server/ops.h"
#include "server/web.h"
#include "server/ingest_otlp.h"
#include "server/ingest_pprof.h"
#include "server/ingest_push.h"
#include "server/ingest_sentry.h"
#include "server/ingest_spaa.h"
#include "server/ops.h"

/* the columns every ingest row shares */
/* a query that builds models of stored profiles (http.h: reads) */
#define READS(f) .fn = f, .auth = SPAA_AUTH_READ, .reads = 1
/* the Sentry envelope route's rows for methods other than POST: cheap, Relay-shaped errors */
#define SENTRY_OTHER(f) .fn = f, .on_error = spaa_sentry_on_error, .on_io_thread = 1
#define INGEST(fmt, d) .fn = spaa_ingest, .on_error = spaa_ingest_on_error, .format = fmt, \
                       .dialect = &d

const struct spaa_route spaa_routes[] = {
    /* ops */
    {"GET", "/healthz", spaa_ops_healthz, .on_io_thread = 1},
    {"GET", "/readyz", spaa_ops_readyz, .on_io_thread = 1},
    {"GET", "/metrics", spaa_ops_metrics, .auth = SPAA_AUTH_READ, .ops = 1},
    /* the web page (open: it asks for a read token when the API wants one) */
    {"GET", "/", spaa_web_index, .on_io_thread = 1},
    {"GET", "/web/{file}", spaa_web_asset, .on_io_thread = 1},
    /* query (read token) */
    {"GET", "/api/v1/profiles", spaa_query_list, .auth = SPAA_AUTH_READ},
    {"DELETE", "/api/v1/profiles", spaa_api_delete, .auth = SPAA_AUTH_ADMIN},
    {"GET", "/api/v1/profiles/{id}", spaa_query_meta, .auth = SPAA_AUTH_READ},
    {"GET", "/api/v1/profiles/{id}/spaa", READS(spaa_query_spaa)},
    {"GET", "/api/v1/profiles/{id}/pprof", READS(spaa_api_pprof)},
    {"GET", "/api/v1/profiles/{id}/collapsed", READS(spaa_api_collapsed)},
    {"GET", "/api/v1/profiles/{id}/speedscope", READS(spaa_api_speedscope)},
    {"GET", "/api/v1/profiles/{id}/top", READS(spaa_api_top)},
    {"GET", "/api/v1/profiles/{id}/flamegraph", READS(spaa_api_flamegraph)},
    {"GET", "/api/v1/profiles/{id}/summary", READS(spaa_api_summary)},
    {"GET", "/api/v1/top", READS(spaa_api_merged_top)},
    {"GET", "/api/v1/flamegraph", READS(spaa_api_merged_flamegraph)},
    {"GET", "/api/v1/collapsed", READS(spaa_api_merged_collapsed)},
    {"GET", "/api/v1/summary", READS(spaa_api_merged_summary)},
    {"GET", "/api/v1/pprof", READS(spaa_api_merged_pprof)},
    {"GET", "/api/v1/diff", READS(spaa_api_diff)},
    {"GET", "/api/v1/services", spaa_api_services, .auth = SPAA_AUTH_READ},
    {"GET", "/api/v1/labels", spaa_api_labels, .auth = SPAA_AUTH_READ},
    {"GET", "/api/v1/labels/{name}/values", spaa_api_label_values, .auth = SPAA_AUTH_READ},
    {"GET", "/api/v1/stacks/{stack_id}", READS(spaa_api_stack)},
    {"GET", "/api/v1/speedscope", READS(spaa_api_merged_speedscope)},
    {"GET", "/api/v1/timeline", READS(spaa_api_timeline)},
    {"GET", "/api/v1/access", spaa_api_access, .on_io_thread = 1},
    /* ingest (ingest token) */
    {"POST", "/api/v1/spaa", INGEST("spaa", spaa_dialect_spaa), .auth = SPAA_AUTH_INGEST,
     .zstd_body = 1},
    /* Sentry (its own credentials: X-Sentry-Auth, query string or dsn; Relay-shaped errors,
     * CORS headers on every answer). The POST row first: the others only answer browsers'
     * preflights and refuse the other methods in Relay's shape (405, Allow: POST, OPTIONS). */
    {"POST", "/api/{project_id}/envelope", INGEST("sentry", spaa_dialect_sentry),
     .auth = SPAA_AUTH_NONE, .quick = spaa_sentry_quick, .model_factor = SPAA_HTTP_SENTRY_FACTOR},
    {"OPTIONS", "/api/{project_id}/envelope", SENTRY_OTHER(spaa_sentry_preflight)},
    {"GET", "/api/{project_id}/envelope", SENTRY_OTHER(spaa_sentry_method)}, /* and HEAD */
    {"PUT", "/api/{project_id}/envelope", SENTRY_OTHER(spaa_sentry_method)},
    {"DELETE", "/api/{project_id}/envelope", SENTRY_OTHER(spaa_sentry_method)},
    {"PATCH", "/api/{project_id}/envelope", SENTRY_OTHER(spaa_sentry_method)},
    {"TRACE", "/api/{project_id}/envelope", SENTRY_OTHER(spaa_sentry_method)},
    /* pprof: Pyroscope's push API and the Collector pprof receiver (ingest token) */
    {"POST", "/ingest", INGEST("pprof", spaa_dialect_pyroscope), .auth = SPAA_AUTH_INGEST,
     .model_factor = SPAA_HTTP_PPROF_FACTOR},
    {"POST", "/pyroscope/ingest", INGEST("pprof", spaa_dialect_pyroscope),
     .auth = SPAA_AUTH_INGEST, .model_factor = SPAA_HTTP_PPROF_FACTOR},
    {"POST", "/v1/pprof", INGEST("pprof", spaa_dialect_collector), .auth = SPAA_AUTH_INGEST,
     .model_factor = SPAA_HTTP_PPROF_FACTOR},
    /* Pyroscope's push.v1 over Connect (Alloy's pyroscope.write, current SDKs): stored as pprof */
    {"POST", "/push.v1.PusherService/Push", INGEST("pprof-push", spaa_dialect_pyroscope_push),
     .auth = SPAA_AUTH_INGEST},
    /* OTLP/HTTP profiles (ingest token; google.rpc.Status errors; 64 MiB caps) */
    {"POST", "/v1development/profiles", INGEST("otlp", spaa_dialect_otlp),
     .auth = SPAA_AUTH_INGEST, .max_body = SPAA_OTLP_MAX_BODY, .max_decoded = SPAA_OTLP_MAX_BODY},
    {"POST", "/v1experimental/profiles", INGEST("otlp", spaa_dialect_otlp),
     .auth = SPAA_AUTH_INGEST, .max_body = SPAA_OTLP_MAX_BODY, .max_decoded = SPAA_OTLP_MAX_BODY},
};

const size_t spaa_n_routes = sizeof(spaa_routes) / sizeof(spaa_routes[0]);
