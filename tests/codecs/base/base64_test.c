/* base/base64: a table of inputs, good and bad, and the capacity check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/base64.h"

static const struct {
  const char *in;
  const char *out; /* NULL: refused */
  size_t out_len;
} cases[] = {
    {"", "", 0},
    {"Zg==", "f", 1},
    {"Zg", "f", 1},
    {"Zm8=", "fo", 2},
    {"Zm9v", "foo", 3},
    {"Zm9vYmFy", "foobar", 6},
    {"dXNlcjpwYXNz", "user:pass", 9},
    {"+/8=", "\xfb\xff", 2},
    {"-_8", "\xfb\xff", 2},
    {"AA==", "\0", 1},
    {"Zm9v=", "foo", 3},     /* one stray pad at the end is tolerated like missing padding */
    {"Z", NULL, 0},          /* a lone 6-bit group */
    {"Zm9vY", NULL, 0},
    {"Zg===", NULL, 0},      /* more than two pads */
    {"Z=g=", NULL, 0},       /* '=' inside */
    {"Zm 9v", NULL, 0},      /* space */
    {"Zm9v\n", NULL, 0},
    {"Zm9v*", NULL, 0},
};

static void test_table(void **state)
{
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char out[32];
    size_t n = 99;
    int rc = spaa_base64_decode(out, sizeof(out), cases[i].in, strlen(cases[i].in), &n);
    if (!cases[i].out) {
      if (rc != -1)
        fail_msg("case %zu '%s': accepted", i, cases[i].in);
      continue;
    }
    if (rc != 0)
      fail_msg("case %zu '%s': refused", i, cases[i].in);
    assert_int_equal(n, cases[i].out_len);
    assert_memory_equal(out, cases[i].out, n);
    assert_true(n <= spaa_base64_max(strlen(cases[i].in)));
  }
}

static void test_capacity(void **state)
{
  char out[6];
  size_t n;
  (void)state;
  assert_int_equal(spaa_base64_decode(out, 6, "Zm9vYmFy", 8, &n), 0);
  assert_int_equal(n, 6);
  assert_int_equal(spaa_base64_decode(out, 5, "Zm9vYmFy", 8, &n), -1);
  assert_int_equal(spaa_base64_decode(out, 0, "", 0, &n), 0);
  assert_int_equal(n, 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_capacity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
