/* Content-Encoding: the header parsed here, each coding undone by base/compress (see
 * decode.h). */
#include "server/decode.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/compress.h"
#include "base/limits.h"

#define DECODE_PIECE ((size_t)256 << 10) /* spaa_decode_to: bytes handed to the sink at once */

/* Parse the header into codings[]; returns the count or a negative code. */
static int parse_codings(const char *ce, enum spaa_coding *codings, struct spaa_err *err)
{
  int n = 0;
  const char *p = ce;
  if (!ce)
    return 0;
  while (*p) {
    const char *b = p, *e = strchr(p, ',');
    const char *end = e ? e : p + strlen(p);
    size_t l;
    while (b < end && (*b == ' ' || *b == '\t'))
      b++;
    while (end > b && (end[-1] == ' ' || end[-1] == '\t'))
      end--;
    l = (size_t)(end - b);
    if (l == 0 || (l == 8 && strncasecmp(b, "identity", 8) == 0) ||
        (l == 5 && strncasecmp(b, "utf-8", 5) == 0)) {
      /* no coding */
    } else if (n >= SPAA_DECODE_MAX_CODINGS) {
      return spaa_err_set(err, SPAA_E_MEDIA_TYPE, 0, 0,
                          "Content-Encoding lists more than %d codings",
                          SPAA_DECODE_MAX_CODINGS);
    } else if ((l == 4 && strncasecmp(b, "gzip", 4) == 0) ||
               (l == 6 && strncasecmp(b, "x-gzip", 6) == 0)) {
      codings[n++] = SPAA_CODING_GZIP;
    } else if ((l == 7 && strncasecmp(b, "deflate", 7) == 0) ||
               (l == 4 && strncasecmp(b, "zlib", 4) == 0)) {
      /* "zlib": what an OpenTelemetry Collector exporter set to `compression: zlib` sends
       * (the zlib format, which is also what HTTP's deflate means) */
      codings[n++] = SPAA_CODING_DEFLATE;
    } else if (l == 4 && strncasecmp(b, "zstd", 4) == 0) {
      codings[n++] = SPAA_CODING_ZSTD;
    } else if (l == 2 && strncasecmp(b, "br", 2) == 0) {
      codings[n++] = SPAA_CODING_BR;
    } else if (l == 6 && strncasecmp(b, "snappy", 6) == 0) {
      /* a Collector exporter's `compression: snappy`: the block format (or the framing
       * format, told by its stream identifier, as a Collector reads it) */
      codings[n++] = SPAA_CODING_SNAPPY;
    } else if (l == 15 && strncasecmp(b, "x-snappy-framed", 15) == 0) {
      codings[n++] = SPAA_CODING_SNAPPY_FRAMED;
    } else if (l == 3 && strncasecmp(b, "lz4", 3) == 0) {
      codings[n++] = SPAA_CODING_LZ4; /* the LZ4 frame format */
    } else {
      return spaa_err_set(err, SPAA_E_MEDIA_TYPE, 0, 0,
                          "unsupported Content-Encoding '%.*s': expected gzip, x-gzip, "
                          "deflate, zlib, zstd, br, snappy, x-snappy-framed, lz4 or identity",
                          (int)(l > 40 ? 40 : l), b);
    }
    if (!e)
      break;
    p = e + 1;
  }
  return n;
}

int spaa_decode_needed(const char *content_encoding, struct spaa_err *err)
{
  enum spaa_coding codings[SPAA_DECODE_MAX_CODINGS];
  int n = parse_codings(content_encoding, codings, err);
  return n < 0 ? n : n > 0;
}

int spaa_decode(const char *content_encoding, const uint8_t *in, size_t len, size_t max_out,
                struct spaa_buf *out, struct spaa_err *err)
{
  enum spaa_coding codings[SPAA_DECODE_MAX_CODINGS];
  struct spaa_buf tmp;
  int n = parse_codings(content_encoding, codings, err), i, rc = 0;
  const uint8_t *src = in;
  size_t src_len = len;
  spaa_buf_init(&tmp, 0);
  spaa_buf_free(out);
  spaa_buf_init(out, 0);
  if (n < 0)
    return n;
  if (n == 0)
    return spaa_buf_add(out, in, len) ? spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL) : 0;
  for (i = n - 1; i >= 0; i--) {
    struct spaa_buf stage;
    spaa_buf_init(&stage, 0);
    if ((rc = spaa_decompress(codings[i], src, src_len, max_out, &stage, err)))
      goto out; /* stage was emptied */
    if (stage.p == NULL && (rc = spaa_buf_reserve(&stage, 0))) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      goto out;
    }
    spaa_buf_free(&tmp);
    tmp = stage;
    src = (const uint8_t *)tmp.p;
    src_len = tmp.len;
  }
  *out = tmp;
  out->max = max_out;
  spaa_buf_init(&tmp, 0);
out:
  spaa_buf_free(&tmp);
  if (rc) {
    spaa_buf_free(out);
    spaa_buf_init(out, 0);
  }
  return rc;
}

int spaa_decode_to(const char *content_encoding, const uint8_t *in, size_t len, size_t max_out,
                   spaa_sink_cb sink, void *ctx, struct spaa_err *err)
{
  enum spaa_coding codings[SPAA_DECODE_MAX_CODINGS];
  struct spaa_dreader *r = NULL;
  struct spaa_err perr;
  char *piece;
  size_t made;
  int rc;
  spaa_err_clear(&perr);
  if (parse_codings(content_encoding, codings, &perr) != 1 ||
      codings[0] == SPAA_CODING_SNAPPY || codings[0] == SPAA_CODING_SNAPPY_FRAMED ||
      codings[0] == SPAA_CODING_LZ4)
    return SPAA_E_USAGE;
  if (!(piece = malloc(DECODE_PIECE)))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if (!(rc = spaa_dreader_new(codings[0], in, len, max_out, &r, err))) {
    while (!(rc = spaa_dreader_read(r, piece, DECODE_PIECE, &made, err)) && made &&
           !(rc = sink(ctx, piece, made)))
      ;
  }
  spaa_dreader_free(r);
  free(piece);
  return rc;
}
