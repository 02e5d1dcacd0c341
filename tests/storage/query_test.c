/* storage/ queries: meta answers as structs (totals, samples, times, labels), the newest-first
 * list with its filters, keyset pagination and refused queries. */
#include "tprofiles.h"

#include "base/limits.h"

struct entry {
  const char *id, *service, *source;
  int64_t received, start, end;
  const char *labels; /* JSON */
  size_t stacks, samples;
};

/* received ties between b and c: the id breaks them (c before b, ids descending) */
static const struct entry ENTRIES[] = {
  {"a", "web", "sentry", 1000, 100, 200, "{\"env\":\"prod\",\"region\":\"eu\"}", 2, 0},
  {"b", "web", "pprof", 2000, 150, 300, "{\"env\":\"prod\"}", 3, 5},
  {"c", "api", "otlp", 2000, 400, 500, "{\"env\":\"dev\",\"region\":\"eu\"}", 1, 0},
  {"d", "api", "sentry", 3000, 0, 0, NULL, 4, 0},
  {"e", "web", "sentry", 4000, 600, 700, "{\"env\":\"prod\",\"region\":\"us\"}", 2, 1},
};
#define N_ENTRIES (sizeof(ENTRIES) / sizeof(ENTRIES[0]))

static struct tdir g_dir;
static struct spaa_store *g_store;

static int setup(void **state)
{
  struct spaa_err err = {0};
  tdir_make(&g_dir);
  g_store = topen(g_dir.db, 8, 8);
  for (size_t i = 0; i < N_ENTRIES; i++) {
    const struct entry *e = &ENTRIES[i];
    struct spaa_profile *p = tp_small(e->stacks, e->samples);
    struct spaa_meta m = {0};
    json_t *labels = e->labels ? tjson(e->labels) : NULL;
    json_t *attrs = tjson("{\"release\":\"1.0\"}");
    m.id = e->id;
    m.service = e->service;
    m.source = e->source;
    m.received_ns = e->received;
    m.start_ns = e->start;
    m.end_ns = e->end;
    m.payload_bytes = 100 + i;
    m.labels = labels;
    m.attrs = attrs;
    if (spaa_store_put(g_store, p, &m, &err))
      fail_msg("put %s: %s", e->id, err.msg);
    json_decref(labels);
    json_decref(attrs);
    spaa_profile_free(p);
  }
  return 0;
}

static int teardown(void **state)
{
  spaa_store_close(g_store);
  tdir_rm(&g_dir);
  return 0;
}

/* The ids of a list answer, comma-separated, into out. */
static const char *ids(const struct spaa_store_page *pg, char *out, size_t cap)
{
  size_t i, n = 0;
  out[0] = 0;
  assert_true(pg->n == 0 || pg->profiles != NULL);
  for (i = 0; i < pg->n; i++)
    n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? "," : "", pg->profiles[i].id);
  return out;
}

static void expect_list(const struct spaa_list_query *q, const char *want)
{
  struct spaa_store_page pg;
  struct spaa_err err = {0};
  char buf[256];
  if (spaa_store_list(g_store, q, &pg, &err))
    fail_msg("list: %s", err.msg);
  assert_string_equal(ids(&pg, buf, sizeof(buf)), want);
  spaa_store_page_free(&pg);
}

/* An array of label filters, {key, value} each. */
#define FILTERS(...) ((const struct spaa_store_label_filter[]){__VA_ARGS__})

static void test_list_order_and_filters(void **state)
{
  struct spaa_list_query q;
  memset(&q, 0, sizeof(q));
  expect_list(&q, "e,d,c,b,a");
  q.service = "web";
  expect_list(&q, "e,b,a");
  q.source = "sentry";
  expect_list(&q, "e,a");
  memset(&q, 0, sizeof(q));
  q.source = "otlp";
  expect_list(&q, "c");
  q.source = "nothing";
  expect_list(&q, "");
  memset(&q, 0, sizeof(q));
  q.event = "cpu";
  expect_list(&q, "e,d,c,b,a");
  q.event = "wall";
  expect_list(&q, "");
  memset(&q, 0, sizeof(q));
  q.labels = FILTERS({"env", "prod"});
  q.n_labels = 1;
  expect_list(&q, "e,b,a");
  q.labels = FILTERS({"env", "prod"}, {"region", "eu"});
  q.n_labels = 2;
  expect_list(&q, "a");
  q.labels = FILTERS({"region", "eu"});
  q.n_labels = 1;
  expect_list(&q, "c,a");
  q.labels = NULL;
  q.n_labels = 0;
  /* overlapping [250, 450]: b (150-300) and c (400-500); d has no time range */
  q.from_ns = 250;
  q.to_ns = 450;
  expect_list(&q, "c,b");
  q.to_ns = 0;
  expect_list(&q, "e,c,b");
}

