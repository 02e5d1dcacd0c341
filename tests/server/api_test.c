/* server/query.c helpers: time parsing (unix seconds and RFC 3339), Accept-Encoding
 * negotiation, profile id checks. The handlers themselves run in tests/e2e. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/api.h"

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
  };
  static const char *const bad[] = {
      "",      "abc", "17e9", "1700000000.", "-5", "2023-11-14", "2023-11-14T22:13:20",
      "2023-13-01T00:00:00Z", "2023-11-14T24:00:00Z", "2023-11-14T22:13:20+0200",
      "2023-11-14T22:13:20Zjunk", "1969-12-31T23:59:59Z", "2023-1-14T22:13:20Z",
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

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_time),
      cmocka_unit_test(test_pick_encoding),
      cmocka_unit_test(test_id_ok),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
