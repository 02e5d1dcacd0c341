/* The tables of converters and exporters: every wire format's entry point by name. */
#include "codecs/registry.h"

#include <stdlib.h>
#include <string.h>

#include "folded/folded.h"
#include "otlp/otlp.h"
#include "sentry/sentry.h"
#include "pprof/pprof.h"

static const struct {
  const char *name;
  spaa_convert_fn fn;
} converters[] = {
    {"spaa", spaa_convert_spaa},
    {"sentry", spaa_convert_sentry},
    {"otlp", spaa_convert_otlp},
    {"pprof", spaa_convert_pprof},
    {"pprof-push", spaa_convert_pprof_push},
    {"folded", spaa_convert_folded},
};

/* One line per output format: name, writer, file extension, HTTP media type. */
static const struct spaa_exporter exporters[] = {
    {"spaa", spaa_export_spaa, ".spaa", "application/x-ndjson"},
    {"collapsed", spaa_export_folded, ".folded", "text/plain; charset=utf-8"},
    {"pprof", spaa_export_pprof, ".pb.gz", "application/octet-stream"},
    {"speedscope", spaa_export_speedscope, ".speedscope.json", "application/json"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Append ", name" (or "name" first) to the list in `out` while it fits in `cap`. */
static void add_name(char *out, size_t cap, const char *name)
{
  size_t len = strlen(out), n = strlen(name), sep = len ? 2 : 0;
  if (len + sep + n >= cap)
    return;
  memcpy(out + len, ", ", sep);
  memcpy(out + len + sep, name, n + 1);
}

spaa_convert_fn spaa_converter(const char *from)
{
  size_t i;
  for (i = 0; from && i < COUNT(converters); i++)
    if (strcmp(converters[i].name, from) == 0)
      return converters[i].fn;
  return NULL;
}

const char *spaa_converter_names(void)
{
  static char names[128];
  size_t i;
  if (!names[0])
    for (i = 0; i < COUNT(converters); i++)
      add_name(names, sizeof(names), converters[i].name);
  return names;
}

const struct spaa_exporter *spaa_exporter(const char *to)
{
  size_t i;
  for (i = 0; to && i < COUNT(exporters); i++)
    if (strcmp(exporters[i].name, to) == 0)
      return &exporters[i];
  return NULL;
}

const char *spaa_exporter_names(void)
{
  static char names[128];
  size_t i;
  if (!names[0])
    for (i = 0; i < COUNT(exporters); i++)
      add_name(names, sizeof(names), exporters[i].name);
  return names;
}
