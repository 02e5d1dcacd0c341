/* The registries: every input format's converter and every output format's exporter, by
 * name. The one place that knows all wire formats; the CLI and the HTTP routes look up here. */
#ifndef SPAA_CODECS_REGISTRY_H
#define SPAA_CODECS_REGISTRY_H

#include "spaa/convert.h"
#include "spaa/export.h"

/* The converter for a format name ("spaa", "sentry", "otlp", "pprof", "pprof-push",
 * "folded"), or NULL. */
spaa_convert_fn spaa_converter(const char *from);
/* Comma-separated names of the known formats, for usage messages. */
const char *spaa_converter_names(void);

/* The exporter for an output format name ("spaa", "collapsed"), or NULL (also for NULL).
 * The entry is static: never freed, valid for the life of the process. */
const struct spaa_exporter *spaa_exporter(const char *to);
/* Comma-separated names of the output formats, in table order, for usage messages. */
const char *spaa_exporter_names(void);

#endif
