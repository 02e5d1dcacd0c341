/* server/api_select.c: relative times (now, now-<N>s|m|h|d) and their refusals; the
 * description of a selection that 404s name (spaa_api_sel_describe). Parameter names and
 * selections are exercised over HTTP by tests/e2e/query_views.sh and
 * tests/e2e/query_empty_selection.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

static void test_describe(void **state)
{
  static const char v50[] = "0123456789012345678901234567890123456789012345678Z";
  /* 47 ASCII bytes, then "é" (2 bytes) across the 48-byte cut */
  static const char utf[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9zz";
  struct spaa_store_label_filter labels[2] = {{"env", "prod"}, {"region", "eu"}};
  struct spaa_store_label_filter attrs[1] = {{"release", "1.2"}};
  struct {
    struct spaa_list_query q;
    size_t cap, n;
    const char *want;
  } cases[] = {
      {{0}, 256, 0, ""},
      {{.service = "shop"}, 256, 1, "service=shop"},
      {{.service = "shop", .source = "pprof", .event = "cpu", .metric = "cpu"}, 256, 3,
       "service=shop, source=pprof, event=cpu"},
      {{.received_from_ns = 1000000000LL * 1000000000LL, .received_to_ns = 1000000060LL * 1000000000LL},
       256, 2, "from=2001-09-09T01:46:40Z, to=2001-09-09T01:47:40Z"},
      {{.from_ns = 1000000000LL * 1000000000LL}, 256, 2, "time=profile, from=2001-09-09T01:46:40Z"},
      {{.labels = labels, .n_labels = 2, .attrs = attrs, .n_attrs = 1}, 256, 3,
       "label=env:prod, label=region:eu, release=1.2"},
      {{.service = v50}, 256, 1, "service=012345678901234567890123456789012345678901234567..."},
      {{.service = utf}, 256, 1, "service=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa..."},
      {{.service = "shop", .source = "pprof", .event = "cpu"}, 40, 3, "service=shop, source=pprof, ..."},
      {{.service = "shop", .source = "pprof", .event = "cpu"}, 32, 3, "service=shop, ..."},
      {{.service = "shop", .source = "pprof"}, 16, 2, "..."},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char out[256];
    size_t n;
    memset(out, 'Z', sizeof(out));
    n = spaa_api_sel_describe(&cases[i].q, out, cases[i].cap);
    if (n != cases[i].n || strcmp(out, cases[i].want) != 0)
      fail_msg("case %zu: %zu '%s', want %zu '%s'", i, n, out, cases[i].n, cases[i].want);
    assert_true(strlen(out) < cases[i].cap);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_relative),
                                     cmocka_unit_test(test_describe)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
