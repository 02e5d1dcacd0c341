/* Snappy (block and framing formats) and LZ4 (frame format) decoders, written from the
 * published format descriptions (see snappy_lz4.h): every length and offset read from the
 * input is checked against what is left of the input, the output and the cap before use. */
#include "base/snappy_lz4.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

#define SNAPPY_CHUNK_MAX ((size_t)65536) /* decoded bytes of one framed data chunk, at most */
#define LZ4_MAGIC 0x184D2204u
#define LZ4_SKIP_MAGIC 0x184D2A50u /* ...5F: the low 4 bits are free */
#define LZ4_MIN_MATCH 4

/* ---- shared helpers ---------------------------------------------------------------------- */

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t le24(const uint8_t *p) { return le16(p) | (uint32_t)p[2] << 16; }

static uint32_t le32(const uint8_t *p) { return le24(p) | (uint32_t)p[3] << 24; }

/* SPAA_E_BAD_COMPRESSION at input byte `at`: "corrupt <name> body: <what>". */
static int bad(struct spaa_err *err, const char *name, size_t at, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));

static int bad(struct spaa_err *err, const char *name, size_t at, const char *fmt, ...)
{
  char what[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  return spaa_err_set(err, SPAA_E_BAD_COMPRESSION, 0, at, "corrupt %s body: %s", name, what);
}

static int too_large(struct spaa_err *err, const char *name, size_t max_out)
{
  return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0, "%s body decodes to more than the %zu-byte cap",
                      name, max_out);
}

/* Room for `n` more bytes in out (and its NUL), whose cap the callers check themselves. */
static int room(struct spaa_buf *out, size_t n, struct spaa_err *err)
{
  int rc = spaa_buf_reserve(out, n);
  if (rc == SPAA_E_NOMEM)
    return spaa_err_set(err, rc, 0, 0, "no memory for %zu decoded bytes", out->len + n);
  return rc ? spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "decoded bytes past their buffer") : 0;
}

/* Terminate a successful output (allocated even when empty). */
static int finish(struct spaa_buf *out, struct spaa_err *err)
{
  int rc = room(out, 0, err);
  if (!rc)
    out->p[out->len] = 0;
  return rc;
}

/* ---- snappy: one block ------------------------------------------------------------------- */

/* The block's decoded length: a little-endian base-128 varint of at most 32 bits. 0 with *val
 * and *used set, -1 when truncated, -2 when longer than 32 bits. */
static int snappy_varint(const uint8_t *in, size_t len, size_t *val, size_t *used)
{
  uint64_t v = 0;
  size_t i;
  for (i = 0; i < len && i < 5; i++) {
    v |= (uint64_t)(in[i] & 0x7f) << (7 * i);
    if (!(in[i] & 0x80)) {
      if (v > 0xffffffffu)
        return -2;
      *val = (size_t)v;
      *used = i + 1;
      return 0;
    }
  }
  return i == 5 ? -2 : -1;
}

/* The most bytes `n` bytes of snappy elements can decode to: a 3-byte copy gives 64 at most,
 * better than any other element. */
static size_t snappy_bound(size_t n) { return n > SIZE_MAX / 32 ? SIZE_MAX : n / 3 * 64 + 64; }

/* Decode the elements in[0..len) into exactly dst[0..dlen): all input used, all output made.
 * `at` is in[0]'s offset in the body, for messages. */
