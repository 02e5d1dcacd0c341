/* The "pprof" exporter: one event of a SPAA model as a gzipped perftools.profiles.Profile.
 * One sample type per metric (the source's types and order when the profile came from pprof),
 * mappings from dsos, functions and file:line from frames (unresolved ones with a srcline
 * too), inline frames folded back into one location, labels and period restored from the
 * x_pprof_* keys the converter keeps (an OTLP source's period type from its x_otel_ keys),
 * the rest of a stack's scalar context as labels too (docs/exports.md). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"
#include "base/idmap.h"
#include "pprof/pprof.h"
#include "pprof_int.h"
#include "spaa/canon.h"

#define LABEL_PREFIX "x_pprof_label_"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__ValueType PValueType;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;

/* Writer state: the message under construction and everything it points to. */
struct pw {
  const struct spaa_profile *p;
  const struct spaa_event *e;
  PProfile m;
  void **owned;                 /* every allocation, freed at the end */
  size_t n_owned, cap_owned;
  struct spaa_strmap strs;      /* string -> index in the string table */
  size_t cap_str;
  struct spaa_strmap fns;       /* function key -> index in m.function */
  size_t cap_fn;
  struct spaa_strmap locs;      /* location key -> index in m.location */
  size_t cap_loc;
  size_t cap_sample;
  struct spaa_idmap frame_ix;   /* frame id -> index in p->frames */
  struct spaa_idmap dso_map;    /* dso id -> mapping id (0: none) */
  const char **metrics;         /* metric of each sample type */
  int rc;                       /* first failure (SPAA_E_NOMEM) */
};

static void *pw_keep(struct pw *w, void *ptr)
{
  if (!ptr) {
    w->rc = SPAA_E_NOMEM;
    return NULL;
  }
  if (w->n_owned == w->cap_owned) {
    size_t cap = w->cap_owned ? w->cap_owned * 2 : 256;
    void **a = realloc(w->owned, cap * sizeof(*a));
    if (!a) {
      free(ptr);
      w->rc = SPAA_E_NOMEM;
      return NULL;
    }
    w->owned = a;
    w->cap_owned = cap;
  }
  return w->owned[w->n_owned++] = ptr;
}

static void *pw_alloc(struct pw *w, size_t size) { return pw_keep(w, calloc(1, size ? size : 1)); }

/* Grow *arr (elements of `size`) so that index n fits. 0 or -1. */
static int pw_grow(void **arr, size_t *cap, size_t n, size_t size)
{
  void *a;
  size_t c;
  if (n < *cap)
    return 0;
  c = *cap ? *cap * 2 : 64;
  while (c <= n)
    c *= 2;
  if (!(a = realloc(*arr, c * size)))
    return -1;
  *arr = a;
  *cap = c;
  return 0;
}

/* The string table index of s (added when new). */
static int64_t pw_str(struct pw *w, const char *s)
{
  size_t ix, len;
  char *own;
  if (!s || !*s)
    return 0;
  len = strlen(s);
  if (spaa_strmap_get(&w->strs, s, len, &ix))
    return (int64_t)ix;
  if (pw_grow((void **)&w->m.string_table, &w->cap_str, w->m.n_string_table,
              sizeof(*w->m.string_table)) ||
      !(own = pw_keep(w, strdup(s))) ||
      spaa_strmap_put(&w->strs, own, len, w->m.n_string_table, NULL) < 0) {
    w->rc = SPAA_E_NOMEM;
    return 0;
  }
  w->m.string_table[w->m.n_string_table].data = (uint8_t *)own;
  w->m.string_table[w->m.n_string_table].len = len;
  return (int64_t)w->m.n_string_table++;
}

static const json_t *jget(const json_t *o, const char *k) { return o ? json_object_get(o, k) : NULL; }
static int64_t jint(const json_t *v) { return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0; }

static PValueType *value_type(struct pw *w, const char *type, const char *unit)
{
  PValueType *vt = pw_alloc(w, sizeof(*vt));
  if (vt) {
    perftools__profiles__value_type__init(vt);
    vt->type = pw_str(w, type);
    vt->unit = pw_str(w, unit);
  }
  return vt;
}

