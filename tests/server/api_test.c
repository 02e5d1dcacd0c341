/* server/api.c and api_json.c: time parsing (unix seconds and RFC 3339), Accept-Encoding
 * negotiation, profile id checks, list cursors as text, and the exact JSON of metadata and
 * list pages over a real store. The handlers themselves run in tests/e2e. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/api.h"
#include "server/api_json.h"
#include "server/api_views.h"
#include "spaa/view.h"
#include "tprofiles.h"

static void test_parse_time(void **state)
{
  static const struct {
    const char *in;
    int64_t ns;
  } ok[] = {
      {"0", 0},
      {"1700000000", 1700000000LL * 1000000000},
      {"1700000000.25", 1700000000LL * 1000000000 + 250000000},
      {"1970-01-01T00:00:00Z", 0},
      {"2023-11-14T22:13:20Z", 1700000000LL * 1000000000},
      {"2023-11-14t22:13:20z", 1700000000LL * 1000000000},
      {"2023-11-14 22:13:20Z", 1700000000LL * 1000000000},
      {"2023-11-15T00:13:20+02:00", 1700000000LL * 1000000000},
      {"2023-11-14T17:13:20-05:00", 1700000000LL * 1000000000},
      {"2023-11-14T22:13:20.123456789Z", 1700000000LL * 1000000000 + 123456789},
      {"2000-02-29T00:00:00Z", 951782400LL * 1000000000},
      {"2026-11-21T12:00:00.5Z", 1795262400LL * 1000000000 + 500000000},
      /* the last nanosecond int64 holds */
      {"9223372036.854775807", INT64_MAX},
      {"2262-04-11T23:47:16.854775807Z", INT64_MAX},
  };
  static const char *const bad[] = {
      "",      "abc", "17e9", "1700000000.", "-5", "2023-11-14", "2023-11-14T22:13:20",
      "2023-13-01T00:00:00Z", "2023-11-14T24:00:00Z", "2023-11-14T22:13:20+0200",
      "2023-11-14T22:13:20Zjunk", "1969-12-31T23:59:59Z", "2023-1-14T22:13:20Z",
      /* past int64 nanoseconds: refused, not wrapped (a DELETE ?from= took everything) */
      "9223372036.854775808", "9223372037", "9999999999", "99999999999", "2262-04-11T23:47:17Z",
  };
  size_t i;
  for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    int64_t ns = -1;
    if (spaa_query_parse_time(ok[i].in, &ns))
      fail_msg("'%s' should parse", ok[i].in);
    if (ns != ok[i].ns)
      fail_msg("'%s': %lld, want %lld", ok[i].in, (long long)ns, (long long)ok[i].ns);
  }
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    int64_t ns;
    if (spaa_query_parse_time(bad[i], &ns) == 0)
      fail_msg("'%s' should not parse", bad[i]);
  }
}

static void test_pick_encoding(void **state)
{
  static const struct {
    const char *in;
    int want;
  } t[] = {
      {NULL, 0},
      {"", 0},
      {"identity", 0},
      {"gzip", 1},
      {"x-gzip", 1},
      {"zstd", 2},
      {"gzip, zstd", 2},          /* zstd preferred */
      {"zstd, gzip", 2},
      {"gzip, deflate, br, zstd", 2},
      {"gzip;q=1.0, zstd;q=0.5", 1}, /* a higher q wins */
      {"gzip;q=0.5, zstd;q=0.5", 2},
      {"zstd;q=0, gzip", 1},        /* refused */
      {"gzip;q=0", 0},
      {"deflate, br", 0},
      {"*", 2},
      {"*;q=0.5, gzip;q=0.9", 1},
      {"GZIP ; q=0.8", 1},
  };
  size_t i;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
    if (spaa_query_pick_encoding(t[i].in) != t[i].want)
      fail_msg("'%s': %d, want %d", t[i].in ? t[i].in : "(null)",
               spaa_query_pick_encoding(t[i].in), t[i].want);
}

