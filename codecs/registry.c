/* The tables of converters and exporters: every wire format's entry point by name. */
#include "codecs/registry.h"

#include <stdlib.h>
#include <string.h>

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
};

spaa_convert_fn spaa_converter(const char *from)
{
  size_t i;
  for (i = 0; from && i < sizeof(converters) / sizeof(converters[0]); i++)
    if (strcmp(converters[i].name, from) == 0)
      return converters[i].fn;
  return NULL;
}

const char *spaa_converter_names(void)
{
  static char names[128];
  size_t i;
  if (!names[0])
    for (i = 0; i < sizeof(converters) / sizeof(converters[0]); i++) {
      if (i)
        strcat(names, ", ");
      strcat(names, converters[i].name);
    }
  return names;
}
