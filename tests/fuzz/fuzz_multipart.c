/* libFuzzer target: server/multipart.c. The input's first line is a Content-Type (its
 * boundary parameter taken with spaa_multipart_boundary), the rest the body split on it;
 * every part found must lie inside the body. Seeds: tests/fuzz/corpus/multipart/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "server/multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const uint8_t *nl = memchr(data, '\n', size);
  size_t cl = nl ? (size_t)(nl - data) : size, i;
  char *ct = malloc(cl + 1), boundary[SPAA_MULTIPART_MAX_BOUNDARY + 1];
  uint8_t *body;
  size_t blen = nl ? size - cl - 1 : 0;
  struct spaa_multipart m;
  struct spaa_err err;
  if (!ct)
    return 0;
  memcpy(ct, data, cl);
  ct[cl] = 0;
  body = malloc(blen ? blen : 1); /* a copy of its own: reads past it are caught */
  if (body && blen)
    memcpy(body, nl + 1, blen);
  (void)spaa_multipart_is_form(ct);
  if (body && spaa_multipart_boundary(ct, boundary, sizeof(boundary), &err) == 0 &&
      spaa_multipart_parse(body, blen, boundary, &m, &err) == 0) {
    for (i = 0; i < m.n; i++)
      if (m.parts[i].data < body || m.parts[i].data + m.parts[i].len > body + blen)
        abort();
    (void)spaa_multipart_get(&m, "profile");
  }
  free(body);
  free(ct);
  return 0;
}
