/* storage/log.c: the store's messages reach the opener's callback formatted, nothing happens
 * without one, and a value quoted for a key=value field keeps its quotes and backslashes
 * escaped and its line breaks as single spaces, cut short without a dangling escape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "storage/log_int.h"

struct got {
  int calls;
  enum spaa_store_log_level level;
  char msg[64], kv[256];
};

static void cb(void *ctx, enum spaa_store_log_level level, const char *msg, const char *kv)
{
  struct got *g = ctx;
  g->calls++;
  g->level = level;
  snprintf(g->msg, sizeof(g->msg), "%s", msg);
  snprintf(g->kv, sizeof(g->kv), "%s", kv);
}

static void test_log(void **state)
{
  struct got g;
  struct storage__log l = {cb, &g};
  struct storage__log none = {NULL, NULL};
  (void)state;
  memset(&g, 0, sizeof(g));
  storage__log(&l, SPAA_STORE_LOG_WARN, "schema migrated", "from=%d to=%d", 4, 5);
  assert_int_equal(g.calls, 1);
  assert_int_equal(g.level, SPAA_STORE_LOG_WARN);
  assert_string_equal(g.msg, "schema migrated");
  assert_string_equal(g.kv, "from=4 to=5");
  storage__log(&l, SPAA_STORE_LOG_INFO, "bare", NULL);
  assert_int_equal(g.calls, 2);
  assert_string_equal(g.kv, "");
  storage__log(&none, SPAA_STORE_LOG_INFO, "nowhere", NULL);
  storage__log(NULL, SPAA_STORE_LOG_INFO, "nowhere", NULL);
  assert_int_equal(g.calls, 2);
  assert_true(storage__mono_ns() > 0);
}

static void test_quote(void **state)
{
  static const struct {
    const char *in;
    size_t cap;
    const char *out;
  } t[] = {
      {"plain", 64, "plain"},
      {NULL, 64, ""},
      {"say \"hi\" \\ there", 64, "say \\\"hi\\\" \\\\ there"},
      {"failed: No such file\n\tIs the server running?\n", 64,
       "failed: No such file Is the server running?"},
      {"ends with a dot.", 64, "ends with a dot"},
      {"abc\"def", 5, "abc"},   /* no room for the whole escape: cut before it */
      {"abcdef", 4, "abc"},
      {"x", 1, ""},
  };
  char buf[64];
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
    assert_string_equal(storage__log_q(buf, t[i].cap, t[i].in), t[i].out);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_log),
      cmocka_unit_test(test_quote),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
