/* libFuzzer target: gRPC's wire rules (server/grpc_wire.c). The first byte picks the message
 * cap; the rest is a unary call's body, read whole and then as every strict prefix (which
 * must never read as a complete message when the whole one is complete). The same bytes go
 * through the google.rpc.Status reader, the grpc-timeout parser, the content-subtype reader
 * (a subtype must lie inside the value) and percent-encoding.
 * Seeds: tests/fuzz/corpus/grpc_frame/. Errors returned are expected; any crash, sanitizer
 * report or broken property is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/grpc_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static const size_t caps[] = {0, 1, 16, 1024, 65536, (size_t)64 << 20};
  struct spaa_grpc_msg m, p;
  struct spaa_err err;
  size_t cap, cut;
  int32_t code;
  int64_t ns;
  char msg[64], *text, enc[200];
  int rc;
  if (size < 1)
    return 0;
  cap = caps[data[0] % (sizeof(caps) / sizeof(caps[0]))];
  data++, size--;
  rc = spaa_grpc_frame(data, size, cap, &m, &err);
  if (rc == 0) {
    if (m.data != data + SPAA_GRPC_PREFIX || m.len != size - SPAA_GRPC_PREFIX || m.len > cap)
      abort();
    for (cut = 0; cut < size; cut++)
      if (spaa_grpc_frame(data, cut, cap, &p, &err) != SPAA_GRPC_MORE)
        abort();
  } else if (rc != SPAA_GRPC_MORE && (rc >= 0 || !err.msg[0])) {
    abort();
  }
  spaa_grpc_status_read(data, size, &code, msg, sizeof(msg));
  if (strlen(msg) >= sizeof(msg))
    abort();
  if (!(text = malloc(size + 1)))
    return 0;
  memcpy(text, data, size);
  text[size] = 0;
  if (spaa_grpc_timeout(text, &ns) == 0 && ns < 0)
    abort();
  if (spaa_grpc_pct_encode(enc, sizeof(enc), text) >= sizeof(enc))
    abort();
  spaa_grpc_coding(text);
  {
    const char *sub = NULL;
    if (spaa_grpc_content_subtype(text, &sub) && (sub < text || sub > text + strlen(text)))
      abort();
  }
  free(text);
  return 0;
}
