/* libFuzzer target: server/sniff.c (validate's "what does this file look like") on any
 * bytes, and its hint; the answer must always name something. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "server/sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spaa_sniff s;
  char hint[256];
  spaa_sniff(data, size > SPAA_SNIFF_HEAD ? SPAA_SNIFF_HEAD : size, &s);
  if (!s.what)
    abort();
  spaa_sniff_hint(&s, "FILE", hint, sizeof(hint));
  return 0;
}
