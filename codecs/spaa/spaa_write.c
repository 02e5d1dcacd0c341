/* Deterministic SPAA NDJSON writer (see spaa_io.h; field order in docs/spaa-output.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/hex.h"
#include "spaa/canon.h"
#include "spaa/export.h"
#include "spaa/spaa_io.h"

#define FLUSH_AT (64 * 1024)

struct writer {
  struct spaa_buf b;   /* pending output */
  spaa_sink_cb sink;   /* where it goes */
  void *ctx;
};

static int w_flush(struct writer *w)
{
  int rc = 0;
  if (w->b.len) {
    rc = w->sink(w->ctx, w->b.p, w->b.len);
    w->b.len = 0;
  }
  return rc;
}

#define TRY(x)                                                                                \
  do {                                                                                        \
    if ((rc = (x)))                                                                           \
      goto out;                                                                               \
  } while (0)

static int key(struct spaa_buf *b, const char *k)
{
  int rc = spaa_buf_add(b, ",\"", 2);
  if (!rc)
    rc = spaa_buf_adds(b, k);
  if (!rc)
    rc = spaa_buf_add(b, "\":", 2);
  return rc;
}

static int str(struct spaa_buf *b, const char *s) { return spaa_canon_str(b, s, strlen(s)); }

static int kstr(struct spaa_buf *b, const char *k, const char *s)
{
  int rc = key(b, k);
  return rc ? rc : str(b, s);
}

static int kbool(struct spaa_buf *b, const char *k, int v)
{
  int rc = key(b, k);
  return rc ? rc : spaa_buf_adds(b, v ? "true" : "false");
}

static int ku64(struct spaa_buf *b, const char *k, uint64_t v)
{
  int rc = key(b, k);
  return rc ? rc : spaa_canon_u64(b, v);
}

static int ki64(struct spaa_buf *b, const char *k, int64_t v)
{
  int rc = key(b, k);
  return rc ? rc : spaa_canon_i64(b, v);
}

/* "0x1a2b" (quoted) */
static int hexq(struct spaa_buf *b, uint64_t v)
{
  char t[SPAA_HEX_ADDR_SIZE + 1];
  size_t n;
  t[0] = '"';
  n = spaa_hex_addr(t + 1, v) + 1;
  t[n++] = '"';
  return spaa_buf_add(b, t, n);
}

static int khex(struct spaa_buf *b, const char *k, uint64_t v)
{
  int rc = key(b, k);
  return rc ? rc : hexq(b, v);
}

static int knum(struct spaa_buf *b, const char *k, struct spaa_num n)
{
  int rc = key(b, k);
  return rc ? rc : spaa_canon_num(b, n);
}

/* [{"metric":..,"value":..,"unit":..},...] */
static int weights(struct spaa_buf *b, const struct spaa_weights *w)
{
  size_t i;
  int rc = spaa_buf_add(b, "[", 1);
  for (i = 0; i < w->n && !rc; i++) {
    rc = spaa_buf_adds(b, i ? ",{\"metric\":" : "{\"metric\":");
    if (!rc)
      rc = str(b, w->v[i].metric);
    if (!rc)
      rc = knum(b, "value", w->v[i].value);
    if (!rc && w->v[i].unit)
      rc = kstr(b, "unit", w->v[i].unit);
    if (!rc)
      rc = spaa_buf_add(b, "}", 1);
  }
  return rc ? rc : spaa_buf_add(b, "]", 1);
}

static int write_event(struct spaa_buf *b, const struct spaa_event *e)
{
  int rc;
  TRY(spaa_buf_adds(b, "{\"name\":"));
  TRY(str(b, e->name ? e->name : ""));
  TRY(kstr(b, "kind", e->kind ? e->kind : ""));
  TRY(spaa_buf_adds(b, ",\"sampling\":{\"mode\":"));
  TRY(str(b, e->mode ? e->mode : ""));
  TRY(kstr(b, "primary_metric", e->primary_metric ? e->primary_metric : ""));
  if (e->has_sample_period)
    TRY(knum(b, "sample_period", e->sample_period));
  if (e->has_frequency_hz)
    TRY(knum(b, "frequency_hz", e->frequency_hz));
  TRY(spaa_canon_members(b, e->sampling_extra, NULL));
  TRY(spaa_buf_add(b, "}", 1));
  TRY(spaa_canon_members(b, e->extra, NULL));
  TRY(spaa_buf_add(b, "}", 1));
out:
  return rc;
}