static void test_id_ok(void **state)
{
  assert_true(spaa_query_id_ok("0123456789abcdef0123456789abcdef"));
  assert_true(spaa_query_id_ok("a1b2c3d4-e5f6-4711-8a9b-0c1d2e3f4a5b"));
  assert_true(spaa_query_id_ok("x"));
  assert_false(spaa_query_id_ok(""));
  assert_false(spaa_query_id_ok(NULL));
  assert_false(spaa_query_id_ok("../etc/passwd"));
  assert_false(spaa_query_id_ok("a b"));
  assert_false(
      spaa_query_id_ok("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0"));
}

static void test_cursor_bad(void **state)
{
  static const char *const bad[] = {"", "zz", "abc", "6e6f636f6c6f6e" /* nocolon */,
                                    "31323a" /* 12: */, "3a61" /* :a */,
                                    "31327a3a61" /* 12z:a */, "3132003a61" /* NUL */,
                                    "4142434445463a61" /* ABCDEF:a */,
                                    "%21%21not-a-cursor", "31323A61" /* uppercase hex */};
  char id[SPAA_QUERY_MAX_CURSOR / 2 + 1], long_cur[SPAA_QUERY_MAX_CURSOR + 3];
  struct spaa_err err = {0};
  int64_t recv;
  size_t i;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    spaa_err_clear(&err);
    if (spaa_api_cursor_decode(bad[i], &recv, id, sizeof(id), &err) != SPAA_E_BAD_REQUEST)
      fail_msg("cursor \"%s\" was accepted", bad[i]);
    assert_int_equal(err.code, SPAA_E_BAD_REQUEST);
    assert_non_null(strstr(err.msg, "malformed cursor"));
  }
  /* longer than a cursor can be: "1:" and a long id */
  memset(long_cur, 0, sizeof(long_cur));
  memcpy(long_cur, "313a", 4);
  for (i = 4; i < SPAA_QUERY_MAX_CURSOR + 2; i += 2)
    memcpy(long_cur + i, "61", 2);
  assert_int_equal(spaa_api_cursor_decode(long_cur, &recv, id, sizeof(id), &err),
                   SPAA_E_BAD_REQUEST);
  /* an id that does not fit the caller's buffer */
  assert_int_equal(spaa_api_cursor_decode("313a616263", &recv, id, 3, &err), SPAA_E_BAD_REQUEST);
  assert_int_equal(spaa_api_cursor_decode("313a616263", &recv, id, 4, &err), 0);
  assert_string_equal(id, "abc");
}

static void test_cursor_round_trip(void **state)
{
  static const struct {
    int64_t recv;
    const char *id, *text;
  } t[] = {
      {1700000000123456789LL, "a", "313730303030303030303132333435363738393a61"},
      {2000, "d", "323030303a64"},
      {-1500000001LL, "x-y_z", "2d313530303030303030313a782d795f7a"},
      {0, "0123456789abcdef", "303a30313233343536373839616263646566"},
  };
  char text[SPAA_QUERY_MAX_CURSOR + 1], id[SPAA_QUERY_MAX_CURSOR / 2 + 1], big[300];
  struct spaa_err err = {0};
  struct spaa_store_cursor c;
  int64_t recv;
  size_t i;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    c.received_ns = t[i].recv;
    c.id = t[i].id;
    assert_int_equal(spaa_api_cursor_encode(&c, text, sizeof(text)), 0);
    assert_string_equal(text, t[i].text);
    assert_int_equal(spaa_api_cursor_decode(text, &recv, id, sizeof(id), &err), 0);
    assert_true(recv == t[i].recv);
    assert_string_equal(id, t[i].id);
  }
  /* the longest profile id (256 bytes) fits; what would pass 600 characters does not */
  memset(big, 'a', sizeof(big));
  big[256] = 0;
  c.received_ns = INT64_MIN;
  c.id = big;
  assert_int_equal(spaa_api_cursor_encode(&c, text, sizeof(text)), 0);
  assert_int_equal(spaa_api_cursor_decode(text, &recv, id, sizeof(id), &err), 0);
  assert_true(recv == INT64_MIN);
  assert_string_equal(id, big);
  big[256] = 'a';
  big[290] = 0;
  assert_int_equal(spaa_api_cursor_encode(&c, text, sizeof(text)), SPAA_E_INTERNAL);
  big[256] = 0;
  assert_int_equal(spaa_api_cursor_encode(&c, text, 100), SPAA_E_INTERNAL); /* small buffer */
}

