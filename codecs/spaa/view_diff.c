/* The diff of two stack sets (view.h): per function (self) and per stack id, base, target,
 * delta and each normalized by its side's total; as JSON, as flamegraph.pl's two-column
 * folded input, or as a budgeted text summary of the largest movers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spaa/view.h"

/* One compared key (a function name or a stack id). */
struct drow {
  const char *key;   /* borrowed from a set */
  const char *path;  /* stacks: the folded path (owned), else NULL */
  spaa_vnum base, target;
};

struct dtab {
  struct drow *r;
  size_t n, cap;
  struct spaa_strmap ix;
};

static int dtab_add(struct dtab *t, const char *key, spaa_vnum x, int target, struct drow **out)
{
  size_t k;
  if (!spaa_strmap_get(&t->ix, key, strlen(key), &k)) {
    if (t->n == t->cap) {
      size_t cap = t->cap ? t->cap * 2 : 256;
      struct drow *a = realloc(t->r, cap * sizeof(*a));
      if (!a)
        return SPAA_E_NOMEM;
      t->r = a;
      t->cap = cap;
    }
    k = t->n++;
    memset(&t->r[k], 0, sizeof(t->r[k]));
    t->r[k].key = key;
    if (spaa_strmap_put(&t->ix, key, strlen(key), k, NULL) < 0)
      return SPAA_E_NOMEM;
  }
  if (target)
    t->r[k].target += x;
  else
    t->r[k].base += x;
  if (out)
    *out = &t->r[k];
  return 0;
}

static void dtab_free(struct dtab *t)
{
  size_t i;
  for (i = 0; i < t->n; i++)
    free((char *)t->r[i].path);
  free(t->r);
  spaa_strmap_free(&t->ix);
}

static int delta_cmp(const void *a, const void *b)
{
  const struct drow *x = a, *y = b;
  spaa_vnum dx = fabsl(x->target - x->base), dy = fabsl(y->target - y->base);
  if (dx != dy)
    return dx < dy ? 1 : -1;
  return strcmp(x->key, y->key);
}

/* By how far a row's share of its side's total moved (|delta_pct|), then key: the order of
 * SPAA_DIFF_BY_SHARE. ctx: the two totals. */
static double share_move(const struct drow *r, const spaa_vnum *tot)
{
  double bp = tot[0] != 0 ? (double)(100 * r->base / tot[0]) : 0.0;
  double tp = tot[1] != 0 ? (double)(100 * r->target / tot[1]) : 0.0;
  return fabs(tp - bp);
}

static int share_cmp(const void *a, const void *b, void *ctx)
{
  const struct drow *x = a, *y = b;
  double dx = share_move(x, ctx), dy = share_move(y, ctx);
  if (dx != dy)
    return dx < dy ? 1 : -1;
  return strcmp(x->key, y->key);
}

/* The folded path of a stack (malloc'ed). */
static char *fold(const struct spaa_vset *v, const struct spaa_vstack *s)
{
  struct spaa_buf b;
  size_t j;
  int rc = 0;
  spaa_buf_init(&b, 0);
  if (!s->n)
    rc = spaa_buf_adds(&b, SPAA_VIEW_NO_FRAMES);
  for (j = 0; j < s->n && !rc; j++) {
    size_t start = b.len;
    rc = j ? spaa_buf_add(&b, ";", 1) : 0;
    start = b.len;
    rc = rc ? rc : spaa_buf_adds(&b, v->names[s->path[j]]);
    for (; !rc && start < b.len; start++)
      if (b.p[start] == ';' || b.p[start] == '\n' || b.p[start] == '\r' || b.p[start] == ' ')
        b.p[start] = b.p[start] == ';' ? ':' : '_';
  }
  rc = rc ? rc : spaa_buf_add(&b, "", 1);
  return rc ? (spaa_buf_free(&b), NULL) : spaa_buf_steal(&b, NULL);
}

/* The two sides in one unit: each side's values are multiplied by its scale (the coarser
 * side's by how many of the finer unit its unit is), its total with them. */
