/* libFuzzer target: the Pyroscope application name grammar (`app.cpu{k=v,...}`,
 * codecs/pprof/pprof_pyroscope.c) and its time parser. A parsed name's service and app are
 * NUL-terminated and its labels an object. Seeds: tests/fuzz/corpus/pyroscope_name/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pprof/pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *s = malloc(size + 1);
  struct spaa_pprof_name n;
  struct spaa_err err;
  int64_t ns;
  if (!s)
    return 0;
  memcpy(s, data, size);
  s[size] = 0;
  memset(&n, 0, sizeof(n));
  if (spaa_pprof_parse_name(s, &n, &err) == 0) {
    if (!memchr(n.service, 0, sizeof(n.service)) || !memchr(n.app, 0, sizeof(n.app)) ||
        (n.labels && !json_is_object(n.labels)))
      abort();
  }
  spaa_pprof_name_clear(&n);
  (void)spaa_pprof_parse_time(s, 1700000000000000000LL, &ns);
  free(s);
  return 0;
}
