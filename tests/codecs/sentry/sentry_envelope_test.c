/* Tests for codecs/sentry_envelope.c and codecs/sentry_auth.c: the envelope grammar (table,
 * every truncation of valid envelopes), DSNs, event ids, the auth header grammar and project
 * ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sentry/sentry.h"

#include "fixture.h"

/* One envelope case: input, expected status, item count and per item "type:payload". */
struct env_case {
  const char *name;
  const char *in;
  int rc;              /* 0 or the SPAA_E_* expected */
  size_t n_items;
  const char *items[4];/* "type|payload" for each item */
  const char *event_id;/* expected normalized event id or NULL for "" */
  const char *err_has; /* substring of the error message */
};

static const struct env_case env_cases[] = {
    {"header only", "{}", 0, 0, {NULL}, NULL, NULL},
    {"header only, newline", "{}\n", 0, 0, {NULL}, NULL, NULL},
    {"event id without dashes", "{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\"}\n", 0, 0,
     {NULL}, "9ec79c33ec9942ab8353589fcb2e04dc", NULL},
    {"event id with dashes, upper case", "{\"event_id\":\"9EC79C33-EC99-42AB-8353-589FCB2E04DC\"}", 0,
     0, {NULL}, "9ec79c33ec9942ab8353589fcb2e04dc", NULL},
    {"bad event id", "{\"event_id\":\"nope\"}\n", SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL, "event_id"},
    {"explicit length", "{}\n{\"type\":\"event\",\"length\":5}\nhello\n", 0, 1, {"event|hello"},
     NULL, NULL},
    {"explicit length at EOF, no newline", "{}\n{\"type\":\"event\",\"length\":5}\nhello", 0, 1,
     {"event|hello"}, NULL, NULL},
    {"length includes newlines", "{}\n{\"type\":\"a\",\"length\":3}\na\nb\n", 0, 1, {"a|a\nb"},
     NULL, NULL},
    {"implicit length", "{}\n{\"type\":\"a\"}\nxyz\n{\"type\":\"b\"}\nuvw\n", 0, 2,
     {"a|xyz", "b|uvw"}, NULL, NULL},
    {"implicit length at EOF", "{}\n{\"type\":\"a\"}\nxyz", 0, 1, {"a|xyz"}, NULL, NULL},
    {"carriage return is payload", "{}\n{\"type\":\"a\"}\nxyz\r\n", 0, 1, {"a|xyz\r"}, NULL, NULL},
    {"empty item, explicit", "{}\n{\"type\":\"a\",\"length\":0}\n\n{\"type\":\"b\"}\nq", 0, 2,
     {"a|", "b|q"}, NULL, NULL},
    {"empty item, implicit", "{}\n{\"type\":\"a\"}\n\n{\"type\":\"b\"}\nq\n", 0, 2, {"a|", "b|q"},
     NULL, NULL},
    {"item header at EOF", "{}\n{\"type\":\"a\"}", 0, 1, {"a|"}, NULL, NULL},
    {"trailing blank lines", "{}\n{\"type\":\"a\"}\nx\n\n\n", 0, 1, {"a|x"}, NULL, NULL},
    {"unknown types kept", "{}\n{\"type\":\"client_report\"}\n{}\n{\"type\":\"profile\"}\n{}\n", 0,
     2, {"client_report|{}", "profile|{}"}, NULL, NULL},
    {"truncated explicit payload", "{}\n{\"type\":\"profile\",\"length\":10}\nabc",
     SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL, "item 0 (profile) at byte 3: truncated"},
    {"second item truncated", "{}\n{\"type\":\"a\"}\nx\n{\"type\":\"b\",\"length\":9}\n12",
     SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL, "item 1 (b) at byte 18"},
    {"length promised at EOF", "{}\n{\"type\":\"a\",\"length\":2}", SPAA_E_BAD_ENVELOPE, 0, {NULL},
     NULL, "truncated"},
    {"payload not followed by newline", "{}\n{\"type\":\"a\",\"length\":2}\nabc\n",
     SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL, "not followed by a newline"},
    {"no type", "{}\n{\"length\":2}\nab\n", SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL, "no \"type\""},
    {"negative length", "{}\n{\"type\":\"a\",\"length\":-1}\n\n", SPAA_E_BAD_ENVELOPE, 0, {NULL},
     NULL, "length"},
    {"item header not JSON", "{}\n{\"type\":\n", SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL,
     "item 0 at byte 3"},
    {"item header not an object", "{}\n[1]\nx\n", SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL,
     "not a JSON object"},
    {"envelope header not JSON", "hello\n", SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL, "envelope header"},
    {"empty input", "", SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL, "empty"},
    {"empty header line", "\n{\"type\":\"a\"}\n", SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL, "empty"},
    {"dsn in header", "{\"dsn\":\"https://abc:@o1.ingest.example/api/42\"}\n", 0, 0, {NULL}, NULL,
     NULL},
    {"bad dsn", "{\"dsn\":\"https://o1.example/42\"}\n", SPAA_E_BAD_ENVELOPE, 0, {NULL}, NULL,
     "dsn"},
};