struct dunit {
  spaa_vnum scale[2];   /* base, target */
  spaa_vnum total[2];
  const char *unit;  /* the unit both are in, or NULL */
};

static int diff_unit(const struct spaa_vset *base, const struct spaa_vset *target,
                     struct dunit *u, struct spaa_err *err)
{
  int kb, kt;
  double sb, st;
  u->scale[0] = u->scale[1] = 1;
  u->total[0] = base->total;
  u->total[1] = target->total;
  u->unit = base->unit ? base->unit : target->unit;
  if (base->unit && target->unit && strcmp(base->unit, target->unit)) {
    sb = spaa_unit_size(base->unit, &kb);
    st = spaa_unit_size(target->unit, &kt);
    if (!sb || !st || kb != kt)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the sides' '%.64s' cannot be "
                          "compared: the base is in '%.32s', the target in '%.32s'",
                          base->metric ? base->metric : "", base->unit, target->unit);
    if (sb > st) {
      u->scale[0] = sb / st;
      u->unit = target->unit;
    } else {
      u->scale[1] = st / sb;
      u->unit = base->unit;
    }
  }
  u->total[0] = base->total * u->scale[0];
  u->total[1] = target->total * u->scale[1];
  return 0;
}

/* Functions (by self) or stacks (by id; by folded path when `by_path`) of both sets, their
 * values times `scale`. */
static int collect(struct dtab *t, const struct spaa_vset *v, spaa_vnum scale, int target,
                   int stacks, int by_path)
{
  size_t i;
  int rc = 0;
  if (!stacks) {
    struct spaa_top_row *rows;
    size_t n;
    if ((rc = spaa_view__top_rows(v, &rows, &n)))
      return rc;
    for (i = 0; i < n && !rc; i++)
      rc = dtab_add(t, rows[i].name, rows[i].self * scale, target, NULL);
    free(rows);
    return rc;
  }
  for (i = 0; i < v->n_stacks && !rc; i++) {
    struct drow *r;
    char *path = fold(v, &v->stacks[i]);
    if (!path)
      return SPAA_E_NOMEM;
    rc = dtab_add(t, by_path ? path : v->stacks[i].id, v->stacks[i].value * scale, target, &r);
    if (!rc && !r->path)
      r->path = path; /* the row keeps it (and, by path, its key points into it) */
    else
      free(path);
  }
  return rc;
}

static int row_json(struct spaa_buf *b, const struct drow *r, spaa_vnum bt, spaa_vnum tt, int stacks)
{
  const char *status = r->base == 0 && r->target != 0 ? "new"
                     : r->target == 0 && r->base != 0 ? "gone" : "changed";
  double bp = bt != 0 ? (double)(100 * r->base / bt) : 0.0;
  double tp = tt != 0 ? (double)(100 * r->target / tt) : 0.0;
  int rc = spaa_buf_adds(b, stacks ? "{\"id\":" : "{\"name\":");
  rc = rc ? rc : spaa_view_jstr(b, r->key);
  if (stacks && r->path) {
    rc = rc ? rc : spaa_buf_adds(b, ",\"path\":");
    rc = rc ? rc : spaa_view_jstr(b, r->path);
  }
  rc = rc ? rc : spaa_buf_adds(b, ",\"base\":");
  rc = rc ? rc : spaa_view_num(b, r->base);
  rc = rc ? rc : spaa_buf_adds(b, ",\"target\":");
  rc = rc ? rc : spaa_view_num(b, r->target);
  rc = rc ? rc : spaa_buf_adds(b, ",\"delta\":");
  rc = rc ? rc : spaa_view_num(b, r->target - r->base);
  rc = rc ? rc : spaa_buf_addf(b, ",\"base_pct\":%.2f,\"target_pct\":%.2f,\"delta_pct\":%.2f",
                               bp, tp, tp - bp);
  return rc ? rc : spaa_buf_addf(b, ",\"status\":\"%s\"}", r->base == r->target ? "same" : status);
}