/* received_at: UTC, always nine fraction digits, before 1970 too. */
static void test_received_at_format(void **state)
{
  static const struct {
    int64_t ns;
    const char *want;
  } t[] = {
      {1700000000123456789LL, "2023-11-14T22:13:20.123456789Z"},
      {1000, "1970-01-01T00:00:00.000001000Z"},
      {0, "1970-01-01T00:00:00.000000000Z"},
      {-1, "1969-12-31T23:59:59.999999999Z"},
  };
  struct spaa_store_profile_info pi;
  size_t i;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    json_t *j;
    memset(&pi, 0, sizeof(pi));
    pi.id = "x";
    pi.received_ns = t[i].ns;
    j = spaa_api_profile_json(&pi);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "received_at")), t[i].want);
    json_decref(j);
  }
}

/* The answers' exact bytes, recorded from the server before storage/ answered in structs
 * (when it built this JSON itself): member order, number forms (integers, doubles, sums
 * that overflowed into doubles), escapes, NUL bytes in labels, null times, attrs of any JSON
 * type, negative times, cursors inside a received tie. */
static const struct {
  const char *name, *json;
} GOLDEN[] = {
  {"all",
    "{\"profiles\":[{\"id\":\"a\",\"service\":\"web\",\"source\":\"sentry\",\"received_at\":\""
    "2023-11-14T22:13:20.123456789Z\",\"start\":100,\"end\":200,\"start_at\":\"1970-01-01T00:00:00.000000100Z\",\"end_at\":\"1970-01-01T00:00:00.000000200Z\",\"events\":[{\"name\":\"cpu\""
    ",\"totals\":{\"cpu_time\":30,\"samples\":3}}],\"samples\":3,\"payload_bytes\":100,\"labe"
    "ls\":{\"env\":\"prod\",\"nul\":\"a\\u0000b\",\"z;k\":\"v\\\"qé\"},\"attrs\":{\"f\":0.5,\""
    "n\":3,\"ok\":true,\"release\":\"1.0\",\"w\":[\"x\",{\"y\":null}]}},{\"id\":\"d\",\"servi"
    "ce\":\"xé\",\"source\":\"spaa\",\"received_at\":\"1970-01-01T00:00:00.000002000Z\",\"sta"
    "rt\":1,\"end\":null,\"start_at\":\"1970-01-01T00:00:00.000000001Z\",\"end_at\":null,\"events\":[{\"name\":\"cycles\",\"totals\":{\"period\":568.5,\"samp"
    "les\":3}},{\"name\":\"alloc\",\"totals\":{\"bytes\":4096}}],\"samples\":4,\"payload_byte"
    "s\":5,\"labels\":{\"k\":\"\"},\"attrs\":\"str\"},{\"id\":\"b\",\"service\":\"api\",\"sou"
    "rce\":\"pprof\",\"received_at\":\"1970-01-01T00:00:00.000002000Z\",\"start\":null,\"end\""
    ":null,\"start_at\":null,\"end_at\":null,\"events\":[{\"name\":\"cycles\",\"totals\":{"
    "\"period\":561.5,\"samples\":3}},{\"n"
    "ame\":\"alloc\",\"totals\":{\"bytes\":4096}}],\"samples\":4,\"payload_bytes\":0,\"labels"
    "\":{},\"attrs\":{}},{\"id\":\"c\",\"service\":\"api\",\"source\":\"otlp\",\"received_at\""
    ":\"1969-12-31T23:59:58.499999999Z\",\"start\":-5,\"end\":7,\"start_at\":\"1969-12-31T23:59:59.999999995Z\",\"end_at\":\"1970-01-01T00:00:00.000000007Z\",\"events\":[{\"name\":\"cpu\""
    ",\"totals\":{\"cpu_time\":1.0000000000000001e300,\"samples\":1.8446744073709552e19}}],\""
    "samples\":4,\"payload_bytes\":-1,\"labels\":{},\"attrs\":[1,2]}],\"next_cursor\":null}"},
  {"page0",
    "{\"profiles\":[{\"id\":\"a\",\"service\":\"web\",\"source\":\"sentry\",\"received_at\":\""
    "2023-11-14T22:13:20.123456789Z\",\"start\":100,\"end\":200,\"start_at\":\"1970-01-01T00:00:00.000000100Z\",\"end_at\":\"1970-01-01T00:00:00.000000200Z\",\"events\":[{\"name\":\"cpu\""
    ",\"totals\":{\"cpu_time\":30,\"samples\":3}}],\"samples\":3,\"payload_bytes\":100,\"labe"
    "ls\":{\"env\":\"prod\",\"nul\":\"a\\u0000b\",\"z;k\":\"v\\\"qé\"},\"attrs\":{\"f\":0.5,\""
    "n\":3,\"ok\":true,\"release\":\"1.0\",\"w\":[\"x\",{\"y\":null}]}}],\"next_cursor\":\"31"
    "3730303030303030303132333435363738393a61\"}"},
  {"page1",
    "{\"profiles\":[{\"id\":\"d\",\"service\":\"xé\",\"source\":\"spaa\",\"received_at\":\"19"
    "70-01-01T00:00:00.000002000Z\",\"start\":1,\"end\":null,\"start_at\":\"1970-01-01T00:00:00.000000001Z\",\"end_at\":null,\"events\":[{\"name\":\"cycles\""
    ",\"totals\":{\"period\":568.5,\"samples\":3}},{\"name\":\"alloc\",\"totals\":{\"bytes\":"
    "4096}}],\"samples\":4,\"payload_bytes\":5,\"labels\":{\"k\":\"\"},\"attrs\":\"str\"}],\""
    "next_cursor\":\"323030303a64\"}"},
  {"page2",
    "{\"profiles\":[{\"id\":\"b\",\"service\":\"api\",\"source\":\"pprof\",\"received_at\":\""
    "1970-01-01T00:00:00.000002000Z\",\"start\":null,\"end\":null,\"start_at\":null,\"end_at\":null,\"events\":[{\"name\":\"cyc"
    "les\",\"totals\":{\"period\":561.5,\"samples\":3}},{\"name\":\"alloc\",\"totals\":{\"byt"
    "es\":4096}}],\"samples\":4,\"payload_bytes\":0,\"labels\":{},\"attrs\":{}}],\"next_curso"
    "r\":\"323030303a62\"}"},
  {"page3",
    "{\"profiles\":[{\"id\":\"c\",\"service\":\"api\",\"source\":\"otlp\",\"received_at\":\"1"
    "969-12-31T23:59:58.499999999Z\",\"start\":-5,\"end\":7,\"start_at\":\"1969-12-31T23:59:59.999999995Z\",\"end_at\":\"1970-01-01T00:00:00.000000007Z\",\"events\":[{\"name\":\"cpu\",\"t"
    "otals\":{\"cpu_time\":1.0000000000000001e300,\"samples\":1.8446744073709552e19}}],\"samp"
    "les\":4,\"payload_bytes\":-1,\"labels\":{},\"attrs\":[1,2]}],\"next_cursor\":null}"},
  {"a",
    "{\"id\":\"a\",\"service\":\"web\",\"source\":\"sentry\",\"received_at\":\"2023-11-14T22:"
    "13:20.123456789Z\",\"start\":100,\"end\":200,\"start_at\":\"1970-01-01T00:00:00.000000100Z\",\"end_at\":\"1970-01-01T00:00:00.000000200Z\",\"events\":[{\"name\":\"cpu\",\"totals\":{\""
    "cpu_time\":30,\"samples\":3}}],\"samples\":3,\"payload_bytes\":100,\"labels\":{\"env\":\""
    "prod\",\"nul\":\"a\\u0000b\",\"z;k\":\"v\\\"qé\"},\"attrs\":{\"f\":0.5,\"n\":3,\"ok\":tr"
    "ue,\"release\":\"1.0\",\"w\":[\"x\",{\"y\":null}]}}"},
  {"b",
    "{\"id\":\"b\",\"service\":\"api\",\"source\":\"pprof\",\"received_at\":\"1970-01-01T00:0"
    "0:00.000002000Z\",\"start\":null,\"end\":null,\"start_at\":null,\"end_at\":null,\"events\":[{\"name\":\"cycles\",\"totals\""
    ":{\"period\":561.5,\"samples\":3}},{\"name\":\"alloc\",\"totals\":{\"bytes\":4096}}],\"s"
    "amples\":4,\"payload_bytes\":0,\"labels\":{},\"attrs\":{}}"},
  {"c",
    "{\"id\":\"c\",\"service\":\"api\",\"source\":\"otlp\",\"received_at\":\"1969-12-31T23:59"
    ":58.499999999Z\",\"start\":-5,\"end\":7,\"start_at\":\"1969-12-31T23:59:59.999999995Z\",\"end_at\":\"1970-01-01T00:00:00.000000007Z\",\"events\":[{\"name\":\"cpu\",\"totals\":{\"cpu_"
    "time\":1.0000000000000001e300,\"samples\":1.8446744073709552e19}}],\"samples\":4,\"paylo"
    "ad_bytes\":-1,\"labels\":{},\"attrs\":[1,2]}"},
  {"d",
    "{\"id\":\"d\",\"service\":\"xé\",\"source\":\"spaa\",\"received_at\":\"1970-01-01T00:00:"
    "00.000002000Z\",\"start\":1,\"end\":null,\"start_at\":\"1970-01-01T00:00:00.000000001Z\",\"end_at\":null,\"events\":[{\"name\":\"cycles\",\"totals\":{\""
    "period\":568.5,\"samples\":3}},{\"name\":\"alloc\",\"totals\":{\"bytes\":4096}}],\"sampl"
    "es\":4,\"payload_bytes\":5,\"labels\":{\"k\":\"\"},\"attrs\":\"str\"}"},
};

