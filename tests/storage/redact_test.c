/* spaa_store_redact (storage/redact.c): a store location with its password hidden, as every
 * log line and error message shows it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "storage/storage.h"

static const struct {
  const char *in, *out;
} cases[] = {
  {"postgresql://relay:s3cret@db:5432/spaa", "postgresql://relay:***@db:5432/spaa"},
  {"postgres://relay:s3cret@db/spaa?sslmode=require", "postgres://relay:***@db/spaa?sslmode=require"},
  {"postgresql://relay@db/spaa", "postgresql://relay@db/spaa"},
  {"postgresql:///spaa?host=/tmp/x&port=5&user=postgres", "postgresql:///spaa?host=/tmp/x&port=5&user=postgres"},
  {"postgresql:///spaa?user=u&password=s3cret&port=5", "postgresql:///spaa?user=u&password=***&port=5"},
  {"postgresql://u:a@b@db/spaa", "postgresql://u:***@b@db/spaa"},
  {"postgresql://u:pw@db/spaa?password=pw2", "postgresql://u:***@db/spaa?password=***"},
  {"postgresql://db/x?p=1#frag@", "postgresql://db/x?p=1#frag@"},
  {"sqlite:/var/lib/spaa/spaa-relay.db", "sqlite:/var/lib/spaa/spaa-relay.db"},
  {"data/spaa-relay.db", "data/spaa-relay.db"},
  {"", ""},
};

static void test_table(void **state)
{
  char out[SPAA_STORE_MAX_LOCATION];
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    spaa_store_redact(cases[i].in, out, sizeof(out));
    assert_string_equal(out, cases[i].out);
  }
}

/* A small buffer: cut short, NUL-terminated, never the password. */
static void test_short(void **state)
{
  char out[24];
  size_t cap;
  (void)state;
  for (cap = 1; cap <= sizeof(out); cap++) {
    memset(out, 'x', sizeof(out));
    spaa_store_redact("postgresql://relay:s3cret@db/spaa", out, cap);
    assert_true(strlen(out) < cap);
    assert_null(strstr(out, "s3c"));
  }
  spaa_store_redact(NULL, out, sizeof(out));
  assert_string_equal(out, "");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_table),
    cmocka_unit_test(test_short),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