/* Sample types: the x_pprof_sample_types the converter kept (metric names made as it makes
 * them), else the metrics of the event's stacks in order of first appearance. */
static int sample_types(struct pw *w)
{
  const json_t *st = jget(w->p->header.extra, "x_pprof_sample_types");
  size_t i, j, k, n = json_is_array(st) ? json_array_size(st) : 0, cap = n ? n : 8;
  char tmp[160];
  w->metrics = pw_alloc(w, cap * sizeof(*w->metrics));
  w->m.sample_type = pw_alloc(w, cap * sizeof(*w->m.sample_type));
  if (!w->metrics || !w->m.sample_type)
    return SPAA_E_NOMEM;
  for (i = 0; i < n; i++) {
    const char *type = json_string_value(jget(json_array_get(st, i), "type"));
    const char *unit = json_string_value(jget(json_array_get(st, i), "unit"));
    int dup = 0;
    for (j = 0; type && j < i; j++)
    {
      const char *t = json_string_value(jget(json_array_get(st, j), "type"));
      dup |= t && strcmp(t, type) == 0;
    }
    if (!type || !*type)
      snprintf(tmp, sizeof(tmp), "sample_type_%zu", i);
    else if (dup)
      snprintf(tmp, sizeof(tmp), "%s_%zu", type, i);
    else
      snprintf(tmp, sizeof(tmp), "%s", type);
    w->metrics[i] = pw_keep(w, strdup(tmp));
    w->m.sample_type[i] = value_type(w, type, unit);
  }
  for (i = 0; !n && i < w->p->n_stacks; i++) {
    const struct spaa_stack *s = &w->p->stacks[i];
    if (!s->event || strcmp(s->event, w->e->name))
      continue;
    for (j = 0; j < s->weights.n; j++) {
      for (k = 0; k < w->m.n_sample_type && strcmp(w->metrics[k], s->weights.v[j].metric); k++)
        ;
      if (k < w->m.n_sample_type)
        continue;
      if (k == cap) {
        const char **a = pw_alloc(w, 2 * cap * sizeof(*a));
        PValueType **b = pw_alloc(w, 2 * cap * sizeof(*b));
        if (!a || !b)
          return SPAA_E_NOMEM;
        memcpy(a, w->metrics, cap * sizeof(*a));
        memcpy(b, w->m.sample_type, cap * sizeof(*b));
        w->metrics = a;
        w->m.sample_type = b;
        cap *= 2;
      }
      w->metrics[k] = s->weights.v[j].metric;
      w->m.sample_type[w->m.n_sample_type++] =
          value_type(w, s->weights.v[j].metric, s->weights.v[j].unit ? s->weights.v[j].unit : "count");
    }
  }
  if (n)
    w->m.n_sample_type = n;
  if (!w->m.n_sample_type && w->e->primary_metric) { /* no stacks: still name the type */
    w->metrics[0] = w->e->primary_metric;
    w->m.sample_type[w->m.n_sample_type++] = value_type(w, w->e->primary_metric, "count");
  }
  return w->rc;
}

/* Period, time, comments and the other header fields the converter keeps. The period's type
 * and unit: pprof's own (x_pprof_period), else OTLP's (the event's x_otel_period_type and
 * _unit), else the primary metric counted for a period, cpu nanoseconds for a frequency. */
