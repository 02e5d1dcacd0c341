/* Content-Encoding decoders under a decoded-size cap (see decode.h). */
#include "server/decode.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

enum coding { C_GZIP, C_DEFLATE, C_ZSTD };

static const char *const coding_names[] = {"gzip", "deflate", "zstd"};

#define CHUNK_MIN ((size_t)64 * 1024)

/* Parse the header into codings[]; returns the count or a negative code. */
static int parse_codings(const char *ce, enum coding *codings, struct spaa_err *err)
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
      codings[n++] = C_GZIP;
    } else if (l == 7 && strncasecmp(b, "deflate", 7) == 0) {
      codings[n++] = C_DEFLATE;
    } else if (l == 4 && strncasecmp(b, "zstd", 4) == 0) {
      codings[n++] = C_ZSTD;
    } else {
      return spaa_err_set(err, SPAA_E_MEDIA_TYPE, 0, 0,
                          "unsupported Content-Encoding '%.*s': expected gzip, x-gzip, "
                          "deflate, zstd or identity",
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
  enum coding codings[SPAA_DECODE_MAX_CODINGS];
  int n = parse_codings(content_encoding, codings, err);
  return n < 0 ? n : n > 0;
}

/* Make at least some room in `out` for more output, never past `limit` bytes in total.
 * Returns the room (0 when `limit` is reached) or a negative code. */
static long long grow(struct spaa_buf *out, size_t limit)
{
  size_t room = out->cap > out->len + 1 ? out->cap - out->len - 1 : 0;
  size_t want;
  int rc;
  if (room > limit - out->len)
    room = limit - out->len;
  if (room)
    return (long long)room;
  if (out->len >= limit)
    return 0;
  want = out->len > CHUNK_MIN ? out->len : CHUNK_MIN; /* double */
  if (want > limit - out->len)
    want = limit - out->len;
  if ((rc = spaa_buf_reserve(out, want)))
    return rc;
  room = out->cap - out->len - 1;
  return (long long)(room > limit - out->len ? limit - out->len : room);
}

static int too_large(struct spaa_err *err, const char *name, size_t max_out)
{
  return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0,
                      "%s body decodes to more than the %zu-byte cap", name, max_out);
}

/* zlib: gzip (windowBits 16+15) or deflate (zlib wrapper, or raw when the header is not one). */
static int inflate_zlib(enum coding c, const uint8_t *in, size_t len, size_t max_out,
                        struct spaa_buf *out, struct spaa_err *err)
{
  z_stream zs;
  const char *name = coding_names[c];
  int wbits, zrc, rc = 0, ended = 0;
  size_t limit = max_out + 1; /* one byte more than allowed tells "too large" */
  if (c == C_GZIP)
    wbits = 16 + MAX_WBITS;
  else if (len >= 2 && (in[0] & 0x0f) == 8 && ((in[0] << 8) | in[1]) % 31 == 0)
    wbits = MAX_WBITS; /* RFC 1950 header */
  else
    wbits = -MAX_WBITS; /* raw RFC 1951, as some clients send "deflate" */
  memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, wbits) != Z_OK)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "cannot start the %s decoder", name);
  zs.next_in = (Bytef *)(uintptr_t)in;
  for (;;) {
    long long room = grow(out, limit);
    size_t before_in;
    if (room < 0) {
      rc = (int)room == SPAA_E_TOO_LARGE ? too_large(err, name, max_out)
                                         : spaa_err_set(err, (int)room, 0, 0, NULL);
      goto out;
    }
    if (room == 0) {
      rc = too_large(err, name, max_out);
      goto out;
    }
    /* zlib counts in uInt: feed at most 1 GiB at a time */
    before_in = (size_t)(zs.next_in - in);
    zs.avail_in = (uInt)((len - before_in) > (1u << 30) ? (1u << 30) : (len - before_in));
    zs.next_out = (Bytef *)out->p + out->len;
    zs.avail_out = (uInt)((size_t)room > (1u << 30) ? (1u << 30) : (size_t)room);
    zrc = inflate(&zs, Z_NO_FLUSH);
    out->len = (size_t)((char *)zs.next_out - out->p);
    out->p[out->len] = 0;
    if (zrc == Z_STREAM_END) {
      size_t used = (size_t)(zs.next_in - in);
      if (used == len) {
        ended = 1;
        break;
      }
      if (c == C_GZIP && len - used >= 2 && in[used] == 0x1f && in[used + 1] == 0x8b) {
        inflateReset(&zs); /* another gzip member */
        continue;
      }
      rc = spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, used,
                        "corrupt %s body: %zu unexpected bytes after the end of the stream at "
                        "byte %zu",
                        name, len - used, used);
      goto out;
    }
    if (zrc == Z_OK)
      continue;
    if (zrc == Z_BUF_ERROR && zs.avail_out == 0)
      continue; /* needs more room */
    if (zrc == Z_BUF_ERROR)
      break; /* input ran out before the end of the stream */
    if (zrc == Z_MEM_ERROR) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      goto out;
    }
    rc = spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, (size_t)(zs.next_in - in),
                      "corrupt %s body: %s (near input byte %zu)", name,
                      zs.msg ? zs.msg : "invalid data", (size_t)(zs.next_in - in));
    goto out;
  }
  if (!ended)
    rc = spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, len,
                      "corrupt %s body: the stream is truncated after %zu bytes", name, len);
  else if (out->len > max_out)
    rc = too_large(err, name, max_out);