static void test_list_pagination(void **state)
{
  struct spaa_list_query q;
  struct spaa_store_cursor after;
  struct spaa_err err = {0};
  char all[256] = "", buf[256], cursor_id[300];
  size_t pages = 0;
  memset(&q, 0, sizeof(q));
  q.limit = 2;
  for (;;) {
    struct spaa_store_page pg;
    if (spaa_store_list(g_store, &q, &pg, &err))
      fail_msg("list: %s", err.msg);
    ids(&pg, buf, sizeof(buf));
    if (pages)
      strcat(all, ",");
    strcat(all, buf);
    pages++;
    if (!pg.has_next) {
      spaa_store_page_free(&pg);
      break;
    }
    assert_true(pg.n == 2);
    /* the cursor is the last entry's place */
    assert_ptr_equal(pg.next.id, pg.profiles[1].id);
    assert_true(pg.next.received_ns == pg.profiles[1].received_ns);
    snprintf(cursor_id, sizeof(cursor_id), "%s", pg.next.id);
    after.received_ns = pg.next.received_ns;
    after.id = cursor_id;
    q.after = &after;
    spaa_store_page_free(&pg);
    assert_true(pages < 10);
  }
  assert_int_equal(pages, 3);
  assert_string_equal(all, "e,d,c,b,a");
  /* the page boundary falls inside the received tie (c and b) */
  memset(&q, 0, sizeof(q));
  q.limit = 3;
  {
    struct spaa_store_page pg;
    assert_int_equal(spaa_store_list(g_store, &q, &pg, &err), 0);
    assert_string_equal(ids(&pg, buf, sizeof(buf)), "e,d,c");
    assert_true(pg.has_next);
    assert_true(pg.next.received_ns == 2000);
    assert_string_equal(pg.next.id, "c");
    snprintf(cursor_id, sizeof(cursor_id), "%s", pg.next.id);
    after.received_ns = pg.next.received_ns;
    after.id = cursor_id;
    spaa_store_page_free(&pg);
    q.after = &after;
    expect_list(&q, "b,a");
  }
}

/* Refusals leave an empty page. (The cursor's text form is the server's: its malformed
 * cases are in tests/server/api_test.c.) */
static void test_list_bad_requests(void **state)
{
  struct spaa_store_label_filter many[SPAA_QUERY_MAX_LABELS + 1];
  struct spaa_store_cursor no_id = {2000, NULL};
  struct spaa_list_query q;
  struct spaa_err err = {0};
  struct spaa_store_page pg;
  size_t i;
  memset(&q, 0, sizeof(q));
  q.limit = 1001;
  assert_int_equal(spaa_store_list(g_store, &q, &pg, &err), SPAA_E_BAD_REQUEST);
  assert_int_equal(pg.n, 0);
  assert_null(pg.profiles);
  q.limit = 0;
  q.labels = FILTERS({"env", NULL}); /* a filter value that is not a string */
  q.n_labels = 1;
  assert_int_equal(spaa_store_list(g_store, &q, &pg, &err), SPAA_E_BAD_REQUEST);
  assert_null(pg.profiles);
  q.labels = FILTERS({NULL, "prod"});
  assert_int_equal(spaa_store_list(g_store, &q, &pg, &err), SPAA_E_BAD_REQUEST);
  for (i = 0; i < SPAA_QUERY_MAX_LABELS + 1; i++)
    many[i] = (struct spaa_store_label_filter){"env", "prod"};
  q.labels = many;
  q.n_labels = SPAA_QUERY_MAX_LABELS + 1;
  assert_int_equal(spaa_store_list(g_store, &q, &pg, &err), SPAA_E_BAD_REQUEST);
  assert_non_null(strstr(err.msg, "at most 64"));
  q.n_labels = SPAA_QUERY_MAX_LABELS; /* at the limit: accepted */
  assert_int_equal(spaa_store_list(g_store, &q, &pg, &err), 0);
  spaa_store_page_free(&pg);
  q.labels = NULL;
  q.n_labels = 0;
  q.after = &no_id;
  assert_int_equal(spaa_store_list(g_store, &q, &pg, &err), SPAA_E_BAD_REQUEST);
  assert_null(pg.profiles);
}