static int header_fields(struct pw *w)
{
  const json_t *x = w->p->header.extra, *per = jget(x, "x_pprof_period"), *c;
  const json_t *otel_type = jget(w->e->sampling_extra, "x_otel_period_type");
  const json_t *otel_unit = jget(w->e->sampling_extra, "x_otel_period_unit");
  const char *def = json_string_value(jget(x, "x_pprof_default_sample_type"));
  int64_t start, end;
  size_t i;
  if (json_is_object(per)) {
    w->m.period_type = value_type(w, json_string_value(jget(per, "type")),
                                  json_string_value(jget(per, "unit")));
    w->m.period = jint(jget(per, "value"));
  } else if (json_is_string(otel_type) || json_is_string(otel_unit)) {
    /* OTLP's period_type as it came (cpu/nanoseconds: 10000000 is 10 ms, not 10^7 counts) */
    w->m.period_type = value_type(w, json_string_value(otel_type), json_string_value(otel_unit));
    if (w->e->has_sample_period && !w->e->sample_period.is_float)
      w->m.period = w->e->sample_period.i;
  } else if (w->e->has_sample_period && !w->e->sample_period.is_float) {
    w->m.period_type = value_type(w, w->e->primary_metric, "count");
    w->m.period = w->e->sample_period.i;
  } else if (w->e->has_frequency_hz && spaa_num_as_double(w->e->frequency_hz) > 0) {
    w->m.period_type = value_type(w, "cpu", "nanoseconds");
    w->m.period = (int64_t)(1e9 / spaa_num_as_double(w->e->frequency_hz));
  }
  if (jget(x, "x_pprof_time_nanos")) {
    w->m.time_nanos = jint(jget(x, "x_pprof_time_nanos"));
    w->m.duration_nanos = jint(jget(x, "x_pprof_duration_nanos"));
  } else if (spaa_header_range_ns(w->p, &start, &end) == 0) {
    w->m.time_nanos = start;
    w->m.duration_nanos = end - start;
  }
  for (i = 0; i < w->m.n_sample_type; i++) /* the primary type is the default one */
    if (w->e->primary_metric && strcmp(w->metrics[i], w->e->primary_metric) == 0)
      w->m.default_sample_type = w->m.sample_type[i]->type;
  if (def)
    w->m.default_sample_type = pw_str(w, def);
  if (json_is_array(c = jget(x, "x_pprof_comments"))) {
    w->m.comment = pw_alloc(w, (json_array_size(c) + 1) * sizeof(*w->m.comment));
    for (i = 0; w->m.comment && i < json_array_size(c); i++)
      w->m.comment[w->m.n_comment++] = pw_str(w, json_string_value(json_array_get(c, i)));
  }
  w->m.drop_frames = pw_str(w, json_string_value(jget(x, "x_pprof_drop_frames")));
  w->m.keep_frames = pw_str(w, json_string_value(jget(x, "x_pprof_keep_frames")));
  w->m.doc_url = pw_str(w, json_string_value(jget(x, "x_pprof_doc_url")));
  return w->rc;
}

/* One mapping per dso, but the converter's own "[unknown]" stand-in for mapping id 0. */
static int mappings(struct pw *w)
{
  size_t i;
  w->m.mapping = pw_alloc(w, (w->p->n_dsos + 1) * sizeof(*w->m.mapping));
  for (i = 0; w->m.mapping && i < w->p->n_dsos; i++) {
    const struct spaa_dso *d = &w->p->dsos[i];
    const json_t *x = d->extra;
    const char *bid = d->build_id ? d->build_id : json_string_value(jget(x, "x_pprof_build_id"));
    PMapping *mp;
    if (strcmp(d->name, "[unknown]") == 0 && !bid && !d->has_mapping &&
        !jget(x, "x_pprof_mapping_id")) {
      if (spaa_idmap_put(&w->dso_map, d->id, 0, NULL) < 0)
        return SPAA_E_NOMEM;
      continue;
    }
    if (!(mp = pw_alloc(w, sizeof(*mp))))
      return SPAA_E_NOMEM;
    perftools__profiles__mapping__init(mp);
    mp->id = w->m.n_mapping + 1;
    mp->memory_start = d->map_start;
    mp->memory_limit = d->map_limit;
    mp->file_offset = d->map_offset;
    mp->filename = pw_str(w, d->name);
    mp->build_id = pw_str(w, bid);
    if (jget(x, "x_pprof_mapping_id")) { /* from pprof: its own flags */
      mp->has_functions = json_is_true(jget(x, "x_pprof_has_functions"));
      mp->has_filenames = json_is_true(jget(x, "x_pprof_has_filenames"));
      mp->has_line_numbers = json_is_true(jget(x, "x_pprof_has_line_numbers"));
      mp->has_inline_frames = json_is_true(jget(x, "x_pprof_has_inline_frames"));
    } else { /* symbolized by its source: pprof tools need not try again */
      mp->has_functions = mp->has_filenames = mp->has_line_numbers = 1;
      mp->has_inline_frames = 1;
    }
    w->m.mapping[w->m.n_mapping++] = mp;
    if (spaa_idmap_put(&w->dso_map, d->id, mp->id, NULL) < 0)
      return SPAA_E_NOMEM;
  }
  return w->rc;
}

