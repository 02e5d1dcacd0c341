/* Tests for codecs/sentry_envelope.c and codecs/sentry_auth.c: the envelope grammar (table,
 * every truncation of valid envelopes), header lines read by the scanner and by jansson
 * alike, DSNs, event ids, the auth header grammar and project ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sentry/sentry.h"
#include "sentry/sentry_int.h"

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
  json_t *hdr;
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
  hdr = sentry_envelope_header(&env);
  assert_non_null(hdr);
  assert_string_equal(json_string_value(json_object_get(json_object_get(hdr, "sdk"), "name")),
                      "sentry.python");
  json_decref(hdr);
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

/* ---- header lines: the scanner's fast path and jansson's path agree ---------------------
 * Each case runs four times: as written (lines up to SENTRY__FAST_LINE bytes take the pull
 * scanner) and with the envelope header, the item header or both padded past that length
 * with a leading "_pad" member (those lines take jansson). Every outcome must be the same. */

struct hdr_case {
  const char *name;
  const char *hdr;          /* envelope header line */
  const char *item;         /* item header line */
  const char *payload;      /* item payload, "abc" when NULL */
  int rc;                   /* 0 or the SPAA_E_* expected */
  const char *msg;          /* the whole error message; "%zu" stands for the item's offset */
  const char *event_id;     /* expected event id, "" when none */
  const char *project;      /* the dsn's project id, NULL when there is no dsn */
  enum sentry_item_kind kind;
  const char *type, *platform, *content_type;
  int has_length;
  uint64_t length;
};

#define NO_UUID "envelope header: event_id is not a UUID (32 hex digits, dashes allowed)"
#define NO_TYPE "item 0 at byte %zu: item header has no \"type\""
#define BAD_LEN "item 0 at byte %zu: \"length\" is not a non-negative integer"
#define EID "9ec79c33ec9942ab8353589fcb2e04dc"
#define EID2 "0ec79c33ec9942ab8353589fcb2e04dc"
#define T_A "{\"type\":\"a\"}"
#define OK_A 0, NULL, "", NULL, SENTRY_ITEM_OTHER, "a", "", "", 0, 0

