/* The views (codecs/spaa/view.c, view_out.c, view_flame.c, view_summary.c, view_diff.c) over
 * a small set with recursion, with exact expected answers: top, flamegraph (whole, merged into
 * "other" within a budget, cut below the deepest stack, a long tail within budgets), folded
 * stacks, speedscope, focus/ignore filters, diff against itself and a changed set, the
 * summary's budget, and a declared metric no stack carries (an empty set). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spaa/view.h"

struct tstack {
  const char *path; /* "main;a;b" root first */
  double value;
  const char *id;
};

static const struct tstack base_set[] = {
    {"main;a;b", 10, "s1"}, {"main;a", 5, "s2"}, {"main;c;a;a", 3, "s3"}, {"main;c", 2, "s4"}};

static void fill(struct spaa_vset *v, const struct tstack *s, size_t n)
{
  size_t i;
  v->metric = "cpu";
  for (i = 0; i < n; i++) {
    char buf[128], *save = NULL, *tok;
    const char *names[16];
    size_t k = 0;
    snprintf(buf, sizeof(buf), "%s", s[i].path);
    for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
      names[k++] = tok;
    assert_int_equal(spaa_vset_add(v, names, k, s[i].value, s[i].id), 0);
  }
}

static int sink(void *ctx, const void *data, size_t len)
{
  return spaa_buf_add(ctx, data, len);
}

/* Run a view into a string (owned by the caller). */
static char *run(int which, const struct spaa_vset *v, size_t arg)
{
  struct spaa_buf b;
  struct spaa_err err;
  int rc;
  spaa_buf_init(&b, 0);
  memset(&err, 0, sizeof(err));
  rc = which == 0 ? spaa_view_top(v, arg, sink, &b, &err)
     : which == 1 ? spaa_view_flamegraph(v, arg, sink, &b, &err)
     : which == 2 ? spaa_view_collapsed(v, sink, &b, &err)
     : which == 3 ? spaa_view_speedscope(v, "p", sink, &b, &err)
                  : spaa_view_summary(v, arg, which == 5, "p", sink, &b, &err);
  assert_int_equal(rc, 0);
  spaa_buf_add(&b, "", 1);
  return spaa_buf_steal(&b, NULL);
}

static void test_top(void **state)
{
  struct spaa_vset v;
  char *out;
  (void)state;
  spaa_vset_init(&v);
  fill(&v, base_set, 4);
  out = run(0, &v, 2);
  assert_string_equal(out, "{\"metric\":\"cpu\",\"unit\":null,\"total\":20,\"metrics\":[\"cpu\"],"
                           "\"functions\":4,\"top\":["
                           "{\"name\":\"b\",\"self\":10,\"self_pct\":50.00,\"total\":10,"
                           "\"total_pct\":50.00},{\"name\":\"a\",\"self\":8,\"self_pct\":40.00,"
                           "\"total\":18,\"total_pct\":90.00}]}\n");
  free(out);
  spaa_vset_free(&v);
}

static void test_flamegraph(void **state)
{
  struct spaa_vset v;
  char *out;
  (void)state;
  spaa_vset_init(&v);
  fill(&v, base_set, 4);
  /* 3 nodes are fewer than the deepest stack's 4 frames: cut, the 3 heaviest kept */
  out = run(1, &v, 3);
  assert_string_equal(out, "{\"metric\":\"cpu\",\"unit\":null,\"total\":20,\"metrics\":[\"cpu\"],"
                           "\"nodes\":3,\"trimmed_nodes\":3,\"trimmed_value\":5,\"other_nodes\":1,"
                           "\"other_max\":5,\"cut_value\":5,\"tree\":{\"name\":\"root\","
                           "\"self\":0,\"total\":20,\"children\":[{\"name\":\"main\",\"self\":0,"
                           "\"total\":20,\"children\":[{\"name\":\"a\",\"self\":5,\"total\":15,"
                           "\"children\":[{\"name\":\"b\",\"self\":10,\"total\":10,\"children\":"
                           "[]}]},{\"name\":\"other\",\"merged\":1,\"self\":5,\"total\":5,"
                           "\"children\":[]}]}]}}\n");
  free(out);
  out = run(1, &v, 0);
  assert_non_null(strstr(out, "\"nodes\":6,\"trimmed_nodes\":0,\"trimmed_value\":0,"
                              "\"other_nodes\":0,\"other_max\":null,\"cut_value\":0,"));
  assert_non_null(strstr(out, "{\"name\":\"c\",\"self\":2,\"total\":5,\"children\":[{\"name\":"
                              "\"a\",\"self\":0,\"total\":3,\"children\":[{\"name\":\"a\","
                              "\"self\":3,\"total\":3,\"children\":[]}]}]}"));
  free(out);
  spaa_vset_free(&v);
}

