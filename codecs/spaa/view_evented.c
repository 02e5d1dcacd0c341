/* speedscope's "evented" profiles from timestamped samples (Sentry's transaction profiles and
 * chunks carry one timestamp per sample and thread): one profile per thread, each sample
 * lasting until that thread's next one, frames opened and closed where consecutive stacks
 * part. The frames are the set's names, as in the sampled export. */
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "spaa/view.h"

#define EV_FLUSH (1 << 16)
#define NO_STACK UINT32_MAX /* a tick whose stack is not in the set */

/* One timestamped sample of the event: its thread, its time and its stack in the set. */
struct tick {
  int64_t tid;
  int64_t ti;     /* integer timestamps, relative to the first (exact) */
  double tf;      /* float timestamps, relative to the first */
  size_t seq;     /* order in the file, for equal times */
  uint32_t vs;    /* index in v->stacks */
};

static int tick_cmp(const void *a, const void *b)
{
  const struct tick *x = a, *y = b;
  if (x->tid != y->tid)
    return x->tid < y->tid ? -1 : 1;
  if (x->ti != y->ti)
    return x->ti < y->ti ? -1 : 1;
  if (x->tf != y->tf)
    return x->tf < y->tf ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A timestamped sample of `event`; one without an event belongs to the profile's only one. */
static int sample_of(const struct spaa_profile *p, const struct spaa_sample *s,
                     const char *event)
{
  if (!s->has_timestamp)
    return 0;
  if (s->event)
    return strcmp(s->event, event) == 0;
  return p->header.n_events == 1 && p->header.events[0].name &&
         strcmp(p->header.events[0].name, event) == 0;
}

int spaa_view_has_timeline(const struct spaa_profile *p, const char *event)
{
  const char *e = event ? event : p->header.n_events ? p->header.events[0].name : NULL;
  size_t i;
  int ticks = 0;
  for (i = 0; e && i < p->n_samples; i++)
    if (sample_of(p, &p->samples[i], e)) {
      if (p->samples[i].weights.n) /* it measures something: not a tick */
        return 0;
      ticks = 1;
    }
  return ticks;
}

/* The timestamped samples of `event` whose stack is in v, sorted by thread then time. */
static int collect(const struct spaa_vset *v, const struct spaa_profile *p, const char *event,
                   struct tick **out, size_t *n, int *floats)
{
  struct spaa_strmap ix;
  struct tick *t;
  size_t i, k, m = 0;
  int64_t base_i = 0;
  double base_f = 0;
  int have = 0, rc = 0;
  *out = NULL;
  *n = 0;
  *floats = 0;
  spaa_strmap_init(&ix);
  for (i = 0; i < v->n_stacks && !rc; i++)
    if (v->stacks[i].id[0] &&
        spaa_strmap_put(&ix, v->stacks[i].id, strlen(v->stacks[i].id), i, NULL) < 0)
      rc = SPAA_E_NOMEM;
  if (rc || !(t = malloc((p->n_samples ? p->n_samples : 1) * sizeof(*t)))) {
    spaa_strmap_free(&ix);
    return SPAA_E_NOMEM;
  }
  for (i = 0; i < p->n_samples; i++) {
    const struct spaa_sample *s = &p->samples[i];
    if (!sample_of(p, s, event))
      continue;
    if (!spaa_strmap_get(&ix, s->stack_id, strlen(s->stack_id), &k))
      k = NO_STACK; /* a stack the filters left out: a gap */
    *floats |= s->timestamp.is_float;
    if (!have || s->timestamp.i < base_i)
      base_i = s->timestamp.i;
    if (!have || spaa_num_as_double(s->timestamp) < base_f)
      base_f = spaa_num_as_double(s->timestamp);
    have = 1;
    t[m].tid = s->has_tid ? s->tid : 0;
    t[m].ti = s->timestamp.i;
    t[m].tf = spaa_num_as_double(s->timestamp);
    t[m].seq = i;
    t[m++].vs = (uint32_t)k;
  }
  for (i = 0; i < m; i++) { /* relative times: epoch nanoseconds do not fit a double */
    t[i].ti = *floats ? 0 : t[i].ti - base_i;
    t[i].tf = *floats ? t[i].tf - base_f : (double)t[i].ti;
  }
  qsort(t, m, sizeof(*t), tick_cmp);
  spaa_strmap_free(&ix);
  *out = t;
  *n = m;
  return 0;
}

struct evw {
  struct spaa_buf b;
  spaa_sink_cb sink;
  void *ctx;
  int rc;
  int first_event;
  const uint32_t *map; /* name -> frame index (spaa_view__used_names) */
};

static void ev_flush(struct evw *w, int force)
{
  if (!w->rc && w->b.len && (force || w->b.len >= EV_FLUSH)) {
    w->rc = w->sink(w->ctx, w->b.p, w->b.len);
    w->b.len = 0;
  }
}

static void ev_event(struct evw *w, char type, uint32_t frame, double at)
{
  if (w->rc)
    return;
  w->rc = spaa_buf_addf(&w->b, "%s{\"type\":\"%c\",\"frame\":%u,\"at\":",
                        w->first_event ? "" : ",", type, (unsigned)w->map[frame]);
  w->rc = w->rc ? w->rc : spaa_view_num(&w->b, at);
  w->rc = w->rc ? w->rc : spaa_buf_adds(&w->b, "}");
  w->first_event = 0;
  ev_flush(w, 0);
}

static const char *thread_name(const struct spaa_profile *p, int64_t tid, char *buf, size_t n)
{
  size_t i;
  for (i = 0; i < p->n_threads; i++)
    if (p->threads[i].tid == tid && p->threads[i].comm && p->threads[i].comm[0])
      return p->threads[i].comm;
  snprintf(buf, n, "thread %lld", (long long)tid);
  return buf;
}

/* The shortest positive gap between two samples of one thread: how long a thread's only
 * sample lasts. 0 when there is none (interval_of then). */
static double shortest_gap(const struct tick *t, size_t n)
{
  double best = 0;
  size_t i;
  for (i = 1; i < n; i++)
    if (t[i].tid == t[i - 1].tid && t[i].tf > t[i - 1].tf &&
        (best == 0 || t[i].tf - t[i - 1].tf < best))
      best = t[i].tf - t[i - 1].tf;
  return best;
}

/* How long a sample lasts when no thread has two (so no gap to go by): the event's sampling
 * interval in the profile's time unit, from its frequency, or from its period when the
 * period's unit (x_otel_period_unit, as the OTLP converter records it) is that time unit;
 * else 0 (the sample then has no length). */
static double interval_of(const struct spaa_profile *p, const char *event)
{
  static const struct {
    const char *unit;
    double per_second;
  } units[] = {{"nanoseconds", 1e9}, {"microseconds", 1e6}, {"milliseconds", 1e3},
               {"seconds", 1}};
  const struct spaa_event *e = NULL;
  double per_second = 0;
  size_t i;
  for (i = 0; i < p->header.n_events && !e; i++)
    if (strcmp(p->header.events[i].name, event) == 0)
      e = &p->header.events[i];
  for (i = 0; p->header.time_unit && i < sizeof(units) / sizeof(units[0]); i++)
    if (strcmp(p->header.time_unit, units[i].unit) == 0)
      per_second = units[i].per_second;
  if (!e || !per_second)
    return 0;
  if (e->has_frequency_hz && spaa_num_as_double(e->frequency_hz) > 0)
    return per_second / spaa_num_as_double(e->frequency_hz);
  if (e->has_sample_period) {
    const char *u = json_string_value(json_object_get(e->sampling_extra, "x_otel_period_unit"));
    if (u && strcmp(u, p->header.time_unit) == 0 && spaa_num_as_double(e->sample_period) > 0)
      return spaa_num_as_double(e->sample_period);
  }
  return 0;
}

/* One thread's profile: ticks t[0..n) of one tid. */
static void ev_thread(struct evw *w, const struct spaa_vset *v, const struct spaa_profile *p,
                      const struct tick *t, size_t n, const char *unit, double lone)
{
  const struct spaa_vstack *prev = NULL;
  double end = t[n - 1].tf + (n > 1 ? t[n - 1].tf - t[n - 2].tf : lone);
  char nb[48];
  size_t i, c, j;
  w->rc = w->rc ? w->rc : spaa_buf_adds(&w->b, "{\"type\":\"evented\",\"name\":");
  w->rc = w->rc ? w->rc : spaa_view_jstr(&w->b, thread_name(p, t[0].tid, nb, sizeof(nb)));
  w->rc = w->rc ? w->rc : spaa_buf_addf(&w->b, ",\"unit\":\"%s\",\"startValue\":", unit);
  w->rc = w->rc ? w->rc : spaa_view_num(&w->b, t[0].tf);
  w->rc = w->rc ? w->rc : spaa_buf_adds(&w->b, ",\"endValue\":");
  w->rc = w->rc ? w->rc : spaa_view_num(&w->b, end);
  w->rc = w->rc ? w->rc : spaa_buf_adds(&w->b, ",\"events\":[");
  w->first_event = 1;
  for (i = 0; i <= n && !w->rc; i++) {
    const struct spaa_vstack *s = i < n && t[i].vs != NO_STACK ? &v->stacks[t[i].vs] : NULL;
    double at = i < n ? t[i].tf : end;
    for (c = 0; prev && s && c < prev->n && c < s->n && prev->path[c] == s->path[c]; c++)
      ;
    for (j = prev ? prev->n : 0; j > c; j--) /* close the old frames, innermost first */
      ev_event(w, 'C', prev->path[j - 1], at);
    for (j = c; s && j < s->n; j++)
      ev_event(w, 'O', s->path[j], at);
    prev = s;
  }
  w->rc = w->rc ? w->rc : spaa_buf_adds(&w->b, "]}");
}

int spaa_view_speedscope_evented(const struct spaa_vset *v, const struct spaa_profile *p,
                                 const char *event, const char *name, spaa_sink_cb sink,
                                 void *ctx, struct spaa_err *err)
{
  static const char *const units[] = {"nanoseconds", "microseconds", "milliseconds", "seconds"};
  const char *e = event ? event : p->header.n_events ? p->header.events[0].name : "";
  const char *unit = "none";
  struct evw w = {.sink = sink, .ctx = ctx};
  struct tick *t = NULL;
  uint32_t *map = NULL;
  size_t n = 0, i, start, k = 0;
  double lone;
  int floats;
  for (i = 0; p->header.time_unit && i < sizeof(units) / sizeof(units[0]); i++)
    if (strcmp(p->header.time_unit, units[i]) == 0)
      unit = units[i];
  spaa_buf_init(&w.b, 0);
  if ((w.rc = collect(v, p, e, &t, &n, &floats)))
    goto out;
  if (!(w.map = map = spaa_view__used_names(v))) {
    w.rc = SPAA_E_NOMEM;
    goto out;
  }
  w.rc = spaa_buf_adds(&w.b, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
                             "\"exporter\":\"spaa-relay\",\"name\":");
  w.rc = w.rc ? w.rc : spaa_view_jstr(&w.b, name);
  w.rc = w.rc ? w.rc : spaa_buf_adds(&w.b, ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
  for (i = 0, k = 0; i < v->n_names && !w.rc; i++) {
    if (map[i] == UINT32_MAX)
      continue;
    w.rc = spaa_buf_adds(&w.b, k++ ? ",{\"name\":" : "{\"name\":");
    w.rc = w.rc ? w.rc : spaa_view_jstr(&w.b, v->names[i]);
    w.rc = w.rc ? w.rc : spaa_buf_adds(&w.b, "}");
    ev_flush(&w, 0);
  }
  w.rc = w.rc ? w.rc : spaa_buf_adds(&w.b, "]},\"profiles\":[");
  k = 0;
  if (!(lone = shortest_gap(t, n)))
    lone = interval_of(p, e);
  for (start = 0; start < n && !w.rc; start = i, k++) {
    for (i = start; i < n && t[i].tid == t[start].tid; i++)
      ;
    if (k)
      w.rc = spaa_buf_adds(&w.b, ",");
    ev_thread(&w, v, p, t + start, i - start, unit, lone);
  }
  w.rc = w.rc ? w.rc : spaa_buf_adds(&w.b, "]}\n");
  ev_flush(&w, 1);
out:
  free(t);
  free(map);
  spaa_buf_free(&w.b);
  if (w.rc && !err->code)
    spaa_err_set(err, w.rc, 0, 0, "writing speedscope: %s", spaa_err_default(w.rc));
  return w.rc;
}
