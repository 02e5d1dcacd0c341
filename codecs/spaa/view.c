/* The stack set behind every view (names interned, frame filters, profile reader) and the
 * small JSON writing helpers the views share. The views themselves: view_out.c, view_flame.c. */
#include "spaa/view.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void spaa_vset_init(struct spaa_vset *v)
{
  memset(v, 0, sizeof(*v));
  spaa_strmap_init(&v->name_ix);
}

void spaa_vset_offer(struct spaa_vset *v, const char *metric)
{
  size_t i, n;
  if (!metric || (n = strlen(metric)) >= sizeof(v->metrics[0]))
    return;
  for (i = 0; i < v->n_metrics; i++)
    if (strcmp(v->metrics[i], metric) == 0)
      return;
  if (v->n_metrics < SPAA_VIEW_MAX_METRICS)
    memcpy(v->metrics[v->n_metrics++], metric, n + 1);
}

void spaa_vset_free(struct spaa_vset *v)
{
  size_t i;
  if (!v)
    return;
  for (i = 0; i < v->n_names; i++)
    free(v->names[i]);
  free(v->names);
  for (i = 0; i < v->n_stacks; i++)
    free(v->stacks[i].path);
  free(v->stacks);
  free(v->match);
  spaa_strmap_free(&v->name_ix);
  if (v->has_focus)
    regfree(&v->focus);
  if (v->has_ignore)
    regfree(&v->ignore);
  spaa_meter_give(v->meter, &v->metered, v->metered);
  memset(v, 0, sizeof(*v));
}

/* Report n more bytes of the set to its meter. 0, or -1: refused. */
static int vmeter(struct spaa_vset *v, size_t n)
{
  return spaa_meter_take(v->meter, &v->metered, n);
}
/* Saturating arithmetic for the size below. */
static size_t sat_add(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }
static size_t sat_mul(size_t a, size_t b) { return b && a > SIZE_MAX / b ? SIZE_MAX : a * b; }

/* What glibc's engine would do with a pattern, checked before regcomp sees it. Two kinds of
 * pattern cost far more than their bytes: a backreference (\1..\9, an extension of glibc's)
 * makes matching backtrack (three of them took over 20 s on a 200-byte name), and nested
 * bounded repetitions are expanded when compiled (((a{255}){255}){255}: 7.6 s and gigabytes).
 * So backreferences are refused, and the pattern's size with every {n,m} written out may not
 * pass SPAA_VIEW_MAX_REGEX_SIZE atoms. NULL when fine, else what is wrong. */
static const char *regex_refusal(const char *pat)
{
  size_t total[SPAA_VIEW_MAX_REGEX + 1], last[SPAA_VIEW_MAX_REGEX + 1];
  size_t depth = 0, i = 0;
  total[0] = last[0] = 0;
  while (pat[i]) {
    char c = pat[i];
    size_t atom = 1;
    if (c == '\\') {
      if (pat[i + 1] >= '1' && pat[i + 1] <= '9')
        return "backreferences (\\1 to \\9) are not supported";
      i += pat[i + 1] ? 2 : 1;
    } else if (c == '[') { /* a bracket expression is one atom: find its end */
      size_t j = i + 1;
      if (pat[j] == '^')
        j++;
      if (pat[j] == ']')
        j++;
      while (pat[j] && pat[j] != ']') {
        if (pat[j] == '[' && (pat[j + 1] == ':' || pat[j + 1] == '.' || pat[j + 1] == '=')) {
          const char *end = strchr(pat + j + 2, pat[j + 1]);
          j = end && end[1] == ']' ? (size_t)(end - pat) + 2 : j + 1;
        } else {
          j++;
        }
      }
      i = pat[j] ? j + 1 : j;
    } else if (c == '(') {
      total[++depth] = 0;
      last[depth] = 0;
      i++;
      continue;
    } else if (c == ')' && depth) {
      atom = total[depth--];
      i++;
    } else if (c == '{') { /* {n}, {n,}, {n,m}: the last atom written out max(n, m) times */
      size_t n = 0, m = 0, j = i + 1;
      while (pat[j] >= '0' && pat[j] <= '9')
        n = sat_add(sat_mul(n, 10), (size_t)(pat[j++] - '0'));
      if (pat[j] == ',') {
        j++;
        while (pat[j] >= '0' && pat[j] <= '9')
          m = sat_add(sat_mul(m, 10), (size_t)(pat[j++] - '0'));
      }
      if (m < n)
        m = sat_add(n, 1); /* {n,}: n copies and a star */
      total[depth] = sat_add(total[depth], sat_mul(last[depth], m ? m - 1 : 0));
      last[depth] = sat_mul(last[depth], m);
      if (total[depth] > SPAA_VIEW_MAX_REGEX_SIZE)
        return "its repetitions are too large once written out";
      i = pat[j] ? j + 1 : j;
      continue;
    } else {
      i++;
      if (c == '|' || c == '*' || c == '+' || c == '?')
        continue;
    }
    last[depth] = atom;
    total[depth] = sat_add(total[depth], atom);
    if (total[depth] > SPAA_VIEW_MAX_REGEX_SIZE)
      return "its repetitions are too large once written out";
  }
  return NULL;
}

