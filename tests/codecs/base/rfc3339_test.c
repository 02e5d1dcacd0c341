/* codecs/base/rfc3339.c: the one RFC 3339 parser, as a table of accepted and refused texts;
 * the formatter as a table, against gmtime_r over a sweep, and parse(format(t)) == t. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/rfc3339.h"

static void test_table(void **state)
{
  static const struct {
    const char *in;
    int ok;
    int64_t ns;
  } cases[] = {
      {"1970-01-01T00:00:00Z", 1, 0},
      {"2023-01-01T00:00:00.123Z", 1, 1672531200123000000LL},
      {"2023-01-01T00:00:00.123456789Z", 1, 1672531200123456789LL},
      {"2023-01-01T00:00:00.1234567891Z", 1, 1672531200123456789LL}, /* past ns: truncated */
      {"2023-01-01t00:00:00z", 1, 1672531200000000000LL},
      {"2023-01-01 00:00:00Z", 1, 1672531200000000000LL},
      {"2023-01-01T02:00:00+02:00", 1, 1672531200000000000LL},
      {"2022-12-31T23:30:00-00:30", 1, 1672531200000000000LL},
      {"2024-02-29T12:00:00Z", 1, 1709208000000000000LL},
      {"1969-12-31T23:59:59Z", 1, -1000000000LL},
      {"2023-01-01T00:00:00", 0, 0},        /* no zone */
      {"2023-01-01T00:00:00.Z", 0, 0},      /* empty fraction */
      {"2023-13-01T00:00:00Z", 0, 0},       /* month */
      {"2023-04-31T00:00:00Z", 0, 0},       /* day of month */
      {"2023-01-01T24:00:00Z", 0, 0},       /* hour */
      {"2023-01-01T00:00:00+2:00", 0, 0},   /* offset form */
      {"2023-01-01T00:00:00Zjunk", 0, 0},   /* trailing bytes */
      {"2023-1-01T00:00:00Z", 0, 0},        /* two-digit month */
      {"", 0, 0},
      {"99999-01-01T00:00:00Z", 0, 0},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int64_t ns = 42;
    int rc = spaa_rfc3339_parse(cases[i].in, strlen(cases[i].in), &ns);
    if (cases[i].ok) {
      if (rc != 0)
        fail_msg("case %zu '%s': refused", i, cases[i].in);
      assert_int_equal(ns, cases[i].ns);
    } else if (rc == 0) {
      fail_msg("case %zu '%s': accepted as %lld", i, cases[i].in, (long long)ns);
    }
  }
}

/* the length bounds the parse: a valid prefix of a longer buffer is read as given */
static void test_length_bounds(void **state)
{
  const char *s = "2023-01-01T00:00:00Z trailing";
  int64_t ns = 0;
  (void)state;
  assert_int_equal(spaa_rfc3339_parse(s, 20, &ns), 0);
  assert_int_equal(ns, 1672531200000000000LL);
  assert_int_equal(spaa_rfc3339_parse(s, 19, &ns), -1);
  assert_int_equal(spaa_rfc3339_parse(s, strlen(s), &ns), -1);
}

static void test_format_table(void **state)
{
  static const struct {
    int64_t ns;
    unsigned digits;
    const char *want;
  } t[] = {
      {0, 9, "1970-01-01T00:00:00.000000000Z"},
      {0, 0, "1970-01-01T00:00:00Z"},
      {1672531200123456789LL, 9, "2023-01-01T00:00:00.123456789Z"},
      {1672531200123456789LL, 3, "2023-01-01T00:00:00.123Z"}, /* truncated, not rounded */
      {1672531200999999999LL, 3, "2023-01-01T00:00:00.999Z"},
      {1672531200123456789LL, 1, "2023-01-01T00:00:00.1Z"},
      {1672531200123456789LL, 0, "2023-01-01T00:00:00Z"},
      {1672531200123456789LL, 12, "2023-01-01T00:00:00.123456789Z"}, /* at most 9 */
      {1709208000000000000LL, 0, "2024-02-29T12:00:00Z"},
      {1735787045000000000LL, 0, "2025-01-02T03:04:05Z"},
      {-1, 9, "1969-12-31T23:59:59.999999999Z"},
      {-1000000000LL, 0, "1969-12-31T23:59:59Z"},
      {951868799000000000LL, 0, "2000-02-29T23:59:59Z"},
      {INT64_MAX, 9, "2262-04-11T23:47:16.854775807Z"},
      {INT64_MIN, 9, "1677-09-21T00:12:43.145224192Z"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    char out[SPAA_RFC3339_SIZE];
    size_t n = spaa_rfc3339_format_ns(out, t[i].ns, t[i].digits);
    if (strcmp(out, t[i].want) != 0 || n != strlen(t[i].want))
      fail_msg("case %zu: got '%s' (%zu), wanted '%s'", i, out, n, t[i].want);
  }
}

static void test_format_seconds(void **state)
{
  char out[SPAA_RFC3339_SIZE];
  (void)state;
  assert_int_equal(spaa_rfc3339_format_s(out, 1735787045), 20);
  assert_string_equal(out, "2025-01-02T03:04:05Z");
  spaa_rfc3339_format_s(out, 0);
  assert_string_equal(out, "1970-01-01T00:00:00Z");
  spaa_rfc3339_format_s(out, 253402300799LL);
  assert_string_equal(out, "9999-12-31T23:59:59Z");
  spaa_rfc3339_format_s(out, INT64_MAX); /* clamped */
  assert_string_equal(out, "9999-12-31T23:59:59Z");
  spaa_rfc3339_format_s(out, -62167219200LL);
  assert_string_equal(out, "0000-01-01T00:00:00Z");
  spaa_rfc3339_format_s(out, INT64_MIN);
  assert_string_equal(out, "0000-01-01T00:00:00Z");
}

/* The text storage wrote with gmtime_r and "%04d-...%09" PRId64 "Z", over a sweep of times
 * in both directions of the epoch; and the parser reads every formatted time back. */
static void test_format_sweep(void **state)
{
  int64_t ns;
  (void)state;
  for (ns = -3000000000000000000LL; ns < 3000000000000000000LL;
       ns += 7777777777777777LL + ns % 1000003) {
    int64_t sec = ns / 1000000000, frac = ns % 1000000000, back = 0;
    time_t tt;
    struct tm tm;
    char want[64], got[SPAA_RFC3339_SIZE];
    if (frac < 0) {
      frac += 1000000000;
      sec--;
    }
    tt = (time_t)sec;
    assert_non_null(gmtime_r(&tt, &tm));
    snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRId64 "Z",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             frac);
    spaa_rfc3339_format_ns(got, ns, 9);
    if (strcmp(got, want) != 0)
      fail_msg("%" PRId64 ": got %s, wanted %s", ns, got, want);
    assert_int_equal(spaa_rfc3339_parse(got, strlen(got), &back), 0);
    assert_int_equal(back, ns);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),         cmocka_unit_test(test_length_bounds),
      cmocka_unit_test(test_format_table),  cmocka_unit_test(test_format_seconds),
      cmocka_unit_test(test_format_sweep),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
