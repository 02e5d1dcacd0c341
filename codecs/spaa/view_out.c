/* The views written from a stack set (view.h): top functions, folded stacks, speedscope (the
 * flamegraph: view_flame.c). Each streams its answer to a sink in bounded pieces. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spaa/view.h"

#define VIEW_FLUSH (1 << 16)

/* An output in progress: a buffer handed to the sink whenever it holds VIEW_FLUSH bytes. */
struct vout {
  struct spaa_buf b;
  spaa_sink_cb sink;
  void *ctx;
};

static int vout_flush(struct vout *o, int force)
{
  int rc = 0;
  if (o->b.len && (force || o->b.len >= VIEW_FLUSH)) {
    rc = o->sink(o->ctx, o->b.p, o->b.len);
    o->b.len = 0;
  }
  return rc;
}

static int vout_end(struct vout *o, int rc, struct spaa_err *err, const char *what)
{
  if (!rc)
    rc = vout_flush(o, 1);
  spaa_buf_free(&o->b);
  if (rc && !err->code)
    spaa_err_set(err, rc, 0, 0, "writing %s: %s", what, spaa_err_default(rc));
  return rc;
}

int spaa_view__head(struct spaa_buf *b, const struct spaa_vset *v)
{
  size_t i, n;
  int rc = spaa_buf_adds(b, "{\"metric\":");
  if (!rc)
    rc = v->metric ? spaa_view_jstr(b, v->metric) : spaa_buf_adds(b, "null");
  if (!rc)
    rc = spaa_buf_adds(b, ",\"unit\":");
  if (!rc)
    rc = v->unit ? spaa_view_jstr(b, v->unit) : spaa_buf_adds(b, "null");
  if (!rc)
    rc = spaa_buf_adds(b, ",\"total\":");
  rc = rc ? rc : spaa_view_num(b, v->total);
  /* the metric summed first (also when no stack carries it: declared, all zero) */
  rc = rc ? rc : spaa_buf_adds(b, ",\"metrics\":[");
  if (!rc && v->metric)
    rc = spaa_view_jstr(b, v->metric);
  for (i = 0, n = v->metric != NULL; i < v->n_metrics && !rc; i++) {
    if (v->metric && strcmp(v->metrics[i], v->metric) == 0)
      continue;
    rc = n++ ? spaa_buf_adds(b, ",") : 0;
    rc = rc ? rc : spaa_view_jstr(b, v->metrics[i]);
  }
  return rc ? rc : spaa_buf_adds(b, "]");
}

static int pct(struct spaa_buf *b, spaa_vnum x, spaa_vnum total)
{
  return spaa_buf_addf(b, "%.2f", total != 0 ? (double)(100 * x / total) : 0.0);
}

/* ---- top --------------------------------------------------------------------------------- */

static int top_cmp(const void *a, const void *b)
{
  const struct spaa_top_row *x = a, *y = b;
  if (x->self != y->self)
    return x->self < y->self ? 1 : -1;
  if (x->total != y->total)
    return x->total < y->total ? 1 : -1;
  return strcmp(x->name, y->name);
}

int spaa_view__top_rows(const struct spaa_vset *v, struct spaa_top_row **out, size_t *n_out)
{
  struct spaa_top_row *rows = calloc(v->n_names ? v->n_names : 1, sizeof(*rows));
  size_t *stamp = calloc(v->n_names ? v->n_names : 1, sizeof(*stamp));
  size_t i, j, n = 0;
  *out = NULL;
  *n_out = 0;
  if (!rows || !stamp) {
    free(rows);
    free(stamp);
    return SPAA_E_NOMEM;
  }
  for (i = 0; i < v->n_names; i++)
    rows[i].name = v->names[i];
  for (i = 0; i < v->n_stacks; i++) {
    const struct spaa_vstack *s = &v->stacks[i];
    if (s->n)
      rows[s->path[s->n - 1]].self += s->value;
    for (j = 0; j < s->n; j++)
      if (stamp[s->path[j]] != i + 1) { /* once per stack: recursion counted once */
        stamp[s->path[j]] = i + 1;
        rows[s->path[j]].total += s->value;
      }
  }
  for (i = 0; i < v->n_names; i++) /* names only the filters saw are not functions here */
    if (stamp[i])
      rows[n++] = rows[i];
  free(stamp);
  qsort(rows, n, sizeof(*rows), top_cmp);
  *out = rows;
  *n_out = n;
  return 0;
}