static int snappy_elements(const uint8_t *in, size_t len, size_t at, uint8_t *dst, size_t dlen,
                           const char *name, struct spaa_err *err)
{
  size_t ip = 0, op = 0;
  while (ip < len) {
    size_t start = ip, n, off;
    uint8_t tag;
    if (op == dlen)
      return bad(err, name, at + ip, "%zu unexpected bytes after the %zu declared ones, at byte %zu",
                 len - ip, dlen, at + ip);
    tag = in[ip++];
    if ((tag & 3) == 0) { /* literal */
      n = (size_t)(tag >> 2) + 1;
      if (n > 60) {
        size_t k = n - 60, i; /* 1 to 4 bytes of length - 1 follow */
        if (k > len - ip)
          return bad(err, name, at + start, "the literal at byte %zu is truncated",
                     at + start);
        for (n = 0, i = 0; i < k; i++)
          n |= (size_t)in[ip + i] << (8 * i);
        n += 1;
        ip += k;
      }
      if (n > len - ip)
        return bad(err, name, at + start,
                   "the %zu-byte literal at byte %zu is truncated (%zu bytes left)", n,
                   at + start, len - ip);
      if (n > dlen - op)
        return bad(err, name, at + start,
                   "the literal at byte %zu goes past the declared length %zu", at + start,
                   dlen);
      memcpy(dst + op, in + ip, n);
      ip += n;
      op += n;
      continue;
    }
    if ((tag & 3) == 1) { /* copy, 1-byte offset */
      if (len - ip < 1)
        return bad(err, name, at + start, "the copy at byte %zu is truncated", at + start);
      n = 4 + ((tag >> 2) & 7);
      off = (size_t)(tag >> 5) << 8 | in[ip];
      ip += 1;
    } else if ((tag & 3) == 2) { /* copy, 2-byte offset */
      if (len - ip < 2)
        return bad(err, name, at + start, "the copy at byte %zu is truncated", at + start);
      n = (size_t)(tag >> 2) + 1;
      off = le16(in + ip);
      ip += 2;
    } else { /* copy, 4-byte offset */
      if (len - ip < 4)
        return bad(err, name, at + start, "the copy at byte %zu is truncated", at + start);
      n = (size_t)(tag >> 2) + 1;
      off = le32(in + ip);
      ip += 4;
    }
    if (off == 0 || off > op)
      return bad(err, name, at + start,
                 "the copy at byte %zu reaches back %zu bytes with %zu decoded", at + start, off,
                 op);
    if (n > dlen - op)
      return bad(err, name, at + start,
                 "the copy at byte %zu goes past the declared length %zu", at + start, dlen);
    if (off >= n) {
      memcpy(dst + op, dst + op - off, n);
    } else { /* overlapping: a repeated pattern, byte by byte */
      size_t i;
      for (i = 0; i < n; i++)
        dst[op + i] = dst[op - off + i];
    }
    op += n;
  }
  if (op != dlen)
    return bad(err, name, at + len, "the data ends after %zu of the %zu declared bytes", op,
               dlen);
  return 0;
}

int spaa__snappy_block_decode(const uint8_t *in, size_t len, size_t max_out, const char *name,
                              struct spaa_buf *out, struct spaa_err *err)
{
  size_t n = 0, used = 0;
  int rc = snappy_varint(in, len, &n, &used);
  if (rc == -1)
    return bad(err, name, len, len ? "the decoded length is truncated" : "it is empty");
  if (rc == -2)
    return bad(err, name, 0, "the decoded length is longer than 32 bits");
  if (n > max_out)
    return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0,
                        "%s body decodes to more than the %zu-byte cap (it declares %zu bytes)",
                        name, max_out, n);
  if (n > snappy_bound(len - used))
    return bad(err, name, 0, "it declares %zu decoded bytes, more than its %zu bytes can hold",
               n, len);
  if ((rc = room(out, n, err)))
    return rc;
  if ((rc = snappy_elements(in + used, len - used, used, (uint8_t *)out->p + out->len, n, name,
                            err)))
    return rc;
  out->len += n;
  return finish(out, err);
}

/* ---- snappy: framing format -------------------------------------------------------------- */

/* CRC-32C (Castagnoli, reflected polynomial 0x82f63b78) through a table built per stream. */
struct crc32c {
  uint32_t t[256]; /* the CRC of each byte value */
};

static void crc32c_init(struct crc32c *c)
{
  uint32_t i, k, v;
  for (i = 0; i < 256; i++) {
    for (v = i, k = 0; k < 8; k++)
      v = v & 1 ? (v >> 1) ^ 0x82f63b78u : v >> 1;
    c->t[i] = v;
  }
}

/* The masked CRC-32C the framing format stores: ((crc >> 15) | (crc << 17)) + 0xa282ead8. */
static uint32_t crc32c_masked(const struct crc32c *c, const uint8_t *p, size_t n)
{
  uint32_t v = 0xffffffffu;
  size_t i;
  for (i = 0; i < n; i++)
    v = c->t[(v ^ p[i]) & 0xff] ^ (v >> 8);
  v = ~v;
  return ((v >> 15) | (v << 17)) + 0xa282ead8u;
}

