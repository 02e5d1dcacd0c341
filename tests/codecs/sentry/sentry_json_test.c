/* Tests for the Sentry payload reader (codecs/sentry/sentry_json.c): it accepts exactly what
 * jansson accepts (a table of edges, every truncation of valid payloads, seeded byte
 * mutations), answers jansson's own error, and reads what jansson would: the last of
 * duplicate members, escaped keys, the counts of the arrays it leaves in place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sentry/sentry_int.h"

/* Both readers on the same bytes (an exact-size copy: a read past the end shows under the
 * sanitizers): the same verdict, and for a refusal the same error. */
static void same_as_jansson(const char *what, const void *buf, size_t len)
{
  struct sentry__doc d;
  json_error_t je, mine;
  char *b = malloc(len ? len : 1);
  json_t *j;
  int rc;
  assert_non_null(b);
  memcpy(b, buf, len);
  j = json_loadb(b, len, 0, &je);
  rc = sentry__doc_load((const uint8_t *)b, len, &d, &mine);
  if (j && rc)
    fail_msg("%s: jansson accepts, the reader refuses (%d)", what, rc);
  if (!j && rc != SPAA_E_BAD_JSON)
    fail_msg("%s: jansson refuses (%s), the reader answers %d", what, je.text, rc);
  if (!j) {
    assert_string_equal(mine.text, je.text);
    assert_int_equal(mine.position, je.position);
    assert_int_equal(mine.line, je.line);
  } else {
    assert_int_equal(json_is_object(j), json_is_object(d.root));
  }
  json_decref(j);
  sentry__doc_free(&d);
  free(b);
}

static char *nested(size_t depth, const char *inner)
{
  size_t n = strlen(inner), i;
  char *s = malloc(2 * depth + n + 1);
  assert_non_null(s);
  for (i = 0; i < depth; i++)
    s[i] = '[';
  memcpy(s + depth, inner, n);
  for (i = 0; i < depth; i++)
    s[depth + n + i] = ']';
  s[2 * depth + n] = 0;
  return s;
}

static void test_edges(void **state)
{
  static const char *const cases[] = {
      "{}", "[]", " {} ", "{}\n", "{}x", "\xef\xbb\xbf{}", "", " ", "1", "\"s\"", "null",
      "[9223372036854775807]", "[9223372036854775808]", "[-9223372036854775808]",
      "[-9223372036854775809]", "[99999999999999999999999]", "[1e308]", "[1e309]", "[-1e309]",
      "[1e-400]", "[-0]", "[01]", "[1.]", "[.5]", "[-]", "[1E+2]", "[1e]", "[1.5e+]", "[0x10]",
      "[\"\\u0000\"]", "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud83d\\ude00\"]", "[\"\\ud83dx\"]",
      "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]", "[\"\xc0\x80\"]", "[\"\xc3\xa9\"]",
      "[\"\x7f\"]", "[\"\t\"]", "[\"\\q\"]", "[\"\\u12\"]", "{\"a\":1,\"a\":2}", "[1,]",
      "{\"a\":1,}", "{\"a\" 1}", "{1:2}", "{\"a\"}", "[true,false,null]", "[nul]", "[truex]",
      "[tru]", "[1 2]", "{\"a\":[1,{\"b\":[]}],\"c\":{}}", "[\"unterminated]", "{\"a\":1}}",
      "[[]", "{\"profile\":{\"samples\":[{\"x\":1e999}]}}",
      "{\"profile\":{\"samples\":[{\"x\":123456789012345678901}]}}",
  };
  char buf[64];
  size_t i, depth;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    same_as_jansson(cases[i], cases[i], strlen(cases[i]));
  same_as_jansson("a NUL after the value", "[1]\0", 4);
  /* jansson does not see one NUL byte right after a number or a literal */
  same_as_jansson("a NUL after a number", "[31\0]", 5);
  same_as_jansson("a NUL after a literal", "[true\0]", 7);
  same_as_jansson("a NUL after a member's number", "{\"a\":1.5\0 }", 12);
  same_as_jansson("two NULs after a number", "[1\0\0]", 5);
  same_as_jansson("a NUL after a string", "[\"a\"\0]", 6);
  same_as_jansson("a NUL after a comma", "[1,\0 2]", 7);
  same_as_jansson("a NUL after a key", "{\"a\"\0:1}", 8);
  same_as_jansson("a NUL first", "\0[1]", 4);
  same_as_jansson("a NUL after -", "[-\0 1]", 6);
  /* jansson's depth limit: 2048 values deep, counting the innermost */
  for (depth = 2046; depth <= 2049; depth++) {
    char *s = nested(depth, "");
    snprintf(buf, sizeof(buf), "%zu empty arrays", depth);
    same_as_jansson(buf, s, strlen(s));
    free(s);
    s = nested(depth, "1");
    snprintf(buf, sizeof(buf), "%zu arrays around 1", depth);
    same_as_jansson(buf, s, strlen(s));
    free(s);
  }
  {
    /* numbers past the scanner's 512-byte token limit are still jansson's numbers */
    char big[1200];
    memset(big, '7', sizeof(big));
    memcpy(big, "[0.", 3);
    memcpy(big + sizeof(big) - 2, "]", 2);
    same_as_jansson("a 1,195-digit fraction", big, strlen(big));
    big[1] = '1';
    big[2] = '7';
    same_as_jansson("a 1,196-digit integer", big, strlen(big));
  }
}