/* The function id of frame f's line: name, system name, file and start line. An unresolved
 * frame's function is named as the SPAA names it ("[unknown]"), but one named by its address
 * gets no name: the location carries the address. */
static uint64_t function_id(struct pw *w, const struct spaa_frame *f, const char *file,
                            size_t file_len)
{
  const char *name = f->func_resolved || !f->has_ip ? f->func : "";
  const char *sys = json_string_value(jget(f->extra, "x_pprof_system_name"));
  int64_t start = jint(jget(f->extra, "x_pprof_start_line"));
  char *key;
  size_t ix, len;
  PFunction *fn;
  if (!(key = pw_keep(w, malloc(strlen(name) + file_len + (sys ? strlen(sys) : 0) + 48))))
    return 0;
  len = (size_t)sprintf(key, "%s%c%.*s%c%s%c%" PRId64, name, 0, (int)file_len, file ? file : "",
                        0, sys ? sys : "", 0, start);
  if (spaa_strmap_get(&w->fns, key, len, &ix))
    return w->m.function[ix]->id;
  if (pw_grow((void **)&w->m.function, &w->cap_fn, w->m.n_function, sizeof(*w->m.function)) ||
      !(fn = pw_alloc(w, sizeof(*fn))) ||
      spaa_strmap_put(&w->fns, key, len, w->m.n_function, NULL) < 0) {
    w->rc = SPAA_E_NOMEM;
    return 0;
  }
  perftools__profiles__function__init(fn);
  fn->id = w->m.n_function + 1;
  fn->name = pw_str(w, name);
  /* only a system name the source gave: one copied from the name makes `go tool pprof`
   * treat the name as mangled C++ and cut "<module>" or "[unknown]" out of it */
  fn->system_name = sys ? pw_str(w, sys) : 0;
  if (file) {
    char *fcopy = pw_keep(w, strndup(file, file_len));
    fn->filename = fcopy ? pw_str(w, fcopy) : 0;
  }
  fn->start_line = start;
  w->m.function[w->m.n_function++] = fn;
  return fn->id;
}

/* Where a srcline's line number starts: after its last ':' when what follows is a decimal
 * number (negative too: pprof keeps lines as given), else NULL (the whole srcline is the
 * file, as OTLP writes a file without a line). */
static const char *srcline_line(const char *sl)
{
  const char *colon = sl ? strrchr(sl, ':') : NULL, *d;
  if (!colon)
    return NULL;
  d = colon + 1 + (colon[1] == '-');
  if (!*d)
    return NULL;
  for (; *d; d++)
    if (*d < '0' || *d > '9')
      return NULL;
  return colon + 1;
}

/* Whether frame f is written as a line of its location: a resolved one, and an unresolved
 * one with a srcline (a Sentry frame with no function name: "[unknown]" at app.js:20).
 * Without its line that one is a location with neither function nor line, which pprof tools
 * merge with every other such location of its mapping (they key locations by address,
 * mapping and lines). An unresolved frame without a srcline is its address alone, as a
 * pprof location without lines is. */
static int frame_has_line(const struct spaa_frame *f) { return f->func_resolved || f->srcline; }

/* One line of a location from frame f: "file:line" split before the line, so ":135" (a
 * line without a file) is line 135 of a function with no filename. */
