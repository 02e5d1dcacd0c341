/* The agent summary of a stack set (view.h): a few lines in a fixed order, cut to a byte
 * budget line by line so that it is never longer than asked. */
#include <stdlib.h>
#include <string.h>

#include "spaa/view.h"

#define SUMMARY_TOP 20      /* most functions listed */
#define SUMMARY_PATHS 10    /* most stacks listed */
#define SUMMARY_KEEP_ENDS 4 /* frames kept at each end of a shortened path */

/* The summary under construction: entries are appended whole or not at all. */
struct sum {
  struct spaa_buf out;  /* what is kept */
  struct spaa_buf line; /* the entry being built */
  size_t budget;        /* bytes the answer may take, closing included */
  size_t reserve;       /* bytes kept back for the closing (JSON "]}" and the cut note) */
  size_t left_out;      /* entries that did not fit */
  int json;
};

/* Keep the entry in s->line when it fits, else count it as left out. */
static int sum_take(struct sum *s)
{
  int rc = 0;
  if (s->out.len + s->line.len + s->reserve <= s->budget)
    rc = spaa_buf_add(&s->out, s->line.p, s->line.len);
  else
    s->left_out++;
  s->line.len = 0;
  return rc;
}

static int pct(struct spaa_buf *b, spaa_vnum x, spaa_vnum total)
{
  return spaa_buf_addf(b, "%.2f", total != 0 ? (double)(100 * x / total) : 0.0);
}

/* Append s so that it stays on its line: control characters escaped (\n, \r, \t as those two
 * characters, the others and DEL as \xNN; a backslash is kept as it is), and, in a path
 * (in_path 1), ';' written ':' (as the collapsed view does) so that ';' only separates frames. */
static int put_text(struct spaa_buf *b, const char *s, int in_path)
{
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  int rc = 0;
  for (; *p && !rc; p++) {
    if (*p == '\n')
      rc = spaa_buf_add(b, "\\n", 2);
    else if (*p == '\r')
      rc = spaa_buf_add(b, "\\r", 2);
    else if (*p == '\t')
      rc = spaa_buf_add(b, "\\t", 2);
    else if (*p < 0x20 || *p == 0x7f)
      rc = spaa_buf_addf(b, "\\x%02x", *p);
    else if (*p == ';' && in_path)
      rc = spaa_buf_add(b, ":", 1);
    else
      rc = spaa_buf_add(b, p, 1);
  }
  return rc;
}

/* root;...;leaf with the middle cut out past 2 * SUMMARY_KEEP_ENDS frames; names as put_text
 * writes them in a path; SPAA_VIEW_NO_FRAMES for a stack without frames. */
static int path_text(struct spaa_buf *b, const struct spaa_vset *v, const struct spaa_vstack *st)
{
  size_t j;
  int rc = 0;
  if (!st->n)
    return spaa_buf_adds(b, SPAA_VIEW_NO_FRAMES);
  for (j = 0; j < st->n && !rc; j++) {
    if (st->n > 2 * SUMMARY_KEEP_ENDS && j == SUMMARY_KEEP_ENDS) {
      rc = spaa_buf_addf(b, ";...(%zu frames)...", st->n - 2 * SUMMARY_KEEP_ENDS);
      j = st->n - SUMMARY_KEEP_ENDS - 1;
      continue;
    }
    rc = j ? spaa_buf_add(b, ";", 1) : 0;
    rc = rc ? rc : put_text(b, v->names[st->path[j]], 1);
  }
  return rc;
}

static int by_value(const void *a, const void *b)
{
  const struct spaa_vstack *x = *(const struct spaa_vstack *const *)a;
  const struct spaa_vstack *y = *(const struct spaa_vstack *const *)b;
  if (x->value != y->value)
    return x->value < y->value ? 1 : -1;
  return strcmp(x->id, y->id);
}

static int sum_head(struct sum *s, const struct spaa_vset *v, const char *name)
{
  struct spaa_buf *b = &s->line;
  int rc;
  if (s->json) {
    rc = spaa_buf_adds(b, "{\"name\":");
    rc = rc ? rc : spaa_view_jstr(b, name);
    rc = rc ? rc : spaa_buf_adds(b, ",\"metric\":");
    rc = rc ? rc : spaa_view_jstr(b, v->metric ? v->metric : "");
    rc = rc ? rc : spaa_buf_adds(b, ",\"unit\":");
    rc = rc ? rc : (v->unit ? spaa_view_jstr(b, v->unit) : spaa_buf_adds(b, "null"));
    rc = rc ? rc : spaa_buf_adds(b, ",\"total\":");
    rc = rc ? rc : spaa_view_num(b, v->total);
    rc = rc ? rc : spaa_buf_addf(b, ",\"stacks\":%zu,\"top\":[", v->n_stacks);
  } else {
    rc = spaa_buf_adds(b, "summary of ");
    rc = rc ? rc : put_text(b, name, 0);
    rc = rc ? rc : spaa_buf_adds(b, "\nmetric ");
    rc = rc ? rc : put_text(b, v->metric ? v->metric : "?", 0);
    if (v->unit) {
      rc = rc ? rc : spaa_buf_adds(b, " (");
      rc = rc ? rc : put_text(b, v->unit, 0);
      rc = rc ? rc : spaa_buf_adds(b, ")");
    }
    rc = rc ? rc : spaa_buf_adds(b, ", total ");
    rc = rc ? rc : spaa_view_num(b, v->total);
    rc = rc ? rc : spaa_buf_addf(b, ", %zu stacks\ntop self functions (self%% total%% name):\n",
                                 v->n_stacks);
  }
  return rc ? rc : sum_take(s);
}

