/* storage/ queries: meta answers (totals, samples, times), the newest-first list with its
 * filters, keyset pagination and cursor errors, and row counts. */
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
static const char *ids(json_t *res, char *out, size_t cap)
{
  json_t *arr = json_object_get(res, "profiles");
  size_t i, n = 0;
  out[0] = 0;
  assert_true(json_is_array(arr));
  for (i = 0; i < json_array_size(arr); i++)
    n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? "," : "",
                          json_string_value(json_object_get(json_array_get(arr, i), "id")));
  return out;
}

static void expect_list(const struct spaa_list_query *q, const char *want)
{
  json_t *res = NULL;
  struct spaa_err err = {0};
  char buf[256];
  if (spaa_store_list(g_store, q, &res, &err))
    fail_msg("list: %s", err.msg);
  assert_string_equal(ids(res, buf, sizeof(buf)), want);
  json_decref(res);
}

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
  q.labels = tjson("{\"env\":\"prod\"}");
  expect_list(&q, "e,b,a");
  json_decref((json_t *)q.labels);
  q.labels = tjson("{\"env\":\"prod\",\"region\":\"eu\"}");
  expect_list(&q, "a");
  json_decref((json_t *)q.labels);
  q.labels = tjson("{\"region\":\"eu\"}");
  expect_list(&q, "c,a");
  json_decref((json_t *)q.labels);
  q.labels = NULL;
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
  struct spaa_err err = {0};
  char all[256] = "", buf[256], cursor[1024];
  size_t pages = 0;
  memset(&q, 0, sizeof(q));
  q.limit = 2;
  for (;;) {
    json_t *res = NULL, *next;
    if (spaa_store_list(g_store, &q, &res, &err))
      fail_msg("list: %s", err.msg);
    ids(res, buf, sizeof(buf));
    if (pages)
      strcat(all, ",");
    strcat(all, buf);
    pages++;
    next = json_object_get(res, "next_cursor");
    assert_non_null(next);
    if (json_is_null(next)) {
      json_decref(res);
      break;
    }
    assert_true(json_array_size(json_object_get(res, "profiles")) == 2);
    snprintf(cursor, sizeof(cursor), "%s", json_string_value(next));
    q.cursor = cursor;
    json_decref(res);
    assert_true(pages < 10);
  }
  assert_int_equal(pages, 3);
  assert_string_equal(all, "e,d,c,b,a");
  /* the page boundary falls inside the received tie (c and b) */
  memset(&q, 0, sizeof(q));
  q.limit = 3;
  {
    json_t *res = NULL;
    assert_int_equal(spaa_store_list(g_store, &q, &res, &err), 0);
    assert_string_equal(ids(res, buf, sizeof(buf)), "e,d,c");
    snprintf(cursor, sizeof(cursor), "%s", json_string_value(json_object_get(res, "next_cursor")));
    json_decref(res);
    q.cursor = cursor;
    expect_list(&q, "b,a");
  }
}

static void test_list_bad_requests(void **state)
{
  static const char *const bad[] = {"", "zz", "abc", "6e6f636f6c6f6e" /* nocolon */,
                                    "31323a" /* 12: */, "3a61" /* :a */,
                                    "31327a3a61" /* 12z:a */, "3132003a61" /* NUL */,
                                    "4142434445463a61" /* ABCDEF:a */};
  struct spaa_list_query q;
  struct spaa_err err = {0};
  json_t *res = NULL;
  memset(&q, 0, sizeof(q));
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    q.cursor = bad[i];
    if (spaa_store_list(g_store, &q, &res, &err) != SPAA_E_BAD_REQUEST)
      fail_msg("cursor \"%s\" was accepted", bad[i]);
    assert_null(res);
  }
  q.cursor = NULL;
  q.limit = 1001;
  assert_int_equal(spaa_store_list(g_store, &q, &res, &err), SPAA_E_BAD_REQUEST);
  q.limit = 0;
  q.labels = tjson("{\"env\":1}");
  assert_int_equal(spaa_store_list(g_store, &q, &res, &err), SPAA_E_BAD_REQUEST);
  json_decref((json_t *)q.labels);
  /* as many label filters as the query API lets through, and not one more */
  {
    json_t *labels = json_object();
    char k[16];
    assert_int_equal(json_object_set_new(labels, "env", json_string("prod")), 0);
    for (int i = 1; i < SPAA_QUERY_MAX_LABELS; i++) {
      snprintf(k, sizeof(k), "k%d", i);
      assert_int_equal(json_object_set_new(labels, k, json_string("v")), 0);
    }
    q.labels = labels;
    assert_int_equal(spaa_store_list(g_store, &q, &res, &err), 0);
    assert_int_equal(json_array_size(json_object_get(res, "profiles")), 0);
    json_decref(res);
    res = NULL;
    assert_int_equal(json_object_set_new(labels, "one-more", json_string("v")), 0);
    assert_int_equal(spaa_store_list(g_store, &q, &res, &err), SPAA_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "at most 64"));
    assert_null(res);
    json_decref(labels);
    q.labels = NULL;
  }
}

