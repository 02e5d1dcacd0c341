/* server/ingest_push.c: the Connect code and HTTP status of every error code (a table), as
 * Connect's protocol pairs them. The requests themselves: tests/e2e/push.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "server/ingest_push.h"

static void test_connect_codes(void **state)
{
  static const struct {
    int code;
    const char *connect;
    int status;
  } cases[] = {
      {SPAA_E_BAD_PROTOBUF, "invalid_argument", 400}, {SPAA_E_BAD_JSON, "invalid_argument", 400},
      {SPAA_E_BAD_REQUEST, "invalid_argument", 400},  {SPAA_E_INVALID, "invalid_argument", 400},
      {SPAA_E_BAD_COMPRESSION, "invalid_argument", 400},
      {SPAA_E_UNAUTHORIZED, "unauthenticated", 401},  {SPAA_E_FORBIDDEN, "permission_denied", 403},
      {SPAA_E_TOO_LARGE, "resource_exhausted", 429},  {SPAA_E_MEDIA_TYPE, "invalid_argument", 415},
      {SPAA_E_BUSY, "unavailable", 503},              {SPAA_E_SHUTDOWN, "unavailable", 503},
      {SPAA_E_NOMEM, "unavailable", 503},             {SPAA_E_STORE, "internal", 500},
      {SPAA_E_INTERNAL, "internal", 500},             {SPAA_E_NOT_FOUND, "unimplemented", 404},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int status = 0;
    const char *c = spaa_push_connect_code(cases[i].code, &status);
    if (strcmp(c, cases[i].connect) != 0 || status != cases[i].status)
      fail_msg("%s: %s %d, want %s %d", spaa_err_name(cases[i].code), c, status,
               cases[i].connect, cases[i].status);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_connect_codes)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