static const char *golden(const char *name)
{
  for (size_t i = 0; i < sizeof(GOLDEN) / sizeof(GOLDEN[0]); i++)
    if (strcmp(GOLDEN[i].name, name) == 0)
      return GOLDEN[i].json;
  fail_msg("no golden %s", name);
  return NULL;
}

static void expect_json(const char *name, json_t *v)
{
  char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY); /* as spaa_resp_json does */
  assert_non_null(s);
  if (strcmp(s, golden(name)) != 0)
    fail_msg("%s:\n got %s\nwant %s", name, s, golden(name));
  free(s);
}

static void gput(struct spaa_store *st, struct spaa_profile *p, const char *id, const char *svc,
                 const char *src, int64_t recv, int64_t start, int64_t end, json_t *labels,
                 json_t *attrs, uint64_t payload)
{
  struct spaa_meta m = {0};
  struct spaa_err err = {0};
  m.id = id;
  m.service = svc;
  m.source = src;
  m.received_ns = recv;
  m.start_ns = start;
  m.end_ns = end;
  m.labels = labels;
  m.attrs = attrs;
  m.payload_bytes = payload;
  if (spaa_store_put(st, p, &m, &err))
    fail_msg("put %s: %s", id, err.msg);
  json_decref(labels);
  json_decref(attrs);
  spaa_profile_free(p);
}