static int diff_json(struct spaa_buf *b, const struct spaa_vset *base, const struct spaa_vset *target,
                     const struct dunit *u, struct dtab *fn, struct dtab *st, size_t limit)
{
  size_t i;
  const char *metric = base->metric ? base->metric : target->metric;
  int rc = spaa_buf_adds(b, "{\"metric\":");
  if (metric) /* null, as the unit, when neither set names one (never made up as "") */
    rc = rc ? rc : spaa_view_jstr(b, metric);
  else
    rc = rc ? rc : spaa_buf_adds(b, "null");
  rc = rc ? rc : spaa_buf_adds(b, ",\"unit\":");
  if (u->unit)
    rc = rc ? rc : spaa_view_jstr(b, u->unit);
  else
    rc = rc ? rc : spaa_buf_adds(b, "null");
  rc = rc ? rc : spaa_buf_adds(b, ",\"base_total\":");
  rc = rc ? rc : spaa_view_num(b, u->total[0]);
  rc = rc ? rc : spaa_buf_adds(b, ",\"target_total\":");
  rc = rc ? rc : spaa_view_num(b, u->total[1]);
  rc = rc ? rc : spaa_buf_adds(b, ",\"delta\":");
  rc = rc ? rc : spaa_view_num(b, u->total[1] - u->total[0]);
  rc = rc ? rc : spaa_buf_addf(b, ",\"n_functions\":%zu,\"functions\":[", fn->n);
  for (i = 0; i < fn->n && (!limit || i < limit) && !rc; i++) {
    rc = i ? spaa_buf_add(b, ",", 1) : 0;
    rc = rc ? rc : row_json(b, &fn->r[i], u->total[0], u->total[1], 0);
  }
  rc = rc ? rc : spaa_buf_addf(b, "],\"n_stacks\":%zu,\"stacks\":[", st->n);
  for (i = 0; i < st->n && (!limit || i < limit) && !rc; i++) {
    rc = i ? spaa_buf_add(b, ",", 1) : 0;
    rc = rc ? rc : row_json(b, &st->r[i], u->total[0], u->total[1], 1);
  }
  return rc ? rc : spaa_buf_adds(b, "]}\n");
}

/* "path base target" lines (flamegraph.pl's difffolded input), sorted by path. */
static int path_cmp(const void *a, const void *b)
{
  return strcmp(((const struct drow *)a)->key, ((const struct drow *)b)->key);
}

/* Keep `line` in b when it fits under the budget (40 bytes kept back for the closing note),
 * else count it as left out. */
static int sum_line(struct spaa_buf *b, struct spaa_buf *line, size_t budget, size_t *left)
{
  int rc = 0;
  if (b->len + line->len + 40 <= budget)
    rc = spaa_buf_add(b, line->p, line->len);
  else
    (*left)++;
  line->len = 0;
  return rc;
}

static int diff_summary(struct spaa_buf *b, const struct spaa_vset *base,
                        const struct spaa_vset *target, const struct dunit *u,
                        struct dtab *fn, struct dtab *st, size_t budget)
{
  const char *metric = base->metric ? base->metric : target->metric;
  struct spaa_buf line;
  size_t i, left = 0;
  int rc, pass;
  spaa_buf_init(&line, 0);
  /* the metric's name when a set names one; never a stand-in such as "?" */
  rc = metric ? spaa_buf_addf(&line, "diff of %.64s: base total ", metric)
              : spaa_buf_adds(&line, "diff: base total ");
  rc = rc ? rc : spaa_view_num(&line, u->total[0]);
  rc = rc ? rc : spaa_buf_adds(&line, ", target total ");
  rc = rc ? rc : spaa_view_num(&line, u->total[1]);
  if (u->unit)
    rc = rc ? rc : spaa_buf_addf(&line, " (%.32s)", u->unit);
  rc = rc ? rc : spaa_buf_adds(&line, "\n");
  rc = rc ? rc : sum_line(b, &line, budget, &left);
  for (pass = 0; pass < 2 && !rc; pass++) {
    struct dtab *t = pass ? st : fn;
    rc = spaa_buf_adds(&line, pass ? "largest movers by stack (delta id path):\n"
                                   : "largest movers by function (delta base% -> target% name):\n");
    rc = rc ? rc : sum_line(b, &line, budget, &left);
    for (i = 0; i < t->n && i < 10 && !rc; i++) {
      const struct drow *r = &t->r[i];
      rc = spaa_buf_adds(&line, r->target - r->base > 0 ? "  +" : "  ");
      rc = rc ? rc : spaa_view_num(&line, r->target - r->base);
      if (pass)
        rc = rc ? rc : spaa_buf_addf(&line, " %s %.300s\n", r->key, r->path ? r->path : "");
      else
        rc = rc ? rc : spaa_buf_addf(&line, " %.2f%% -> %.2f%% %.300s\n",
                                     u->total[0] != 0 ? (double)(100 * r->base / u->total[0]) : 0.0,
                                     u->total[1] != 0 ? (double)(100 * r->target / u->total[1]) : 0.0,
                                     r->key);
      rc = rc ? rc : sum_line(b, &line, budget, &left);
    }
  }
  if (!rc && left)
    rc = spaa_buf_addf(b, "(%zu entries left out)\n", left);
  spaa_buf_free(&line);
  return rc;
}