/* Every node of a flamegraph answer: its total is its self plus its children's totals; counts
 * the nodes besides the root into *n and the "other" ones into *others, the depth into *depth. */
static void flame_walk(json_t *node, size_t d, size_t *n, size_t *others, size_t *depth)
{
  json_t *kids = json_object_get(node, "children"), *k;
  double sum = json_number_value(json_object_get(node, "self"));
  size_t i;
  if (d > *depth)
    *depth = d;
  if (d)
    (*n)++;
  if (json_object_get(node, "merged")) {
    assert_string_equal(json_string_value(json_object_get(node, "name")), "other");
    (*others)++;
  }
  json_array_foreach(kids, i, k) {
    sum += json_number_value(json_object_get(k, "total"));
    flame_walk(k, d + 1, n, others, depth);
  }
  assert_true(sum == json_number_value(json_object_get(node, "total")));
}

/* A wide tree: main calls one heavy function and 20 light ones that each call "leaf". Past the
 * budget the light ones are merged into one "other" whose child is their leaves merged: every
 * stack still drawn to its leaf, the lightest named nodes being lone children. */
static void test_flamegraph_merged(void **state)
{
  struct spaa_vset v;
  char *out, path[32];
  size_t i;
  (void)state;
  spaa_vset_init(&v);
  v.metric = "cpu";
  {
    const char *hot[] = {"main", "hot"};
    assert_int_equal(spaa_vset_add(&v, hot, 2, 50, NULL), 0);
  }
  for (i = 1; i <= 20; i++) {
    const char *names[3] = {"main", path, "leaf"};
    snprintf(path, sizeof(path), "f%zu", i);
    assert_int_equal(spaa_vset_add(&v, names, 3, 1, NULL), 0);
  }
  /* 42 nodes in 10: main, hot, f1, f10, f11 (the heaviest, then by name) each with its leaf
   * (a lone child keeps its name), and the other 17 in "other" above their 17 leaves */
  out = run(1, &v, 10);
  assert_string_equal(out, "{\"metric\":\"cpu\",\"unit\":null,\"total\":70,\"metrics\":[\"cpu\"],"
                           "\"nodes\":9,\"trimmed_nodes\":34,\"trimmed_value\":17,\"other_nodes\":1,"
                           "\"other_max\":1,\"cut_value\":0,\"tree\":{\"name\":\"root\",\"self\":0,"
                           "\"total\":70,\"children\":[{\"name\":\"main\",\"self\":0,\"total\":70,"
                           "\"children\":[{\"name\":\"hot\",\"self\":50,\"total\":50,\"children\":[]},"
                           "{\"name\":\"f1\",\"self\":0,\"total\":1,\"children\":[{\"name\":\"leaf\","
                           "\"self\":1,\"total\":1,\"children\":[]}]},{\"name\":\"f10\",\"self\":0,"
                           "\"total\":1,\"children\":[{\"name\":\"leaf\",\"self\":1,\"total\":1,"
                           "\"children\":[]}]},{\"name\":\"f11\",\"self\":0,\"total\":1,\"children\":"
                           "[{\"name\":\"leaf\",\"self\":1,\"total\":1,\"children\":[]}]},{\"name\":"
                           "\"other\",\"merged\":17,\"self\":0,\"total\":17,\"children\":[{\"name\":"
                           "\"leaf\",\"self\":17,\"total\":17,\"children\":[]}]}]}]}}\n");
  free(out);
  /* 3 nodes: the coarsest layout, one node a depth (hot merged too: nothing else fits) */
  out = run(1, &v, 3);
  assert_non_null(strstr(out, "\"nodes\":2,\"trimmed_nodes\":41,\"trimmed_value\":70,"
                              "\"other_nodes\":1,\"other_max\":50,\"cut_value\":0,"));
  assert_non_null(strstr(out, "{\"name\":\"other\",\"merged\":21,\"self\":50,\"total\":70,"
                              "\"children\":[{\"name\":\"leaf\",\"self\":20,\"total\":20,"));
  free(out);
  /* 2 nodes, below the depth: cut */
  out = run(1, &v, 2);
  assert_non_null(strstr(out, "\"nodes\":2,\"trimmed_nodes\":40,\"trimmed_value\":20,"
                              "\"other_nodes\":1,\"other_max\":1,\"cut_value\":20,"));
  free(out);
  spaa_vset_free(&v);
}

