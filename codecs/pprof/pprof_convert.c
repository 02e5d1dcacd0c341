/* pprof -> SPAA: the sample types become the metrics of one event, mappings dsos, location
 * lines frames (inlines expanded deepest first), samples stacks split by label set. Field
 * table in docs/pprof-mapping.md. Works on a profile spaa_pprof_decode validated. */
#include "pprof/pprof.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "base/hex.h"
#include "base/limits.h"
#include "pprof/pprof_int.h"
#include "spaa/spaa_io.h"

#define LABEL_PREFIX "x_pprof_label_"

struct conv {
  const struct spaa_pprof *d;
  const Perftools__Profiles__Profile *m;
  struct spaa_profile *p;
  const char **strs;         /* interned string_table entries, NULL until first used */
  uint64_t *loc_first;       /* first frame id of each location */
  size_t *loc_n;             /* frames of each location (lines, or 1 when unsymbolized) */
  json_t **fn_extra;         /* shared frame extras per function (NULL: none or not built) */
  uint64_t unknown_dso;      /* id of the synthetic "[unknown]" dso */
  int unknown_used;          /* a frame references it */
  size_t n_met;              /* metrics of the one event: one per sample type */
  const char *event;         /* the event's name (interned); NULL when there are no types */
  size_t *met_type;          /* metric position (primary first) -> sample type index */
  const char **met_name;     /* metric position -> name (interned) */
  const char **met_unit;     /* metric position -> unit (interned) or NULL */
  struct spaa_strmap label_sets; /* label bytes of a sample -> index in label_ctx */
  json_t **label_ctx;        /* contexts, one per distinct label set */
  char **label_keys;         /* the malloc'd keys of label_sets */
  size_t n_label_sets, cap_label_sets;
  uint64_t *fr;              /* frame ids of the stack being built */
  size_t cap_fr;
  size_t frame_refs;         /* frame ids stored over all stacks */
  struct spaa_idmap merge;   /* hash of (frames, label set) -> index of the stack holding it */
  const char *type_hint;     /* the Pyroscope name's profile type ("cpu"), or NULL */
};

/* The string at a validated index, interned in the profile ("" for 0). */
static const char *S(struct conv *c, int64_t idx)
{
  const ProtobufCBinaryData *s;
  if (idx <= 0)
    return "";
  if (!c->strs[idx]) {
    s = &c->m->string_table[idx];
    c->strs[idx] = s->len ? spaa_strndup(c->p, (const char *)s->data, s->len) : "";
  }
  return c->strs[idx];
}

static int has_str(int64_t idx) { return idx > 0; }

static json_t *jstr(struct conv *c, int64_t idx)
{
  const ProtobufCBinaryData *s = &c->m->string_table[idx > 0 ? idx : 0];
  /* an empty bytes field may come with data == NULL */
  return s->len ? json_stringn_nocheck((const char *)s->data, s->len) : json_string("");
}

/* Set o[k] = v (stealing v); 0 or SPAA_E_NOMEM. */
static int jset(json_t *o, const char *k, json_t *v)
{
  return v && json_object_set_new(o, k, v) == 0 ? 0 : SPAA_E_NOMEM;
}

/* ---- header and events ---------------------------------------------------------------- */

