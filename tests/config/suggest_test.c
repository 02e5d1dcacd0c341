/* config/suggest.c: the edit distance (a table, swaps included) and which suggestion a
 * mistyped flag, key or format gets (or none). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/suggest.h"

static void test_distance(void **state)
{
  static const struct {
    const char *a, *b;
    size_t d;
  } t[] = {
      {"", "", 0},           {"abc", "", 3},          {"", "abc", 3},
      {"abc", "abc", 0},     {"abc", "ABC", 0},       {"kitten", "sitting", 3},
      {"retention", "retentoin", 1}, /* one swap */
      {"ca", "abc", 3},      /* OSA, not full Damerau: 3 */
      {"--listen", "--lisen", 1}, {"--to", "--from", 3}, {"pprof", "pprfo", 1},
      {"flaw", "lawn", 2},
  };
  char longw[SPAA_SUGGEST_MAX_LEN + 2];
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    size_t d = spaa_suggest_distance(t[i].a, t[i].b);
    if (d != t[i].d)
      fail_msg("distance('%s','%s') = %zu, want %zu", t[i].a, t[i].b, d, t[i].d);
    assert_int_equal(spaa_suggest_distance(t[i].b, t[i].a), t[i].d);
  }
  memset(longw, 'a', sizeof(longw) - 1);
  longw[sizeof(longw) - 1] = 0;
  assert_int_equal(spaa_suggest_distance(longw, "a"), SPAA_SUGGEST_MAX_LEN + 1);
}

static void test_suggest(void **state)
{
  static const char *const flags[] = {"--from", "--to", "--event", "--service", "--zstd",
                                      "--retention", "--retention-interval", NULL, "--help"};
  static const struct {
    const char *word, *want; /* want NULL: no suggestion */
  } t[] = {
      {"--form", "--from"},          {"--too", "--to"},
      {"--retentoin", "--retention"}, {"--retention-intervl", "--retention-interval"},
      {"--evnt", "--event"},         {"--ZSTD", "--zstd"},
      {"--ret", NULL},               /* a prefix of two: ambiguous */
      {"--zs", "--zstd"},            /* a prefix of one */
      {"--retention-", "--retention"}, /* one deletion away beats the prefix */
      {"--serv", "--service"},       {"--xyz", NULL},
      {"--verbose", NULL},           {"", NULL},
      {"-", NULL},                   {"--e", NULL}, /* too short to call a prefix */
      {"--hlep", "--help"},
  };
  size_t i, n = sizeof(flags) / sizeof(flags[0]);
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    const char *got = spaa_suggest(t[i].word, flags, n);
    if ((got == NULL) != (t[i].want == NULL) || (got && strcmp(got, t[i].want) != 0))
      fail_msg("suggest('%s') = %s, want %s", t[i].word, got ? got : "NULL",
               t[i].want ? t[i].want : "NULL");
  }
  assert_null(spaa_suggest(NULL, flags, n));
  assert_null(spaa_suggest("--from", flags, 0));
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_distance),
                                     cmocka_unit_test(test_suggest)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