/* A long tail like google-pprof's large.cpu: chains of distinct functions, one sample each,
 * alternating with one dispatcher, 1,793 nodes. Each budget is used and bounds the
 * answer (its "other" nodes included), the answer is as deep as the tree, at most half the
 * total is cut short, and every total adds up. */
static void test_flamegraph_long_tail(void **state)
{
  static const size_t budgets[] = {40, 100, 500, 2000};
  struct spaa_vset v;
  char names_buf[24][16];
  size_t i, j, b;
  (void)state;
  spaa_vset_init(&v);
  v.metric = "cpu";
  for (i = 0; i < 300; i++) { /* depth 4 to 23, functions f0..f96 in a fixed scramble */
    const char *names[24];
    size_t n = 4 + i % 20;
    names[0] = "main";
    for (j = 1; j < n; j++) {
      if (j % 2)
        names[j] = "next";
      else {
        snprintf(names_buf[j], sizeof(names_buf[j]), "f%zu", (i * 31 + j * 17) % 97);
        names[j] = names_buf[j];
      }
    }
    names[n - 1] = "now";
    assert_int_equal(spaa_vset_add(&v, names, n, i % 7 ? 1 : 3, NULL), 0);
  }
  for (b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
    char *out = run(1, &v, budgets[b]);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    size_t n = 0, others = 0, depth = 0;
    assert_non_null(doc);
    flame_walk(json_object_get(doc, "tree"), 0, &n, &others, &depth);
    assert_true(n <= budgets[b]);
    assert_true(n > budgets[b] * 3 / 4); /* the budget is used */
    assert_int_equal(depth, 23);
    assert_true(json_integer_value(json_object_get(doc, "cut_value")) <=
                json_integer_value(json_object_get(doc, "total")) / 2);
    assert_int_equal(json_integer_value(json_object_get(doc, "other_nodes")), others);
    assert_int_equal(json_integer_value(json_object_get(doc, "nodes")) + others, n);
    json_decref(doc);
    free(out);
  }
  spaa_vset_free(&v);
}

/* One light stack far deeper than the rest (a sample of deep recursion): within a budget
 * above its depth, the heavy frames are named and the deep one is cut after a frame or two,
 * whatever the budget; under it, cut (the heaviest nodes kept). */
static void test_flamegraph_deep_light(void **state)
{
  static const size_t budgets[] = {1998, 2000, 2004};
  const char *heavy[][4] = {{"main", "serve", "handle", "db.query"},
                            {"main", "serve", "handle", "render"},
                            {"main", "serve", "gc", NULL},
                            {"bg", "flush", NULL, NULL}};
  static const int64_t w[] = {900, 500, 200, 100};
  const char **deep = malloc(1998 * sizeof(*deep));
  struct spaa_vset v;
  size_t i, b;
  (void)state;
  spaa_vset_init(&v);
  v.metric = "cpu";
  for (i = 0; i < 4; i++)
    assert_int_equal(spaa_vset_add(&v, heavy[i], heavy[i][3] ? 4 : heavy[i][2] ? 3 : 2, w[i],
                                   NULL), 0);
  deep[0] = "main";
  deep[1] = "parse";
  for (i = 2; i < 1998; i++)
    deep[i] = "recurse";
  assert_int_equal(spaa_vset_add(&v, deep, 1998, 1, NULL), 0);
  for (b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
    char *out = run(1, &v, budgets[b]);
    if (!strstr(out, "{\"name\":\"db.query\",\"self\":900,\"total\":900,") ||
        !strstr(out, "{\"name\":\"serve\",\"self\":0,\"total\":1600,") ||
        !strstr(out, "{\"name\":\"flush\",\"self\":100,\"total\":100,"))
      fail_msg("budget %zu: the heavy frames are not all named: %.600s", budgets[b], out);
    assert_non_null(strstr(out, "\"cut_value\":1,"));
    free(out);
  }
  free(deep);
  spaa_vset_free(&v);
}