int spaa_view_diff(const struct spaa_vset *base, const struct spaa_vset *target, int format,
                   size_t limit, size_t budget, spaa_sink_cb sink, void *ctx,
                   struct spaa_err *err)
{
  struct dtab fn, st;
  struct dunit u;
  struct spaa_buf b;
  size_t i;
  int rc, by_share = format & SPAA_DIFF_BY_SHARE;
  format &= ~SPAA_DIFF_BY_SHARE;
  if ((rc = diff_unit(base, target, &u, err)))
    return rc;
  memset(&fn, 0, sizeof(fn));
  memset(&st, 0, sizeof(st));
  spaa_strmap_init(&fn.ix);
  spaa_strmap_init(&st.ix);
  spaa_buf_init(&b, 0);
  rc = collect(&fn, base, u.scale[0], 0, 0, 0);
  rc = rc ? rc : collect(&fn, target, u.scale[1], 1, 0, 0);
  rc = rc ? rc : collect(&st, base, u.scale[0], 0, 1, format == SPAA_DIFF_COLLAPSED);
  rc = rc ? rc : collect(&st, target, u.scale[1], 1, 1, format == SPAA_DIFF_COLLAPSED);
  if (!rc && format == SPAA_DIFF_COLLAPSED) {
    if (st.n) /* two empty sides: no array at all, and qsort must not see NULL */
      qsort(st.r, st.n, sizeof(*st.r), path_cmp);
    for (i = 0; i < st.n && !rc; i++) {
      rc = spaa_buf_addf(&b, "%s ", st.r[i].key);
      rc = rc ? rc : spaa_view_num(&b, st.r[i].base);
      rc = rc ? rc : spaa_buf_add(&b, " ", 1);
      rc = rc ? rc : spaa_view_num(&b, st.r[i].target);
      rc = rc ? rc : spaa_buf_add(&b, "\n", 1);
      if (!rc && b.len >= (1 << 16)) {
        rc = sink(ctx, b.p, b.len);
        b.len = 0;
      }
    }
  } else if (!rc) {
    if (fn.n && by_share)
      qsort_r(fn.r, fn.n, sizeof(*fn.r), share_cmp, u.total);
    else if (fn.n)
      qsort(fn.r, fn.n, sizeof(*fn.r), delta_cmp);
    if (st.n && by_share)
      qsort_r(st.r, st.n, sizeof(*st.r), share_cmp, u.total);
    else if (st.n)
      qsort(st.r, st.n, sizeof(*st.r), delta_cmp);
    rc = format == SPAA_DIFF_SUMMARY ? diff_summary(&b, base, target, &u, &fn, &st, budget)
                                     : diff_json(&b, base, target, &u, &fn, &st, limit);
  }
  if (!rc && b.len)
    rc = sink(ctx, b.p, b.len);
  spaa_buf_free(&b);
  dtab_free(&fn);
  dtab_free(&st);
  if (rc && !err->code)
    spaa_err_set(err, rc, 0, 0, "writing the diff: %s", spaa_err_default(rc));
  return rc;
}
