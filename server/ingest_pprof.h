/* The pprof dialects: POST /ingest and /pyroscope/ingest (Pyroscope's push API: query name,
 * from, until, format, sampleRate, spyName, units, aggregationType; body raw pprof or
 * multipart/form-data) and POST /v1/pprof (the OpenTelemetry Collector pprof receiver's
 * server mode). Mapping of every parameter: docs/pprof-mapping.md. */
#ifndef SPAA_SERVER_PPROF_H
#define SPAA_SERVER_PPROF_H

#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "base/limits.h"
#include "server/http.h"

/* POST /ingest, /pyroscope/ingest: 200 with an empty body once stored. */
void spaa_pprof_ingest(const struct spaa_req *req, struct spaa_resp *resp);
/* POST /v1/pprof: 204 once stored. */
void spaa_pprof_collector(const struct spaa_req *req, struct spaa_resp *resp);

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
 * 0, or SPAA_E_BAD_REQUEST with err saying what is wrong and at which byte; SPAA_E_NOMEM. */
int spaa_pprof_parse_name(const char *name, struct spaa_pprof_name *out, struct spaa_err *err);
/* Free the labels; NULL-safe, idempotent. */
void spaa_pprof_name_clear(struct spaa_pprof_name *n);

/* Parse a Pyroscope time: "now" (-> now_ns), or unix time as decimal digits, read by
 * magnitude: below 1e11 seconds, below 1e14 milliseconds, below 1e17 microseconds, else
 * nanoseconds. 0 with *ns set, or -1 (empty, a sign, a non-digit, a time past int64 ns). */
int spaa_pprof_parse_time(const char *s, int64_t now_ns, int64_t *ns);

/* Outcomes of the pprof endpoints since start (both endpoints together). */
struct spaa_pprof_stats {
  uint64_t requests;     /* handler calls */
  uint64_t stored;       /* profiles stored (or already stored) */
  uint64_t bad_request;  /* 400: query, metadata, multipart, protobuf, compression */
  uint64_t invalid;      /* 422: decodes but breaks a pprof rule */
  uint64_t too_large;    /* 413 */
  uint64_t busy;         /* 503: store queue full or shutting down */
  uint64_t failed;       /* 5xx other than busy */
  uint64_t bytes;        /* body bytes of stored profiles, as received */
};

/* A snapshot of the counters (each read atomically). */
void spaa_pprof_stats_get(struct spaa_pprof_stats *out);

#endif