int spaa_view_top(const struct spaa_vset *v, size_t limit, spaa_sink_cb sink, void *ctx,
                  struct spaa_err *err)
{
  struct vout o = {.sink = sink, .ctx = ctx};
  struct spaa_top_row *rows = NULL;
  size_t i, n = 0;
  int rc;
  spaa_buf_init(&o.b, 0);
  if ((rc = spaa_view__top_rows(v, &rows, &n)))
    goto out;
  rc = spaa_view__head(&o.b, v);
  if (!rc)
    rc = spaa_buf_addf(&o.b, ",\"functions\":%zu,\"top\":[", n);
  for (i = 0; i < n && (!limit || i < limit) && !rc; i++) {
    rc = spaa_buf_adds(&o.b, i ? ",{\"name\":" : "{\"name\":");
    rc = rc ? rc : spaa_view_jstr(&o.b, rows[i].name);
    rc = rc ? rc : spaa_buf_adds(&o.b, ",\"self\":");
    rc = rc ? rc : spaa_view_num(&o.b, rows[i].self);
    rc = rc ? rc : spaa_buf_adds(&o.b, ",\"self_pct\":");
    rc = rc ? rc : pct(&o.b, rows[i].self, v->total);
    rc = rc ? rc : spaa_buf_adds(&o.b, ",\"total\":");
    rc = rc ? rc : spaa_view_num(&o.b, rows[i].total);
    rc = rc ? rc : spaa_buf_adds(&o.b, ",\"total_pct\":");
    rc = rc ? rc : pct(&o.b, rows[i].total, v->total);
    rc = rc ? rc : spaa_buf_adds(&o.b, "}");
    rc = rc ? rc : vout_flush(&o, 0);
  }
  if (!rc)
    rc = spaa_buf_adds(&o.b, "]}\n");
out:
  free(rows);
  return vout_end(&o, rc, err, "top functions");
}

/* ---- collapsed --------------------------------------------------------------------------- */

struct fline {
  char *path;
  spaa_vnum value;
};

static int line_path_cmp(const void *a, const void *b)
{
  return strcmp(((const struct fline *)a)->path, ((const struct fline *)b)->path);
}

static int line_value_cmp(const void *a, const void *b)
{
  const struct fline *x = a, *y = b;
  if (x->value != y->value)
    return x->value < y->value ? 1 : -1;
  return strcmp(x->path, y->path);
}

/* The folded path of stack s (malloc'ed), NULL on OOM. */
static char *fold_path(const struct spaa_vset *v, const struct spaa_vstack *s)
{
  struct spaa_buf b;
  size_t j, start;
  char *out;
  int rc = 0;
  spaa_buf_init(&b, 0);
  if (!s->n)
    rc = spaa_buf_adds(&b, SPAA_VIEW_NO_FRAMES);
  for (j = 0; j < s->n && !rc; j++) {
    if (j)
      rc = spaa_buf_add(&b, ";", 1);
    start = b.len;
    rc = rc ? rc : spaa_buf_adds(&b, v->names[s->path[j]]);
    for (; !rc && start < b.len; start++)
      if (b.p[start] == ';' || b.p[start] == '\n' || b.p[start] == '\r')
        b.p[start] = b.p[start] == ';' ? ':' : ' ';
  }
  rc = rc ? rc : spaa_buf_add(&b, "", 1);
  out = rc ? NULL : spaa_buf_steal(&b, NULL);
  spaa_buf_free(&b);
  return out;
}

int spaa_view_collapsed(const struct spaa_vset *v, spaa_sink_cb sink, void *ctx,
                        struct spaa_err *err)
{
  struct vout o = {.sink = sink, .ctx = ctx};
  struct fline *l = calloc(v->n_stacks ? v->n_stacks : 1, sizeof(*l));
  size_t i, n = 0;
  int rc = 0;
  spaa_buf_init(&o.b, 0);
  for (i = 0; l && i < v->n_stacks && !rc; i++) {
    l[i].value = v->stacks[i].value;
    if (!(l[i].path = fold_path(v, &v->stacks[i])))
      rc = SPAA_E_NOMEM;
  }
  if (!l || rc) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  qsort(l, v->n_stacks, sizeof(*l), line_path_cmp);
  for (i = 0; i < v->n_stacks; i++) { /* merge equal paths */
    if (n && strcmp(l[n - 1].path, l[i].path) == 0) {
      l[n - 1].value += l[i].value;
      free(l[i].path);
    } else {
      l[n++] = l[i];
    }
    if (i >= n)
      l[i].path = NULL;
  }
  qsort(l, n, sizeof(*l), line_value_cmp);
  for (i = 0; i < n && !rc; i++) {
    rc = spaa_buf_adds(&o.b, l[i].path);
    rc = rc ? rc : spaa_buf_add(&o.b, " ", 1);
    rc = rc ? rc : spaa_view_num(&o.b, l[i].value);
    rc = rc ? rc : spaa_buf_add(&o.b, "\n", 1);
    rc = rc ? rc : vout_flush(&o, 0);
  }
out:
  for (i = 0; l && i < v->n_stacks; i++)
    free(l[i].path);
  free(l);
  return vout_end(&o, rc, err, "folded stacks");
}

