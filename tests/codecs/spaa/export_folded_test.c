/* The "collapsed" exporter (codecs/spaa/export_folded.c): a table of small models (names with
 * ';' and newlines, several events and metrics, empty stacks, both frame orders, unknown
 * frames), its refusals, output split across sink calls, and sink failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spaa/export.h"

#define MAXN 8

struct tframe {
  uint64_t id;
  const char *func; /* NULL: leave the frame without a name */
};

struct tstack {
  const char *event;
  uint64_t frames[MAXN]; /* in the model's frame order */
  size_t n;
  const char *weights;   /* "metric=value,..."; a value with '.' or 'e' is a double */
};

struct tcase {
  const char *name;
  int root_to_leaf;          /* frame_order */
  const char *events[4][2];  /* {name, primary metric (NULL: none)} */
  struct tframe frames[MAXN];
  struct tstack stacks[MAXN];
  const char *event, *metric; /* the options */
  int rc;                     /* expected return */
  const char *want;           /* expected output */
};

static const struct tcase CASES[] = {
  {"leaf first, two stacks", 0, {{"cpu", "samples"}},
   {{1, "main"}, {2, "run"}, {3, "work"}},
   {{"cpu", {3, 2, 1}, 3, "samples=5"}, {"cpu", {2, 1}, 2, "samples=2"}},
   NULL, NULL, 0, "main;run;work 5\nmain;run 2\n"},
  {"root first", 1, {{"cpu", "samples"}},
   {{1, "main"}, {2, "run"}, {3, "work"}},
   {{"cpu", {1, 2, 3}, 3, "samples=5"}},
   NULL, NULL, 0, "main;run;work 5\n"},
  {"';' and line breaks inside names", 0, {{"cpu", "samples"}},
   {{1, "a;b"}, {2, "std::vec<T;N>"}, {3, "two\nlines\r"}, {4, ";;"}},
   {{"cpu", {3, 2, 1}, 3, "samples=1"}, {"cpu", {4}, 1, "samples=2"}},
   NULL, NULL, 0, "a:b;std::vec<T:N>;two lines  1\n:: 2\n"},
  {"empty stack, unnamed and unknown frames", 0, {{"cpu", "samples"}},
   {{1, "main"}, {2, ""}, {3, NULL}},
   {{"cpu", {0}, 0, "samples=7"}, {"cpu", {3, 2, 1}, 3, "samples=1"},
    {"cpu", {99, 1}, 2, "samples=4"}},
   NULL, NULL, 0, "(no frames) 7\nmain;[unknown];[unknown] 1\nmain;[frame 99] 4\n"},
  {"the first event by default", 0, {{"cpu", "samples"}, {"alloc", "bytes"}},
   {{1, "main"}, {2, "malloc"}},
   {{"alloc", {2, 1}, 2, "bytes=4096"}, {"cpu", {1}, 1, "samples=3,cpu_ns=30"}},
   NULL, NULL, 0, "main 3\n"},
  {"another event by name", 0, {{"cpu", "samples"}, {"alloc", "bytes"}},
   {{1, "main"}, {2, "malloc"}},
   {{"alloc", {2, 1}, 2, "bytes=4096"}, {"cpu", {1}, 1, "samples=3"},
    {"alloc", {1}, 1, "bytes=16,count=1"}},
   "alloc", NULL, 0, "main;malloc 4096\nmain 16\n"},
  {"another metric", 0, {{"cpu", "samples"}},
   {{1, "main"}, {2, "run"}},
   {{"cpu", {2, 1}, 2, "samples=3,cpu_ns=1.5"}, {"cpu", {1}, 1, "samples=1"},
    {"cpu", {1}, 1, "cpu_ns=20"}},
   NULL, "cpu_ns", 0, "main;run 1.5\nmain 20\n"},
  {"a metric on an event without a primary one", 0, {{"cpu", NULL}},
   {{1, "main"}},
   {{"cpu", {1}, 1, "samples=2"}},
   NULL, "samples", 0, "main 2\n"},
  {"stacks without the metric or of no event are skipped", 0, {{"cpu", "samples"}},
   {{1, "main"}},
   {{"cpu", {1}, 1, "cpu_ns=9"}, {NULL, {1}, 1, "samples=9"}, {"cpu", {1}, 1, "samples=-2"}},
   NULL, NULL, 0, "main -2\n"},
  {"no stacks at all", 0, {{"cpu", "samples"}}, {{0, NULL}}, {{NULL, {0}, 0, NULL}},
   NULL, NULL, 0, ""},
  {"an unknown event", 0, {{"cpu", "samples"}}, {{1, "main"}},
   {{"cpu", {1}, 1, "samples=1"}}, "wall", NULL, SPAA_E_USAGE, ""},
  {"an event without a primary metric", 0, {{"cpu", NULL}}, {{1, "main"}},
   {{"cpu", {1}, 1, "samples=1"}}, NULL, NULL, SPAA_E_USAGE, ""},
  {"no events", 0, {{NULL, NULL}}, {{1, "main"}}, {{"cpu", {1}, 1, "samples=1"}},
   NULL, NULL, SPAA_E_USAGE, ""},
};

