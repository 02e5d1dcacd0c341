/* The pprof dialects: POST /ingest and /pyroscope/ingest (Pyroscope's push API: query name,
 * from, until, format, sampleRate, spyName, units, aggregationType; body raw pprof or
 * multipart/form-data) and POST /v1/pprof (the OpenTelemetry Collector pprof receiver's
 * server mode). Their hooks for the ingest flow (ingest.h) turn the request into pprof
 * conversion options (pprof/pprof.h); what those mean is the codec's. Mapping of every
 * parameter: docs/pprof-mapping.md. */
#ifndef SPAA_SERVER_PPROF_H
#define SPAA_SERVER_PPROF_H

#include "server/ingest.h"

/* POST /ingest, /pyroscope/ingest (format "pprof"): the query into spaa_pprof_opts (name
 * required), the multipart fields `profile` and `sample_type_config`; 200 with an empty body
 * once stored, JSON {"error","detail"} otherwise. */
extern const struct spaa_dialect spaa_dialect_pyroscope;
/* POST /v1/pprof (format "pprof"): service from the query or X-Service-Name, labels from
 * the query (label=k:v); 204 once stored. */
extern const struct spaa_dialect spaa_dialect_collector;

#endif