/* ---- speedscope -------------------------------------------------------------------------- */

static const char *speedscope_unit(const char *u)
{
  static const char *const known[] = {"nanoseconds", "microseconds", "milliseconds", "seconds",
                                      "bytes"};
  size_t i;
  for (i = 0; u && i < sizeof(known) / sizeof(known[0]); i++)
    if (strcmp(u, known[i]) == 0)
      return known[i];
  return "none";
}

uint32_t *spaa_view__used_names(const struct spaa_vset *v)
{
  uint32_t *map = malloc((v->n_names ? v->n_names : 1) * sizeof(*map)), used = 0;
  size_t i, j;
  if (!map)
    return NULL;
  for (i = 0; i < v->n_names; i++)
    map[i] = UINT32_MAX;
  for (i = 0; i < v->n_stacks; i++)
    for (j = 0; j < v->stacks[i].n; j++)
      map[v->stacks[i].path[j]] = 0;
  for (i = 0; i < v->n_names; i++)
    if (map[i] != UINT32_MAX)
      map[i] = used++;
  return map;
}

int spaa_view_speedscope(const struct spaa_vset *v, const char *name, spaa_sink_cb sink,
                         void *ctx, struct spaa_err *err)
{
  struct vout o = {.sink = sink, .ctx = ctx};
  uint32_t *map = spaa_view__used_names(v), used = 0;
  size_t i, j;
  int rc = map ? 0 : SPAA_E_NOMEM;
  spaa_buf_init(&o.b, 0);
  rc = rc ? rc : spaa_buf_adds(&o.b, "{\"$schema\":\"https://www.speedscope.app/"
                                     "file-format-schema.json\",\"exporter\":\"spaa-relay\","
                                     "\"name\":");
  rc = rc ? rc : spaa_view_jstr(&o.b, name);
  rc = rc ? rc : spaa_buf_adds(&o.b, ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
  for (i = 0, used = 0; i < v->n_names && !rc; i++) {
    if (map[i] == UINT32_MAX)
      continue;
    rc = spaa_buf_adds(&o.b, used++ ? ",{\"name\":" : "{\"name\":");
    rc = rc ? rc : spaa_view_jstr(&o.b, v->names[i]);
    rc = rc ? rc : spaa_buf_adds(&o.b, "}");
    rc = rc ? rc : vout_flush(&o, 0);
  }
  rc = rc ? rc : spaa_buf_adds(&o.b, "]},\"profiles\":[{\"type\":\"sampled\",\"name\":");
  rc = rc ? rc : spaa_view_jstr(&o.b, v->metric ? v->metric : name);
  rc = rc ? rc : spaa_buf_addf(&o.b, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":",
                               speedscope_unit(v->unit));
  rc = rc ? rc : spaa_view_num(&o.b, v->total);
  rc = rc ? rc : spaa_buf_adds(&o.b, ",\"samples\":[");
  for (i = 0; i < v->n_stacks && !rc; i++) {
    rc = spaa_buf_adds(&o.b, i ? ",[" : "[");
    for (j = 0; j < v->stacks[i].n && !rc; j++)
      rc = spaa_buf_addf(&o.b, j ? ",%u" : "%u", (unsigned)map[v->stacks[i].path[j]]);
    rc = rc ? rc : spaa_buf_adds(&o.b, "]");
    rc = rc ? rc : vout_flush(&o, 0);
  }
  rc = rc ? rc : spaa_buf_adds(&o.b, "],\"weights\":[");
  for (i = 0; i < v->n_stacks && !rc; i++) {
    rc = i ? spaa_buf_adds(&o.b, ",") : 0;
    rc = rc ? rc : spaa_view_num(&o.b, v->stacks[i].value);
    rc = rc ? rc : vout_flush(&o, 0);
  }
  rc = rc ? rc : spaa_buf_adds(&o.b, "]}]}\n");
  free(map);
  return vout_end(&o, rc, err, "speedscope");
}