static int starts_with(const char *s, const char *prefix)
{
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *event_kind(const char *type)
{
  if (!strcmp(type, "cpu") || !strcmp(type, "wall") || !strcmp(type, "samples") ||
      !strcmp(type, "sample") || !strcmp(type, "itimer") || starts_with(type, "cpu_") ||
      starts_with(type, "cpu-"))
    return "timer";
  if (starts_with(type, "alloc_") || starts_with(type, "inuse_"))
    return "allocation";
  return "software";
}

/* The SPAA §9.2 metric an allocation type corresponds to, or NULL. */
static const char *standard_metric(const char *type, const char *unit)
{
  int bytes = !strcmp(unit, "bytes"), count = !strcmp(unit, "count");
  if (starts_with(type, "inuse_"))
    return bytes ? "live_bytes" : count ? "live_count" : NULL;
  if (starts_with(type, "alloc_"))
    return bytes ? "alloc_bytes" : count ? "alloc_count" : NULL;
  return NULL;
}

/* pprof's time_nanos is meant to be unix ns, but some writers put µs (py-spy), ms or s
 * there: read it by magnitude (1e17 ns is 1973-03), like Pyroscope's from/until. Returns
 * the multiplier to ns. */
static int64_t time_scale(int64_t t)
{
  if (t >= 100000000000000000LL)
    return 1;
  if (t >= 100000000000000LL)
    return 1000;
  if (t >= 100000000000LL)
    return 1000000;
  if (t >= 100000000LL)
    return 1000000000;
  return 1;
}

static int name_taken(struct conv *c, size_t upto, const char *name)
{
  size_t i;
  for (i = 0; i < upto; i++)
    if (c->met_name[i] && !strcmp(c->met_name[i], name))
      return 1;
  return 0;
}

/* Metric names in pprof order: the type, made unique ("" -> sample_type_<i>, repeats ->
 * _<i>), into names[] and c->met_name[] (scratch until add_event orders them). 0 or
 * SPAA_E_NOMEM. */
static int metric_names(struct conv *c, const char **names)
{
  const Perftools__Profiles__Profile *m = c->m;
  size_t n = m->n_sample_type, i;
  char tmp[64];
  for (i = 0; i < n; i++) {
    const char *t = S(c, m->sample_type[i]->type);
    if (!t)
      return SPAA_E_NOMEM;
    if (!*t) {
      snprintf(tmp, sizeof(tmp), "sample_type_%zu", i);
      t = tmp;
    }
    if (name_taken(c, i, t)) {
      size_t sfx = i;
      char *u = malloc(strlen(t) + 24);
      if (!u)
        return SPAA_E_NOMEM;
      do {
        sprintf(u, "%s_%zu", t, sfx);
        sfx += n;
      } while (name_taken(c, i, u));
      t = spaa_strdup(c->p, u);
      free(u);
    } else if (t == tmp) {
      t = spaa_strdup(c->p, tmp);
    }
    if (!t)
      return SPAA_E_NOMEM;
    names[i] = c->met_name[i] = t;
  }
  return 0;
}

/* The primary sample type: default_sample_type when it names a type; else the first type
 * named as the Pyroscope application name's type suffix (`app.cpu` -> `cpu`: the sender
 * said which type the profile is about); else, as pprof tools choose, the last type. */
static size_t primary_type(struct conv *c)
{
  const Perftools__Profiles__Profile *m = c->m;
  size_t n = m->n_sample_type, i;
  if (has_str(m->default_sample_type))
    for (i = 0; i < n; i++)
      if (m->sample_type[i]->type == m->default_sample_type ||
          !strcmp(S(c, m->sample_type[i]->type), S(c, m->default_sample_type)))
        return i;
  if (c->type_hint)
    for (i = 0; i < n; i++)
      if (!strcmp(S(c, m->sample_type[i]->type), c->type_hint))
        return i;
  return n ? n - 1 : 0;
}

/* Standard names (SPAA §9.2) of the event's metrics, as an object metric -> name, into the
 * event's extra; nothing when none has one. Only for several types: a single-type profile
 * keeps exactly the event it had before metrics were merged. 0 or SPAA_E_NOMEM. */
static int standard_metrics(struct conv *c, struct spaa_event *e)
{
  json_t *o = NULL;
  size_t i;
  for (i = 0; i < c->n_met; i++) {
    const Perftools__Profiles__ValueType *vt = c->m->sample_type[c->met_type[i]];
    const char *std = standard_metric(S(c, vt->type), S(c, vt->unit));
    if (!std)
      continue;
    if ((!o && (!(o = json_object()) || jset(e->extra, "x_pprof_standard_metrics", o))) ||
        jset(o, c->met_name[i], json_string(std)))
      return SPAA_E_NOMEM;
  }
  return 0;
}

/* The one event: named after the primary type, its sample types as metrics (the primary
 * first, then the others in pprof order: c->met_type/met_name/met_unit in that order). All
 * types of a pprof describe one sampling: every sample carries a value of each. */
static int add_event(struct conv *c, const char **names)
{
  const Perftools__Profiles__Profile *m = c->m;
  size_t n = m->n_sample_type, i, primary = primary_type(c);
  const char *type, *std;
  struct spaa_event *e;
  int frees = 0;
  if (!n)
    return 0; /* no types: no event, and no sample weighs anything */
  for (i = 0; i < n; i++) {
    size_t t = i == 0 ? primary : (i <= primary ? i - 1 : i);
    const char *unit = S(c, m->sample_type[t]->unit);
    c->met_type[i] = t;
    c->met_name[i] = names[t];
    c->met_unit[i] = *unit ? unit : NULL;
    frees |= starts_with(S(c, m->sample_type[t]->type), "inuse_");
  }
  c->n_met = n;
  if (!(e = spaa_add_event(c->p)))
    return SPAA_E_NOMEM;
  type = S(c, m->sample_type[primary]->type);
  std = standard_metric(type, S(c, m->sample_type[primary]->unit));
  c->event = e->name = e->primary_metric = names[primary];
  e->kind = event_kind(type);
  e->mode = "period";
  if (m->period > 0) {
    e->has_sample_period = 1;
    e->sample_period = spaa_int(m->period);
  }
  if (!std && !frees && n == 1)
    return 0;
  if (!(e->extra = json_object()) ||
      (std && jset(e->extra, "x_pprof_standard_metric", json_string(std))) ||
      (frees && jset(e->extra, "allocation_tracking", json_pack("{s:b}", "tracks_frees", 1))))
    return SPAA_E_NOMEM;
  if (n > 1 && standard_metrics(c, e))
    return SPAA_E_NOMEM;
  if (!json_object_size(e->extra)) {
    json_decref(e->extra);
    e->extra = NULL;
  }
  return 0;
}

/* What SPAA's header has no field for, as x_pprof_* keys of a new object (*out). */
static int header_extras(struct conv *c, json_t **out)
{
  const Perftools__Profiles__Profile *m = c->m;
  json_t *x = json_object(), *a;
  size_t i;
  *out = x;
  if (!x || !(a = json_array()) || jset(x, "x_pprof_sample_types", a))
    return SPAA_E_NOMEM;
  for (i = 0; i < m->n_sample_type; i++) {
    json_t *vt = json_object();
    if (!vt || json_array_append_new(a, vt) || jset(vt, "type", jstr(c, m->sample_type[i]->type)) ||
        jset(vt, "unit", jstr(c, m->sample_type[i]->unit)))
      return SPAA_E_NOMEM;
  }
  if (has_str(m->default_sample_type) &&
      jset(x, "x_pprof_default_sample_type", jstr(c, m->default_sample_type)))
    return SPAA_E_NOMEM;
  if (m->period_type || m->period) {
    json_t *pt = json_object();
    if (jset(x, "x_pprof_period", pt) || jset(pt, "value", json_integer(m->period)))
      return SPAA_E_NOMEM;
    if (m->period_type && (jset(pt, "type", jstr(c, m->period_type->type)) ||
                           jset(pt, "unit", jstr(c, m->period_type->unit))))
      return SPAA_E_NOMEM;
  }
  if (m->time_nanos && jset(x, "x_pprof_time_nanos", json_integer(m->time_nanos)))
    return SPAA_E_NOMEM;
  if (m->duration_nanos && jset(x, "x_pprof_duration_nanos", json_integer(m->duration_nanos)))
    return SPAA_E_NOMEM;
  if (m->n_comment) {
    if (!(a = json_array()) || jset(x, "x_pprof_comments", a))
      return SPAA_E_NOMEM;
    for (i = 0; i < m->n_comment; i++)
      if (json_array_append_new(a, jstr(c, m->comment[i])))
        return SPAA_E_NOMEM;
  }
  if ((has_str(m->drop_frames) && jset(x, "x_pprof_drop_frames", jstr(c, m->drop_frames))) ||
      (has_str(m->keep_frames) && jset(x, "x_pprof_keep_frames", jstr(c, m->keep_frames))) ||
      (has_str(m->doc_url) && jset(x, "x_pprof_doc_url", jstr(c, m->doc_url))))
    return SPAA_E_NOMEM;
  return 0;
}

/* The time range in unix ns from time_nanos and duration_nanos (scaled when the writer used
 * a coarser unit). 0, or SPAA_E_BAD_REQUEST (err names the field) when the end of the
 * range does not fit in 64 bits. */
static int header_time(struct conv *c, int64_t *start_ns, int64_t *end_ns,
                       struct spaa_err *err)
{
  const Perftools__Profiles__Profile *m = c->m;
  struct spaa_header *h = &c->p->header;
  int64_t sc, st, du = 0, en;
  *start_ns = *end_ns = 0;
  if (m->time_nanos <= 0)
    return 0;
  sc = time_scale(m->time_nanos);
  if (__builtin_mul_overflow(m->time_nanos, sc, &st))
    st = m->time_nanos, sc = 1;
  if (__builtin_mul_overflow(m->duration_nanos, sc, &du) || __builtin_add_overflow(st, du, &en))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0,
                        "duration_nanos %" PRId64 " from time_nanos %" PRId64 " ends past the "
                        "largest time (year 2262)", m->duration_nanos, m->time_nanos);
  h->has_time_range = 1;
  h->start = spaa_int(st);
  h->end = spaa_int(en);
  h->time_unit = "nanoseconds";
  *start_ns = st;
  *end_ns = en;
  return 0;
}