static void test_collapsed_and_speedscope(void **state)
{
  static const struct tstack dup[] = {{"x;y", 1, "a"}, {"x;y", 2, "b"}, {"x;y;z", 3, "c"}};
  struct spaa_vset v;
  char *out;
  (void)state;
  spaa_vset_init(&v);
  fill(&v, base_set, 4);
  out = run(2, &v, 0);
  assert_string_equal(out, "main;a;b 10\nmain;a 5\nmain;c;a;a 3\nmain;c 2\n");
  free(out);
  out = run(3, &v, 0);
  assert_non_null(strstr(out, "\"shared\":{\"frames\":[{\"name\":\"main\"},{\"name\":\"a\"},"
                              "{\"name\":\"b\"},{\"name\":\"c\"}]}"));
  assert_non_null(strstr(out, "\"unit\":\"none\",\"startValue\":0,\"endValue\":20,\"samples\":"
                              "[[0,1,2],[0,1],[0,3,1,1],[0,3]],\"weights\":[10,5,3,2]}]}"));
  free(out);
  spaa_vset_free(&v);
  spaa_vset_init(&v); /* the same path twice: one line, summed */
  fill(&v, dup, 3);
  out = run(2, &v, 0);
  assert_string_equal(out, "x;y 3\nx;y;z 3\n");
  free(out);
  spaa_vset_free(&v);
}

static void test_filters(void **state)
{
  struct spaa_vset v;
  struct spaa_err err;
  (void)state;
  memset(&err, 0, sizeof(err));
  spaa_vset_init(&v);
  assert_int_equal(spaa_vset_filters(&v, "^c$", NULL, &err), 0);
  fill(&v, base_set, 4);
  assert_int_equal(v.n_stacks, 2);
  assert_true(v.total == 5);
  assert_int_equal(v.dropped, 2);
  spaa_vset_free(&v);
  spaa_vset_init(&v);
  assert_int_equal(spaa_vset_filters(&v, NULL, "^b$", &err), 0);
  fill(&v, base_set, 4);
  assert_true(v.total == 10);
  spaa_vset_free(&v);
  spaa_vset_init(&v);
  assert_int_equal(spaa_vset_filters(&v, "a(", NULL, &err), SPAA_E_BAD_REQUEST);
  assert_non_null(strstr(err.msg, "'focus'"));
  memset(&err, 0, sizeof(err));
  {
    char big[SPAA_VIEW_MAX_REGEX + 2];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    assert_int_equal(spaa_vset_filters(&v, NULL, big, &err), SPAA_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "'ignore'"));
  }
  spaa_vset_free(&v);
}

/* Patterns that cost far more than their bytes are refused before regcomp: backreferences
 * (matching backtracks) and bounded repetitions too large written out (compiling expands
 * them); patterns alike without those pass, and a refusal says which filter and why. */
static void test_filter_cost(void **state)
{
  static const char *const refused[] = {
      "(.*)(.*)(.*)\\3\\2\\1z", "(a)\\1", "((a{255}){255}){255}", "(a{100}){100}",
      "x{5000}", "(ab|cd){4097}", "a{99999999999999999999}", "((((((a{9}){9}){9}){9}){9}){9})"};
  static const char *const fine[] = {
      "^main$", "(foo|bar)+baz", "[\\1]x", "a\\.b", "x{4000}", "(a{10}){10}", "[[:digit:]]{3}",
      "[]1{}]{2}", "\\(a{2}\\)", "json\\{1\\}"};
  struct spaa_vset v;
  struct spaa_err err;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
    spaa_vset_init(&v);
    memset(&err, 0, sizeof(err));
    assert_int_equal(spaa_vset_filters(&v, refused[i], NULL, &err), SPAA_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "'focus'"));
    if (!strstr(err.msg, "backreferences") && !strstr(err.msg, "too large"))
      fail_msg("'%s': %s", refused[i], err.msg);
    spaa_vset_free(&v);
  }
  for (i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
    spaa_vset_init(&v);
    memset(&err, 0, sizeof(err));
    if (spaa_vset_filters(&v, NULL, fine[i], &err))
      fail_msg("'%s' refused: %s", fine[i], err.msg);
    spaa_vset_free(&v);
  }
}

/* A metered set reports its names, paths and arrays as they grow, is refused past the
 * meter's room, and gives everything back when freed. */
