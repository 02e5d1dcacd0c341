/* The "collapsed" exporter: folded stacks (`root;...;leaf weight` lines) of one event,
 * weighted by one metric, the input of flamegraph.pl and most flame graph viewers. */
#include <inttypes.h>
#include <string.h>

#include "base/idmap.h"
#include "spaa/canon.h"
#include "spaa/export.h"
#include "spaa/view.h"

#define FOLDED_FLUSH (1 << 16) /* hand lines to the sink once this many bytes wait */

/* A frame's name for folded output: ';' would split it and a newline would end the line. */
static int folded_name(struct spaa_buf *b, const struct spaa_frame *f)
{
  const char *s = f->func && f->func[0] ? f->func : "[unknown]";
  size_t start = b->len;
  int rc = spaa_buf_adds(b, s);
  for (size_t i = start; !rc && i < b->len; i++)
    if (b->p[i] == ';' || b->p[i] == '\n' || b->p[i] == '\r')
      b->p[i] = b->p[i] == ';' ? ':' : ' ';
  return rc;
}

/* One line: the stack's frames root first, then the weight. */
static int folded_line(struct spaa_buf *b, const struct spaa_profile *p,
                       const struct spaa_idmap *ids, const struct spaa_stack *s,
                       struct spaa_num value)
{
  size_t j, k;
  int rc = s->n_frames ? 0 : spaa_buf_adds(b, SPAA_VIEW_NO_FRAMES);
  for (j = 0; j < s->n_frames && !rc; j++) {
    size_t pos = p->header.frame_order == SPAA_ROOT_TO_LEAF ? j : s->n_frames - 1 - j;
    if (j)
      rc = spaa_buf_add(b, ";", 1);
    if (!rc && spaa_idmap_get(ids, s->frames[pos], &k))
      rc = folded_name(b, &p->frames[k]);
    else if (!rc)
      rc = spaa_buf_addf(b, "[frame %" PRIu64 "]", s->frames[pos]);
  }
  if (!rc)
    rc = spaa_buf_add(b, " ", 1);
  if (!rc)
    rc = spaa_canon_num(b, value);
  if (!rc)
    rc = spaa_buf_add(b, "\n", 1);
  return rc;
}

int spaa_export_folded(const struct spaa_profile *p, const struct spaa_export_opts *o,
                       spaa_sink_cb sink, void *sink_ctx, struct spaa_err *err)
{
  const char *event = o ? o->event : NULL;
  const struct spaa_event *e = event ? spaa_find_event(p, event)
                                     : (p->header.n_events ? &p->header.events[0] : NULL);
  const char *metric = o && o->metric ? o->metric : e ? e->primary_metric : NULL;
  struct spaa_idmap ids;
  struct spaa_buf b;
  size_t i;
  int rc = 0;
  if (!e || !metric)
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "no event %s%s%s with a primary metric",
                        event ? "\"" : "", event ? event : "", event ? "\"" : "");
  spaa_idmap_init(&ids);
  spaa_buf_init(&b, 0);
  for (i = 0; i < p->n_frames && !rc; i++)
    rc = spaa_idmap_put(&ids, p->frames[i].id, i, NULL) < 0 ? SPAA_E_NOMEM : 0;
  for (i = 0; i < p->n_stacks && !rc; i++) {
    const struct spaa_stack *s = &p->stacks[i];
    const struct spaa_weight *w;
    if (!s->event || strcmp(s->event, e->name) != 0 ||
        !(w = spaa_weights_find(&s->weights, metric)))
      continue;
    rc = folded_line(&b, p, &ids, s, w->value);
    if (!rc && b.len >= FOLDED_FLUSH) {
      rc = sink(sink_ctx, b.p, b.len);
      b.len = 0;
    }
  }
  if (!rc && b.len)
    rc = sink(sink_ctx, b.p, b.len);
  spaa_buf_free(&b);
  spaa_idmap_free(&ids);
  if (rc && !err->code)
    spaa_err_set(err, rc, 0, 0, "writing folded stacks: %s", spaa_err_default(rc));
  return rc;
}