static const struct hdr_case hdr_cases[] = {
    /* the envelope header: event_id and dsn, the last of duplicate keys wins */
    {"plain event id", "{\"event_id\":\"" EID "\"}", T_A, NULL, 0, NULL, EID, NULL,
     SENTRY_ITEM_OTHER, "a", "", "", 0, 0},
    {"escapes in event id", "{\"event_id\":\"\\u0039ec79c33ec9942ab8353589fcb2e04d\\u0063\"}",
     T_A, NULL, 0, NULL, EID, NULL, SENTRY_ITEM_OTHER, "a", "", "", 0, 0},
    {"escaped key", "{\"\\u0065vent_id\":\"" EID "\"}", T_A, NULL, 0, NULL, EID, NULL,
     SENTRY_ITEM_OTHER, "a", "", "", 0, 0},
    {"braces, dashes, upper case", "{\"event_id\":\"{9EC79C33-EC99-42AB-8353-589FCB2E04DC}\"}",
     T_A, NULL, 0, NULL, EID, NULL, SENTRY_ITEM_OTHER, "a", "", "", 0, 0},
    {"escaped slash in event id", "{\"event_id\":\"9ec79c33\\/ec9942ab8353589fcb2e04dc\"}", T_A,
     NULL, SPAA_E_BAD_ENVELOPE, NO_UUID, "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"duplicate event id: last", "{\"event_id\":\"" EID "\",\"event_id\":\"" EID2 "\"}", T_A, NULL,
     0, NULL, EID2, NULL, SENTRY_ITEM_OTHER, "a", "", "", 0, 0},
    {"duplicate event id: last null", "{\"event_id\":\"" EID "\",\"event_id\":null}", T_A, NULL,
     OK_A},
    {"duplicate event id: last bad", "{\"event_id\":null,\"event_id\":\"bad\"}", T_A, NULL,
     SPAA_E_BAD_ENVELOPE, NO_UUID, "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"event id not a string", "{\"event_id\":1}", T_A, NULL, SPAA_E_BAD_ENVELOPE, NO_UUID, "",
     NULL, 0, NULL, NULL, NULL, 0, 0},
    {"event id an object", "{\"event_id\":{\"a\":1}}", T_A, NULL, SPAA_E_BAD_ENVELOPE, NO_UUID,
     "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"blanks and a dsn",
     "{ \"event_id\" : \"" EID "\" ,\t\"dsn\":\"http://pk:sec@host:9000/a/b/42/\" }\r", T_A, NULL,
     0, NULL, EID, "42", SENTRY_ITEM_OTHER, "a", "", "", 0, 0},
    {"dsn not a string", "{\"dsn\":[\"x\"]}", T_A, NULL, SPAA_E_BAD_ENVELOPE,
     "envelope header: dsn is not a string", "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"bad dsn", "{\"dsn\":\"https://o1.example/42\"}", T_A, NULL, SPAA_E_BAD_ENVELOPE,
     "envelope header: dsn: missing public key before '@'", "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"duplicate dsn: last null", "{\"dsn\":\"https://k@h/1\",\"dsn\":null}", T_A, NULL, OK_A},
    {"duplicate dsn: last, escaped", "{\"dsn\":null,\"dsn\":\"https://k@h/\\u0031\"}", T_A, NULL,
     0, NULL, "", "1", SENTRY_ITEM_OTHER, "a", "", "", 0, 0},
    {"other members skipped",
     "{\"sdk\":{\"name\":\"sentry.cocoa\","
     "\"integrations\":[\"x\",1,-0,2.5e-3,true,false,null,{},[]]},"
     "\"sent_at\":\"2026-01-01T00:00:00Z\",\"trace\":{\"n\":-9223372036854775808,\"u\":1e-400},"
     "\"s\":\"caf\\u00e9 \\ud83d\\ude00 \xc3\xa9\"}",
     T_A, NULL, OK_A},
    /* item headers */
    {"duplicate type: last not a string", "{}", "{\"type\":\"a\",\"type\":1}", NULL,
     SPAA_E_BAD_ENVELOPE, NO_TYPE, "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"duplicate type: last", "{}", "{\"type\":1,\"type\":\"profile\"}", NULL, 0, NULL, "", NULL,
     SENTRY_ITEM_PROFILE, "profile", "", "", 0, 0},
    {"empty type", "{}", "{\"type\":\"\"}", NULL, SPAA_E_BAD_ENVELOPE, NO_TYPE, "", NULL, 0, NULL,
     NULL, NULL, 0, 0},
    {"null type", "{}", "{\"type\":null}", NULL, SPAA_E_BAD_ENVELOPE, NO_TYPE, "", NULL, 0, NULL,
     NULL, NULL, 0, 0},
    {"escapes in key and type", "{}", "{\"\\u0074ype\":\"pro\\u0066ile\"}", NULL, 0, NULL, "",
     NULL, SENTRY_ITEM_PROFILE, "profile", "", "", 0, 0},
    {"all fields", "{}",
     "{\"type\":\"profile_chunk_ui\",\"platform\":\"cocoa\",\"content_type\":\"application/json\","
     "\"length\":3}",
     NULL, 0, NULL, "", NULL, SENTRY_ITEM_CHUNK, "profile_chunk_ui", "cocoa", "application/json",
     1, 3},
    {"fields not strings", "{}", "{\"type\":\"profile\",\"platform\":1,\"content_type\":[\"x\"]}",
     NULL, 0, NULL, "", NULL, SENTRY_ITEM_PROFILE, "profile", "", "", 0, 0},
    {"escaped platform", "{}", "{\"type\":\"profile\",\"platform\":\"caf\\u00e9\"}", NULL, 0,
     NULL, "", NULL, SENTRY_ITEM_PROFILE, "profile", "caf\xc3\xa9", "", 0, 0},
    {"long platform cut", "{}",
     "{\"type\":\"profile\",\"platform\":\"0123456789012345678901234567890123456789\"}", NULL, 0,
     NULL, "", NULL, SENTRY_ITEM_PROFILE, "profile", "0123456789012345678901234567890", "", 0,
     0},
    {"type of 47 bytes kept", "{}",
     "{\"type\":\"01234567890123456789012345678901234567890123456\"}", NULL, 0, NULL, "", NULL,
     SENTRY_ITEM_OTHER, "01234567890123456789012345678901234567890123456", "", "", 0, 0},
    {"type of 48 bytes cut", "{}",
     "{\"type\":\"profile01234567890123456789012345678901234567890\"}", NULL, 0, NULL, "", NULL,
     SENTRY_ITEM_OTHER, "profile0123456789012345678901234567890123456789", "", "", 0, 0},
    {"length", "{}", "{\"type\":\"a\",\"length\":3}", NULL, 0, NULL, "", NULL, SENTRY_ITEM_OTHER,
     "a", "", "", 1, 3},
    {"length -0", "{}", "{\"type\":\"a\",\"length\":-0}", "", 0, NULL, "", NULL,
     SENTRY_ITEM_OTHER, "a", "", "", 1, 0},
    {"length null", "{}", "{\"type\":\"a\",\"length\":null}", NULL, OK_A},
    {"length a string", "{}", "{\"type\":\"a\",\"length\":\"3\"}", NULL, SPAA_E_BAD_ENVELOPE,
     BAD_LEN, "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"length a real", "{}", "{\"type\":\"a\",\"length\":3.0}", NULL, SPAA_E_BAD_ENVELOPE, BAD_LEN,
     "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"length with an exponent", "{}", "{\"type\":\"a\",\"length\":3e0}", NULL, SPAA_E_BAD_ENVELOPE,
     BAD_LEN, "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"length negative", "{}", "{\"type\":\"a\",\"length\":-1}", NULL, SPAA_E_BAD_ENVELOPE, BAD_LEN,
     "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"length true", "{}", "{\"type\":\"a\",\"length\":true}", NULL, SPAA_E_BAD_ENVELOPE, BAD_LEN,
     "", NULL, 0, NULL, NULL, NULL, 0, 0},
    {"duplicate length: last", "{}", "{\"type\":\"a\",\"length\":\"x\",\"length\":3}", NULL, 0,
     NULL, "", NULL, SENTRY_ITEM_OTHER, "a", "", "", 1, 3},
    {"duplicate length: last null", "{}", "{\"type\":\"a\",\"length\":3,\"length\":null}", NULL,
     OK_A},
};

/* `line` with a leading "_pad" member that takes it past SENTRY__FAST_LINE (malloc'd). */
static char *padded(const char *line)
{
  size_t n = strlen(line), pad = SENTRY__FAST_LINE;
  char *o = malloc(n + pad + 16);
  size_t k = 0;
  assert_non_null(o);
  assert_true(n >= 2 && line[0] == '{');
  k += (size_t)sprintf(o, "{\"_pad\":\"");
  memset(o + k, 'x', pad);
  k += pad;
  k += (size_t)sprintf(o + k, "\"%s%s", line[1] == '}' ? "" : ",", line + 1);
  return o;
}

static void check_hdr_case(const struct hdr_case *c, int pad_hdr, int pad_item)
{
  char *hdr = pad_hdr ? padded(c->hdr) : strdup(c->hdr);
  char *item = pad_item ? padded(c->item) : strdup(c->item);
  const char *payload = c->payload ? c->payload : "abc";
  size_t len = strlen(hdr) + strlen(item) + strlen(payload) + 3, item_off = strlen(hdr) + 1;
  char *in = malloc(len + 1), want[256];
  struct sentry_envelope env;
  struct spaa_err err;
  int rc;
  assert_non_null(in);
  snprintf(in, len + 1, "%s\n%s\n%s\n", hdr, item, payload);
  spaa_err_clear(&err);
  rc = sentry_envelope_parse((const uint8_t *)in, len, &env, &err);
  if (rc != c->rc)
    fail_msg("%s (pad %d %d): rc %d, want %d (%s)", c->name, pad_hdr, pad_item, rc, c->rc, err.msg);
  if (rc) {
    snprintf(want, sizeof(want), c->msg, item_off);
    if (strcmp(err.msg, want) != 0)
      fail_msg("%s (pad %d %d): error '%s', want '%s'", c->name, pad_hdr, pad_item, err.msg, want);
  } else {
    const struct sentry_item *it = &env.items[0];
    json_t *h = sentry_envelope_header(&env), *want_h = json_loads(hdr, 0, NULL);
    assert_string_equal(env.event_id, c->event_id);
    assert_int_equal(env.has_dsn, c->project != NULL);
    if (c->project)
      assert_string_equal(env.dsn.project_id, c->project);
    assert_int_equal(env.n_items, 1);
    assert_int_equal(it->kind, c->kind);
    assert_string_equal(it->type, c->type);
    assert_string_equal(it->platform, c->platform);
    assert_string_equal(it->content_type, c->content_type);
    assert_int_equal(it->has_length, c->has_length);
    assert_int_equal(it->length, c->length);
    assert_int_equal(it->offset, item_off);
    assert_int_equal(it->payload_len, strlen(payload));
    /* the header, parsed on demand, is the whole line */
    assert_non_null(h);
    assert_non_null(want_h);
    assert_true(json_equal(h, want_h));
    json_decref(h);
    json_decref(want_h);
  }
  sentry_envelope_free(&env);
  free(in);
  free(hdr);
  free(item);
}

static void test_header_fast_and_slow(void **state)
{
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(hdr_cases) / sizeof(hdr_cases[0]); i++) {
    check_hdr_case(&hdr_cases[i], 0, 0);
    check_hdr_case(&hdr_cases[i], 1, 0);
    check_hdr_case(&hdr_cases[i], 0, 1);
    check_hdr_case(&hdr_cases[i], 1, 1);
  }
}

/* Lines the scanner refuses (or that jansson refuses where the scanner would not) go to
 * jansson, whose message and position are the error: exactly as before the fast path. */
static void test_header_errors(void **state)
{
  static const struct {
    const char *in;
    int rc;
    size_t offset;
    const char *msg;
  } cases[] = {
      {"{\"x\":12345678901234567890}\n", SPAA_E_BAD_ENVELOPE, 25,
       "envelope header 0 at byte 0: header is not valid JSON: too big integer near "
       "'12345678901234567890'"},
      {"{\"x\":{\"y\":-9223372036854775809}}\n", SPAA_E_BAD_ENVELOPE, 30,
       "envelope header 0 at byte 0: header is not valid JSON: too big negative integer near "
       "'-9223372036854775809'"},
      {"{\"x\":[1e400]}\n", SPAA_E_BAD_ENVELOPE, 11,
       "envelope header 0 at byte 0: header is not valid JSON: real number overflow near '1e400'"},
      {"{\"a\":\"\\ud800\"}\n", SPAA_E_BAD_ENVELOPE, 13,
       "envelope header 0 at byte 0: header is not valid JSON: invalid Unicode '\\uD800' near "
       "'\"\\ud800\"'"},
      {"{\"a\":\"\xff\"}\n", SPAA_E_BAD_ENVELOPE, 6,
       "envelope header 0 at byte 0: header is not valid JSON: unable to decode byte 0xff near "
       "'\"'"},
      {"{\"a\":\"\\u0000\"}\n", SPAA_E_BAD_ENVELOPE, 13,
       "envelope header 0 at byte 0: header is not valid JSON: \\u0000 is not allowed without "
       "JSON_ALLOW_NUL near '\"\\u0000\"'"},
      {"{\"a\":1,}\n", SPAA_E_BAD_ENVELOPE, 8,
       "envelope header 0 at byte 0: header is not valid JSON: string or '}' expected near '}'"},
      {"{\"a\":tru}\n", SPAA_E_BAD_ENVELOPE, 8,
       "envelope header 0 at byte 0: header is not valid JSON: invalid token near 'tru'"},
      {"{} x\n", SPAA_E_BAD_ENVELOPE, 4,
       "envelope header 0 at byte 0: header is not valid JSON: end of file expected near 'x'"},
      {"[1]\n", SPAA_E_BAD_ENVELOPE, 0, "envelope header 0 at byte 0: header is not a JSON object"},
      {"{}\n{\"type\":\"profile\",\"x\":1e400}\n{}\n", SPAA_E_BAD_ENVELOPE, 30,
       "item 0 at byte 3: header is not valid JSON: real number overflow near '1e400'"},
      {"{}\n{\"type\":\"a\"} {}\n", SPAA_E_BAD_ENVELOPE, 17,
       "item 0 at byte 3: header is not valid JSON: end of file expected near '{'"},
      {"{}\n[\"type\"]\n", SPAA_E_BAD_ENVELOPE, 3, "item 0 at byte 3: header is not a JSON object"},
      {"{}\n{\"type\":\n", SPAA_E_BAD_ENVELOPE, 11,
       "item 0 at byte 3: header is not valid JSON: unexpected token near end of file"},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct sentry_envelope env;
    struct spaa_err err;
    int rc;
    spaa_err_clear(&err);
    rc = sentry_envelope_parse((const uint8_t *)cases[i].in, strlen(cases[i].in), &env, &err);
    if (rc != cases[i].rc || strcmp(err.msg, cases[i].msg) != 0 || err.offset != cases[i].offset)
      fail_msg("case %zu: rc %d offset %zu '%s', want %d %zu '%s'", i, rc, err.offset, err.msg,
               cases[i].rc, cases[i].offset, cases[i].msg);
    sentry_envelope_free(&env);
  }
}

/* Past the fast path: a long line, bad at its end, and a line nested deeper than the
 * scanner goes (jansson accepts it). */
static void test_header_long_and_deep(void **state)
{
  size_t pad = SENTRY__FAST_LINE + 100, n = 0, i;
  char *b = malloc(pad + 64);
  struct sentry_envelope env;
  struct spaa_err err;
  (void)state;
  assert_non_null(b);
  n += (size_t)sprintf(b, "{\"_pad\":\"");
  memset(b + n, 'x', pad);
  n += pad;
  n += (size_t)sprintf(b + n, "\",\"x\":tru}\n");
  spaa_err_clear(&err);
  assert_int_equal(sentry_envelope_parse((uint8_t *)b, n, &env, &err), SPAA_E_BAD_ENVELOPE);
  assert_string_equal(err.msg, "envelope header 0 at byte 0: header is not valid JSON: invalid "
                               "token near 'tru'");
  assert_int_equal(err.offset, n - 2); /* just past "tru", as jansson counts */
  sentry_envelope_free(&env);
  /* 100 nested arrays in an item header */
  n = (size_t)sprintf(b, "{}\n{\"type\":\"profile\",\"x\":");
  for (i = 0; i < 100; i++)
    b[n++] = '[';
  for (i = 0; i < 100; i++)
    b[n++] = ']';
  n += (size_t)sprintf(b + n, "}\n{}");
  assert_int_equal(sentry_envelope_parse((uint8_t *)b, n, &env, &err), 0);
  assert_int_equal(env.n_items, 1);
  assert_int_equal(env.items[0].kind, SENTRY_ITEM_PROFILE);
  assert_int_equal(env.items[0].payload_len, 2);
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
      cmocka_unit_test(test_header_fast_and_slow), cmocka_unit_test(test_header_errors),
      cmocka_unit_test(test_header_long_and_deep),
  };
  spaa_test_have_fixtures("sentry", "the Sentry fixture tests");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