static PLine *frame_line(struct pw *w, const struct spaa_frame *f)
{
  const char *num = srcline_line(f->srcline);
  size_t flen = !f->srcline ? 0 : num ? (size_t)(num - 1 - f->srcline) : strlen(f->srcline);
  PLine *ln = pw_alloc(w, sizeof(*ln));
  if (!ln)
    return NULL;
  perftools__profiles__line__init(ln);
  ln->function_id = function_id(w, f, flen ? f->srcline : NULL, flen);
  ln->line = num ? strtoll(num, NULL, 10) : 0;
  ln->column = jint(jget(f->extra, "x_pprof_column"));
  return ln;
}

/* The location id of frames fr[0..n) (leaf first: inline frames, then the physical one). */
static uint64_t location_id(struct pw *w, const size_t *fr, size_t n)
{
  const struct spaa_frame *phys = &w->p->frames[fr[n - 1]];
  char key[24 * 64];
  size_t len = 0, i, ix, mid = 0;
  PLocation *loc;
  char *own;
  for (i = 0; i < n && len + 24 < sizeof(key); i++)
    len += (size_t)snprintf(key + len, sizeof(key) - len, "%zu,", fr[i]);
  if (spaa_strmap_get(&w->locs, key, len, &ix))
    return w->m.location[ix]->id;
  if (pw_grow((void **)&w->m.location, &w->cap_loc, w->m.n_location, sizeof(*w->m.location)) ||
      !(own = pw_keep(w, strndup(key, len))) || !(loc = pw_alloc(w, sizeof(*loc))) ||
      !(loc->line = pw_alloc(w, n * sizeof(*loc->line))) ||
      spaa_strmap_put(&w->locs, own, len, w->m.n_location, NULL) < 0) {
    w->rc = SPAA_E_NOMEM;
    return 0;
  }
  {
    PLine **lines = loc->line;
    perftools__profiles__location__init(loc);
    loc->line = lines;
  }
  loc->id = w->m.n_location + 1;
  if (phys->has_dso && spaa_idmap_get(&w->dso_map, phys->dso, &mid))
    loc->mapping_id = mid;
  loc->address = phys->has_ip ? phys->ip : 0;
  loc->is_folded = json_is_true(jget(phys->extra, "x_pprof_is_folded"));
  for (i = 0; i < n; i++)
    if (frame_has_line(&w->p->frames[fr[i]]) &&
        (loc->line[loc->n_line] = frame_line(w, &w->p->frames[fr[i]])))
      loc->n_line++;
  w->m.location[w->m.n_location++] = loc;
  return loc->id;
}

/* A label of sample sm with key k (not yet in the string table). */
static PLabel *new_label(struct pw *w, PSample *sm, const char *k)
{
  PLabel *l = pw_alloc(w, sizeof(*l));
  if (!l)
    return NULL;
  perftools__profiles__label__init(l);
  l->key = pw_str(w, k);
  sm->label[sm->n_label++] = l;
  return l;
}