int spaa__snappy_framed_decode(const uint8_t *in, size_t len, size_t max_out, const char *name,
                               struct spaa_buf *out, struct spaa_err *err)
{
  struct crc32c crc;
  size_t pos = 0;
  int seen_id = 0, rc;
  if (!len)
    return bad(err, name, 0, "it is empty (a framed stream starts with a stream identifier)");
  crc32c_init(&crc);
  while (pos < len) {
    size_t data = pos + 4, clen, n, used;
    uint8_t type;
    type = in[pos];
    if (!seen_id && type != 0xff)
      return bad(err, name, pos,
                 "the stream does not start with a stream identifier chunk (type 0x%02x at "
                 "byte %zu)", type, pos);
    if (len - pos < 4)
      return bad(err, name, pos, "the chunk header at byte %zu is truncated", pos);
    clen = le24(in + pos + 1);
    if (clen > len - data)
      return bad(err, name, pos, "the %zu-byte chunk at byte %zu is truncated (%zu bytes left)",
                 clen, pos, len - data);
    if (type == 0xff) { /* stream identifier: may repeat (concatenated streams) */
      if (clen != 6 || memcmp(in + data, "sNaPpY", 6) != 0)
        return bad(err, name, pos, "bad stream identifier chunk at byte %zu", pos);
      seen_id = 1;
    } else if (type == 0x00 || type == 0x01) { /* compressed or uncompressed data */
      const uint8_t *body;
      size_t blen;
      if (clen < 4)
        return bad(err, name, pos, "the data chunk at byte %zu is too short for its checksum",
                   pos);
      body = in + data + 4;
      blen = clen - 4;
      if (type == 0x01) {
        n = blen;
        used = 0;
      } else if ((rc = snappy_varint(body, blen, &n, &used))) {
        return bad(err, name, data + 4, "the decoded length of the chunk at byte %zu is %s",
                   pos, rc == -1 ? "truncated" : "longer than 32 bits");
      }
      if (n > SNAPPY_CHUNK_MAX)
        return bad(err, name, pos, "the chunk at byte %zu holds %zu bytes, more than 65536", pos,
                   n);
      if (n > max_out - out->len)
        return too_large(err, name, max_out);
      if ((rc = room(out, n, err)))
        return rc;
      if (type == 0x01)
        memcpy(out->p + out->len, body, n);
      else if ((rc = snappy_elements(body + used, blen - used, data + 4 + used,
                                     (uint8_t *)out->p + out->len, n, name, err)))
        return rc;
      if (crc32c_masked(&crc, (const uint8_t *)out->p + out->len, n) != le32(in + data))
        return bad(err, name, pos, "the checksum of the chunk at byte %zu does not match", pos);
      out->len += n;
    } else if (type < 0x80) {
      return bad(err, name, pos, "reserved unskippable chunk type 0x%02x at byte %zu", type,
                 pos);
    } /* else 0x80-0xfe: reserved skippable, or padding (0xfe): skipped */
    pos = data + clen;
  }
  return finish(out, err);
}

/* ---- LZ4: one block ---------------------------------------------------------------------- */

/* A length's extension: bytes added while they are 255. Returns the new position, or 0 when
 * the input ends first; stops adding past `limit` (the caller then refuses the length). */
static size_t lz4_more(const uint8_t *in, size_t len, size_t ip, size_t *n, size_t limit)
{
  for (;;) {
    uint8_t b;
    if (ip >= len)
      return 0;
    b = in[ip++];
    if (*n <= limit)
      *n += b;
    if (b != 255)
      return ip;
  }
}

/* Decode the LZ4 block in[0..len) (offset `at` in the body) after the `op` bytes of dst
 * already made, of which the last `window` may be referred to, making at most `limit` more.
 * 0 with *made set; 1 when the block would make more than `limit`; or the error. */