static void test_meta(void **state)
{
  struct spaa_err err = {0};
  json_t *m = NULL, *ev, *tot;
  /* "a": 2 stacks of 1 and 2 samples, no sample records */
  assert_int_equal(spaa_store_meta(g_store, "a", &m, &err), 0);
  assert_string_equal(json_string_value(json_object_get(m, "id")), "a");
  assert_string_equal(json_string_value(json_object_get(m, "service")), "web");
  assert_string_equal(json_string_value(json_object_get(m, "source")), "sentry");
  assert_string_equal(json_string_value(json_object_get(m, "received_at")),
                      "1970-01-01T00:00:00.000001000Z");
  assert_int_equal(json_integer_value(json_object_get(m, "start")), 100);
  assert_int_equal(json_integer_value(json_object_get(m, "end")), 200);
  assert_int_equal(json_integer_value(json_object_get(m, "samples")), 3);
  assert_int_equal(json_integer_value(json_object_get(m, "payload_bytes")), 100);
  assert_string_equal(json_string_value(json_object_get(json_object_get(m, "labels"), "region")),
                      "eu");
  assert_string_equal(json_string_value(json_object_get(json_object_get(m, "attrs"), "release")),
                      "1.0");
  ev = json_object_get(m, "events");
  assert_int_equal(json_array_size(ev), 1);
  assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 0), "name")), "cpu");
  tot = json_object_get(json_array_get(ev, 0), "totals");
  assert_int_equal(json_integer_value(json_object_get(tot, "samples")), 3);
  assert_int_equal(json_integer_value(json_object_get(tot, "cpu_time")), 30);
  json_decref(m);
  /* "b": 3 stacks (1+2+3 samples) but 5 sample records: the records count */
  assert_int_equal(spaa_store_meta(g_store, "b", &m, &err), 0);
  assert_int_equal(json_integer_value(json_object_get(m, "samples")), 5);
  tot = json_object_get(json_array_get(json_object_get(m, "events"), 0), "totals");
  assert_int_equal(json_integer_value(json_object_get(tot, "samples")), 6);
  json_decref(m);
  /* "d": no time range, no labels */
  assert_int_equal(spaa_store_meta(g_store, "d", &m, &err), 0);
  assert_true(json_is_null(json_object_get(m, "start")));
  assert_true(json_is_null(json_object_get(m, "end")));
  assert_int_equal(json_object_size(json_object_get(m, "labels")), 0);
  json_decref(m);
}

static void test_received_at_format(void **state)
{
  struct spaa_err err = {0};
  struct spaa_profile *p = tp_small(1, 0);
  struct spaa_meta m = {0};
  json_t *j = NULL;
  m.id = "time";
  m.service = "t";
  m.source = "spaa";
  m.received_ns = 1700000000123456789LL;
  assert_int_equal(spaa_store_put(g_store, p, &m, &err), 0);
  assert_int_equal(spaa_store_meta(g_store, "time", &j, &err), 0);
  assert_string_equal(json_string_value(json_object_get(j, "received_at")),
                      "2023-11-14T22:13:20.123456789Z");
  json_decref(j);
  spaa_profile_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_list_order_and_filters),
    cmocka_unit_test(test_list_pagination),
    cmocka_unit_test(test_list_bad_requests),
    cmocka_unit_test(test_meta),
    cmocka_unit_test(test_received_at_format), /* last: adds a profile */
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