static int key_cmp(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A context value that becomes a label of its own: a string, number or boolean. */
static int scalar(const json_t *v)
{
  return json_is_string(v) || json_is_number(v) || json_is_boolean(v);
}

/* The labels of a stack's context. First the x_pprof_label_<key> the converter keeps (a
 * string, {"value","unit"} or an array of those), in the context's order: a profile that came
 * as pprof gets its labels back as they were. Then every other scalar key under its own name
 * (x_otel_attr_thread.name, x_otel_trace_id...), in bytewise key order: a string as a string
 * label, an integer as a numeric one, a real or a boolean as a string (as SPAA writes it).
 * Arrays, objects and null are left out; so is "event" (the stack's event, not context). */
static int sample_labels(struct pw *w, PSample *sm, const json_t *ctx)
{
  const char *k, **other = NULL;
  json_t *v;
  size_t n = 0, n_other = 0, i, plen = strlen(LABEL_PREFIX);
  struct spaa_buf num;
  int rc = 0;
  json_object_foreach((json_t *)ctx, k, v) {
    if (strncmp(k, LABEL_PREFIX, plen) == 0)
      n += json_is_array(v) ? json_array_size(v) : 1;
    else if (scalar(v) && strcmp(k, "event") != 0)
      n_other++;
  }
  if (!n && !n_other)
    return 0;
  if (!(sm->label = pw_alloc(w, (n + n_other) * sizeof(*sm->label))) ||
      (n_other && !(other = malloc(n_other * sizeof(*other)))))
    return SPAA_E_NOMEM;
  n_other = 0;
  json_object_foreach((json_t *)ctx, k, v) {
    size_t cnt = json_is_array(v) ? json_array_size(v) : 1;
    if (strncmp(k, LABEL_PREFIX, plen) != 0) {
      if (scalar(v) && strcmp(k, "event") != 0)
        other[n_other++] = k;
      continue;
    }
    for (i = 0; i < cnt; i++) {
      const json_t *item = json_is_array(v) ? json_array_get(v, i) : v;
      PLabel *l = new_label(w, sm, k + plen);
      if (!l) {
        free(other);
        return SPAA_E_NOMEM;
      }
      if (json_is_string(item)) {
        l->str = pw_str(w, json_string_value(item));
      } else {
        l->num = jint(jget(item, "value"));
        l->num_unit = pw_str(w, json_string_value(jget(item, "unit")));
      }
    }
  }
  if (n_other > 1)
    qsort(other, n_other, sizeof(*other), key_cmp);
  spaa_buf_init(&num, 0);
  for (i = 0; i < n_other && !rc; i++) {
    const json_t *item = json_object_get(ctx, other[i]);
    PLabel *l = new_label(w, sm, other[i]);
    if (!l)
      rc = SPAA_E_NOMEM;
    else if (json_is_string(item))
      l->str = pw_str(w, json_string_value(item));
    else if (json_is_integer(item))
      l->num = (int64_t)json_integer_value(item);
    else if (json_is_boolean(item))
      l->str = pw_str(w, json_is_true(item) ? "true" : "false");
    else {
      num.len = 0; /* a real, as the SPAA writer prints it, NUL-terminated for pw_str */
      if (spaa_canon_double(&num, json_real_value(item)) || spaa_buf_add(&num, "", 1))
        rc = SPAA_E_NOMEM;
      else
        l->str = pw_str(w, num.p);
    }
  }
  spaa_buf_free(&num);
  free(other);
  return rc ? rc : w->rc;
}

/* One sample per stack of the event. */
static int samples(struct pw *w)
{
  size_t i, j, k, start, *fr = NULL, cap = 0;
  int rc = 0;
  for (i = 0; i < w->p->n_stacks && !rc; i++) {
    const struct spaa_stack *s = &w->p->stacks[i];
    PSample *sm;
    size_t nf = 0;
    if (!s->event || strcmp(s->event, w->e->name))
      continue;
    if (pw_grow((void **)&fr, &cap, s->n_frames, sizeof(*fr)) ||
        pw_grow((void **)&w->m.sample, &w->cap_sample, w->m.n_sample, sizeof(*w->m.sample)) ||
        !(sm = pw_alloc(w, sizeof(*sm)))) {
      rc = SPAA_E_NOMEM;
      break;
    }
    perftools__profiles__sample__init(sm);
    for (j = 0; j < s->n_frames; j++) { /* leaf first */
      size_t pos = w->p->header.frame_order == SPAA_ROOT_TO_LEAF ? s->n_frames - 1 - j : j;
      if (spaa_idmap_get(&w->frame_ix, s->frames[pos], &k))
        fr[nf++] = k;
    }
    sm->location_id = pw_alloc(w, (nf ? nf : 1) * sizeof(*sm->location_id));
    sm->value = pw_alloc(w, (w->m.n_sample_type + 1) * sizeof(*sm->value));
    if (!sm->location_id || !sm->value) {
      rc = SPAA_E_NOMEM;
      break;
    }
    for (start = 0, j = 0; j < nf; j++) /* a location: inline frames up to a physical one */
      if (!w->p->frames[fr[j]].inlined || j + 1 == nf || !w->p->frames[fr[j]].func_resolved) {
        sm->location_id[sm->n_location_id++] = location_id(w, fr + start, j + 1 - start);
        start = j + 1;
      }
    for (j = 0; j < w->m.n_sample_type; j++) {
      const struct spaa_weight *wt = spaa_weights_find(&s->weights, w->metrics[j]);
      sm->value[sm->n_value++] = !wt ? 0 : wt->value.is_float ? (int64_t)wt->value.f : wt->value.i;
    }
    rc = sample_labels(w, sm, s->context);
    w->m.sample[w->m.n_sample++] = sm;
    rc = rc ? rc : w->rc;
  }
  free(fr);
  return rc;
}

/* protobuf-c's output buffer, appending into a sink. */
struct sink_buffer {
  ProtobufCBuffer base;
  spaa_sink_cb sink;
  void *ctx;
  int rc;
};

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
  struct sink_buffer *sb = (struct sink_buffer *)b;
  if (!sb->rc && len)
    sb->rc = sb->sink(sb->ctx, data, len);
}

