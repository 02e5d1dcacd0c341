/* storage/sqlite/discover.c: stacks by number and by content id with their frames (leaf
 * first, as the dictionary holds them), services with sources, times and metrics, label
 * keys and values with counts, and the refusals. */
#include "tprofiles.h"

static struct tdir g_dir;
static struct spaa_store *g_store;

static void put(const char *id, const char *service, const char *source, int64_t received,
                const char *labels, size_t stacks)
{
  struct spaa_err err = {0};
  struct spaa_profile *p = tp_small(stacks, 0);
  struct spaa_meta m = {0};
  json_t *l = labels ? tjson(labels) : NULL;
  m.id = id;
  m.service = service;
  m.source = source;
  m.received_ns = received;
  m.labels = l;
  if (spaa_store_put(g_store, p, &m, &err))
    fail_msg("put %s: %s", id, err.msg);
  json_decref(l);
  spaa_profile_free(p);
}

static int setup(void **state)
{
  (void)state;
  tdir_make(&g_dir);
  g_store = topen(g_dir.db, 8, 8);
  put("a", "web", "pprof", 1000, "{\"env\":\"prod\"}", 2);
  put("b", "web", "otlp", 2000, "{\"env\":\"dev\",\"zone\":\"z1\"}", 3);
  put("c", "api", "sentry", 3000, NULL, 1);
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  spaa_store_close(g_store);
  tdir_rm(&g_dir);
  return 0;
}

static void test_services(void **state)
{
  struct spaa_store_name_count *v = NULL;
  struct spaa_err err = {0};
  size_t n = 0;
  (void)state;
  assert_int_equal(spaa_store_services(g_store, &v, &n, &err), 0);
  assert_int_equal(n, 2);
  assert_string_equal(v[0].name, "api");
  assert_int_equal(v[0].count, 1);
  assert_string_equal(v[0].sources, "sentry");
  assert_string_equal(v[1].name, "web");
  assert_int_equal(v[1].count, 2);
  assert_string_equal(v[1].sources, "otlp,pprof");
  assert_int_equal(v[1].first_ns, 1000);
  assert_int_equal(v[1].last_ns, 2000);
  assert_string_equal(v[1].events_json, "{\"cpu\":[\"cpu_time\",\"samples\"]}");
  spaa_store_names_free(v, n);
}

static void test_labels(void **state)
{
  struct spaa_store_name_count *v = NULL;
  struct spaa_err err = {0};
  size_t n = 0;
  (void)state;
  assert_int_equal(spaa_store_label_keys(g_store, &v, &n, &err), 0);
  assert_int_equal(n, 2);
  assert_string_equal(v[0].name, "env");
  assert_int_equal(v[0].count, 2);
  assert_string_equal(v[1].name, "zone");
  assert_int_equal(v[1].count, 1);
  spaa_store_names_free(v, n);
  assert_int_equal(spaa_store_label_values(g_store, "env", &v, &n, &err), 0);
  assert_int_equal(n, 2);
  assert_string_equal(v[0].name, "dev");
  assert_string_equal(v[1].name, "prod");
  assert_int_equal(v[1].count, 1);
  spaa_store_names_free(v, n);
  assert_int_equal(spaa_store_label_values(g_store, "nope", &v, &n, &err), 0);
  assert_int_equal(n, 0);
  spaa_store_names_free(v, n);
}

struct seen {
  int64_t numbers[16];
  size_t n;
  char ids[16][48];
  char leaf[16][16];
};

static int scan_cb(void *ctx, const struct spaa_store_scan_stack *st)
{
  struct seen *s = ctx;
  size_t i;
  for (i = 0; i < s->n; i++)
    if (s->numbers[i] == st->stack)
      return 0;
  s->numbers[s->n++] = st->stack;
  return 0;
}

static int stack_cb(void *ctx, const struct spaa_store_stack_info *st)
{
  struct seen *s = ctx;
  assert_int_equal(st->n_frames, 2);
  assert_string_equal(st->frames[1].func, "fn0"); /* the root, last: leaf first */
  assert_string_equal(st->frames[1].dso, "app");
  assert_string_equal(st->event, "cpu");
  assert_int_equal(strlen(st->id), 34);
  snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", st->id);
  snprintf(s->leaf[s->n], sizeof(s->leaf[0]), "%s", st->frames[0].func);
  s->numbers[s->n++] = st->number;
  return 0;
}

static void test_stacks(void **state)
{
  struct spaa_list_query all;
  struct seen scanned, got, byid;
  struct spaa_err err = {0};
  size_t i;
  (void)state;
  memset(&all, 0, sizeof(all));
  memset(&scanned, 0, sizeof(scanned));
  memset(&got, 0, sizeof(got));
  assert_int_equal(spaa_store_scan(g_store, &all, scan_cb, &scanned, &err), 0);
  assert_int_equal(scanned.n, 3); /* fn1..fn3 over fn0, shared across the profiles */
  assert_int_equal(spaa_store_stacks(g_store, scanned.numbers, scanned.n, stack_cb, &got, &err), 0);
  assert_int_equal(got.n, 3);
  for (i = 0; i < got.n; i++) {
    assert_int_equal(got.numbers[i], scanned.numbers[i]); /* in the order asked */
    memset(&byid, 0, sizeof(byid));
    assert_int_equal(spaa_store_stack_by_id(g_store, got.ids[i], stack_cb, &byid, &err), 0);
    assert_int_equal(byid.n, 1);
    assert_int_equal(byid.numbers[0], got.numbers[i]);
    assert_string_equal(byid.leaf[0], got.leaf[i]);
  }
  {
    int64_t missing = 999999;
    memset(&byid, 0, sizeof(byid));
    assert_int_equal(spaa_store_stacks(g_store, &missing, 1, stack_cb, &byid, &err), 0);
    assert_int_equal(byid.n, 0); /* skipped */
  }
  assert_int_equal(spaa_store_stack_by_id(g_store, "0x00000000000000000000000000000000",
                                          stack_cb, &byid, &err), SPAA_E_NOT_FOUND);
  memset(&err, 0, sizeof(err));
  assert_int_equal(spaa_store_stack_by_id(g_store, "nothex", stack_cb, &byid, &err),
                   SPAA_E_NOT_FOUND);
  assert_non_null(strstr(err.msg, "nothex"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_services),
      cmocka_unit_test(test_labels),
      cmocka_unit_test(test_stacks),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
