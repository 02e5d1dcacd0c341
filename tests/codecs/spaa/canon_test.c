/* codecs/canon.c: integers as printf prints them, at the edges, and numbers through
 * spaa_canon_num (the writer's and the content ids' one way of printing). */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "spaa/canon.h"

static void test_integers_match_printf(void **state)
{
  static const uint64_t u[] = {0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u,
                               9999999999999999999u, UINT64_MAX};
  static const int64_t s[] = {0, -1, 1, -9, -10, 1234567890123LL, INT64_MAX, INT64_MIN,
                              INT64_MIN + 1};
  char want[32];
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
    struct spaa_buf b;
    spaa_buf_init(&b, 0);
    assert_int_equal(spaa_canon_u64(&b, u[i]), 0);
    snprintf(want, sizeof(want), "%" PRIu64, u[i]);
    assert_string_equal(b.p, want);
    spaa_buf_free(&b);
  }
  for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
    struct spaa_buf b;
    spaa_buf_init(&b, 0);
    assert_int_equal(spaa_canon_num(&b, spaa_int(s[i])), 0);
    snprintf(want, sizeof(want), "%" PRId64, s[i]);
    assert_string_equal(b.p, want);
    spaa_buf_free(&b);
  }
}

static void test_doubles(void **state)
{
  static const struct {
    double d;
    const char *want;
  } cases[] = {{0.1, "0.1"}, {1.0, "1.0"}, {-2.5, "-2.5"}, {1e21, "1e+21"},
               {0.30000000000000004, "0.30000000000000004"}, {12345.0, "12345.0"}};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct spaa_buf b;
    spaa_buf_init(&b, 0);
    assert_int_equal(spaa_canon_num(&b, spaa_float(cases[i].d)), 0);
    assert_string_equal(b.p, cases[i].want);
    spaa_buf_free(&b);
  }
}

/* a capped buffer refuses instead of growing */
static void test_cap(void **state)
{
  struct spaa_buf b;
  (void)state;
  spaa_buf_init(&b, 4);
  assert_int_equal(spaa_canon_u64(&b, 1234), 0);
  assert_int_equal(spaa_canon_u64(&b, 5), SPAA_E_TOO_LARGE);
  assert_int_equal(b.len, 4);
  spaa_buf_free(&b);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_integers_match_printf),
      cmocka_unit_test(test_doubles),
      cmocka_unit_test(test_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
