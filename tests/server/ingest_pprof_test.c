/* server/pprof.c helpers: Pyroscope application names (service, type suffix, labels) and
 * from/until times read by magnitude. The handlers run in tests/e2e/pprof_*.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/ingest_pprof.h"

static void test_name_ok(void **state)
{
  static const struct {
    const char *in, *service, *app, *type, *labels; /* labels as compact sorted JSON */
  } ok[] = {
      {"app", "app", "app", NULL, NULL},
      {"app.cpu", "app", "app.cpu", "cpu", NULL},
      {"my.awesome.app.cpu{env=staging,region=us-west-1}", "my.awesome.app", "my.awesome.app.cpu",
       "cpu", "{\"env\":\"staging\",\"region\":\"us-west-1\"}"},
      {"svc.alloc_objects{}", "svc", "svc.alloc_objects", "alloc_objects", NULL},
      {"svc.inuse_space{a.b_c=x y:z/\xc3\xa9}", "svc", "svc.inuse_space", "inuse_space",
       "{\"a.b_c\":\"x y:z/\xc3\xa9\"}"},
      {"cpu", "cpu", "cpu", NULL, NULL},                 /* nothing before the suffix */
      {".cpu", ".cpu", ".cpu", NULL, NULL},
      {"app.notatype", "app.notatype", "app.notatype", NULL, NULL},
      {"a-b_c.wall{k=v}", "a-b_c", "a-b_c.wall", "wall", "{\"k\":\"v\"}"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    struct spaa_pprof_name n;
    struct spaa_err err;
    spaa_err_clear(&err);
    if (spaa_pprof_parse_name(ok[i].in, &n, &err))
      fail_msg("'%s' should parse: %s", ok[i].in, err.msg);
    assert_string_equal(ok[i].service, n.service);
    assert_string_equal(ok[i].app, n.app);
    if (ok[i].type)
      assert_string_equal(ok[i].type, n.type ? n.type : "(none)");
    else
      assert_null(n.type);
    if (ok[i].labels) {
      char *s = json_dumps(n.labels, JSON_COMPACT | JSON_SORT_KEYS);
      assert_non_null(s);
      assert_string_equal(ok[i].labels, s);
      free(s);
    } else {
      assert_null(n.labels);
    }
    spaa_pprof_name_clear(&n);
    spaa_pprof_name_clear(&n); /* idempotent */
  }
}

static void test_name_bad(void **state)
{
  static const struct {
    const char *in, *msg;
  } bad[] = {
      {NULL, "is required"},
      {"", "is required"},
      {"{env=x}", "application name before '{' is empty"},
      {"my app", "byte 2"},
      {"app/x", "byte 3"},
      {"app{env}", "expected '=' after label key 'env'"},
      {"app{env=x", "must end the name with '}'"},
      {"app{env=x}y", "must end the name with '}'"},
      {"app{env=x}}", "braces inside"},
      {"app{{env=x}", "braces inside"},
      {"app{=x}", "expected a label key"},
      {"app{e nv=x}", "expected '=' after label key 'e'"},
      {"app{env=}", "empty value"},
      {"app{env=x,}", "must not end in ','"},
      {"app{env=x,,a=b}", "expected a label key"},
      {"app{env=a=b}", "not allowed"},
      {"app{env=a\tb}", "not allowed"},
      {"app{env=\xff}", "not allowed"},
      {"app{env=\xc3}", "not allowed"},
      {"app{env=x,env=y}", "given twice"},
      {"app{__name__=x}", "reserved"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct spaa_pprof_name n;
    struct spaa_err err;
    spaa_err_clear(&err);
    if (spaa_pprof_parse_name(bad[i].in, &n, &err) != SPAA_E_BAD_REQUEST)
      fail_msg("'%s' should be refused", bad[i].in ? bad[i].in : "(null)");
    if (!strstr(err.msg, bad[i].msg))
      fail_msg("'%s': '%s' does not say '%s'", bad[i].in ? bad[i].in : "(null)", err.msg,
               bad[i].msg);
    assert_null(n.labels);
  }
}

static void test_name_caps(void **state)
{
  char name[SPAA_PPROF_MAX_NAME + 8], *p;
  struct spaa_pprof_name n;
  struct spaa_err err;
  int i;
  (void)state;
  memset(name, 'a', sizeof(name) - 1);
  name[sizeof(name) - 1] = 0;
  assert_int_equal(SPAA_E_BAD_REQUEST, spaa_pprof_parse_name(name, &n, &err));
  assert_non_null(strstr(err.msg, "longer than"));
  p = name + sprintf(name, "app{");
  for (i = 0; i <= SPAA_PPROF_MAX_LABELS; i++)
    p += sprintf(p, "%sk%d=v", i ? "," : "", i);
  strcpy(p, "}");
  assert_int_equal(SPAA_E_BAD_REQUEST, spaa_pprof_parse_name(name, &n, &err));
  assert_non_null(strstr(err.msg, "more than"));
  assert_null(n.labels);
}

static void test_time(void **state)
{
  static const struct {
    const char *in;
    int64_t ns;
  } ok[] = {
      {"now", 42},
      {"0", 0},
      {"1700000000", 1700000000000000000LL},           /* seconds */
      {"9000000000", 9000000000000000000LL},           /* seconds, year 2255 */
      {"1700000000123", 1700000000123000000LL},        /* milliseconds */
      {"1700000000123456", 1700000000123456000LL},     /* microseconds */
      {"1700000000123456789", 1700000000123456789LL},  /* nanoseconds */
      {"100000000000", 100000000000000000LL},          /* 1e11: ms */
      {"100000000000000", 100000000000000000LL},       /* 1e14: µs */
      {"100000000000000000", 100000000000000000LL},    /* 1e17: ns */
  };
  static const char *const bad[] = {NULL, "", "-1", "+5", "1.5", "17e8", " 1", "1 ", "NOW",
                                    "now-1h", "9223372036854775808", "12345678901234567890",
                                    "99999999999" /* seconds past int64 ns */};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    int64_t ns = -1;
    if (spaa_pprof_parse_time(ok[i].in, 42, &ns))
      fail_msg("'%s' should parse", ok[i].in);
    assert_int_equal(ok[i].ns, ns);
  }
  for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    int64_t ns = -1;
    if (!spaa_pprof_parse_time(bad[i], 42, &ns))
      fail_msg("'%s' should be refused", bad[i] ? bad[i] : "(null)");
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_name_ok),
      cmocka_unit_test(test_name_bad),
      cmocka_unit_test(test_name_caps),
      cmocka_unit_test(test_time),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