static const char V2[] =
    "{\"chunk_id\":\"0432a0a4c25f4697bf9f0a2fcbe6a814\",\"version\":\"2\",\"platform\":\"python\","
    "\"client_sdk\":{\"name\":\"sentry.python\",\"version\":\"2.0.0\"},\"x\":[{\"y\":null}],"
    "\"profile\":{\"samples\":[{\"stack_id\":0,\"thread_id\":\"7\",\"timestamp\":1710805788.51},"
    "{\"stack_id\":1,\"thread_id\":\"7\",\"timestamp\":-1.5e3}],"
    "\"stacks\":[[0,1],[1],[]],\"frames\":[{\"function\":\"a\\u00e9\"},{\"function\":\"main\"}],"
    "\"thread_metadata\":{\"7\":{\"name\":\"Main\"}}}}";

/* Every truncation, and seeded byte changes, of a valid payload: the same verdicts. */
static void test_truncations_and_mutations(void **state)
{
  static const char swaps[] = "{}[]\",:\\0123456789.eE-+ tfnu\x80\xc3\xff\0"; /* NUL too */
  char what[64], *b;
  size_t n = sizeof(V2) - 1, i;
  uint32_t seed = 12345;
  (void)state;
  for (i = 0; i <= n; i++) {
    snprintf(what, sizeof(what), "the first %zu bytes", i);
    same_as_jansson(what, V2, i);
  }
  b = malloc(n);
  assert_non_null(b);
  for (i = 0; i < 20000; i++) {
    size_t k, changes = 1 + i % 3;
    memcpy(b, V2, n);
    for (k = 0; k < changes; k++) {
      seed = seed * 1103515245u + 12345u;
      b[(seed >> 8) % n] = swaps[(seed >> 20) % (sizeof(swaps) - 1)];
    }
    snprintf(what, sizeof(what), "mutation %zu", i);
    same_as_jansson(what, b, n);
  }
  free(b);
}

static struct sentry__doc load(const char *s)
{
  struct sentry__doc d;
  json_error_t je;
  if (sentry__doc_load((const uint8_t *)s, strlen(s), &d, &je))
    fail_msg("%s: %s", s, je.text);
  return d;
}

/* The slim root: the members read, last occurrence winning, escaped keys decoded; the
 * arrays in place with their counts. */