/* The header; err filled on failure. */
static int build_header(struct conv *c, int64_t *start_ns, int64_t *end_ns,
                        struct spaa_err *err)
{
  struct spaa_header *h = &c->p->header;
  size_t n = c->m->n_sample_type;
  const char **names = NULL;
  json_t *x = NULL;
  int rc = SPAA_E_NOMEM;
  h->source_tool = "pprof";
  h->frame_order = SPAA_LEAF_TO_ROOT;
  h->id_mode = SPAA_IDS_CONTENT;
  if (n && (!(c->met_type = calloc(n, sizeof(*c->met_type))) ||
            !(c->met_name = calloc(n, sizeof(*c->met_name))) ||
            !(c->met_unit = calloc(n, sizeof(*c->met_unit))) ||
            !(names = calloc(n, sizeof(*names)))))
    goto out;
  if ((rc = metric_names(c, names)) || (rc = add_event(c, names)) ||
      (rc = header_extras(c, &x)))
    goto out;
  h->extra = x;
  x = NULL;
  rc = header_time(c, start_ns, end_ns, err);
out:
  if (rc && rc != SPAA_E_BAD_REQUEST)
    spaa_err_set(err, rc, 0, 0, NULL);
  json_decref(x);
  free(names);
  return rc;
}

/* ---- dsos and frames ------------------------------------------------------------------ */