static void test_metered(void **state)
{
  static const char *const names[] = {"main", "run", "work", "leaf"};
  struct spaa_meter m;
  struct spaa_vset v;
  char fn[32];
  const char *path[2];
  int i, rc = 0;
  (void)state;
  memset(&m, 0, sizeof(m));
  m.room = 1 << 20;
  spaa_vset_init(&v);
  v.meter = &m;
  assert_int_equal(spaa_vset_add(&v, names, 4, 1, NULL), 0);
  assert_true(m.held >= 4 * sizeof(uint32_t) + 4 * 5);
  assert_int_equal(m.held, v.metered);
  path[0] = "main";
  for (i = 0; i < 100000 && !rc; i++) { /* names of their own: past 1 MiB */
    snprintf(fn, sizeof(fn), "f%d", i);
    path[1] = fn;
    rc = spaa_vset_add(&v, path, 2, 1, NULL);
  }
  assert_int_equal(rc, SPAA_E_NOMEM);
  assert_int_not_equal(m.refused, 0);
  assert_true(m.held <= m.room);
  assert_true(v.n_stacks > 1000);
  spaa_vset_free(&v);
  assert_int_equal(m.held, 0);
}

static char *diff(const struct spaa_vset *a, const struct spaa_vset *b, int format)
{
  struct spaa_buf out;
  struct spaa_err err;
  spaa_buf_init(&out, 0);
  memset(&err, 0, sizeof(err));
  assert_int_equal(spaa_view_diff(a, b, format, 0, 4096, sink, &out, &err), 0);
  spaa_buf_add(&out, "", 1);
  return spaa_buf_steal(&out, NULL);
}

static void test_diff(void **state)
{
  static const struct tstack changed[] = {{"main;a;b", 4, "s1"}, {"main;a", 5, "s2"},
                                          {"main;c;a;a", 3, "s3"}, {"main;c", 2, "s4"},
                                          {"main;d", 6, "s5"}};
  struct spaa_vset a, b;
  char *out;
  (void)state;
  spaa_vset_init(&a);
  spaa_vset_init(&b);
  fill(&a, base_set, 4);
  fill(&b, changed, 5);
  { /* two empty sets naming no metric (the API answers 404 for a selection of no profile,
     * so these are sets of profiles without samples): an answer in every format, the metric
     * null as the unit, never a made-up "" or "?" */
    struct spaa_vset e;
    spaa_vset_init(&e);
    out = diff(&e, &e, SPAA_DIFF_JSON);
    assert_string_equal(out, "{\"metric\":null,\"unit\":null,\"base_total\":0,"
                             "\"target_total\":0,\"delta\":0,\"n_functions\":0,\"functions\":[],"
                             "\"n_stacks\":0,\"stacks\":[]}\n");
    free(out);
    out = diff(&e, &e, SPAA_DIFF_COLLAPSED);
    assert_string_equal(out, "");
    free(out);
    out = diff(&e, &e, SPAA_DIFF_SUMMARY);
    assert_true(strncmp(out, "diff: base total 0, target total 0\n", 35) == 0);
    free(out);
    /* one set names it: both formats take it */
    out = diff(&e, &a, SPAA_DIFF_JSON);
    assert_true(strncmp(out, "{\"metric\":\"cpu\",", 15) == 0);
    free(out);
    out = diff(&e, &a, SPAA_DIFF_SUMMARY);
    assert_true(strncmp(out, "diff of cpu: base total 0, target total 20\n", 43) == 0);
    free(out);
    spaa_vset_free(&e);
  }
  out = diff(&a, &a, SPAA_DIFF_JSON); /* against itself: all zeros */
  assert_null(strstr(out, "\"delta\":-"));
  assert_null(strstr(out, "\"status\":\"changed\""));
  assert_non_null(strstr(out, "\"base_total\":20,\"target_total\":20,\"delta\":0,"));
  free(out);
  out = diff(&a, &b, SPAA_DIFF_JSON);
  assert_non_null(strstr(out, "\"functions\":[{\"name\":\"b\",\"base\":10,\"target\":4,"
                              "\"delta\":-6,\"base_pct\":50.00,\"target_pct\":20.00,"
                              "\"delta_pct\":-30.00,\"status\":\"changed\"},{\"name\":\"d\","
                              "\"base\":0,\"target\":6,\"delta\":6,\"base_pct\":0.00,"
                              "\"target_pct\":30.00,\"delta_pct\":30.00,\"status\":\"new\"}"));
  assert_non_null(strstr(out, "\"stacks\":[{\"id\":\"s1\",\"path\":\"main;a;b\",\"base\":10,"
                              "\"target\":4,\"delta\":-6"));
  free(out);
  out = diff(&a, &b, SPAA_DIFF_COLLAPSED);
  assert_string_equal(out, "main;a 5 5\nmain;a;b 10 4\nmain;c 2 2\nmain;c;a;a 3 3\n"
                           "main;d 0 6\n");
  free(out);
  spaa_vset_free(&a);
  spaa_vset_free(&b);
}