static int lz4_block(const uint8_t *in, size_t len, size_t at, uint8_t *dst, size_t op,
                     size_t window, size_t limit, size_t *made, const char *name,
                     struct spaa_err *err)
{
  size_t ip = 0, start_op = op, end = op + limit;
  while (ip < len) {
    size_t seq = ip, n, off;
    uint8_t token = in[ip++];
    n = token >> 4;
    if (n == 15 && !(ip = lz4_more(in, len, ip, &n, limit)))
      return bad(err, name, at + seq, "the literal length at byte %zu is truncated", at + seq);
    if (n > len - ip)
      return bad(err, name, at + seq,
                 "the %zu literal bytes of the sequence at byte %zu are truncated", n, at + seq);
    if (n > end - op)
      return 1;
    memcpy(dst + op, in + ip, n);
    ip += n;
    op += n;
    if (ip == len) /* the last sequence: literals only */
      break;
    if (len - ip < 2)
      return bad(err, name, at + ip, "the match offset at byte %zu is truncated", at + ip);
    off = le16(in + ip);
    if (off == 0 || off > window + (op - start_op))
      return bad(err, name, at + ip,
                 "the match at byte %zu reaches back %zu bytes, before the start of the data",
                 at + ip, off);
    ip += 2;
    n = token & 15;
    if (n == 15 && !(ip = lz4_more(in, len, ip, &n, limit)))
      return bad(err, name, at + len, "the match length of the sequence at byte %zu is truncated",
                 at + seq);
    n += LZ4_MIN_MATCH;
    if (n > end - op)
      return 1;
    if (off >= n) {
      memcpy(dst + op, dst + op - off, n);
    } else {
      size_t i;
      for (i = 0; i < n; i++)
        dst[op + i] = dst[op - off + i];
    }
    op += n;
  }
  *made = op - start_op;
  return 0;
}

/* ---- LZ4: frame format ------------------------------------------------------------------- */

/* One frame at in[pos..len) (its magic already seen), decoded onto out; *next is where the
 * next frame would start. */
