/* codecs/pprof/pprof_pyroscope.c: Pyroscope application names (service, type suffix,
 * labels), from/until times read by magnitude, the option setters (defaults and refusals),
 * and what spaa_convert_pprof makes of the options (the name's type choosing the primary sample
 * type among others). The HTTP side: tests/e2e/pprof_*.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "pprof_testlib.h"

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
      /* as Pyroscope reads them: spaces around keys and values dropped, '=' in a value, an
       * empty value leaves its label out (a client tag from an unset variable) */
      {"app.cpu{env=prod, region=eu}", "app", "app.cpu", "cpu",
       "{\"env\":\"prod\",\"region\":\"eu\"}"},
      {"app{ q = a=b , r=x y }", "app", "app", NULL, "{\"q\":\"a=b\",\"r\":\"x y\"}"},
      {"app.cpu{hostname=,env=prod}", "app", "app.cpu", "cpu", "{\"env\":\"prod\"}"},
      {"app{env=}", "app", "app", NULL, "{}"},
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
      {"app{env=x,}", "must not end in ','"},
      {"app{env=x,,a=b}", "expected a label key"},
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
  /* a value of SPAA_PPROF_MAX_LABEL_VALUE bytes is taken, one more is refused */
  p = name + sprintf(name, "app{k=");
  memset(p, 'v', SPAA_PPROF_MAX_LABEL_VALUE);
  strcpy(p + SPAA_PPROF_MAX_LABEL_VALUE, "}");
  assert_int_equal(0, spaa_pprof_parse_name(name, &n, &err));
  assert_int_equal(SPAA_PPROF_MAX_LABEL_VALUE,
                   strlen(json_string_value(json_object_get(n.labels, "k"))));
  spaa_pprof_name_clear(&n);
  memset(p, 'v', SPAA_PPROF_MAX_LABEL_VALUE + 1);
  strcpy(p + SPAA_PPROF_MAX_LABEL_VALUE + 1, "}");
  assert_int_equal(SPAA_E_BAD_REQUEST, spaa_pprof_parse_name(name, &n, &err));
  assert_non_null(strstr(err.msg, "longer than"));
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
                                    "99999999999" /* seconds past int64 ns */,
                                    "17000000017000000" /* microseconds past int64 ns */,
                                    "17000000000000" /* milliseconds past int64 ns */};
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

/* ---- the option setters ---------------------------------------------------------------- */

#define NOW 1700000005000000000LL

