/* Names that would break the line-oriented views (codecs/spaa/view_summary.c, the collapsed
 * view in view_out.c): control characters in a function name are escaped in the text summary
 * (\n as the two characters \ and n), ';' inside a name is ':' in a path (as in collapsed
 * output) so ';' only separates frames, the JSON summary's path is the text one, and a stack
 * without frames reads "(no frames)" in both the summary and the collapsed view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "spaa/view.h"

static int sink(void *ctx, const void *data, size_t len)
{
  return spaa_buf_add(ctx, data, len);
}

/* The summary (json 0/1) or, json -1, the collapsed view of v as a string (owned). */
static char *view(const struct spaa_vset *v, int json)
{
  struct spaa_buf b;
  struct spaa_err err;
  memset(&err, 0, sizeof(err));
  spaa_buf_init(&b, 0);
  if (json < 0)
    assert_int_equal(spaa_view_collapsed(v, sink, &b, &err), 0);
  else
    assert_int_equal(spaa_view_summary(v, 4096, json, "p", sink, &b, &err), 0);
  spaa_buf_add(&b, "", 1);
  return spaa_buf_steal(&b, NULL);
}

static void add(struct spaa_vset *v, const char *const *names, size_t n, double value,
                const char *id)
{
  assert_int_equal(spaa_vset_add(v, names, n, value, id), 0);
}

/* Every line of s begins with one of the prefixes the text summary writes. */
static void assert_lines_whole(const char *s)
{
  static const char *const starts[] = {"summary of ", "metric ", "top self functions",
                                       "hottest stacks", "  "};
  const char *line = s;
  while (*line) {
    const char *nl = strchr(line, '\n');
    size_t k;
    int ok = 0;
    assert_non_null(nl);
    for (k = 0; k < sizeof(starts) / sizeof(starts[0]); k++)
      ok |= strncmp(line, starts[k], strlen(starts[k])) == 0;
    if (!ok)
      fail_msg("a line the summary did not start: '%.*s' in\n%s", (int)(nl - line), line, s);
    line = nl + 1;
  }
}

static void test_control_characters(void **state)
{
  static const char *const s1[] = {"main", "with\nnewline"};
  static const char *const s2[] = {"main", "a;b", "tab\there\r\x01\x7f"};
  struct spaa_vset v;
  char *t;
  (void)state;
  spaa_vset_init(&v);
  v.metric = "cpu\ntime";
  add(&v, s1, 2, 6, "s1");
  add(&v, s2, 3, 4, "s2");
  t = view(&v, 0);
  assert_lines_whole(t);
  assert_non_null(strstr(t, "metric cpu\\ntime, total 10, 2 stacks\n"));
  assert_non_null(strstr(t, "  60.00% 60.00% with\\nnewline\n"));
  assert_non_null(strstr(t, "  40.00% 40.00% tab\\there\\r\\x01\\x7f\n"));
  assert_non_null(strstr(t, "  60.00% s1 main;with\\nnewline\n"));
  /* ';' in a name is ':' in a path: three frames, two separators */
  assert_non_null(strstr(t, "  40.00% s2 main;a:b;tab\\there\\r\\x01\\x7f\n"));
  /* in the function list a name stands alone on its line: kept as it is */
  assert_non_null(strstr(t, "% a;b\n"));
  free(t);
  /* JSON: the path is the text summary's, as a JSON string */
  t = view(&v, 1);
  assert_non_null(strstr(t, "{\"id\":\"s1\",\"pct\":60.00,\"path\":\"main;with\\\\nnewline\"}"));
  assert_non_null(
      strstr(t, "{\"id\":\"s2\",\"pct\":40.00,\"path\":\"main;a:b;tab\\\\there\\\\r\\\\x01"
                "\\\\x7f\"}"));
  assert_non_null(strstr(t, "{\"name\":\"with\\u000anewline\""));
  assert_ptr_equal(strchr(t, '\n'), t + strlen(t) - 1); /* one line */
  free(t);
  spaa_vset_free(&v);
}

/* Quotes and backslashes in a path come out as JSON escapes, not replaced. */
static void test_json_path_escapes(void **state)
{
  static const char *const s1[] = {"say \"hi\"", "C:\\x"};
  struct spaa_vset v;
  char *t;
  (void)state;
  spaa_vset_init(&v);
  v.metric = "cpu";
  add(&v, s1, 2, 1, "s1");
  t = view(&v, 1);
  assert_non_null(strstr(t, "\"path\":\"say \\\"hi\\\";C:\\\\x\"}"));
  free(t);
  t = view(&v, 0);
  assert_non_null(strstr(t, "  100.00% s1 say \"hi\";C:\\x\n"));
  free(t);
  spaa_vset_free(&v);
}

static void test_no_frames(void **state)
{
  static const char *const s1[] = {"main", "f"};
  struct spaa_vset v;
  char *t;
  (void)state;
  spaa_vset_init(&v);
  v.metric = "cpu";
  add(&v, s1, 2, 4, "s1");
  add(&v, NULL, 0, 6, "s0");
  t = view(&v, -1);
  assert_string_equal(t, "(no frames) 6\nmain;f 4\n");
  free(t);
  t = view(&v, 0);
  assert_lines_whole(t);
  assert_non_null(strstr(t, "  60.00% s0 (no frames)\n"));
  free(t);
  t = view(&v, 1);
  assert_non_null(strstr(t, "{\"id\":\"s0\",\"pct\":60.00,\"path\":\"(no frames)\"}"));
  free(t);
  { /* the diff's folded lines too */
    struct spaa_buf b;
    struct spaa_err err = {0};
    spaa_buf_init(&b, 0);
    assert_int_equal(spaa_view_diff(&v, &v, SPAA_DIFF_COLLAPSED, 0, 4096, sink, &b, &err), 0);
    assert_int_equal(spaa_buf_add(&b, "", 1), 0);
    assert_string_equal(b.p, "(no frames) 6 6\nmain;f 4 4\n");
    spaa_buf_free(&b);
  }
  spaa_vset_free(&v);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_control_characters),
      cmocka_unit_test(test_json_path_escapes),
      cmocka_unit_test(test_no_frames),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