static int compile_one(regex_t *re, int *has, const char *pat, const char *what,
                       struct spaa_err *err)
{
  const char *why;
  char msg[96];
  int rc;
  if (!pat)
    return 0;
  if (strlen(pat) > SPAA_VIEW_MAX_REGEX)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad '%s': longer than %d bytes", what,
                        SPAA_VIEW_MAX_REGEX);
  if ((why = regex_refusal(pat)))
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad '%s' regex '%.64s': %s", what, pat,
                        why);
  if ((rc = regcomp(re, pat, REG_EXTENDED | REG_NOSUB))) {
    regerror(rc, re, msg, sizeof(msg));
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad '%s' regex '%.64s': %s", what, pat,
                        msg);
  }
  *has = 1;
  return 0;
}

int spaa_vset_filters(struct spaa_vset *v, const char *focus, const char *ignore,
                      struct spaa_err *err)
{
  int rc = compile_one(&v->focus, &v->has_focus, focus, "focus", err);
  return rc ? rc : compile_one(&v->ignore, &v->has_ignore, ignore, "ignore", err);
}

/* The name's index, interning it. SIZE_MAX on OOM. */
static size_t name_id(struct spaa_vset *v, const char *s)
{
  size_t len = strlen(s), ix;
  if (spaa_strmap_get(&v->name_ix, s, len, &ix))
    return ix;
  if (v->n_names == v->cap_names) {
    size_t cap = v->cap_names ? v->cap_names * 2 : 64;
    char **n;
    if (vmeter(v, (cap - v->cap_names) * (sizeof(*n) + 1)))
      return SIZE_MAX;
    n = realloc(v->names, cap * sizeof(*n));
    signed char *m = realloc(v->match, cap);
    if (n)
      v->names = n;
    if (m)
      v->match = m;
    if (!n || !m)
      return SIZE_MAX;
    v->cap_names = cap;
  }
  /* the string and its map entry (the map's table, about two words per name) */
  if (vmeter(v, len + 1 + 2 * sizeof(size_t)) || !(v->names[v->n_names] = strdup(s)))
    return SIZE_MAX;
  v->match[v->n_names] = 0;
  if (spaa_strmap_put(&v->name_ix, v->names[v->n_names], len, v->n_names, NULL) < 0) {
    free(v->names[v->n_names]);
    return SIZE_MAX;
  }
  return v->n_names++;
}

/* The filters' verdict on one name (cached per name): bit 1 focus, bit 2 ignore. */
static int name_match(struct spaa_vset *v, size_t ix)
{
  if (!v->match[ix]) {
    int m = 0;
    if (v->has_focus && regexec(&v->focus, v->names[ix], 0, NULL, 0) == 0)
      m |= 1;
    if (v->has_ignore && regexec(&v->ignore, v->names[ix], 0, NULL, 0) == 0)
      m |= 2;
    v->match[ix] = (signed char)(m ? m : 4);
  }
  return v->match[ix] & 3;
}

int spaa_vset_add(struct spaa_vset *v, const char *const *names, size_t n, spaa_vnum value,
                  const char *id)
{
  struct spaa_vstack *s;
  uint32_t *path;
  int hit = 0;
  size_t i;
  if (vmeter(v, (n ? n : 1) * sizeof(*path)) || !(path = malloc((n ? n : 1) * sizeof(*path))))
    return SPAA_E_NOMEM;
  for (i = 0; i < n; i++) {
    size_t ix = name_id(v, names[i]);
    if (ix == SIZE_MAX || ix > UINT32_MAX) {
      free(path);
      return SPAA_E_NOMEM;
    }
    path[i] = (uint32_t)ix;
    if (v->has_focus || v->has_ignore)
      hit |= name_match(v, ix);
  }
  if ((v->has_focus && !(hit & 1)) || (hit & 2)) {
    free(path);
    spaa_meter_give(v->meter, &v->metered, (n ? n : 1) * sizeof(*path));
    v->dropped++;
    return 0;
  }
  if (v->n_stacks == v->cap_stacks) {
    size_t cap = v->cap_stacks ? v->cap_stacks * 2 : 64;
    struct spaa_vstack *a = NULL;
    if (vmeter(v, (cap - v->cap_stacks) * sizeof(*a)) ||
        !(a = realloc(v->stacks, cap * sizeof(*a)))) {
      free(path);
      return SPAA_E_NOMEM;
    }
    v->stacks = a;
    v->cap_stacks = cap;
  }
  s = &v->stacks[v->n_stacks++];
  memset(s, 0, sizeof(*s));
  s->path = path;
  s->n = n;
  s->value = value;
  if (id)
    snprintf(s->id, sizeof(s->id), "%s", id);
  v->total += value;
  return 0;
}

