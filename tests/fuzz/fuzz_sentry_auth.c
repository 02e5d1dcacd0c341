/* libFuzzer target: the Sentry credentials grammar (codecs/sentry/sentry_auth.c): the input
 * as an X-Sentry-Auth header value and as a query string, and as a DSN. The key found must
 * be a NUL-terminated string within its field. Seeds: tests/fuzz/corpus/sentry_auth/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sentry/sentry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *s = malloc(size + 1);
  struct sentry_auth a;
  struct sentry_dsn d;
  struct spaa_err err;
  if (!s)
    return 0;
  memcpy(s, data, size);
  s[size] = 0;
  memset(&a, 0, sizeof(a));
  if (sentry_auth_parse_header(s, size, &a, &err) == 1 &&
      !memchr(a.key, 0, sizeof(a.key)))
    abort();
  memset(&a, 0, sizeof(a));
  if (sentry_auth_parse_query(s, size, &a, &err) == 1 && !memchr(a.key, 0, sizeof(a.key)))
    abort();
  (void)sentry_dsn_parse(s, size, &d, &err);
  free(s);
  return 0;
}