static int write_header(struct spaa_buf *b, const struct spaa_header *h)
{
  size_t i;
  int rc;
  TRY(spaa_buf_adds(b, "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\""));
  TRY(kstr(b, "source_tool", h->source_tool ? h->source_tool : "unknown"));
  TRY(kstr(b, "frame_order", h->frame_order == SPAA_ROOT_TO_LEAF ? "root_to_leaf" : "leaf_to_root"));
  TRY(kstr(b, "stack_id_mode", h->id_mode == SPAA_IDS_LOCAL ? "local" : "content_addressable"));
  TRY(spaa_buf_adds(b, ",\"events\":["));
  for (i = 0; i < h->n_events; i++) {
    if (i)
      TRY(spaa_buf_add(b, ",", 1));
    TRY(write_event(b, &h->events[i]));
  }
  TRY(spaa_buf_add(b, "]", 1));
  if (h->has_time_range) {
    TRY(spaa_buf_adds(b, ",\"time_range\":{\"start\":"));
    TRY(spaa_canon_num(b, h->start));
    TRY(knum(b, "end", h->end));
    TRY(kstr(b, "unit", h->time_unit ? h->time_unit : "seconds"));
    TRY(spaa_buf_add(b, "}", 1));
  }
  if (h->source) {
    TRY(key(b, "source"));
    TRY(spaa_canon_json(b, h->source));
  }
  TRY(spaa_canon_members(b, h->extra, NULL));
  TRY(spaa_buf_add(b, "}\n", 2));
out:
  return rc;
}

static int write_dso(struct spaa_buf *b, const struct spaa_dso *d)
{
  int rc;
  TRY(spaa_buf_adds(b, "{\"type\":\"dso\",\"id\":"));
  TRY(spaa_canon_u64(b, d->id));
  TRY(kstr(b, "name", d->name ? d->name : ""));
  if (d->build_id)
    TRY(kstr(b, "build_id", d->build_id));
  TRY(kbool(b, "is_kernel", d->is_kernel));
  if (d->has_mapping) {
    TRY(spaa_buf_adds(b, ",\"x_mapping\":{\"start\":"));
    TRY(hexq(b, d->map_start));
    TRY(khex(b, "limit", d->map_limit));
    TRY(khex(b, "offset", d->map_offset));
    TRY(spaa_buf_add(b, "}", 1));
  }
  TRY(spaa_canon_members(b, d->extra, NULL));
  TRY(spaa_buf_add(b, "}\n", 2));
out:
  return rc;
}

static int write_frame(struct spaa_buf *b, const struct spaa_frame *f)
{
  int rc;
  TRY(spaa_buf_adds(b, "{\"type\":\"frame\",\"id\":"));
  TRY(spaa_canon_u64(b, f->id));
  TRY(kstr(b, "func", f->func ? f->func : ""));
  TRY(kbool(b, "func_resolved", f->func_resolved));
  if (f->has_dso)
    TRY(ku64(b, "dso", f->dso));
  if (f->has_ip)
    TRY(khex(b, "ip", f->ip));
  if (f->symoff)
    TRY(kstr(b, "symoff", f->symoff));
  if (f->srcline)
    TRY(kstr(b, "srcline", f->srcline));
  if (!f->srcline_resolved)
    TRY(kbool(b, "srcline_resolved", 0));
  TRY(kbool(b, "inlined", f->inlined));
  if (f->has_inline_depth)
    TRY(ku64(b, "inline_depth", f->inline_depth));
  TRY(kstr(b, "kind", f->kind ? f->kind : "unknown"));
  TRY(spaa_canon_members(b, f->extra, NULL));
  TRY(spaa_buf_add(b, "}\n", 2));
out:
  return rc;
}

static int write_thread(struct spaa_buf *b, const struct spaa_thread *t)
{
  int rc;
  TRY(spaa_buf_addf(b, "{\"type\":\"thread\",\"pid\":%" PRId64 ",\"tid\":%" PRId64, t->pid, t->tid));
  if (t->comm)
    TRY(kstr(b, "comm", t->comm));
  TRY(spaa_canon_members(b, t->extra, NULL));
  TRY(spaa_buf_add(b, "}\n", 2));
out:
  return rc;
}

static int skip_event_key(const char *k) { return strcmp(k, "event") == 0; }

static int write_stack(struct spaa_buf *b, const struct spaa_stack *s)
{
  size_t i;
  int rc;
  TRY(spaa_buf_adds(b, "{\"type\":\"stack\",\"id\":"));
  TRY(str(b, s->id));
  TRY(spaa_buf_adds(b, ",\"frames\":["));
  for (i = 0; i < s->n_frames; i++) {
    if (i)
      TRY(spaa_buf_add(b, ",", 1));
    TRY(spaa_canon_u64(b, s->frames[i]));
  }
  TRY(spaa_buf_add(b, "]", 1));
  if (s->stack_type)
    TRY(kstr(b, "stack_type", s->stack_type));
  if (s->n_related) {
    TRY(spaa_buf_adds(b, ",\"related_stacks\":["));
    for (i = 0; i < s->n_related; i++) {
      if (i)
        TRY(spaa_buf_add(b, ",", 1));
      TRY(str(b, s->related[i]));
    }
    TRY(spaa_buf_add(b, "]", 1));
  }
  TRY(spaa_buf_adds(b, ",\"context\":{\"event\":"));
  TRY(str(b, s->event ? s->event : ""));
  TRY(spaa_canon_members(b, s->context, skip_event_key));
  TRY(spaa_buf_adds(b, "},\"weights\":"));
  TRY(weights(b, &s->weights));
  if (s->has_exclusive) {
    TRY(spaa_buf_adds(b, ",\"exclusive\":{\"frame\":"));
    TRY(spaa_canon_u64(b, s->excl_frame));
    TRY(spaa_buf_adds(b, ",\"weights\":"));
    TRY(weights(b, &s->excl_weights));
    TRY(spaa_buf_add(b, "}", 1));
  }
  TRY(spaa_canon_members(b, s->extra, NULL));
  TRY(spaa_buf_add(b, "}\n", 2));
out:
  return rc;
}

