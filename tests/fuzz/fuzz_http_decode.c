/* libFuzzer target: server/decode.c, the request Content-Encoding decoders with their cap.
 * The first byte picks a Content-Encoding header value (single codings, lists, unknown
 * ones); the rest is decoded under a 1 MiB cap, which the output must never pass, whole
 * (spaa_decode) and a piece at a time (spaa_decode_to, as the HTTP core decodes a large
 * body into a file): both agree on the outcome and on every byte.
 * Seeds: tests/fuzz/corpus/http_decode/ (a selector byte, then a gzip, zlib, zstd or brotli
 * body). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
  struct spaa_buf out, pieces;
  struct spaa_err err, perr;
  int rc, prc;
  if (!size)
    return 0;
  ce = encodings[data[0] % (sizeof(encodings) / sizeof(encodings[0]))];
  if (spaa_decode_needed(ce, &err) != 1)
    return 0;
  spaa_buf_init(&out, 0);
  spaa_buf_init(&pieces, 0);
  rc = spaa_decode(ce, data + 1, size - 1, CAP, &out, &err);
  if (!rc && out.len > CAP)
    abort();
  prc = spaa_decode_to(ce, data + 1, size - 1, CAP, spaa_buf_sink, &pieces, &perr);
  if (prc != SPAA_E_USAGE &&
      (prc != rc || (!rc && (pieces.len != out.len ||
                             (out.len && memcmp(pieces.p, out.p, out.len) != 0)))))
    abort();
  spaa_buf_free(&out);
  spaa_buf_free(&pieces);
  return 0;
}