static int sum_top(struct sum *s, const struct spaa_vset *v)
{
  struct spaa_top_row *rows;
  size_t i, n, kept = s->out.len;
  int rc = spaa_view__top_rows(v, &rows, &n);
  for (i = 0; i < n && i < SUMMARY_TOP && !rc; i++) {
    struct spaa_buf *b = &s->line;
    if (s->json) {
      rc = spaa_buf_adds(b, s->out.len > kept ? ",{\"name\":" : "{\"name\":");
      rc = rc ? rc : spaa_view_jstr(b, rows[i].name);
      rc = rc ? rc : spaa_buf_adds(b, ",\"self_pct\":");
      rc = rc ? rc : pct(b, rows[i].self, v->total);
      rc = rc ? rc : spaa_buf_adds(b, ",\"total_pct\":");
      rc = rc ? rc : pct(b, rows[i].total, v->total);
      rc = rc ? rc : spaa_buf_adds(b, "}");
    } else {
      rc = spaa_buf_adds(b, "  ");
      rc = rc ? rc : pct(b, rows[i].self, v->total);
      rc = rc ? rc : spaa_buf_adds(b, "% ");
      rc = rc ? rc : pct(b, rows[i].total, v->total);
      rc = rc ? rc : spaa_buf_adds(b, "% ");
      rc = rc ? rc : put_text(b, rows[i].name, 0);
      rc = rc ? rc : spaa_buf_adds(b, "\n");
    }
    rc = rc ? rc : sum_take(s);
  }
  free(rows);
  if (!rc)
    rc = spaa_buf_adds(&s->line, s->json ? "],\"paths\":[" : "hottest stacks (% id path):\n");
  return rc ? rc : sum_take(s);
}

static int sum_paths(struct sum *s, const struct spaa_vset *v)
{
  const struct spaa_vstack **order = malloc((v->n_stacks ? v->n_stacks : 1) * sizeof(*order));
  size_t i, kept = s->out.len;
  int rc = 0;
  if (!order)
    return SPAA_E_NOMEM;
  for (i = 0; i < v->n_stacks; i++)
    order[i] = &v->stacks[i];
  qsort(order, v->n_stacks, sizeof(*order), by_value);
  for (i = 0; i < v->n_stacks && i < SUMMARY_PATHS && !rc; i++) {
    struct spaa_buf *b = &s->line;
    if (s->json) {
      rc = spaa_buf_adds(b, s->out.len > kept ? ",{\"id\":" : "{\"id\":");
      rc = rc ? rc : spaa_view_jstr(b, order[i]->id);
      rc = rc ? rc : spaa_buf_adds(b, ",\"pct\":");
      rc = rc ? rc : pct(b, order[i]->value, v->total);
      rc = rc ? rc : spaa_buf_adds(b, ",\"path\":");
      { /* the text summary's path, as a JSON string */
        struct spaa_buf path;
        spaa_buf_init(&path, 0);
        rc = rc ? rc : path_text(&path, v, order[i]);
        rc = rc ? rc : spaa_buf_add(&path, "", 1);
        rc = rc ? rc : spaa_view_jstr(b, path.p);
        spaa_buf_free(&path);
      }
      rc = rc ? rc : spaa_buf_adds(b, "}");
    } else {
      rc = spaa_buf_adds(b, "  ");
      rc = rc ? rc : pct(b, order[i]->value, v->total);
      rc = rc ? rc : spaa_buf_addf(b, "%% %s ", order[i]->id[0] ? order[i]->id : "-");
      rc = rc ? rc : path_text(b, v, order[i]);
      rc = rc ? rc : spaa_buf_adds(b, "\n");
    }
    rc = rc ? rc : sum_take(s);
  }
  free(order);
  return rc;
}

int spaa_view_summary(const struct spaa_vset *v, size_t budget, int json, const char *name,
                      spaa_sink_cb sink, void *ctx, struct spaa_err *err)
{
  struct sum s;
  int rc;
  memset(&s, 0, sizeof(s));
  spaa_buf_init(&s.out, 0);
  spaa_buf_init(&s.line, 0);
  s.budget = budget;
  s.json = json;
  s.reserve = json ? 32 : 40; /* the closing: ],"left_out":N}\n or "(N entries left out)\n" */
  rc = sum_head(&s, v, name ? name : "profile");
  rc = rc ? rc : sum_top(&s, v);
  rc = rc ? rc : sum_paths(&s, v);
  if (!rc && json)
    rc = spaa_buf_addf(&s.out, "],\"left_out\":%zu}\n", s.left_out);
  else if (!rc && s.left_out)
    rc = spaa_buf_addf(&s.out, "(%zu entries left out)\n", s.left_out);
  if (!rc && s.out.len > budget) /* a budget too small for even the head */
    s.out.len = 0;
  if (!rc && s.out.len)
    rc = sink(ctx, s.out.p, s.out.len);
  spaa_buf_free(&s.out);
  spaa_buf_free(&s.line);
  if (rc && !err->code)
    spaa_err_set(err, rc, 0, 0, "writing the summary: %s", spaa_err_default(rc));
  return rc;
}