static int pw_build(struct pw *w, const struct spaa_export_opts *o, struct spaa_err *err)
{
  const char *event = o ? o->event : NULL;
  size_t i;
  int rc;
  w->e = event ? spaa_find_event(w->p, event) : (w->p->header.n_events ? &w->p->header.events[0] : NULL);
  if (!w->e)
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "no event %s%s%s to write as pprof",
                        event ? "\"" : "", event ? event : "", event ? "\"" : "");
  if (pw_grow((void **)&w->m.string_table, &w->cap_str, 0, sizeof(*w->m.string_table)))
    return SPAA_E_NOMEM;
  w->m.string_table[0].data = (uint8_t *)"";
  w->m.string_table[0].len = 0;
  w->m.n_string_table = 1;
  for (i = 0; i < w->p->n_frames; i++)
    if (spaa_idmap_put(&w->frame_ix, w->p->frames[i].id, i, NULL) < 0)
      return SPAA_E_NOMEM;
  if ((rc = sample_types(w)) || (rc = mappings(w)) || (rc = samples(w)) ||
      (rc = header_fields(w)))
    return rc;
  return w->rc;
}

int spaa_export_pprof(const struct spaa_profile *p, const struct spaa_export_opts *o,
                      spaa_sink_cb sink, void *sink_ctx, struct spaa_err *err)
{
  struct pw w;
  struct spaa_csink *z = NULL;
  struct sink_buffer sb;
  size_t i;
  int rc;
  memset(&w, 0, sizeof(w));
  w.p = p;
  perftools__profiles__profile__init(&w.m);
  spaa_strmap_init(&w.strs);
  spaa_strmap_init(&w.fns);
  spaa_strmap_init(&w.locs);
  spaa_idmap_init(&w.frame_ix);
  spaa_idmap_init(&w.dso_map);
  if ((rc = pw_build(&w, o, err)) ||
      (rc = spaa_csink_open(SPAA_CODING_GZIP, 6, sink, sink_ctx, &z, err)))
    goto out;
  memset(&sb, 0, sizeof(sb));
  sb.base.append = sink_append;
  sb.sink = spaa_csink_write;
  sb.ctx = z;
  perftools__profiles__profile__pack_to_buffer(&w.m, &sb.base);
  if (!(rc = sb.rc))
    rc = spaa_csink_finish(z, err);
out:
  spaa_csink_free(z);
  for (i = 0; i < w.n_owned; i++)
    free(w.owned[i]);
  free(w.owned);
  free(w.m.string_table);
  free(w.m.function);
  free(w.m.location);
  free(w.m.sample);
  spaa_strmap_free(&w.strs);
  spaa_strmap_free(&w.fns);
  spaa_strmap_free(&w.locs);
  spaa_idmap_free(&w.frame_ix);
  spaa_idmap_free(&w.dso_map);
  if (rc && !err->code)
    spaa_err_set(err, rc, 0, 0, "writing pprof: %s", spaa_err_default(rc));
  return rc;
}