/* The name of frame f (of dso d, may be NULL) in a view: its function, and its source line
 * when by_frame. An unresolved frame is named by its dso-relative address, as the store's
 * merged views name it: one load address or another, one name (a diff of a profile against
 * its service finds it "same"). */
static const char *frame_name(const struct spaa_frame *f, const struct spaa_dso *d, int by_frame,
                              char *tmp, size_t cap)
{
  const char *fn = f->func && f->func[0] ? f->func : "[unknown]";
  if (!f->func_resolved && f->has_ip) {
    snprintf(tmp, cap, "0x%llx", (unsigned long long)spaa_frame_rel_addr(f, d));
    return tmp;
  }
  if (!by_frame || !f->srcline)
    return fn;
  snprintf(tmp, cap, "%s (%s)", fn, f->srcline);
  return tmp;
}

/* Sample types a header's x_pprof_sample_types may list for the views to name them (the
 * naming below is cubic at worst in their number; real profiles have a handful). */
#define VIEW_MAX_PPROF_TYPES 256

/* The metric name a pprof converter gives sample type i of types[] (x_pprof_sample_types),
 * as codecs/pprof/pprof_convert.c makes it: the type; "sample_type_<i>" when it is empty; a
 * name an earlier type took gets "_<i>", then "_<i+n>"..., until it is free. names[0..i-1]
 * are the earlier types' names. A malloc'ed string, or NULL (no memory). */
static char *pprof_metric_name(const json_t *types, size_t i, char *const *names)
{
  const char *t = json_string_value(json_object_get(json_array_get(types, i), "type"));
  size_t n = json_array_size(types), sfx = i, j, len;
  char *u;
  int taken;
  if (!t || !*t) {
    if (!(u = malloc(32)))
      return NULL;
    snprintf(u, 32, "sample_type_%zu", i);
  } else if (!(u = strdup(t))) {
    return NULL;
  }
  len = strlen(u);
  for (;;) {
    for (taken = 0, j = 0; j < i && !taken; j++)
      taken = names[j] && strcmp(names[j], u) == 0;
    if (!taken)
      return u;
    if (sfx == i) { /* room for the base and any suffix */
      char *w = realloc(u, len + 24);
      if (!w) {
        free(u);
        return NULL;
      }
      u = w;
    }
    snprintf(u + len, 24, "_%zu", sfx);
    sfx += n;
  }
}

/* 1 when event e of p declares `metric` though no stack of it may carry it (converters leave
 * zero weights out, so a sample type whose values are all zero is on no stack): the event's
 * primary metric, or, in a profile of one event, a sample type the header's
 * x_pprof_sample_types lists (the pprof converter's record of every type, also written by
 * the merged pprof model; at most VIEW_MAX_PPROF_TYPES of them). *unit: the declared unit
 * ("" taken as none), else NULL. 0 when not declared (a failed allocation reads as not
 * declared: the caller's 400 then). */
static int declared_metric(const struct spaa_profile *p, const struct spaa_event *e,
                           const char *metric, const char **unit)
{
  const json_t *types = json_object_get(p->header.extra, "x_pprof_sample_types");
  size_t n = json_is_array(types) ? json_array_size(types) : 0, i;
  char **names;
  int found = 0;
  *unit = NULL;
  if (n && n <= VIEW_MAX_PPROF_TYPES && p->header.n_events == 1 &&
      (names = calloc(n, sizeof(*names)))) {
    for (i = 0; i < n && !found; i++) {
      if (!(names[i] = pprof_metric_name(types, i, names)))
        break;
      if (strcmp(names[i], metric) == 0) {
        const char *u = json_string_value(json_object_get(json_array_get(types, i), "unit"));
        found = 1;
        *unit = u && *u ? u : NULL;
      }
    }
    for (i = 0; i < n; i++)
      free(names[i]);
    free(names);
  }
  return found || (e->primary_metric && strcmp(e->primary_metric, metric) == 0);
}