static int is_kernel_name(const char *name)
{
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  return starts_with(name, "[kernel") || starts_with(base, "vmlinux");
}

static int hexdigit(int ch)
{
  return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

static int build_dsos(struct conv *c)
{
  const Perftools__Profiles__Profile *m = c->m;
  size_t i, j;
  for (i = 0; i < m->n_mapping; i++) {
    const Perftools__Profiles__Mapping *mp = m->mapping[i];
    struct spaa_dso *d = spaa_add_dso(c->p);
    json_t *x;
    if (!d || !(d->name = S(c, mp->filename)) || !(x = json_object()))
      return SPAA_E_NOMEM;
    d->extra = x;
    d->id = i + 1;
    d->is_kernel = is_kernel_name(d->name);
    if (mp->memory_start || mp->memory_limit || mp->file_offset) {
      d->has_mapping = 1;
      d->map_start = mp->memory_start;
      d->map_limit = mp->memory_limit;
      d->map_offset = mp->file_offset;
    }
    if (has_str(mp->build_id) && m->string_table[mp->build_id].len) {
      const ProtobufCBinaryData *b = &m->string_table[mp->build_id];
      int all_hex = 1;
      for (j = 0; j < b->len && all_hex; j++)
        all_hex = hexdigit(b->data[j]);
      if (all_hex) { /* SPAA wants lowercase hex */
        char *h = spaa_alloc(c->p, b->len + 1);
        if (!h)
          return SPAA_E_NOMEM;
        for (j = 0; j < b->len; j++)
          h[j] = (char)(b->data[j] >= 'A' && b->data[j] <= 'F' ? b->data[j] + 32 : b->data[j]);
        d->build_id = h;
      } else if (jset(x, "x_pprof_build_id", jstr(c, mp->build_id))) {
        /* not hex ("unknown", a Go build id with slashes): kept, but no dso identity */
        return SPAA_E_NOMEM;
      }
    }
    if (jset(x, "x_pprof_mapping_id", json_integer((json_int_t)mp->id)) ||
        (mp->has_functions && jset(x, "x_pprof_has_functions", json_true())) ||
        (mp->has_filenames && jset(x, "x_pprof_has_filenames", json_true())) ||
        (mp->has_line_numbers && jset(x, "x_pprof_has_line_numbers", json_true())) ||
        (mp->has_inline_frames && jset(x, "x_pprof_has_inline_frames", json_true())))
      return SPAA_E_NOMEM;
  }
  c->unknown_dso = m->n_mapping + 1;
  return 0;
}

/* Extras a function gives its frames (system_name, start_line), shared by reference. */
static json_t *function_extra(struct conv *c, size_t fi)
{
  const Perftools__Profiles__Function *f = c->m->function[fi];
  json_t *x;
  if (c->fn_extra[fi])
    return c->fn_extra[fi];
  if (!(x = json_object()))
    return NULL;
  if (has_str(f->system_name) && f->system_name != f->name &&
      strcmp(S(c, f->system_name), S(c, f->name)) &&
      jset(x, "x_pprof_system_name", jstr(c, f->system_name)))
    goto fail;
  if (f->start_line && jset(x, "x_pprof_start_line", json_integer(f->start_line)))
    goto fail;
  return c->fn_extra[fi] = x;
fail:
  json_decref(x);
  return NULL;
}

/* An unresolved frame: the address as func. */
static int unresolved(struct conv *c, struct spaa_frame *f, uint64_t addr)
{
  char tmp[24];
  spaa_hex_addr(tmp, addr);
  f->func_resolved = 0;
  f->srcline_resolved = 0;
  return (f->func = spaa_strdup(c->p, tmp)) ? 0 : SPAA_E_NOMEM;
}

static int build_frames(struct conv *c)
{
  const Perftools__Profiles__Profile *m = c->m;
  uint64_t next = 1;
  size_t li, j, k;
  for (li = 0; li < m->n_location; li++) {
    const Perftools__Profiles__Location *l = m->location[li];
    uint64_t dso = c->unknown_dso;
    const char *kind = "unknown";
    size_t nf = l->n_line ? l->n_line : 1;
    if (l->mapping_id) {
      spaa_pprof_find(&c->d->map_ids, l->mapping_id, &k); /* validated */
      dso = k + 1;
      kind = c->p->dsos[k].is_kernel ? "kernel" : "user";
    } else {
      c->unknown_used = 1;
    }
    c->loc_first[li] = next;
    c->loc_n[li] = nf;
    for (j = 0; j < nf; j++) {
      struct spaa_frame *f = spaa_add_frame(c->p);
      const Perftools__Profiles__Line *ln = l->n_line ? l->line[j] : NULL;
      const Perftools__Profiles__Function *fn = NULL;
      json_t *fx = NULL;
      if (!f)
        return SPAA_E_NOMEM;
      f->id = next++;
      f->has_dso = 1;
      f->dso = dso;
      f->kind = kind;
      if (l->address) {
        f->has_ip = 1;
        f->ip = l->address;
      }
      if (ln && ln->function_id) {
        spaa_pprof_find(&c->d->fn_ids, ln->function_id, &k); /* validated */
        fn = m->function[k];
        if (!(fx = function_extra(c, k)))
          return SPAA_E_NOMEM;
      }
      if (fn && (has_str(fn->name) || has_str(fn->system_name))) {
        f->func = S(c, has_str(fn->name) ? fn->name : fn->system_name);
        if (!f->func)
          return SPAA_E_NOMEM;
        if (has_str(fn->filename) || ln->line > 0) {
          /* "file:line"; ":line" when only the line is known (async-profiler's Java, Node),
           * so that the calls of one function on different lines stay different frames */
          const char *file = has_str(fn->filename) ? S(c, fn->filename) : "";
          size_t fl = file ? strlen(file) : 0;
          char *sl = file ? spaa_alloc(c->p, fl + 24) : NULL;
          if (!sl)
            return SPAA_E_NOMEM;
          memcpy(sl, file, fl);
          snprintf(sl + fl, 24, ":%" PRId64, ln->line);
          f->srcline = sl;
        } else {
          f->srcline_resolved = 0;
        }
      } else if (unresolved(c, f, l->address)) {
        return SPAA_E_NOMEM;
      }
      if (nf > 1) {
        f->inlined = j + 1 < nf;
        f->has_inline_depth = 1;
        f->inline_depth = (uint32_t)(nf - 1 - j);
      }
      if ((ln && ln->column) || l->is_folded) {
        json_t *x = fx ? json_copy(fx) : json_object();
        if (!x || (ln && ln->column && jset(x, "x_pprof_column", json_integer(ln->column))) ||
            (l->is_folded && jset(x, "x_pprof_is_folded", json_true()))) {
          json_decref(x);
          return SPAA_E_NOMEM;
        }
        f->extra = x;
      } else if (fx && json_object_size(fx)) {
        f->extra = json_incref(fx);
      }
    }
  }
  if (c->unknown_used) {
    struct spaa_dso *d = spaa_add_dso(c->p);
    if (!d)
      return SPAA_E_NOMEM;
    d->id = c->unknown_dso;
    d->name = "[unknown]";
  }
  return 0;
}

/* ---- stacks --------------------------------------------------------------------------- */

/* The context of a sample's labels (a borrowed reference; NULL when it has none), or
 * SPAA_E_NOMEM through *rc. Label sets are built once and shared by reference. */
static json_t *label_context(struct conv *c, const Perftools__Profiles__Sample *s, int *rc)
{
  size_t i, idx, klen = s->n_label * 4 * sizeof(int64_t);
  int64_t *key;
  json_t *o = NULL;
  char name[256];

  *rc = 0;
  if (!s->n_label)
    return NULL;
  if (!(key = malloc(klen)))
    goto nomem;
  for (i = 0; i < s->n_label; i++) {
    key[4 * i] = s->label[i]->key;
    key[4 * i + 1] = s->label[i]->str;
    key[4 * i + 2] = s->label[i]->num;
    key[4 * i + 3] = s->label[i]->num_unit;
  }
  if (spaa_strmap_get(&c->label_sets, (const char *)key, klen, &idx)) {
    free(key);
    return c->label_ctx[idx];
  }
  if (!(o = json_object()))
    goto nomem;
  for (i = 0; i < s->n_label; i++) {
    const Perftools__Profiles__Label *l = s->label[i];
    const ProtobufCBinaryData *k = &c->m->string_table[l->key];
    json_t *v, *old;
    char *kn = name, *big = NULL;
    size_t need = sizeof(LABEL_PREFIX) + k->len;
    if (need > sizeof(name) && !(kn = big = malloc(need)))
      goto nomem;
    memcpy(kn, LABEL_PREFIX, sizeof(LABEL_PREFIX) - 1);
    if (k->len)
      memcpy(kn + sizeof(LABEL_PREFIX) - 1, k->data, k->len);
    kn[need - 1] = 0;
    if (l->str) {
      v = jstr(c, l->str);
    } else {
      v = json_pack("{s:I}", "value", (json_int_t)l->num);
      if (v && l->num_unit && jset(v, "unit", jstr(c, l->num_unit))) {
        json_decref(v);
        v = NULL;
      }
    }
    if (!v) {
      free(big);
      goto nomem;
    }
    /* a key given several times keeps all its values, in order, as an array */
    if ((old = json_object_get(o, kn))) {
      if (!json_is_array(old)) {
        json_t *arr = json_array();
        if (!arr || json_array_append(arr, old) || json_object_set_new(o, kn, arr)) {
          json_decref(arr);
          json_decref(v);
          free(big);
          goto nomem;
        }
        old = arr;
      }
      if (json_array_append_new(old, v)) {
        free(big);
        goto nomem;
      }
    } else if (json_object_set_new(o, kn, v)) {
      free(big);
      goto nomem;
    }
    free(big);
  }
  if (c->n_label_sets == c->cap_label_sets) {
    size_t nc = c->cap_label_sets ? c->cap_label_sets * 2 : 16;
    json_t **nctx = realloc(c->label_ctx, nc * sizeof(*nctx));
    char **nk;
    if (!nctx)
      goto nomem;
    c->label_ctx = nctx;
    if (!(nk = realloc(c->label_keys, nc * sizeof(*nk))))
      goto nomem;
    c->label_keys = nk;
    c->cap_label_sets = nc;
  }
  if (spaa_strmap_put(&c->label_sets, (const char *)key, klen, c->n_label_sets, NULL) < 0)
    goto nomem;
  c->label_keys[c->n_label_sets] = (char *)key;
  c->label_ctx[c->n_label_sets++] = o;
  return o;
nomem:
  free(key);
  json_decref(o);
  *rc = SPAA_E_NOMEM;
  return NULL;
}

/* The sample's values in metric order: the primary always (a stack must carry it, SPAA §4.4),
 * the others when nonzero (a zero adds nothing to a total; sparse multi-type profiles such
 * as .NET's stay small), in the profile's arena. 0 or SPAA_E_NOMEM. */
static int sample_weights(struct conv *c, struct spaa_weights *w,
                          const Perftools__Profiles__Sample *s)
{
  size_t i, n = 1, k = 0;
  for (i = 1; i < c->n_met; i++)
    n += s->value[c->met_type[i]] != 0;
  if (spaa_weights_alloc(c->p, w, n))
    return SPAA_E_NOMEM;
  for (i = 0; i < c->n_met; i++) {
    int64_t v = s->value[c->met_type[i]];
    if (i && !v)
      continue;
    w->v[k].metric = c->met_name[i];
    w->v[k].value = spaa_int(v);
    w->v[k++].unit = c->met_unit[i];
  }
  return 0;
}

/* The frame ids of sample si's stack, leaf first, into c->fr; *n their count. 0 or an
 * error code with err filled. */
static int sample_frames(struct conv *c, const Perftools__Profiles__Sample *s, size_t si,
                         size_t *n, struct spaa_err *err)
{
  size_t j, t;
  *n = 0;
  for (j = 0; j < s->n_location_id; j++) {
    size_t li;
    spaa_pprof_find(&c->d->loc_ids, s->location_id[j], &li); /* validated */
    if (c->loc_n[li] > SPAA_PPROF_MAX_DEPTH - *n)
      return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "sample %zu: the stack has more than "
                          "%d frames once inlined frames are expanded", si, SPAA_PPROF_MAX_DEPTH);
    if (*n + c->loc_n[li] > c->cap_fr) {
      size_t nc = c->cap_fr ? c->cap_fr * 2 : 256;
      uint64_t *nf;
      while (nc < *n + c->loc_n[li])
        nc *= 2;
      if (!(nf = realloc(c->fr, nc * sizeof(*nf))))
        return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      c->fr = nf;
      c->cap_fr = nc;
    }
    for (t = 0; t < c->loc_n[li]; t++)
      c->fr[(*n)++] = c->loc_first[li] + t;
  }
  return 0;
}