/* sort=share: a function whose value stays while the total grows has moved by share, and
 * leads a diff ranked by it, where by |delta| the one that grew a little leads */
static void test_diff_by_share(void **state)
{
  static const struct tstack base[] = {{"main;a", 50, "s1"}, {"main;b", 50, "s2"}};
  static const struct tstack target[] = {{"main;a", 50, "s1"}, {"main;b", 150, "s2"},
                                         {"main;c", 1, "s3"}};
  struct spaa_vset a, b;
  char *out;
  (void)state;
  spaa_vset_init(&a);
  spaa_vset_init(&b);
  fill(&a, base, 2);
  fill(&b, target, 3);
  out = diff(&a, &b, SPAA_DIFF_JSON); /* |delta|: b (+100), c (+1), a (0) */
  assert_non_null(strstr(out, "\"functions\":[{\"name\":\"b\""));
  assert_true(strstr(out, "{\"name\":\"c\"") < strstr(out, "{\"name\":\"a\""));
  free(out);
  out = diff(&a, &b, SPAA_DIFF_JSON | SPAA_DIFF_BY_SHARE); /* a -25.12, b +24.63, c +0.50 */
  assert_non_null(strstr(out, "\"functions\":[{\"name\":\"a\",\"base\":50,\"target\":50,"
                              "\"delta\":0,\"base_pct\":50.00,\"target_pct\":24.88,"
                              "\"delta_pct\":-25.12,\"status\":\"same\"},{\"name\":\"b\""));
  free(out);
  out = diff(&a, &b, SPAA_DIFF_SUMMARY | SPAA_DIFF_BY_SHARE);
  assert_true(strstr(out, " a\n") < strstr(out, " b\n"));
  free(out);
  spaa_vset_free(&a);
  spaa_vset_free(&b);
}

static void test_summary_budget(void **state)
{
  struct spaa_vset v;
  size_t budget;
  int json;
  (void)state;
  spaa_vset_init(&v);
  fill(&v, base_set, 4);
  for (json = 0; json < 2; json++)
    for (budget = 120; budget < 1200; budget += 37) {
      char *a = run(json ? 5 : 4, &v, budget), *b = run(json ? 5 : 4, &v, budget);
      assert_true(strlen(a) <= budget);
      assert_string_equal(a, b); /* deterministic */
      free(a);
      free(b);
    }
  {
    char *t = run(4, &v, 4096);
    assert_non_null(strstr(t, "  50.00% 50.00% b\n"));
    assert_non_null(strstr(t, "  50.00% s1 main;a;b\n"));
    free(t);
  }
  spaa_vset_free(&v);
}

/* Timestamped samples on two threads become one evented profile each: frames opened and
 * closed where consecutive stacks part, times relative to the first sample, the last sample
 * as long as the gap before it; a sample of a stack the set lacks is a gap. */