static void golden_store(struct spaa_store *st)
{
  struct spaa_profile *p;
  json_t *l = tjson("{\"env\":\"prod\",\"z;k\":\"v\\\"q\\u00e9\"}");
  json_object_set_new(l, "nul", json_stringn("a\0b", 3));
  gput(st, tp_small(2, 0), "a", "web", "sentry", 1700000000123456789LL, 100, 200, l,
       tjson("{\"release\":\"1.0\",\"n\":3,\"ok\":true,\"w\":[\"x\",{\"y\":null}],\"f\":0.5}"),
       100);
  gput(st, tp_rich(SPAA_LEAF_TO_ROOT, 0), "b", "api", "pprof", 2000, 0, 0, NULL, NULL, 0);
  p = tp_small(3, 4);
  p->stacks[0].weights.v[0].value = spaa_int(INT64_MAX - 1); /* weights are not in the ids */
  p->stacks[1].weights.v[0].value = spaa_int(INT64_MAX - 1);
  p->stacks[2].weights.v[1].value = spaa_float(1e300);
  gput(st, p, "c", "api", "otlp", -1500000001LL, -5, 7, tjson("{}"), tjson("[1,2]"),
       UINT64_MAX);
  gput(st, tp_rich(SPAA_ROOT_TO_LEAF, 1), "d", "x\xc3\xa9", "spaa", 2000, 1, 0,
       tjson("{\"k\":\"\"}"), tjson("\"str\""), 5);
}