/* Metric i of the profile (value v) into w, which lacks it, where the pprof order puts it:
 * after the metrics before i, so that a stack's weights come in one order however its
 * samples came (docs/pprof-mapping.md). 0 or SPAA_E_NOMEM. */
static int weights_insert(struct conv *c, struct spaa_weights *w, size_t i, int64_t v)
{
  size_t pos = 0, j;
  struct spaa_weight t;
  for (; pos < w->n; pos++) {
    for (j = 0; j < c->n_met && w->v[pos].metric != c->met_name[j] &&
                strcmp(w->v[pos].metric, c->met_name[j]) != 0;
         j++)
      ;
    if (j > i) /* metrics not the profile's own (j == n_met) stay last */
      break;
  }
  if (spaa_weights_add(c->p, w, c->met_name[i], spaa_int(v), c->met_unit[i]))
    return SPAA_E_NOMEM;
  t = w->v[w->n - 1];
  memmove(&w->v[pos + 1], &w->v[pos], (w->n - 1 - pos) * sizeof(w->v[0]));
  w->v[pos] = t;
  return 0;
}

/* Add sample s's values into weights w (same metric summed, as spaa_normalize sums them; a
 * metric w lacks inserted in pprof order), integers turning to floats on overflow. 0 or
 * SPAA_E_NOMEM. */
