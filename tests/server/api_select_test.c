/* server/api_select.c: relative times (now, now-<N>s|m|h|d) and their refusals. Parameter
 * names and selections are exercised over HTTP by tests/e2e/query_views.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/api_select.h"

static void test_relative(void **state)
{
  static const struct {
    const char *in;
    int rc;
    int64_t want; /* seconds before now */
  } cases[] = {
      {"now", 0, 0}, {"now-90s", 0, 90}, {"now-15m", 0, 900}, {"now-1h", 0, 3600},
      {"now-7d", 0, 604800}, {"now-", -1, 0}, {"now-1", -1, 0}, {"now-1y", -1, 0},
      {"now+1h", -1, 0}, {"now-1hh", -1, 0}, {"yesterday", -1, 0}, {"", -1, 0},
      {"now-999999999999d", -1, 0}, {"now-99999999d", -1, 0}, {"now-20833d", 0, 1799971200}, {"now-20834d", -1, 0},
  };
  const int64_t now = 1800000000LL * 1000000000LL;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int64_t ns = -1;
    int rc = spaa_api_parse_relative(cases[i].in, now, &ns);
    if (rc != cases[i].rc)
      fail_msg("'%s': rc %d, want %d", cases[i].in, rc, cases[i].rc);
    if (!rc && ns != now - cases[i].want * 1000000000LL)
      fail_msg("'%s': %lld", cases[i].in, (long long)ns);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_relative)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
