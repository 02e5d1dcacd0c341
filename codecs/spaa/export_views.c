/* Exporters written through the views (view.h): "speedscope". */
#include "spaa/export.h"
#include "spaa/view.h"

int spaa_export_speedscope(const struct spaa_profile *p, const struct spaa_export_opts *o,
                           spaa_sink_cb sink, void *sink_ctx, struct spaa_err *err)
{
  struct spaa_vset v;
  const char *event = o && o->event ? o->event
                                    : p->header.n_events ? p->header.events[0].name : "profile";
  int rc;
  spaa_vset_init(&v);
  rc = spaa_vset_from_profile(&v, p, o ? o->event : NULL, o ? o->metric : NULL, 0, err);
  if (!rc && spaa_view_has_timeline(p, o ? o->event : NULL))
    rc = spaa_view_speedscope_evented(&v, p, o ? o->event : NULL, event, sink, sink_ctx, err);
  else if (!rc)
    rc = spaa_view_speedscope(&v, event, sink, sink_ctx, err);
  spaa_vset_free(&v);
  return rc;
}