static int weights_add_sample(struct conv *c, struct spaa_weights *w,
                              const Perftools__Profiles__Sample *s)
{
  size_t i, k;
  for (i = 0; i < c->n_met; i++) {
    int64_t v = s->value[c->met_type[i]], r;
    if (!v)
      continue;
    for (k = 0; k < w->n && w->v[k].metric != c->met_name[i] &&
                strcmp(w->v[k].metric, c->met_name[i]) != 0;
         k++)
      ;
    if (k == w->n) {
      if (weights_insert(c, w, i, v))
        return SPAA_E_NOMEM;
    } else if (!w->v[k].value.is_float && !__builtin_add_overflow(w->v[k].value.i, v, &r)) {
      w->v[k].value.i = r;
    } else {
      w->v[k].value = spaa_float(spaa_num_as_double(w->v[k].value) + (double)v);
    }
  }
  return 0;
}

/* The stack already built for these frames (c->fr, n) and label set, or NULL. A hash
 * collision between different stacks finds nothing: that sample gets its own stack, and
 * spaa_normalize merges what is left. *h gets the hash. */
static struct spaa_stack *same_stack(struct conv *c, size_t n, const json_t *ctx, uint64_t *h)
{
  struct spaa_stack *st;
  size_t k, j;
  *h = XXH3_64bits_withSeed(c->fr, n * sizeof(*c->fr), (uint64_t)(uintptr_t)ctx);
  if (!spaa_idmap_get(&c->merge, *h, &k))
    return NULL;
  st = &c->p->stacks[k];
  if (st->n_frames != n || st->context != ctx)
    return NULL;
  for (j = 0; j < n; j++)
    if (st->frames[j] != c->fr[j])
      return NULL;
  return st;
}