static const struct spaa_store_total *total(const struct spaa_store_event *e, const char *metric)
{
  for (size_t i = 0; i < e->n_totals; i++)
    if (strcmp(e->totals[i].metric, metric) == 0)
      return &e->totals[i];
  fail_msg("no total for %s", metric);
  return NULL;
}

static const char *label(const struct spaa_store_profile_info *pi, const char *key)
{
  for (size_t i = 0; i < pi->n_labels; i++)
    if (strcmp(pi->labels[i].key, key) == 0)
      return pi->labels[i].value;
  return NULL;
}

static void test_meta(void **state)
{
  struct spaa_err err = {0};
  struct spaa_store_profile_info m;
  /* "a": 2 stacks of 1 and 2 samples, no sample records */
  assert_int_equal(spaa_store_meta(g_store, "a", &m, &err), 0);
  assert_string_equal(m.id, "a");
  assert_string_equal(m.service, "web");
  assert_string_equal(m.source, "sentry");
  assert_int_equal(m.received_ns, 1000); /* received_at 1970-01-01T00:00:00.000001000Z */
  assert_int_equal(m.start_ns, 100);
  assert_int_equal(m.end_ns, 200);
  assert_int_equal(m.samples, 3);
  assert_int_equal(m.payload_bytes, 100);
  assert_string_equal(label(&m, "region"), "eu");
  assert_int_equal(m.n_labels, 2);
  assert_string_equal(m.labels[0].key, "env"); /* bytewise key order */
  assert_int_equal(m.labels[0].value_len, 4);
  assert_string_equal(m.attrs_json, "{\"release\":\"1.0\"}");
  assert_int_equal(m.n_events, 1);
  assert_string_equal(m.events[0].name, "cpu");
  assert_int_equal(m.events[0].n_totals, 2);
  assert_false(total(&m.events[0], "samples")->value.is_float);
  assert_int_equal(total(&m.events[0], "samples")->value.i, 3);
  assert_int_equal(total(&m.events[0], "cpu_time")->value.i, 30);
  assert_string_equal(m.events[0].totals[0].metric, "cpu_time"); /* bytewise metric order */
  spaa_store_profile_info_free(&m);
  assert_null(m.id); /* zeroed */
  spaa_store_profile_info_free(&m); /* twice is harmless */
  spaa_store_profile_info_free(NULL);
  /* "b": 3 stacks (1+2+3 samples) but 5 sample records: the records count */
  assert_int_equal(spaa_store_meta(g_store, "b", &m, &err), 0);
  assert_int_equal(m.samples, 5);
  assert_int_equal(total(&m.events[0], "samples")->value.i, 6);
  spaa_store_profile_info_free(&m);
  /* "d": no time range, no labels */
  assert_int_equal(spaa_store_meta(g_store, "d", &m, &err), 0);
  assert_int_equal(m.start_ns, 0); /* "start": null */
  assert_int_equal(m.end_ns, 0);
  assert_int_equal(m.n_labels, 0);
  assert_null(m.labels);
  spaa_store_profile_info_free(&m);
  /* absent */
  assert_int_equal(spaa_store_meta(g_store, "zz", &m, &err), SPAA_E_NOT_FOUND);
  assert_null(m.id);
}

static void test_received_ns_exact(void **state)
{
  struct spaa_err err = {0};
  struct spaa_profile *p = tp_small(1, 0);
  struct spaa_meta m = {0};
  struct spaa_store_profile_info pi;
  m.id = "time";
  m.service = "t";
  m.source = "spaa";
  m.received_ns = 1700000000123456789LL;
  assert_int_equal(spaa_store_put(g_store, p, &m, &err), 0);
  assert_int_equal(spaa_store_meta(g_store, "time", &pi, &err), 0);
  /* received_at "2023-11-14T22:13:20.123456789Z" (tests/server/api_test.c) */
  assert_true(pi.received_ns == 1700000000123456789LL);
  assert_null(pi.attrs_json);
  spaa_store_profile_info_free(&pi);
  spaa_profile_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_list_order_and_filters),
    cmocka_unit_test(test_list_pagination),
    cmocka_unit_test(test_list_bad_requests),
    cmocka_unit_test(test_meta),
    cmocka_unit_test(test_received_ns_exact), /* last: adds a profile */
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