static int write_sample(struct spaa_buf *b, const struct spaa_sample *s)
{
  int rc;
  TRY(spaa_buf_adds(b, "{\"type\":\"sample\""));
  if (s->has_timestamp)
    TRY(knum(b, "timestamp", s->timestamp));
  if (s->has_pid)
    TRY(ki64(b, "pid", s->pid));
  if (s->has_tid)
    TRY(ki64(b, "tid", s->tid));
  if (s->has_cpu)
    TRY(ki64(b, "cpu", s->cpu));
  if (s->event)
    TRY(kstr(b, "event", s->event));
  if (s->has_period)
    TRY(knum(b, "period", s->period));
  TRY(kstr(b, "stack_id", s->stack_id ? s->stack_id : ""));
  if (s->weights.n) {
    TRY(key(b, "x_weights"));
    TRY(weights(b, &s->weights));
  }
  if (s->context) {
    TRY(key(b, "context"));
    TRY(spaa_canon_json(b, s->context));
  }
  TRY(spaa_canon_members(b, s->extra, NULL));
  TRY(spaa_buf_add(b, "}\n", 2));
out:
  return rc;
}

static int write_window(struct spaa_buf *b, const struct spaa_window *w)
{
  int rc;
  TRY(spaa_buf_adds(b, "{\"type\":\"window\",\"id\":"));
  TRY(str(b, w->id ? w->id : ""));
  TRY(knum(b, "start", w->start));
  TRY(knum(b, "end", w->end));
  if (w->unit)
    TRY(kstr(b, "unit", w->unit));
  TRY(key(b, "by_stack"));
  if (w->by_stack)
    TRY(spaa_canon_json(b, w->by_stack));
  else
    TRY(spaa_buf_add(b, "[]", 2));
  TRY(spaa_canon_members(b, w->extra, NULL));
  TRY(spaa_buf_add(b, "}\n", 2));
out:
  return rc;
}

#define EACH(arr, n, fn)                                                                      \
  for (i = 0; i < (n); i++) {                                                                 \
    TRY(fn(&w.b, &(arr)[i]));                                                                 \
    if (w.b.len >= FLUSH_AT)                                                                  \
      TRY(w_flush(&w));                                                                       \
  }

int spaa_write(const struct spaa_profile *p, spaa_sink_cb sink, void *ctx, struct spaa_err *err)
{
  struct writer w;
  size_t i;
  int rc;
  w.sink = sink;
  w.ctx = ctx;
  spaa_buf_init(&w.b, 0);
  TRY(write_header(&w.b, &p->header));
  EACH(p->dsos, p->n_dsos, write_dso);
  EACH(p->frames, p->n_frames, write_frame);
  EACH(p->threads, p->n_threads, write_thread);
  EACH(p->stacks, p->n_stacks, write_stack);
  for (i = 0; i < spaa_profile_n_samples(p); i++) { /* records, then compact ones */
    struct spaa_sample_buf sb;
    TRY(write_sample(&w.b, spaa_profile_sample(p, i, &sb)));
    if (w.b.len >= FLUSH_AT)
      TRY(w_flush(&w));
  }
  EACH(p->windows, p->n_windows, write_window);
  TRY(w_flush(&w));
out:
  spaa_buf_free(&w.b);
  if (rc)
    spaa_err_set(err, rc, 0, 0, "writing SPAA: %s", spaa_err_default(rc));
  return rc;
}

int spaa_export_buf(spaa_export_fn fn, const struct spaa_profile *p,
                    const struct spaa_export_opts *o, int zstd_level, struct spaa_buf *out,
                    struct spaa_err *err)
{
  struct spaa_csink *z = NULL;
  int rc;
  if (zstd_level <= 0)
    return fn(p, o, spaa_buf_sink, out, err);
  if ((rc = spaa_csink_open(SPAA_CODING_ZSTD, zstd_level, spaa_buf_sink, out, &z, err)))
    return rc;
  if (!(rc = fn(p, o, spaa_csink_write, z, err)))
    rc = spaa_csink_finish(z, err);
  spaa_csink_free(z);
  return rc;
}

int spaa_write_buf(const struct spaa_profile *p, int zstd_level, struct spaa_buf *out,
                   struct spaa_err *err)
{
  return spaa_export_buf(spaa_export_spaa, p, NULL, zstd_level, out, err);
}