/* Sample s (number si) into its stack: summed into the stack already built for its frames
 * and label set, else a new one. 0 or an error code with err filled. */
static int add_sample(struct conv *c, const Perftools__Profiles__Sample *s, size_t si,
                      struct spaa_err *err)
{
  struct spaa_stack *st;
  json_t *ctx;
  size_t j, n;
  uint64_t h;
  int rc;
  for (j = 0; j < c->n_met && !s->value[j]; j++)
    ;
  if (j == c->n_met)
    return 0; /* every value 0: nothing to weigh (docs/pprof-mapping.md) */
  if ((rc = sample_frames(c, s, si, &n, err)))
    return rc;
  ctx = label_context(c, s, &rc);
  if (rc)
    return spaa_err_set(err, rc, 0, 0, NULL);
  c->frame_refs += n;
  if (c->frame_refs > SPAA_PPROF_MAX_FRAME_REFS)
    return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "sample %zu: the profile expands to "
                        "more than %u frame references", si, SPAA_PPROF_MAX_FRAME_REFS);
  if ((st = same_stack(c, n, ctx, &h))) {
    if (weights_add_sample(c, &st->weights, s) ||
        (n && weights_add_sample(c, &st->excl_weights, s)))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    return 0;
  }
  if (!(st = spaa_add_stack(c->p)) || spaa_stack_set_frames(c->p, st, c->fr, n) ||
      spaa_idmap_put(&c->merge, h, c->p->n_stacks - 1, NULL) < 0)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  st->event = c->event;
  st->context = ctx ? json_incref(ctx) : NULL;
  if (sample_weights(c, &st->weights, s))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if (n) {
    st->has_exclusive = 1;
    st->excl_frame = c->fr[0];
    if (sample_weights(c, &st->excl_weights, s))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  return 0;
}

/* One stack per distinct (frames, label set) of the samples with a nonzero value, weighing
 * every sample type as a metric of the one event. The samples are read one at a time off
 * the wire, and those of one stack and label set summed as spaa_normalize would, so that the
 * model grows with distinct stacks, not with samples (1.4 M samples of 60 k stacks: 60 k
 * stacks held, not 1.4 M). */
static int build_stacks(struct conv *c, struct spaa_err *err)
{
  const Perftools__Profiles__Sample *s;
  struct spaa_pprof_iter it;
  size_t si;
  int rc;
  spaa_pprof_iter_init(&it, c->d);
  for (si = 0; !(rc = spaa_pprof_iter_next(&it, &s, err)) && s; si++)
    if ((rc = add_sample(c, s, si, err)))
      break;
  spaa_pprof_iter_free(&it);
  return rc;
}

/* ---- entry points --------------------------------------------------------------------- */

int spaa_pprof__build(const struct spaa_pprof *d, struct spaa_meter *m, struct spaa_profile **out,
                      int64_t *start_ns, int64_t *end_ns, struct spaa_err *err)
{
  return spaa_pprof__build_typed(d, m, NULL, out, start_ns, end_ns, err);
}