static int lz4_frame(const uint8_t *in, size_t len, size_t pos, size_t max_out, const char *name,
                     struct spaa_buf *out, size_t *next, struct spaa_err *err)
{
  size_t fstart = pos, desc = pos + 4, hlen = 2, bmax, frame_out = out->len;
  uint64_t csize = 0;
  uint8_t flg, bd;
  int linked, bsum, has_size, csum, rc;
  if (len - desc < 3)
    return bad(err, name, len, "the frame header at byte %zu is truncated", fstart);
  flg = in[desc];
  bd = in[desc + 1];
  if ((flg >> 6) != 1)
    return bad(err, name, desc, "unknown frame version %u at byte %zu", flg >> 6, desc);
  if (flg & 0x02 || bd & 0x8f)
    return bad(err, name, desc, "reserved bits set in the frame descriptor at byte %zu", desc);
  if ((bd >> 4) < 4)
    return bad(err, name, desc + 1, "unknown block maximum size %u at byte %zu", bd >> 4,
               desc + 1);
  linked = !(flg & 0x20);
  bsum = !!(flg & 0x10);
  has_size = !!(flg & 0x08);
  csum = !!(flg & 0x04);
  hlen += (has_size ? 8 : 0) + (flg & 0x01 ? 4 : 0);
  if (len - desc < hlen + 1)
    return bad(err, name, len, "the frame header at byte %zu is truncated", fstart);
  if (((XXH32(in + desc, hlen, 0) >> 8) & 0xff) != in[desc + hlen])
    return bad(err, name, desc + hlen, "the header checksum of the frame at byte %zu does not match",
               fstart);
  if (flg & 0x01)
    return bad(err, name, desc + hlen - 4,
               "the frame at byte %zu needs preset dictionary %u, which this server does not have",
               fstart, (unsigned)le32(in + desc + hlen - 4));
  if (has_size) {
    csize = (uint64_t)le32(in + desc + 2) | (uint64_t)le32(in + desc + 6) << 32;
    if (csize > max_out - out->len)
      return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0,
                          "%s body decodes to more than the %zu-byte cap (a frame declares "
                          "%llu bytes)", name, max_out, (unsigned long long)csize);
  }
  bmax = (size_t)1 << (8 + 2 * (bd >> 4)); /* 4: 64 KiB, 5: 256 KiB, 6: 1 MiB, 7: 4 MiB */
  pos = desc + hlen + 1;
  for (;;) {
    size_t bstart = pos, n, made = 0, limit;
    uint32_t word;
    if (len - pos < 4)
      return bad(err, name, len, "the block header at byte %zu is truncated", bstart);
    word = le32(in + pos);
    pos += 4;
    if (word == 0) /* the end mark */
      break;
    n = word & 0x7fffffffu;
    if (n > bmax)
      return bad(err, name, bstart, "the %zu-byte block at byte %zu is larger than the frame's "
                 "%zu-byte blocks", n, bstart, bmax);
    if (n > len - pos || (bsum && len - pos - n < 4))
      return bad(err, name, len, "the block at byte %zu is truncated", bstart);
    if (bsum && XXH32(in + pos, n, 0) != le32(in + pos + n))
      return bad(err, name, pos + n, "the checksum of the block at byte %zu does not match",
                 bstart);
    limit = max_out - out->len < bmax ? max_out - out->len : bmax;
    if (word & 0x80000000u) { /* stored as is */
      if (n > limit)
        return too_large(err, name, max_out);
      if ((rc = room(out, n, err)))
        return rc;
      memcpy(out->p + out->len, in + pos, n);
      made = n;
    } else {
      /* at most 255 decoded bytes per input byte: do not reserve a whole block for a few */
      size_t want = n < bmax / 256 ? n * 256 : bmax;
      if ((rc = room(out, want < limit ? want : limit, err)))
        return rc;
      rc = lz4_block(in + pos, n, pos, (uint8_t *)out->p, out->len,
                     linked ? out->len - frame_out : 0, want < limit ? want : limit, &made,
                     name, err);
      if (rc == 1 && limit < bmax && want >= limit)
        return too_large(err, name, max_out);
      if (rc == 1)
        return bad(err, name, bstart, "the block at byte %zu decodes to more than %zu bytes",
                   bstart, want < bmax ? want : bmax);
      if (rc)
        return rc;
    }
    out->len += made;
    pos += n + (bsum ? 4 : 0);
  }
  if (csum) {
    if (len - pos < 4)
      return bad(err, name, len, "the content checksum of the frame at byte %zu is truncated",
                 fstart);
    if (XXH32(out->p + frame_out, out->len - frame_out, 0) != le32(in + pos))
      return bad(err, name, pos, "the content checksum of the frame at byte %zu does not match",
                 fstart);
    pos += 4;
  }
  if (has_size && csize != out->len - frame_out)
    return bad(err, name, fstart, "the frame at byte %zu declares %llu bytes but holds %zu",
               fstart, (unsigned long long)csize, out->len - frame_out);
  *next = pos;
  return 0;
}

int spaa__lz4_frame_decode(const uint8_t *in, size_t len, size_t max_out, const char *name,
                           struct spaa_buf *out, struct spaa_err *err)
{
  size_t pos = 0, frames = 0;
  int rc;
  if (!len)
    return bad(err, name, 0, "it is empty");
  while (pos < len) {
    uint32_t magic;
    if (len - pos < 4)
      return frames ? bad(err, name, pos, "%zu unexpected bytes after the end of the frame at "
                          "byte %zu", len - pos, pos)
                    : bad(err, name, pos, "it is too short for a frame");
    magic = le32(in + pos);
    if (magic == LZ4_MAGIC) {
      if ((rc = lz4_frame(in, len, pos, max_out, name, out, &pos, err)))
        return rc;
    } else if ((magic & 0xfffffff0u) == LZ4_SKIP_MAGIC) {
      size_t n;
      if (len - pos < 8 || (n = le32(in + pos + 4)) > len - pos - 8)
        return bad(err, name, len, "the skippable frame at byte %zu is truncated", pos);
      pos += 8 + n;
    } else if (frames) {
      return bad(err, name, pos, "%zu unexpected bytes after the end of the frame at byte %zu",
                 len - pos, pos);
    } else {
      return bad(err, name, 0, "no frame magic (04 22 4d 18) at its start");
    }
    frames++;
  }
  return finish(out, err);
}
