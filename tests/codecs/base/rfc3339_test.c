/* codecs/rfc3339.c: the one RFC 3339 parser, as a table of accepted and refused texts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_length_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