int spaa_pprof__build_typed(const struct spaa_pprof *d, struct spaa_meter *m,
                            const char *type_hint, struct spaa_profile **out,
                            int64_t *start_ns, int64_t *end_ns, struct spaa_err *err)
{
  struct conv c;
  int64_t st = 0, en = 0;
  size_t i;
  int rc;

  memset(&c, 0, sizeof(c));
  *out = NULL;
  c.d = d;
  c.m = d->msg;
  c.type_hint = type_hint;
  spaa_strmap_init(&c.label_sets);
  spaa_idmap_init(&c.merge);
  if (!(c.p = spaa_profile_new_metered(m)) ||
      !(c.strs = calloc(c.m->n_string_table ? c.m->n_string_table : 1, sizeof(*c.strs))) ||
      !(c.loc_first = calloc(c.m->n_location + 1, sizeof(*c.loc_first))) ||
      !(c.loc_n = calloc(c.m->n_location + 1, sizeof(*c.loc_n))) ||
      !(c.fn_extra = calloc(c.m->n_function + 1, sizeof(*c.fn_extra)))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  if ((rc = build_header(&c, &st, &en, err)))
    goto out;
  if ((rc = build_dsos(&c)) || (rc = build_frames(&c))) {
    spaa_err_set(err, rc, 0, 0, NULL);
    goto out;
  }
  if ((rc = build_stacks(&c, err)))
    goto out;
  if (start_ns)
    *start_ns = st;
  if (end_ns)
    *end_ns = en;
  *out = c.p;
  c.p = NULL;
out:
  spaa_profile_free(c.p);
  free(c.strs);
  free(c.loc_first);
  free(c.loc_n);
  if (c.fn_extra)
    for (i = 0; i < c.m->n_function; i++)
      json_decref(c.fn_extra[i]);
  free(c.fn_extra);
  free(c.met_type);
  free(c.met_name);
  free(c.met_unit);
  for (i = 0; i < c.n_label_sets; i++) {
    json_decref(c.label_ctx[i]);
    free(c.label_keys[i]);
  }
  free(c.label_ctx);
  free(c.label_keys);
  spaa_strmap_free(&c.label_sets);
  spaa_idmap_free(&c.merge);
  free(c.fr);
  return rc;
}

int spaa_pprof_to_spaa(const struct spaa_pprof *d, struct spaa_profile **out, int64_t *start_ns,
                       int64_t *end_ns, struct spaa_err *err)
{
  int rc = spaa_pprof__build(d, NULL, out, start_ns, end_ns, err);
  if (!rc && (rc = spaa_normalize(*out, err))) {
    spaa_profile_free(*out);
    *out = NULL;
  }
  return rc;
}

/* What the converter adds to a converted profile besides the model: service, attrs,
 * Pyroscope metadata, the original. 0 or a negative code with err filled. */
static int add_meta(struct spaa_converted *c, const uint8_t *buf, size_t len,
                    const struct spaa_convert_opts *o, struct spaa_err *err)
{
  if ((o && o->service && !(c->service = strdup(o->service))) || !(c->attrs = json_object()))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if (o && o->pprof) {
    int rc = spaa_pprof__pyroscope_apply(o->pprof, c, err);
    if (rc)
      return rc;
  }
  if (jset(c->attrs, "pprof_gzip", json_boolean(spaa_pprof_is_gzip(buf, len))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if (o && o->keep_original) {
    c->original = buf;
    c->original_len = len;
  }
  return 0;
}

int spaa_convert_pprof(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                       struct spaa_conv_list *out, struct spaa_err *err)
{
  struct spaa_pprof *d = NULL;
  struct spaa_converted c, *slot;
  /* the type the Pyroscope name (`app.cpu{...}`) gives, for the primary sample type */
  const char *type = o && o->pprof && o->pprof->name_raw ? o->pprof->name.type : NULL;
  int rc;

  memset(&c, 0, sizeof(c));
  /* the decoded message is freed before spaa_normalize, which needs as much memory again:
   * the model holds copies of every string it uses, nothing points into the arena */
  if ((rc = spaa_pprof_decode(buf, len, &d, err)) ||
      (rc = spaa_pprof__build_typed(d, o ? o->meter : NULL, type, &c.profile, &c.start_ns,
                                    &c.end_ns, err)))
    goto out;
  spaa_pprof_free(d);
  d = NULL;
  if ((rc = spaa_normalize(c.profile, err)) || (rc = add_meta(&c, buf, len, o, err)))
    goto out;
  if (!(slot = spaa_conv_add(out))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  *slot = c;
  memset(&c, 0, sizeof(c));
out:
  spaa_pprof_free(d);
  spaa_profile_free(c.profile);
  free(c.service);
  json_decref(c.labels);
  json_decref(c.attrs);
  return rc;
}
