/* libFuzzer target: server/decode.c, the request Content-Encoding decoders with their cap.
 * The first byte picks a Content-Encoding header value (single codings, lists, unknown
 * ones); the rest is decoded under a 1 MiB cap, which the output must never pass.
 * Seeds: tests/fuzz/corpus/http_decode/ (a selector byte, then a gzip, zlib, zstd or brotli
 * body). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/buf.h"
#include "server/decode.h"

#define CAP (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const encodings[] = {
    "gzip", "x-gzip", "deflate", "zstd", "identity", "gzip, zstd", "zstd, gzip",
    "deflate, deflate", "GZIP", "br", "gzip,,zstd", "", "gzip, gzip, gzip, gzip, gzip",
    "gzip, br", "br, gzip", "BR", "br, br", "compress",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *ce;
  struct spaa_buf out;
  struct spaa_err err;
  if (!size)
    return 0;
  ce = encodings[data[0] % (sizeof(encodings) / sizeof(encodings[0]))];
  spaa_buf_init(&out, 0);
  if (spaa_decode_needed(ce, &err) == 1 &&
      spaa_decode(ce, data + 1, size - 1, CAP, &out, &err) == 0 && out.len > CAP)
    abort();
  spaa_buf_free(&out);
  return 0;
}