static void test_slim_root(void **state)
{
  struct sentry__doc d;
  struct sentry__iter it;
  struct sentry__span e, f[3];
  static const char *const keys[] = {"stack_id", "thread_id", "timestamp"};
  (void)state;
  d = load(V2);
  assert_true(json_is_object(d.root));
  assert_string_equal(json_string_value(json_object_get(d.root, "platform")), "python");
  assert_null(json_object_get(d.root, "x")); /* not read by any rule: not parsed */
  assert_true(json_is_object(json_object_get(d.root, "profile")));
  assert_null(json_object_get(json_object_get(d.root, "profile"), "samples"));
  assert_non_null(json_object_get(json_object_get(d.root, "profile"), "thread_metadata"));
  assert_int_equal(d.samples.n, 2);
  assert_int_equal(d.stacks.n, 3);
  assert_int_equal(d.stacks.n_inner, 3);
  assert_int_equal(d.frames.n, 2);
  assert_false(d.only_header_keys);
  sentry__iter_init(&it, d.samples.v);
  assert_true(sentry__iter_next(&it, &e));
  assert_true(sentry__iter_next(&it, &e));
  sentry__fields(e, keys, 3, f);
  assert_int_equal(sentry__kind(f[0]), SENTRY__J_INT);
  assert_int_equal(sentry__int(f[0]), 1);
  assert_int_equal(sentry__kind(f[1]), SENTRY__J_STR);
  assert_int_equal(sentry__kind(f[2]), SENTRY__J_REAL);
  assert_true(sentry__real(f[2]) == -1500.0);
  assert_false(sentry__iter_next(&it, &e));
  sentry__iter_init(&it, d.frames.v);
  assert_true(sentry__iter_next(&it, &e));
  {
    static const char *const fk[] = {"function"};
    struct sentry__scratch sc = {NULL, 0};
    const char *s;
    size_t n;
    sentry__fields(e, fk, 1, f);
    assert_int_equal(sentry__str(f[0], &sc, &s, &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(s, "a\xc3\xa9", 3);
    sentry__scratch_free(&sc);
  }
  sentry__doc_free(&d);

  /* duplicates: the last wins, a whole "profile" included; escaped keys are keys */
  d = load("{\"profile\":{\"samples\":[1,2,3]},\"pl\\u0061tform\":\"a\",\"platform\":\"b\","
           "\"\\u0070rofile\":{\"samples\":[[1],[2,3]],\"samples\":[[4,5,6]]}}");
  assert_string_equal(json_string_value(json_object_get(d.root, "platform")), "b");
  assert_true(d.has_profile_obj);
  assert_int_equal(d.samples.n, 1);
  assert_int_equal(d.samples.n_inner, 3);
  sentry__doc_free(&d);
  d = load("{\"profile\":{\"samples\":[1]},\"profile\":[1,2]}");
  assert_false(d.has_profile_obj); /* the last "profile" is no object: nothing in place */
  assert_null(d.samples.v.p);
  assert_true(json_is_array(json_object_get(d.root, "profile")));
  sentry__doc_free(&d);
  /* a NUL jansson skips, after numbers and literals: not part of the values */
  {
    static const char nul[] = "{\"profile\":{\"samples\":[{\"stack_id\":12\0,\"x\":true\0}],"
                              "\"stacks\":[[0\0,1\0 ]]}}";
    json_error_t je;
    assert_int_equal(sentry__doc_load((const uint8_t *)nul, sizeof(nul) - 1, &d, &je), 0);
    assert_int_equal(d.stacks.n_inner, 2);
    sentry__iter_init(&it, d.samples.v);
    assert_true(sentry__iter_next(&it, &e));
    sentry__fields(e, keys, 3, f);
    assert_int_equal(sentry__kind(f[0]), SENTRY__J_INT);
    assert_int_equal(f[0].n, 2);
    assert_int_equal(sentry__int(f[0]), 12);
    assert_false(sentry__iter_next(&it, &e));
    sentry__iter_init(&it, d.stacks.v);
    assert_true(sentry__iter_next(&it, &e));
    sentry__iter_init(&it, e);
    assert_true(sentry__iter_next(&it, &f[0]));
    assert_true(sentry__iter_next(&it, &f[1]));
    assert_false(sentry__iter_next(&it, &f[2]));
    assert_int_equal(sentry__int(f[0]) * 10 + sentry__int(f[1]), 1);
    sentry__doc_free(&d);
  }
  /* an object of envelope header keys only; an array */
  d = load("{\"event_id\":\"x\",\"sdk\":{},\"s\\u0065nt_at\":1}");
  assert_true(d.only_header_keys);
  sentry__doc_free(&d);
  d = load("[{\"profile\":{}}]");
  assert_false(json_is_object(d.root));
  sentry__doc_free(&d);
  /* members read for their presence only stand as null */
  d = load("{\"sampled_profile\":\"AAAA\",\"version_code\":\"1\"}");
  assert_true(json_is_null(json_object_get(d.root, "sampled_profile")));
  assert_true(json_is_null(json_object_get(d.root, "version_code")));
  sentry__doc_free(&d);
}

static void test_strs(void **state)
{
  struct sentry__strs st = {NULL};
  const char *a, *b;
  char big[6000];
  (void)state;
  memset(big, 'x', sizeof(big));
  a = sentry__strs_put(&st, "thread-1", 8);
  b = sentry__strs_put(&st, big, sizeof(big)); /* past a block: a block of its own */
  assert_non_null(a);
  assert_non_null(b);
  assert_string_equal(a, "thread-1");
  assert_int_equal(strlen(b), sizeof(big));
  sentry__strs_free(&st);
  assert_null(st.head);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_edges),
      cmocka_unit_test(test_truncations_and_mutations),
      cmocka_unit_test(test_slim_root),
      cmocka_unit_test(test_strs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