out:
  inflateEnd(&zs);
  return rc;
}

static int unzstd(const uint8_t *in, size_t len, size_t max_out, struct spaa_buf *out,
                  struct spaa_err *err)
{
  ZSTD_DCtx *dc = ZSTD_createDCtx();
  ZSTD_inBuffer ib = {in, len, 0};
  size_t limit = max_out + 1, last = 1;
  int wlog = 10, rc = 0; /* 10: the smallest window zstd knows */
  if (!dc)
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, "cannot start the zstd decoder");
  /* a window larger than the cap is never needed: refuse frames that ask for one */
  while (wlog < 27 && ((size_t)1 << wlog) < max_out)
    wlog++;
  ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax, wlog);
  if (len == 0) {
    rc = spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, 0, "corrupt zstd body: it is empty");
    goto out;
  }
  while (ib.pos < len || last != 0) {
    long long room = grow(out, limit);
    ZSTD_outBuffer ob;
    size_t before = ib.pos;
    if (room < 0) {
      rc = (int)room == SPAA_E_TOO_LARGE ? too_large(err, "zstd", max_out)
                                         : spaa_err_set(err, (int)room, 0, 0, NULL);
      goto out;
    }
    if (room == 0) {
      rc = too_large(err, "zstd", max_out);
      goto out;
    }
    ob.dst = out->p + out->len;
    ob.size = (size_t)room;
    ob.pos = 0;
    last = ZSTD_decompressStream(dc, &ob, &ib);
    out->len += ob.pos;
    out->p[out->len] = 0;
    if (ZSTD_isError(last)) {
      if (ZSTD_getErrorCode(last) == ZSTD_error_frameParameter_windowTooLarge)
        rc = spaa_err_set(err, SPAA_E_TOO_LARGE, 0, ib.pos,
                          "zstd body needs a window larger than the %zu-byte cap", max_out);
      else
        rc = spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, ib.pos,
                          "corrupt zstd body: %s (near input byte %zu)",
                          ZSTD_getErrorName(last), ib.pos);
      goto out;
    }
    if (ib.pos == len && ob.pos < ob.size && last != 0 && ib.pos == before) {
      rc = spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, len,
                        "corrupt zstd body: the stream is truncated after %zu bytes", len);
      goto out;
    }
  }
  if (out->len > max_out)
    rc = too_large(err, "zstd", max_out);
out:
  ZSTD_freeDCtx(dc);
  return rc;
}

int spaa_decode(const char *content_encoding, const uint8_t *in, size_t len, size_t max_out,
                struct spaa_buf *out, struct spaa_err *err)
{
  enum coding codings[SPAA_DECODE_MAX_CODINGS];
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
    spaa_buf_init(&stage, max_out + 1); /* one byte more than allowed tells "too large" */
    if (codings[i] == C_ZSTD)
      rc = unzstd(src, src_len, max_out, &stage, err);
    else
      rc = inflate_zlib(codings[i], src, src_len, max_out, &stage, err);
    if (rc) {
      spaa_buf_free(&stage);
      goto out;
    }
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