static void test_json_golden(void **state)
{
  static const char *const ids[] = {"a", "b", "c", "d"};
  char cur_id[SPAA_QUERY_MAX_CURSOR / 2 + 1], name[16];
  struct spaa_store_cursor after;
  struct spaa_store_page pg;
  struct spaa_store_profile_info pi;
  struct spaa_list_query q;
  struct spaa_err err = {0};
  struct spaa_store *st;
  struct tdir t;
  json_t *res;
  int i;
  tdir_make(&t);
  st = topen(t.db, 8, 8);
  golden_store(st);
  memset(&q, 0, sizeof(q));
  assert_int_equal(spaa_store_list(st, &q, &pg, &err), 0);
  assert_int_equal(spaa_api_page_json(&pg, &res, &err), 0);
  expect_json("all", res);
  json_decref(res);
  spaa_store_page_free(&pg);
  /* pages of one, each next cursor through its text form as a client would pass it */
  q.limit = 1;
  for (i = 0; i < 4; i++) {
    const char *text;
    assert_int_equal(spaa_store_list(st, &q, &pg, &err), 0);
    assert_int_equal(spaa_api_page_json(&pg, &res, &err), 0);
    snprintf(name, sizeof(name), "page%d", i);
    expect_json(name, res);
    text = json_string_value(json_object_get(res, "next_cursor"));
    assert_int_equal(text != NULL, i < 3);
    if (text) {
      assert_int_equal(spaa_api_cursor_decode(text, &after.received_ns, cur_id, sizeof(cur_id),
                                              &err), 0);
      after.id = cur_id;
      q.after = &after;
    }
    json_decref(res);
    spaa_store_page_free(&pg);
  }
  for (i = 0; i < 4; i++) {
    assert_int_equal(spaa_store_meta(st, ids[i], &pi, &err), 0);
    res = spaa_api_profile_json(&pi);
    expect_json(ids[i], res);
    json_decref(res);
    spaa_store_profile_info_free(&pi);
  }
  spaa_store_close(st);
  tdir_rm(&t);
}

/* A merged view reports its per-stack sums (arrays and map) to the set's meter while the
 * scan runs and gives them back after; refused past the meter's room, it fails as out of
 * memory with nothing left counted. */
static void test_merged_metered(void **state)
{
  struct spaa_list_query q;
  struct spaa_err err = {0};
  struct spaa_store *st;
  struct spaa_meter m;
  struct spaa_vset v;
  struct tdir t;
  size_t profiles = 0, peak;
  tdir_make(&t);
  st = topen(t.db, 8, 8);
  golden_store(st);
  memset(&q, 0, sizeof(q));
  q.service = "api";
  memset(&m, 0, sizeof(m));
  m.room = SIZE_MAX;
  spaa_vset_init(&v);
  v.meter = &m;
  assert_int_equal(spaa_api_merged_vset(st, &q, NULL, 0, &v, &profiles, &err), 0);
  assert_int_equal(profiles, 2);
  assert_true(v.n_stacks > 0);
  assert_int_equal(m.held, v.metered); /* the sums are given back, the set stays */
  peak = m.peak;
  /* the sums: 1,024 entries of two arrays at least, beside the set */
  assert_true(peak >= v.metered + 1024 * (sizeof(int64_t) + sizeof(double)));
  spaa_vset_free(&v);
  assert_int_equal(m.held, 0);
  /* room for less than the sums' first arrays: refused before the set holds anything */
  memset(&m, 0, sizeof(m));
  m.room = 1024;
  spaa_vset_init(&v);
  v.meter = &m;
  assert_int_equal(spaa_api_merged_vset(st, &q, NULL, 0, &v, &profiles, &err), SPAA_E_NOMEM);
  assert_int_not_equal(m.refused, 0);
  assert_int_equal(v.n_stacks, 0);
  spaa_vset_free(&v);
  assert_int_equal(m.held, 0);
  spaa_store_close(st);
  tdir_rm(&t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_time),
      cmocka_unit_test(test_pick_encoding),
      cmocka_unit_test(test_id_ok),
      cmocka_unit_test(test_cursor_bad),
      cmocka_unit_test(test_cursor_round_trip),
      cmocka_unit_test(test_received_at_format),
      cmocka_unit_test(test_json_golden),
      cmocka_unit_test(test_merged_metered),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