static void test_speedscope_evented(void **state)
{
  static const struct {
    int64_t tid, t;
    const char *stack;
  } ticks[] = {{7, 1000000100, "s1"}, {9, 1000000150, "s4"}, {7, 1000000110, "s2"},
               {7, 1000000120, "s1"}, {7, 1000000130, "nope"}, {7, 1000000140, "s3"}};
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_vset v;
  struct spaa_buf b;
  struct spaa_err err;
  struct spaa_event *e;
  struct spaa_thread *th;
  size_t i;
  (void)state;
  memset(&err, 0, sizeof(err));
  spaa_vset_init(&v);
  fill(&v, base_set, 4);
  assert_non_null(p);
  e = spaa_add_event(p);
  e->name = spaa_strdup(p, "wall");
  p->header.time_unit = spaa_strdup(p, "nanoseconds");
  th = spaa_add_thread(p);
  th->tid = 7;
  th->comm = spaa_strdup(p, "main \"ui\"");
  for (i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++) {
    struct spaa_sample *sm = spaa_add_sample(p);
    sm->has_timestamp = sm->has_tid = 1;
    sm->timestamp.i = ticks[i].t;
    sm->tid = ticks[i].tid;
    sm->stack_id = spaa_strdup(p, ticks[i].stack);
  }
  assert_true(spaa_view_has_timeline(p, NULL));
  assert_false(spaa_view_has_timeline(p, "cpu"));
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_view_speedscope_evented(&v, p, NULL, "p", sink, &b, &err), 0);
  spaa_buf_add(&b, "", 1);
  /* names: main 0, a 1, b 2, c 3 */
  /* names: main 0, a 1, b 2, c 3. Thread 7 (from 0): s1 main;a;b, 10 s2 main;a, 20 s1,
   * 30 a gap, 40 s3 main;c;a;a, lasting to 50 (its gap before); thread 9's lone sample at 50
   * lasts the shortest gap seen (10) */
  assert_string_equal(
      b.p, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":"
           "\"spaa-relay\",\"name\":\"p\",\"activeProfileIndex\":0,\"shared\":{\"frames\":["
           "{\"name\":\"main\"},{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]},"
           "\"profiles\":[{\"type\":\"evented\",\"name\":\"main \\\"ui\\\"\",\"unit\":"
           "\"nanoseconds\",\"startValue\":0,\"endValue\":50,\"events\":["
           "{\"type\":\"O\",\"frame\":0,\"at\":0},{\"type\":\"O\",\"frame\":1,\"at\":0},"
           "{\"type\":\"O\",\"frame\":2,\"at\":0},{\"type\":\"C\",\"frame\":2,\"at\":10},"
           "{\"type\":\"O\",\"frame\":2,\"at\":20},{\"type\":\"C\",\"frame\":2,\"at\":30},"
           "{\"type\":\"C\",\"frame\":1,\"at\":30},{\"type\":\"C\",\"frame\":0,\"at\":30},"
           "{\"type\":\"O\",\"frame\":0,\"at\":40},{\"type\":\"O\",\"frame\":3,\"at\":40},"
           "{\"type\":\"O\",\"frame\":1,\"at\":40},{\"type\":\"O\",\"frame\":1,\"at\":40},"
           "{\"type\":\"C\",\"frame\":1,\"at\":50},{\"type\":\"C\",\"frame\":1,\"at\":50},"
           "{\"type\":\"C\",\"frame\":3,\"at\":50},{\"type\":\"C\",\"frame\":0,\"at\":50}]},"
           "{\"type\":\"evented\",\"name\":\"thread 9\",\"unit\":\"nanoseconds\","
           "\"startValue\":50,\"endValue\":60,\"events\":["
           "{\"type\":\"O\",\"frame\":0,\"at\":50},{\"type\":\"O\",\"frame\":3,\"at\":50},"
           "{\"type\":\"C\",\"frame\":3,\"at\":60},{\"type\":\"C\",\"frame\":0,\"at\":60}]}]}\n");
  spaa_buf_free(&b);
  /* a sample carrying its own weight (an off-CPU duration) measures it: no timeline, the
   * sampled form, whose totals are the views' */
  assert_int_equal(spaa_weights_add(p, &p->samples[2].weights, "wall", spaa_int(412), NULL), 0);
  assert_false(spaa_view_has_timeline(p, NULL));
  spaa_vset_free(&v);
  spaa_profile_free(p);
}

/* A profile of one timestamped sample (no gap to go by): the sample lasts the event's
 * sampling interval, from its frequency or from a period in the time unit; 0 without. */