static void add_weights(struct spaa_profile *p, struct spaa_weights *w, const char *spec)
{
  char buf[256], *save = NULL, *item;
  if (!spec)
    return;
  snprintf(buf, sizeof(buf), "%s", spec);
  for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(item, '=');
    struct spaa_num v;
    assert_non_null(eq);
    *eq = 0;
    v = strpbrk(eq + 1, ".e") ? spaa_float(strtod(eq + 1, NULL))
                              : spaa_int(strtoll(eq + 1, NULL, 10));
    assert_int_equal(spaa_weights_add(p, w, item, v, NULL), 0);
  }
}

static struct spaa_profile *build(const struct tcase *c)
{
  struct spaa_profile *p = spaa_profile_new();
  size_t i;
  assert_non_null(p);
  p->header.frame_order = c->root_to_leaf ? SPAA_ROOT_TO_LEAF : SPAA_LEAF_TO_ROOT;
  for (i = 0; i < 4 && c->events[i][0]; i++) {
    struct spaa_event *e = spaa_add_event(p);
    e->name = c->events[i][0];
    e->primary_metric = c->events[i][1];
  }
  for (i = 0; i < MAXN && c->frames[i].id; i++) {
    struct spaa_frame *f = spaa_add_frame(p);
    f->id = c->frames[i].id;
    f->func = c->frames[i].func;
  }
  for (i = 0; i < MAXN && c->stacks[i].weights; i++) {
    struct spaa_stack *s = spaa_add_stack(p);
    snprintf(s->id, sizeof(s->id), "s%zu", i);
    s->event = c->stacks[i].event;
    assert_int_equal(spaa_stack_set_frames(p, s, c->stacks[i].frames, c->stacks[i].n), 0);
    add_weights(p, &s->weights, c->stacks[i].weights);
  }
  return p;
}

/* A sink that appends to a buffer and counts its calls. */
struct rec {
  struct spaa_buf b;
  size_t calls;
};

static int rec_sink(void *ctx, const void *data, size_t len)
{
  struct rec *r = ctx;
  r->calls++;
  return spaa_buf_add(&r->b, data, len);
}

static void test_table(void **state)
{
  size_t i;
  for (i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
    const struct tcase *c = &CASES[i];
    struct spaa_profile *p = build(c);
    struct spaa_export_opts o = {c->event, c->metric};
    struct spaa_err err = {0};
    struct rec r = {{0}, 0};
    int rc;
    spaa_buf_init(&r.b, 0);
    rc = spaa_export_folded(p, &o, rec_sink, &r, &err);
    if (rc != c->rc)
      fail_msg("%s: rc %d, want %d (%s)", c->name, rc, c->rc, err.msg);
    if (r.b.len != strlen(c->want) || (r.b.len && memcmp(r.b.p, c->want, r.b.len) != 0))
      fail_msg("%s: got \"%.*s\", want \"%s\"", c->name, (int)r.b.len, r.b.p ? r.b.p : "",
               c->want);
    if (rc) {
      assert_int_equal(err.code, rc);
      assert_non_null(strstr(err.msg, "primary metric"));
    }
    spaa_buf_free(&r.b);
    spaa_profile_free(p);
  }
}

