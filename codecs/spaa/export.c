/* The "spaa" exporter: the SPAA writer (spaa_write.c) behind the export signature. */
#include "spaa/export.h"

#include "spaa/spaa_io.h"

int spaa_export_spaa(const struct spaa_profile *p, const struct spaa_export_opts *o,
                     spaa_sink_cb sink, void *sink_ctx, struct spaa_err *err)
{
  (void)o;
  return spaa_write(p, sink, sink_ctx, err);
}