static void test_speedscope_evented_lone(void **state)
{
  static const char *const want[] = {"\"endValue\":100,", "\"endValue\":10000000,",
                                     "\"endValue\":0,"};
  int k;
  (void)state;
  for (k = 0; k < 3; k++) {
    struct spaa_profile *p = spaa_profile_new();
    struct spaa_vset v;
    struct spaa_buf b;
    struct spaa_err err;
    struct spaa_event *e;
    struct spaa_sample *sm;
    memset(&err, 0, sizeof(err));
    spaa_vset_init(&v);
    fill(&v, base_set, 4);
    e = spaa_add_event(p);
    e->name = spaa_strdup(p, "cpu");
    p->header.time_unit = spaa_strdup(p, "nanoseconds");
    if (k == 0) { /* 10 MHz: 100 ns */
      e->has_frequency_hz = 1;
      e->frequency_hz = spaa_int(10000000);
    } else if (k == 1) { /* a period of 10 ms in nanoseconds, as OTLP gives it */
      e->has_sample_period = 1;
      e->sample_period = spaa_int(10000000);
      e->sampling_extra = json_pack("{s:s}", "x_otel_period_unit", "nanoseconds");
    }
    sm = spaa_add_sample(p);
    sm->has_timestamp = sm->has_tid = 1;
    sm->timestamp.i = 1000000000;
    sm->tid = 7;
    sm->stack_id = spaa_strdup(p, "s1");
    spaa_buf_init(&b, 0);
    assert_int_equal(spaa_view_speedscope_evented(&v, p, NULL, "p", sink, &b, &err), 0);
    spaa_buf_add(&b, "", 1);
    if (!strstr(b.p, want[k]))
      fail_msg("case %d: no %s in %s", k, want[k], b.p);
    spaa_buf_free(&b);
    spaa_vset_free(&v);
    spaa_profile_free(p);
  }
}

/* A metric the event declares but no stack carries is an empty set, not an error: the
 * primary metric of an event without stacks, a sample type x_pprof_sample_types lists (named
 * as the pprof converter names them: "" -> sample_type_<i>, a repeat -> <type>_<i>); any
 * other metric is SPAA_E_USAGE. */
static void test_declared_metric_without_stacks(void **state)
{
  static const struct {
    const char *metric;
    int rc;
    const char *unit;
  } t[] = {{"samples", 0, NULL},          {"sample_type_0", 0, "count"},
           {"cpu", 0, "nanoseconds"},      {"cpu_2", 0, "nanoseconds"},
           {"cpu_1", SPAA_E_USAGE, NULL}, {"wall", SPAA_E_USAGE, NULL}};
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_event *e;
  size_t i;
  (void)state;
  assert_non_null(p);
  e = spaa_add_event(p);
  e->name = spaa_strdup(p, "cpu");
  e->primary_metric = spaa_strdup(p, "samples");
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    struct spaa_vset v;
    struct spaa_err err;
    int rc;
    if (i == 1) /* from here on, the header lists the pprof sample types */
      p->header.extra = json_pack("{s:[{s:s,s:s},{s:s,s:s},{s:s,s:s}]}", "x_pprof_sample_types",
                                  "type", "", "unit", "count", "type", "cpu", "unit",
                                  "nanoseconds", "type", "cpu", "unit", "nanoseconds");
    memset(&err, 0, sizeof(err));
    spaa_vset_init(&v);
    rc = spaa_vset_from_profile(&v, p, NULL, t[i].metric, 0, &err);
    assert_int_equal(rc, t[i].rc);
    if (!rc) {
      char *out = run(0, &v, 10);
      char want[160];
      snprintf(want, sizeof(want), "{\"metric\":\"%s\",\"unit\":%s%s%s,\"total\":0,"
               "\"metrics\":[\"%s\"],\"functions\":0,\"top\":[]}\n", t[i].metric,
               t[i].unit ? "\"" : "", t[i].unit ? t[i].unit : "null", t[i].unit ? "\"" : "",
               t[i].metric);
      assert_string_equal(out, want);
      free(out);
    } else {
      assert_non_null(strstr(err.msg, t[i].metric));
    }
    spaa_vset_free(&v);
  }
  spaa_profile_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_top),
      cmocka_unit_test(test_flamegraph),
      cmocka_unit_test(test_flamegraph_merged),
      cmocka_unit_test(test_flamegraph_long_tail),
      cmocka_unit_test(test_flamegraph_deep_light),
      cmocka_unit_test(test_collapsed_and_speedscope),
      cmocka_unit_test(test_filters),
      cmocka_unit_test(test_filter_cost),
      cmocka_unit_test(test_metered),
      cmocka_unit_test(test_diff),
      cmocka_unit_test(test_diff_by_share),
      cmocka_unit_test(test_summary_budget),
      cmocka_unit_test(test_speedscope_evented), cmocka_unit_test(test_speedscope_evented_lone),
      cmocka_unit_test(test_declared_metric_without_stacks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