static void check_case(const struct env_case *c)
{
  struct sentry_envelope env;
  struct spaa_err err;
  size_t i;
  int rc;
  spaa_err_clear(&err);
  rc = sentry_envelope_parse((const uint8_t *)c->in, strlen(c->in), &env, &err);
  if (rc != c->rc)
    fail_msg("%s: rc %d, want %d (%s)", c->name, rc, c->rc, err.msg);
  if (rc) {
    if (c->err_has && !strstr(err.msg, c->err_has))
      fail_msg("%s: error '%s' lacks '%s'", c->name, err.msg, c->err_has);
    sentry_envelope_free(&env);
    return;
  }
  if (env.n_items != c->n_items)
    fail_msg("%s: %zu items, want %zu", c->name, env.n_items, c->n_items);
  for (i = 0; i < env.n_items; i++) {
    char got[256];
    const struct sentry_item *it = &env.items[i];
    snprintf(got, sizeof(got), "%s|%.*s", it->type, (int)it->payload_len,
             it->payload ? (const char *)it->payload : "");
    if (strcmp(got, c->items[i]) != 0)
      fail_msg("%s: item %zu is '%s', want '%s'", c->name, i, got, c->items[i]);
    /* zero copy: payloads point into the input */
    if (it->payload)
      assert_true(it->payload >= (const uint8_t *)c->in &&
                  it->payload + it->payload_len <= (const uint8_t *)c->in + strlen(c->in));
  }
  assert_string_equal(env.event_id, c->event_id ? c->event_id : "");
  sentry_envelope_free(&env);
}

static void test_envelope_table(void **state)
{
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(env_cases) / sizeof(env_cases[0]); i++)
    check_case(&env_cases[i]);
}

/* Every prefix of every valid envelope parses cleanly or fails with a clean error; no
 * crash, no read past the prefix (the prefix is copied into an exact-size allocation so
 * that ASan sees over-reads). */
static void test_envelope_truncations(void **state)
{
  size_t i, cut;
  (void)state;
  for (i = 0; i < sizeof(env_cases) / sizeof(env_cases[0]); i++) {
    const struct env_case *c = &env_cases[i];
    size_t n = strlen(c->in);
    if (c->rc)
      continue;
    for (cut = 0; cut <= n; cut++) {
      struct sentry_envelope env;
      struct spaa_err err;
      uint8_t *b = malloc(cut ? cut : 1);
      int rc;
      memcpy(b, c->in, cut);
      spaa_err_clear(&err);
      rc = sentry_envelope_parse(b, cut, &env, &err);
      if (rc) {
        assert_true(rc == SPAA_E_BAD_ENVELOPE);
        assert_true(err.msg[0] != 0);
        assert_true(err.offset <= cut);
      } else {
        assert_true(env.n_items <= c->n_items);
      }
      sentry_envelope_free(&env);
      free(b);
    }
  }
}

static void test_envelope_item_fields(void **state)
{
  static const char in[] = "{\"event_id\":\"9ec79c33ec9942ab8353589fcb2e04dc\","
                           "\"sdk\":{\"name\":\"sentry.python\"}}\n"
                           "{\"type\":\"transaction\",\"length\":2}\n{}\n"
                           "{\"type\":\"profile_chunk_ui\",\"platform\":\"cocoa\","
                           "\"content_type\":\"application/json\"}\n{}";
  struct sentry_envelope env;
  struct spaa_err err;
  (void)state;
  assert_int_equal(sentry_envelope_parse((const uint8_t *)in, sizeof(in) - 1, &env, &err), 0);
  assert_int_equal(env.n_items, 2);
  assert_int_equal(env.items[0].kind, SENTRY_ITEM_TRANSACTION);
  assert_true(env.items[0].has_length);
  assert_int_equal(env.items[0].length, 2);
  assert_int_equal(env.items[1].kind, SENTRY_ITEM_CHUNK);
  assert_string_equal(env.items[1].platform, "cocoa");
  assert_string_equal(env.items[1].content_type, "application/json");
  assert_false(env.items[1].has_length);
  assert_int_equal(env.items[1].offset, strstr(in, "{\"type\":\"profile_chunk_ui\"") - in);
  assert_int_equal(sentry_envelope_find(&env, SENTRY_ITEM_CHUNK), 1);
  assert_int_equal(sentry_envelope_find(&env, SENTRY_ITEM_PROFILE), -1);
  assert_string_equal(json_string_value(json_object_get(json_object_get(env.header, "sdk"), "name")),
                      "sentry.python");
  sentry_envelope_free(&env);
}