int spaa_vset_from_profile(struct spaa_vset *v, const struct spaa_profile *p,
                           const char *event, const char *metric, int by_frame,
                           struct spaa_err *err)
{
  const struct spaa_event *e = event ? spaa_find_event(p, event)
                                     : (p->header.n_events ? &p->header.events[0] : NULL);
  struct spaa_idmap ids, dsos;
  const char **names = NULL;
  char *tmp = NULL;
  size_t i, j, k, cap = 0;
  int rc = 0, seen = 0, asked = metric != NULL;
  if (!e)
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "no event '%.64s' in the profile",
                        event ? event : "");
  if (!metric)
    metric = e->primary_metric;
  if (!metric)
    return spaa_err_set(err, SPAA_E_USAGE, 0, 0, "event '%.64s' has no primary metric",
                        e->name);
  spaa_idmap_init(&ids);
  spaa_idmap_init(&dsos);
  for (i = 0; i < p->n_frames && !rc; i++)
    rc = spaa_idmap_put(&ids, p->frames[i].id, i, NULL) < 0 ? SPAA_E_NOMEM : 0;
  for (i = 0; i < p->n_dsos && !rc; i++)
    rc = spaa_idmap_put(&dsos, p->dsos[i].id, i, NULL) < 0 ? SPAA_E_NOMEM : 0;
  for (i = 0; i < p->n_stacks && !rc; i++) {
    const struct spaa_stack *s = &p->stacks[i];
    const struct spaa_weight *w;
    if (!s->event || strcmp(s->event, e->name))
      continue;
    for (j = 0; j < s->weights.n; j++)
      spaa_vset_offer(v, s->weights.v[j].metric);
    if (!(w = spaa_weights_find(&s->weights, metric)))
      continue;
    if (!seen++ && w->unit) { /* the set outlives the profile: keep a copy */
      snprintf(v->unit_buf, sizeof(v->unit_buf), "%s", w->unit);
      v->unit = v->unit_buf;
    }
    if (s->n_frames > cap) {
      free(names);
      free(tmp);
      cap = s->n_frames;
      names = malloc(cap * sizeof(*names));
      tmp = malloc(cap * 512);
      if (!names || !tmp) {
        rc = SPAA_E_NOMEM;
        break;
      }
    }
    for (j = 0; j < s->n_frames; j++) {
      size_t pos = p->header.frame_order == SPAA_ROOT_TO_LEAF ? j : s->n_frames - 1 - j;
      size_t di;
      const struct spaa_frame *f = spaa_idmap_get(&ids, s->frames[pos], &k) ? &p->frames[k] : NULL;
      const struct spaa_dso *d =
          f && f->has_dso && spaa_idmap_get(&dsos, f->dso, &di) ? &p->dsos[di] : NULL;
      names[j] = f ? frame_name(f, d, by_frame, tmp + j * 512, 512) : "[unknown]";
    }
    rc = spaa_vset_add(v, names, s->n_frames, spaa_vnum_of(w->value), s->id);
  }
  if (!rc && !seen && asked) {
    const char *unit;
    if (!declared_metric(p, e, metric, &unit)) /* a declared metric that is all zero: empty */
      rc = spaa_err_set(err, SPAA_E_USAGE, 0, 0,
                        "no stack of event '%.64s' has metric '%.64s'", e->name, metric);
    else if (unit) {
      snprintf(v->unit_buf, sizeof(v->unit_buf), "%s", unit);
      v->unit = v->unit_buf;
    }
  }
  free(names);
  free(tmp);
  spaa_idmap_free(&ids);
  spaa_idmap_free(&dsos);
  snprintf(v->metric_buf, sizeof(v->metric_buf), "%s", metric);
  v->metric = v->metric_buf;
  if (rc && !err->code)
    spaa_err_set(err, rc, 0, 0, NULL);
  return rc;
}

int spaa_view_num(struct spaa_buf *b, spaa_vnum x)
{
  if (!isfinite(x))
    return spaa_buf_adds(b, "0");
  if (x == floorl(x) && fabsl(x) < 18446744073709551616.0L)
    return spaa_buf_addf(b, "%.0Lf", x);
  return spaa_buf_addf(b, "%.17g", (double)x);
}

int spaa_view_jstr(struct spaa_buf *b, const char *s)
{
  int rc = spaa_buf_add(b, "\"", 1);
  const unsigned char *p = (const unsigned char *)s;
  for (; *p && !rc; p++) {
    if (*p == '"' || *p == '\\')
      rc = spaa_buf_addf(b, "\\%c", *p);
    else if (*p < 0x20)
      rc = spaa_buf_addf(b, "\\u%04x", *p);
    else
      rc = spaa_buf_add(b, p, 1);
  }
  return rc ? rc : spaa_buf_add(b, "\"", 1);
}