/* The message names the event asked for, in quotes; NULL options mean the defaults; a
 * refusal writes nothing. */
static void test_messages_and_null_opts(void **state)
{
  const struct tcase *c = &CASES[10]; /* "an unknown event" */
  struct spaa_profile *p = build(c);
  struct spaa_export_opts o = {"wall", NULL};
  struct spaa_err err = {0};
  struct rec r = {{0}, 0};
  spaa_buf_init(&r.b, 0);
  assert_int_equal(spaa_export_folded(p, &o, rec_sink, &r, &err), SPAA_E_USAGE);
  assert_string_equal(err.msg, "no event \"wall\" with a primary metric");
  assert_int_equal(r.calls, 0);
  spaa_err_clear(&err);
  assert_int_equal(spaa_export_folded(p, NULL, rec_sink, &r, &err), 0);
  assert_int_equal(r.b.len, strlen("main 1\n"));
  assert_memory_equal(r.b.p, "main 1\n", r.b.len);
  spaa_profile_free(p);
  p = build(&CASES[12]); /* "no events" */
  assert_int_equal(spaa_export_folded(p, NULL, rec_sink, &r, &err), SPAA_E_USAGE);
  assert_int_equal(r.b.len, strlen("main 1\n")); /* nothing more was written */
  spaa_buf_free(&r.b);
  spaa_profile_free(p);
}

/* Many stacks: the output reaches the sink in several pieces that add up to every line. */
static void test_streams_in_pieces(void **state)
{
  enum { N = 20000 };
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_event *e = spaa_add_event(p);
  struct spaa_frame *f = spaa_add_frame(p);
  struct spaa_err err = {0};
  struct rec r = {{0}, 0};
  size_t i, lines = 0;
  e->name = "cpu";
  e->primary_metric = "samples";
  f->id = 1;
  f->func = "some_rather_long_function_name";
  for (i = 0; i < N; i++) {
    struct spaa_stack *s = spaa_add_stack(p);
    uint64_t fr[2] = {1, 1};
    s->event = "cpu";
    assert_int_equal(spaa_stack_set_frames(p, s, fr, 2), 0);
    assert_int_equal(spaa_weights_add(p, &s->weights, "samples", spaa_int((int64_t)i), NULL), 0);
  }
  spaa_buf_init(&r.b, 0);
  assert_int_equal(spaa_export_folded(p, NULL, rec_sink, &r, &err), 0);
  assert_true(r.calls > 1);
  for (i = 0; i < r.b.len; i++)
    lines += r.b.p[i] == '\n';
  assert_int_equal(lines, N);
  assert_int_equal(r.b.p[r.b.len - 1], '\n');
  assert_non_null(strstr(r.b.p, "some_rather_long_function_name;some_rather_long_function_name 19999\n"));
  spaa_buf_free(&r.b);
  spaa_profile_free(p);
}

static int failing_sink(void *ctx, const void *data, size_t len)
{
  (void)ctx;
  (void)data;
  (void)len;
  return SPAA_E_IO;
}

static void test_sink_failure(void **state)
{
  struct spaa_profile *p = build(&CASES[0]);
  struct spaa_err err = {0};
  assert_int_equal(spaa_export_folded(p, NULL, failing_sink, NULL, &err), SPAA_E_IO);
  assert_int_equal(err.code, SPAA_E_IO);
  assert_non_null(strstr(err.msg, "folded stacks"));
  spaa_profile_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_messages_and_null_opts),
      cmocka_unit_test(test_streams_in_pieces),
      cmocka_unit_test(test_sink_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