static void test_envelope_item_cap(void **state)
{
  size_t i, n = SENTRY_MAX_ITEMS + 1, len = 0;
  char *b = malloc(3 + n * 14 + 1);
  struct sentry_envelope env;
  struct spaa_err err;
  (void)state;
  len += (size_t)sprintf(b, "{}\n");
  for (i = 0; i < n; i++)
    len += (size_t)sprintf(b + len, "{\"type\":\"a\"}\n\n");
  assert_int_equal(sentry_envelope_parse((uint8_t *)b, len, &env, &err), SPAA_E_TOO_LARGE);
  sentry_envelope_free(&env);
  /* exactly at the cap is fine */
  len -= 14;
  assert_int_equal(sentry_envelope_parse((uint8_t *)b, len, &env, &err), 0);
  assert_int_equal(env.n_items, SENTRY_MAX_ITEMS);
  sentry_envelope_free(&env);
  free(b);
}

static void test_uuid(void **state)
{
  char out[33];
  (void)state;
  assert_int_equal(sentry_uuid_normalize("A2669CD2-C7E0-47ED-8298-4AAF9666A6B6", 36, out), 0);
  assert_string_equal(out, "a2669cd2c7e047ed82984aaf9666a6b6");
  assert_int_equal(sentry_uuid_normalize("{a2669cd2c7e047ed82984aaf9666a6b6}", 34, out), 0);
  assert_string_equal(out, "a2669cd2c7e047ed82984aaf9666a6b6");
  assert_int_equal(sentry_uuid_normalize("a2669cd2c7e047ed82984aaf9666a6b", 31, out), SPAA_E_INVALID);
  assert_int_equal(sentry_uuid_normalize("a2669cd2-c7e047ed-8298-4aaf9666a6b6", 35, out),
                   SPAA_E_INVALID);
  assert_int_equal(sentry_uuid_normalize("g2669cd2c7e047ed82984aaf9666a6b6", 32, out), SPAA_E_INVALID);
}

static void test_dsn(void **state)
{
  static const struct {
    const char *in;
    int rc;
    const char *key, *secret, *host, *path, *project;
  } cases[] = {
      {"https://e12d836b15bb49d7bbf99e64295d995b:@sentry.io/42", 0,
       "e12d836b15bb49d7bbf99e64295d995b", "", "sentry.io", "", "42"},
      {"http://key:sec@localhost:9000/prefix/sub/7", 0, "key", "sec", "localhost:9000",
       "/prefix/sub", "7"},
      {"https://key@host/42/", 0, "key", "", "host", "", "42"},
      {"https://host/42", SPAA_E_BAD_REQUEST, NULL, NULL, NULL, NULL, NULL},
      {"ftp://key@host/42", SPAA_E_BAD_REQUEST, NULL, NULL, NULL, NULL, NULL},
      {"https://key@host/abc", SPAA_E_BAD_REQUEST, NULL, NULL, NULL, NULL, NULL},
      {"https://key@host", SPAA_E_BAD_REQUEST, NULL, NULL, NULL, NULL, NULL},
      {"https://@host/1", SPAA_E_BAD_REQUEST, NULL, NULL, NULL, NULL, NULL},
      {"key@host/1", SPAA_E_BAD_REQUEST, NULL, NULL, NULL, NULL, NULL},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct sentry_dsn d;
    struct spaa_err err;
    int rc = sentry_dsn_parse(cases[i].in, strlen(cases[i].in), &d, &err);
    if (rc != cases[i].rc)
      fail_msg("dsn '%s': rc %d, want %d", cases[i].in, rc, cases[i].rc);
    if (rc)
      continue;
    assert_string_equal(d.public_key, cases[i].key);
    assert_string_equal(d.secret, cases[i].secret);
    assert_string_equal(d.host, cases[i].host);
    assert_string_equal(d.path, cases[i].path);
    assert_string_equal(d.project_id, cases[i].project);
  }
}