static void test_opts_range(void **state)
{
  static const struct {
    const char *from, *until;
    int64_t want_from, want_until; /* 0, 0: refused */
    const char *msg;
  } t[] = {
      {NULL, NULL, NOW, NOW, NULL},                             /* both missing: now */
      {"", "", NOW, NOW, NULL},
      {"1700000000", NULL, 1700000000000000000LL, NOW, NULL},   /* until: now */
      {"1700000009", NULL, 1700000009000000000LL, 1700000009000000000LL, NULL}, /* > now */
      {NULL, "1700000010000", 1700000010000000000LL, 1700000010000000000LL, NULL},
      {"1700000000", "1700000010000", 1700000000000000000LL, 1700000010000000000LL, NULL},
      {"now", "now", NOW, NOW, NULL},
      {"yesterday", NULL, 0, 0, "bad from 'yesterday'"},
      {NULL, "-5", 0, 0, "bad until '-5'"},
      {"1700000010", "1700000000", 0, 0, "is before from"},
      {"99999999999", NULL, 0, 0, "from '99999999999' is past 2262-04-11T23:47:16Z"},
      {NULL, "9223372036854775808", 0, 0, "until '9223372036854775808' is past 2262"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    struct spaa_pprof_opts o;
    struct spaa_err err;
    int rc;
    memset(&o, 0, sizeof(o));
    spaa_err_clear(&err);
    rc = spaa_pprof_opts_range(&o, t[i].from, t[i].until, NOW, &err);
    if (t[i].msg) {
      assert_int_equal(rc, SPAA_E_BAD_REQUEST);
      if (!strstr(err.msg, t[i].msg))
        fail_msg("case %zu: '%s' does not say '%s'", i, err.msg, t[i].msg);
      assert_int_equal(o.has_range, 0);
      continue;
    }
    if (rc)
      fail_msg("case %zu: %s", i, err.msg);
    assert_int_equal(o.has_range, 1);
    assert_int_equal(o.from_ns, t[i].want_from);
    assert_int_equal(o.until_ns, t[i].want_until);
  }
}

static void test_opts_rate_stc_name(void **state)
{
  static const char *const bad_rates[] = {"1000000001", "99999999999999999999999"};
  /* pyroscope-go sends 0 for heap, mutex, block and goroutine: not given, as Pyroscope */
  static const char *const unset_rates[] = {"0", "fast", "-1", "+5", "1e3", "12x", " 1"};
  static const char *const bad_stc[] = {"{nope", "[]", "{\"cpu\":1}", "{\"cpu\":{\"units\":5}}",
                                        "{\"cpu\":{\"sampled\":\"yes\"}}"};
  struct spaa_pprof_opts o;
  struct spaa_err err;
  char *big;
  size_t i;
  (void)state;
  memset(&o, 0, sizeof(o));
  assert_int_equal(spaa_pprof_opts_sample_rate(&o, NULL, &err), 0);
  assert_int_equal(spaa_pprof_opts_sample_rate(&o, "", &err), 0);
  assert_int_equal(o.sample_rate, 0);
  assert_int_equal(spaa_pprof_opts_sample_rate(&o, "100", &err), 0);
  assert_int_equal(o.sample_rate, 100);
  for (i = 0; i < sizeof(unset_rates) / sizeof(unset_rates[0]); i++) {
    struct spaa_pprof_opts u;
    memset(&u, 0, sizeof(u));
    if (spaa_pprof_opts_sample_rate(&u, unset_rates[i], &err) != 0 || u.sample_rate != 0)
      fail_msg("sampleRate '%s' should mean 'not given'", unset_rates[i]);
  }
  for (i = 0; i < sizeof(bad_rates) / sizeof(bad_rates[0]); i++) {
    if (spaa_pprof_opts_sample_rate(&o, bad_rates[i], &err) != SPAA_E_BAD_REQUEST)
      fail_msg("sampleRate '%s' should be refused", bad_rates[i]);
    assert_non_null(strstr(err.msg, "bad sampleRate"));
  }
  assert_int_equal(o.sample_rate, 100);
  for (i = 0; i < sizeof(bad_stc) / sizeof(bad_stc[0]); i++)
    if (spaa_pprof_opts_stc(&o, (const uint8_t *)bad_stc[i], strlen(bad_stc[i]), &err) !=
        SPAA_E_BAD_REQUEST)
      fail_msg("sample_type_config '%s' should be refused", bad_stc[i]);
  assert_int_equal(spaa_pprof_opts_stc(&o, NULL, 0, &err), SPAA_E_BAD_REQUEST);
  assert_null(o.sample_type_config);
  /* the cap: SPAA_PPROF_MAX_STC bytes pass, one more is refused */
  big = malloc(SPAA_PPROF_MAX_STC + 2);
  assert_non_null(big);
  memset(big, ' ', SPAA_PPROF_MAX_STC + 1);
  big[0] = '{';
  big[SPAA_PPROF_MAX_STC - 1] = '}';
  assert_int_equal(spaa_pprof_opts_stc(&o, (uint8_t *)big, SPAA_PPROF_MAX_STC + 1, &err),
                   SPAA_E_TOO_LARGE);
  assert_non_null(strstr(err.msg, "over the"));
  assert_null(o.sample_type_config);
  assert_int_equal(spaa_pprof_opts_stc(&o, (uint8_t *)big, SPAA_PPROF_MAX_STC, &err), 0);
  assert_int_equal(json_object_size(o.sample_type_config), 0);
  free(big);
  {
    static const char ok[] = "{\"cpu\":{\"units\":\"ns\",\"other\":[1]}}";
    assert_int_equal(spaa_pprof_opts_stc(&o, (const uint8_t *)ok, strlen(ok), &err), 0);
  }
  assert_non_null(json_object_get(o.sample_type_config, "cpu"));
  assert_int_equal(spaa_pprof_opts_name(&o, "app{env}", &err), SPAA_E_BAD_REQUEST);
  assert_null(o.name_raw);
  assert_int_equal(spaa_pprof_opts_name(&o, NULL, &err), SPAA_E_BAD_REQUEST);
  assert_non_null(strstr(err.msg, "is required"));
  assert_int_equal(spaa_pprof_opts_name(&o, "app.cpu{env=prod}", &err), 0);
  assert_string_equal(o.name_raw, "app.cpu{env=prod}");
  assert_string_equal(o.name.service, "app");
  assert_int_equal(spaa_pprof_opts_name(&o, "other", &err), 0); /* replaces */
  assert_string_equal(o.name_raw, "other");
  assert_null(o.name.labels);
  spaa_pprof_opts_clear(&o);
  assert_null(o.name_raw);
  assert_null(o.sample_type_config);
  spaa_pprof_opts_clear(&o); /* idempotent */
  spaa_pprof_opts_clear(NULL);
}

/* ---- what the converter makes of them ------------------------------------------------ */

static struct spaa_converted convert_one(const uint8_t *buf, size_t len,
                                         const struct spaa_convert_opts *o,
                                         struct spaa_conv_list *l)
{
  struct spaa_err err;
  memset(l, 0, sizeof(*l));
  spaa_err_clear(&err);
  if (spaa_convert_pprof(buf, len, o, l, &err))
    fail_msg("convert: %s", err.msg);
  assert_int_equal(l->n, 1);
  return l->v[0];
}

static const char *jstr_at(const json_t *o, const char *k)
{
  return json_string_value(json_object_get(o, k));
}

/* Without Pyroscope options: only pprof_gzip, no labels, no time range invented. */
static void test_convert_plain(void **state)
{
  struct spaa_conv_list l;
  struct spaa_convert_opts o;
  struct spaa_converted c;
  struct tb b;
  size_t len;
  uint8_t *buf;
  (void)state;
  tb_basic(&b);
  buf = tb_pack(&b, &len);
  c = convert_one(buf, len, NULL, &l);
  assert_null(c.service);
  assert_null(c.labels);
  assert_int_equal(json_object_size(c.attrs), 1);
  assert_true(json_is_false(json_object_get(c.attrs, "pprof_gzip")));
  assert_null(c.original);
  assert_int_equal(c.profile->header.has_time_range, 0);
  assert_int_equal(c.profile->header.events[0].has_frequency_hz, 0);
  spaa_conv_list_free(&l);
  memset(&o, 0, sizeof(o));
  o.keep_original = 1;
  o.service = "svc";
  c = convert_one(buf, len, &o, &l);
  assert_string_equal(c.service, "svc");
  assert_ptr_equal(c.original, buf);
  assert_int_equal(c.original_len, len);
  spaa_conv_list_free(&l);
  free(buf);
}

static void test_convert_pyroscope(void **state)
{
  static const char stc[] = "{\"cpu\":{\"units\":\"nanoseconds\",\"display-name\":\"cpu_time\","
                            "\"aggregation\":\"sum\",\"cumulative\":false,\"sampled\":true}}";
  static const char stc2[] = "{\"samples\":{\"display-name\":\"cpu\",\"units\":\"count\"},"
                             "\"absent\":{\"units\":\"x\"}}";
  struct spaa_pprof_opts po;
  struct spaa_convert_opts o;
  struct spaa_conv_list l;
  struct spaa_converted c;
  struct spaa_err err;
  const struct spaa_event *cpu;
  struct tb b;
  size_t len, i;
  uint8_t *buf;
  char *s;
  (void)state;
  tb_basic(&b);
  buf = tb_pack(&b, &len);
  memset(&po, 0, sizeof(po));
  assert_int_equal(spaa_pprof_opts_name(&po, "my.app.cpu{env=prod,region=eu}", &err), 0);
  assert_int_equal(spaa_pprof_opts_range(&po, "1700000000", "1700000010", NOW, &err), 0);
  assert_int_equal(spaa_pprof_opts_sample_rate(&po, "100", &err), 0);
  assert_int_equal(spaa_pprof_opts_stc(&po, (const uint8_t *)stc, strlen(stc), &err), 0);
  memset(&o, 0, sizeof(o));
  o.pprof = &po;
  c = convert_one(buf, len, &o, &l);
  assert_string_equal(c.service, "my.app");
  s = json_dumps(c.labels, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(s, "{\"__name__\":\"cpu\",\"env\":\"prod\",\"region\":\"eu\"}");
  free(s);
  assert_string_equal(jstr_at(c.attrs, "pyroscope_name"), "my.app.cpu{env=prod,region=eu}");
  assert_string_equal(jstr_at(c.attrs, "profile_type"), "cpu");
  assert_int_equal(json_integer_value(json_object_get(c.attrs, "from_ns")), 1700000000000000000LL);
  assert_int_equal(json_integer_value(json_object_get(c.attrs, "until_ns")), 1700000010000000000LL);
  assert_int_equal(json_integer_value(json_object_get(c.attrs, "sample_rate")), 100);
  assert_true(json_equal(json_object_get(c.attrs, "sample_type_config"), po.sample_type_config));
  assert_non_null(json_object_get(c.attrs, "pprof_gzip"));
  /* the pprof has no time: the sender's range, in the header too */
  assert_int_equal(c.start_ns, 1700000000000000000LL);
  assert_int_equal(c.end_ns, 1700000010000000000LL);
  assert_int_equal(c.profile->header.has_time_range, 1);
  assert_string_equal(c.profile->header.time_unit, "nanoseconds");
  /* sample_type_config on the cpu event (samples is a metric of it); the rate on the one
   * timer event */
  assert_int_equal(c.profile->header.n_events, 1);
  cpu = spaa_find_event(c.profile, "cpu");
  assert_non_null(cpu);
  assert_string_equal(jstr_at(cpu->extra, "x_pyroscope_display_name"), "cpu_time");
  assert_string_equal(jstr_at(cpu->extra, "x_pyroscope_units"), "nanoseconds");
  assert_string_equal(jstr_at(cpu->extra, "x_pyroscope_aggregation"), "sum");
  assert_true(json_is_false(json_object_get(cpu->extra, "x_pyroscope_cumulative")));
  assert_true(json_is_true(json_object_get(cpu->extra, "x_pyroscope_sampled")));
  assert_null(spaa_find_event(c.profile, "samples"));
  assert_null(json_object_get(cpu->extra, "x_pyroscope_metrics"));
  for (i = 0; i < c.profile->header.n_events; i++) {
    const struct spaa_event *e = &c.profile->header.events[i];
    assert_int_equal(e->has_frequency_hz, 1);
    assert_int_equal(e->frequency_hz.i, 100);
    assert_string_equal(e->mode, "frequency");
  }
  spaa_conv_list_free(&l);
  /* the entry of a metric merged into the event goes under x_pyroscope_metrics; an entry
   * naming no type of the profile is only in the attrs */
  spaa_pprof_opts_clear(&po);
  memset(&po, 0, sizeof(po));
  assert_int_equal(spaa_pprof_opts_stc(&po, (const uint8_t *)stc2, strlen(stc2), &err), 0);
  c = convert_one(buf, len, &o, &l);
  cpu = spaa_find_event(c.profile, "cpu");
  assert_non_null(cpu);
  assert_null(json_object_get(cpu->extra, "x_pyroscope_display_name"));
  s = json_dumps(json_object_get(cpu->extra, "x_pyroscope_metrics"), JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(s, "{\"samples\":{\"x_pyroscope_display_name\":\"cpu\","
                         "\"x_pyroscope_units\":\"count\"}}");
  free(s);
  spaa_conv_list_free(&l);
  /* a pprof with a time of its own keeps it; a given service wins over the name's */
  b.p.time_nanos = 1600000000000000000LL;
  b.p.duration_nanos = 1000000000LL;
  free(buf);
  buf = tb_pack(&b, &len);
  o.service = "given";
  c = convert_one(buf, len, &o, &l);
  assert_string_equal(c.service, "given");
  assert_int_equal(c.start_ns, 1600000000000000000LL);
  assert_int_equal(c.end_ns, 1600000001000000000LL);
  spaa_conv_list_free(&l);
  spaa_pprof_opts_clear(&po);
  free(buf);
}

/* A service_name label in the name is the service, for a pprof as for folded stacks: the
 * label not kept, the application name (without its type) kept as app_name unless given. */
static void test_convert_service_name(void **state)
{
  static const struct {
    const char *name, *service, *labels;
  } t[] = {
      {"legacyapp2.cpu{service_name=billing}", "billing",
       "{\"__name__\":\"cpu\",\"app_name\":\"legacyapp2\"}"},
      {"my.app{service_name=billing,env=prod}", "billing",
       "{\"app_name\":\"my.app\",\"env\":\"prod\"}"},
      {"my.app.alloc_space{app_name=mine,service_name=billing}", "billing",
       "{\"__name__\":\"alloc_space\",\"app_name\":\"mine\"}"},
      {"my.app.cpu{service_name=}", "my.app", "{\"__name__\":\"cpu\"}"},
      {"my.app.cpu{env=prod}", "my.app", "{\"__name__\":\"cpu\",\"env\":\"prod\"}"},
  };
  struct tb b;
  size_t len, i;
  uint8_t *buf;
  (void)state;
  tb_basic(&b);
  buf = tb_pack(&b, &len);
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    struct spaa_pprof_opts po;
    struct spaa_convert_opts o;
    struct spaa_conv_list l;
    struct spaa_converted c;
    struct spaa_err err;
    char *s;
    memset(&po, 0, sizeof(po));
    memset(&o, 0, sizeof(o));
    assert_int_equal(spaa_pprof_opts_name(&po, t[i].name, &err), 0);
    o.pprof = &po;
    c = convert_one(buf, len, &o, &l);
    assert_string_equal(c.service, t[i].service);
    s = json_dumps(c.labels, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, t[i].labels);
    free(s);
    assert_string_equal(jstr_at(c.attrs, "pyroscope_name"), t[i].name);
    spaa_conv_list_free(&l);
    /* a given service still wins; the labels are the same */
    o.service = "given";
    c = convert_one(buf, len, &o, &l);
    assert_string_equal(c.service, "given");
    s = json_dumps(c.labels, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, t[i].labels);
    free(s);
    spaa_conv_list_free(&l);
    spaa_pprof_opts_clear(&po);
  }
  free(buf);
}

/* The primary sample type (the event's name and primary metric, first on every stack):
 * default_sample_type when it names a type, else the Pyroscope name's type suffix when a
 * sample type has that name, else the last type (docs/pprof-mapping.md). */
static void test_convert_name_type(void **state)
{
  static const struct {
    const char *name;    /* the application name, or NULL: no Pyroscope options */
    const char *dflt;    /* default_sample_type, or NULL */
    const char *primary; /* the event converted */
  } cases[] = {
      {NULL, NULL, "cpu"},               /* no hint: the last type */
      {"app", NULL, "cpu"},              /* a name without a type suffix */
      {"app.cpu", NULL, "cpu"},
      {"app.samples{env=prod}", NULL, "samples"}, /* the name's type, not the last one */
      {"app.wall", NULL, "cpu"},         /* a type the profile does not have: the last */
      {"app.samples", "cpu", "cpu"},     /* default_sample_type wins over the name */
      {"app.cpu", "samples", "samples"},
      {"app.samples", "nosuch", "samples"}, /* a default naming no type is no default */
      {NULL, "nosuch", "cpu"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct spaa_pprof_opts po;
    struct spaa_convert_opts o;
    struct spaa_conv_list l;
    struct spaa_converted c;
    struct spaa_err err;
    const struct spaa_event *e;
    struct tb b;
    size_t len, k;
    uint8_t *buf;
    tb_basic(&b);
    if (cases[i].dflt)
      b.p.default_sample_type = tb_str(&b, cases[i].dflt);
    buf = tb_pack(&b, &len);
    memset(&po, 0, sizeof(po));
    memset(&o, 0, sizeof(o));
    if (cases[i].name) {
      assert_int_equal(spaa_pprof_opts_name(&po, cases[i].name, &err), 0);
      o.pprof = &po;
    }
    c = convert_one(buf, len, &o, &l);
    assert_int_equal(c.profile->header.n_events, 1);
    e = &c.profile->header.events[0];
    if (strcmp(e->name, cases[i].primary) || strcmp(e->primary_metric, cases[i].primary))
      fail_msg("case %zu (%s, default %s): event %s, primary metric %s; want %s", i,
               cases[i].name ? cases[i].name : "no name", cases[i].dflt ? cases[i].dflt : "none",
               e->name, e->primary_metric, cases[i].primary);
    for (k = 0; k < c.profile->n_stacks; k++)
      assert_string_equal(c.profile->stacks[k].weights.v[0].metric, cases[i].primary);
    spaa_conv_list_free(&l);
    spaa_pprof_opts_clear(&po);
    free(buf);
  }
}

/* The .NET fixture (six types, no default_sample_type, the last, lock_time, all zero): sent
 * as `dotnetapp.cpu{env=prod}`, its primary is cpu, which carries its weights; without a
 * name, the last type as before. */
static void test_convert_name_type_dotnet(void **state)
{
  static const char *const names[] = {"dotnetapp.cpu{env=prod}", NULL, "dotnetapp{env=prod}"};
  static const char *const want[] = {"cpu", "lock_time", "lock_time"};
  size_t i, len, k;
  uint8_t *buf;
  (void)state;
  if (!spaa_test_have_fixtures("pprof", __func__))
    return;
  buf = spaa_test_fixture_in("pprof", "pyroscope_dotnet.labels.pprof", &len);
  assert_non_null(buf);
  for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    struct spaa_pprof_opts po;
    struct spaa_convert_opts o;
    struct spaa_conv_list l;
    struct spaa_converted c;
    struct spaa_err err;
    const struct spaa_event *e;
    int64_t cpu = 0;
    memset(&po, 0, sizeof(po));
    memset(&o, 0, sizeof(o));
    if (names[i]) {
      assert_int_equal(spaa_pprof_opts_name(&po, names[i], &err), 0);
      o.pprof = &po;
    }
    c = convert_one(buf, len, &o, &l);
    e = &c.profile->header.events[0];
    assert_string_equal(e->name, want[i]);
    assert_string_equal(e->primary_metric, want[i]);
    for (k = 0; k < c.profile->n_stacks; k++) {
      const struct spaa_weights *w = &c.profile->stacks[k].weights;
      size_t j;
      assert_string_equal(w->v[0].metric, want[i]); /* the primary first on every stack */
      for (j = 0; j < w->n; j++)
        if (!strcmp(w->v[j].metric, "cpu"))
          cpu += w->v[j].value.i;
    }
    assert_true(cpu > 0); /* cpu keeps its weights either way */
    spaa_conv_list_free(&l);
    spaa_pprof_opts_clear(&po);
  }
  free(buf);
}

/* A duration whose end passes the largest 64-bit time is refused (400, naming the field),
 * not stored with end = start; the largest duration that fits is kept. */
static void test_duration_overflow(void **state)
{
  struct spaa_convert_opts o;
  struct spaa_conv_list l;
  struct spaa_converted c;
  struct spaa_err err;
  struct tb b;
  size_t len;
  uint8_t *buf;
  (void)state;
  memset(&o, 0, sizeof(o));
  tb_basic(&b);
  b.p.time_nanos = 1600000000000000000LL;
  b.p.duration_nanos = INT64_MAX;
  buf = tb_pack(&b, &len);
  memset(&l, 0, sizeof(l));
  spaa_err_clear(&err);
  assert_int_equal(spaa_convert_pprof(buf, len, &o, &l, &err), SPAA_E_BAD_REQUEST);
  assert_int_equal(spaa_err_status(err.code), 400);
  assert_non_null(strstr(err.msg, "duration_nanos 9223372036854775807"));
  spaa_conv_list_free(&l);
  free(buf);
  b.p.duration_nanos = INT64_MAX - 1600000000000000000LL;
  buf = tb_pack(&b, &len);
  c = convert_one(buf, len, &o, &l);
  assert_int_equal(c.end_ns, INT64_MAX);
  spaa_conv_list_free(&l);
  free(buf);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_name_ok),
      cmocka_unit_test(test_name_bad),
      cmocka_unit_test(test_name_caps),
      cmocka_unit_test(test_time),
      cmocka_unit_test(test_opts_range),
      cmocka_unit_test(test_opts_rate_stc_name),
      cmocka_unit_test(test_convert_plain),
      cmocka_unit_test(test_convert_pyroscope),
      cmocka_unit_test(test_convert_service_name),
      cmocka_unit_test(test_convert_name_type),
      cmocka_unit_test(test_convert_name_type_dotnet),
      cmocka_unit_test(test_duration_overflow),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