/* One auth grammar case: input, expected return, and on success key, client, version. */
struct auth_case {
  const char *in;
  int rc;
  const char *key, *client;
  int version;
};

typedef int (*auth_parse_fn)(const char *in, size_t len, struct sentry_auth *out,
                             struct spaa_err *err);

static void run_auth_cases(auth_parse_fn parse, const char *what, const struct auth_case *cases,
                           size_t n)
{
  size_t i;
  for (i = 0; i < n; i++) {
    struct sentry_auth a;
    struct spaa_err err;
    int rc = parse(cases[i].in, strlen(cases[i].in), &a, &err);
    if (rc != cases[i].rc)
      fail_msg("%s '%s': rc %d, want %d", what, cases[i].in, rc, cases[i].rc);
    if (rc < 0)
      continue;
    assert_string_equal(a.key, cases[i].key);
    assert_string_equal(a.client, cases[i].client);
    assert_int_equal(a.version, cases[i].version);
  }
}

static void test_auth_header_table(void **state)
{
  static const struct auth_case cases[] = {
      {"Sentry sentry_key=abc, sentry_version=7, sentry_client=sentry.python/1.0", 1, "abc",
       "sentry.python/1.0", 7},
      {"sentry sentry_key=abc,sentry_version=7", 1, "abc", "", 7},
      {"SENTRY   sentry_version = 7 ,  sentry_key = abc  ", 1, "abc", "", 7},
      {"  Sentry sentry_key=abc", 1, "abc", "", 0},
      {"Sentry sentry_key=abc, sentry_secret=s, sentry_timestamp=1700000000.1, foo=bar", 1, "abc",
       "", 0},
      {"Sentry sentry_client=x/1, sentry_key=k", 1, "k", "x/1", 0},
      {"Sentry sentry_version=7, junk, sentry_key=abc", 1, "abc", "", 7},
      {"Sentry sentry_version=7", 0, "", "", 7},
      {"Bearer abc", 0, "", "", 0},
      {"Sentrysentry_key=abc", 0, "", "", 0},
      {"", 0, "", "", 0},
      {"Sentry sentry_key=abc, sentry_version=seven", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
      {"Sentry sentry_key=abc, sentry_version=", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
      /* Relay reads the part before the first '.' (a u16): "7.0" is 7 */
      {"Sentry sentry_key=abc, sentry_version=7.0", 1, "abc", "", 7},
      {"Sentry sentry_key=abc, sentry_version=7.1.2", 1, "abc", "", 7},
      {"Sentry sentry_key=abc, sentry_version=7.", 1, "abc", "", 7},
      {"Sentry sentry_key=abc, sentry_version=7.x", 1, "abc", "", 7},
      {"Sentry sentry_key=abc, sentry_version=0007", 1, "abc", "", 7},
      {"Sentry sentry_key=abc, sentry_version=65535", 1, "abc", "", 65535},
      {"Sentry sentry_key=abc, sentry_version=65536", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
      {"Sentry sentry_key=abc, sentry_version=1234567", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
      {"Sentry sentry_key=abc, sentry_version=.7", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
      {"Sentry sentry_key=abc, sentry_version=7x.0", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
      {"Sentry sentry_key=abc, sentry_version=-7", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
  };
  (void)state;
  run_auth_cases(sentry_auth_parse_header, "header", cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_auth_query_table(void **state)
{
  static const struct auth_case cases[] = {
      {"sentry_key=abc&sentry_version=7", 1, "abc", "", 7},
      {"?sentry_version=7&sentry_key=abc&sentry_client=sentry.javascript.node%2F8.0.0", 1, "abc",
       "sentry.javascript.node/8.0.0", 7},
      {"x=1&sentry_key=a%62c&y", 1, "abc", "", 0},
      {"sentry_client=a+b&sentry_key=k", 1, "k", "a b", 0},
      {"sentry_version=7", 0, "", "", 7},
      {"", 0, "", "", 0},
      {"sentry_key=ab%zz", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
      {"sentry_key=ab%4", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
      {"sentry_key=k&sentry_version=7x", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
      {"sentry_key=k&sentry_version=7.0", 1, "k", "", 7},
      {"sentry_key=k&sentry_version=7%2E0", 1, "k", "", 7},
      {"sentry_key=k&sentry_version=.0", SPAA_E_BAD_REQUEST, NULL, NULL, 0},
  };
  (void)state;
  run_auth_cases(sentry_auth_parse_query, "query", cases, sizeof(cases) / sizeof(cases[0]));
}

/* Project ids as Relay reads them: u64, so leading zeros do not matter. */
static void test_project_id(void **state)
{
  static const struct {
    const char *in, *want; /* want NULL: refused */
  } cases[] = {
      {"42", "42"},
      {"0042", "42"},
      {"0", "0"},
      {"000", "0"},
      {"1", "1"},
      {"18446744073709551615", "18446744073709551615"},
      {"0000018446744073709551615", "18446744073709551615"},
      {"18446744073709551616", NULL},
      {"99999999999999999999", NULL},
      {"184467440737095516150", NULL},
      {"", NULL},
      {"abc", NULL},
      {"4a2", NULL},
      {"+42", NULL},
      {"-1", NULL},
      {" 42", NULL},
      {"42 ", NULL},
      {"4.2", NULL},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char out[SENTRY_MAX_PROJECT + 1];
    int rc = sentry_project_id_normalize(cases[i].in, strlen(cases[i].in), out);
    if (!cases[i].want) {
      if (rc != SPAA_E_INVALID)
        fail_msg("project id '%s': rc %d, want SPAA_E_INVALID", cases[i].in, rc);
      continue;
    }
    if (rc != 0)
      fail_msg("project id '%s': rc %d, want 0", cases[i].in, rc);
    assert_string_equal(out, cases[i].want);
  }
  /* the length is honoured: no NUL needed */
  {
    char out[SENTRY_MAX_PROJECT + 1];
    assert_int_equal(sentry_project_id_normalize("0042/envelope", 4, out), 0);
    assert_string_equal(out, "42");
  }
}

/* The real SDK envelopes among the fixtures parse as SOURCES.md says. */
static void test_envelope_fixtures(void **state)
{
  static const struct {
    const char *file;
    size_t n_items;
    const char *type0;
    int has_event_id;
  } cases[] = {
      {"sentry_java_envelope_transaction.envelope", 1, "transaction", 1},
      {"sentry_java_envelope_session.envelope", 1, "session", 0},
      {"constructed_envelope_transaction_profile_v1.envelope", 2, "transaction", 1},
      {"constructed_envelope_profile_chunk_v2.envelope", 1, "profile_chunk", 0},
      {"constructed_envelope_profile_chunk_platform_mismatch_implicit_length.envelope", 1,
       "profile_chunk", 0},
  };
  size_t i;
  (void)state;
  if (!spaa_test_have_fixtures("sentry", NULL))
    skip();
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    size_t n;
    uint8_t *file = spaa_test_fixture_in("sentry", cases[i].file, &n), *b;
    struct sentry_envelope env;
    struct spaa_err err;
    assert_non_null(file);
    /* an exact-size copy, without the NUL the reader adds: a read past the end shows */
    b = malloc(n ? n : 1);
    assert_non_null(b);
    memcpy(b, file, n);
    free(file);
    if (sentry_envelope_parse(b, n, &env, &err))
      fail_msg("%s: %s", cases[i].file, err.msg);
    assert_int_equal(env.n_items, cases[i].n_items);
    assert_string_equal(env.items[0].type, cases[i].type0);
    assert_int_equal(env.event_id[0] != 0, cases[i].has_event_id);
    if (i == 0) {
      assert_int_equal(env.items[0].payload_len, 640);
      assert_true(env.items[0].payload + 640 == b + n); /* EOF-terminated */
    }
    if (i == 2) {
      assert_true(env.has_dsn);
      assert_string_equal(env.dsn.public_key, "e12d836b15bb49d7bbf99e64295d995b");
      assert_string_equal(env.dsn.project_id, "42");
      assert_string_equal(env.event_id, "3367f5196c494acaae85bbbd535379ac");
    }
    sentry_envelope_free(&env);
    free(b);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_envelope_table),       cmocka_unit_test(test_envelope_truncations),
      cmocka_unit_test(test_envelope_item_fields), cmocka_unit_test(test_envelope_item_cap),
      cmocka_unit_test(test_uuid),                 cmocka_unit_test(test_dsn),
      cmocka_unit_test(test_auth_header_table),    cmocka_unit_test(test_auth_query_table),
      cmocka_unit_test(test_project_id),           cmocka_unit_test(test_envelope_fixtures),
  };
  spaa_test_have_fixtures("sentry", "the Sentry fixture tests");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
