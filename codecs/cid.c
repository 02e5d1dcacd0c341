/* Content ids (see cid.h and docs/content-ids.md). */
#include "codecs/cid.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "codecs/canon.h"

/* A field: u32 little-endian byte length, then the bytes. */
static int put_field(struct spaa_buf *b, const char *s, size_t len)
{
  unsigned char l[4];
  int rc;
  if (len > UINT32_MAX)
    return SPAA_E_TOO_LARGE;
  l[0] = (unsigned char)(len & 0xff);
  l[1] = (unsigned char)((len >> 8) & 0xff);
  l[2] = (unsigned char)((len >> 16) & 0xff);
  l[3] = (unsigned char)((len >> 24) & 0xff);
  if ((rc = spaa_buf_add(b, l, 4)))
    return rc;
  return spaa_buf_add(b, s, len);
}

static int put_str(struct spaa_buf *b, const char *s) { return put_field(b, s ? s : "", s ? strlen(s) : 0); }

size_t spaa_dso_key(const struct spaa_dso *d, char *out, size_t cap)
{
  int n;
  if (d->build_id && d->build_id[0])
    n = snprintf(out, cap, "b:%s", d->build_id);
  else
    n = snprintf(out, cap, "n:%s", d->name ? d->name : "");
  return n < 0 ? cap : (size_t)n;
}

/* One field made of a two-byte prefix and a string: "b:<build_id>" or "n:<name>". */
static int put_prefixed(struct spaa_buf *b, const char *prefix, const char *s)
{
  size_t sl = strlen(s);
  unsigned char l[4];
  int rc;
  if (sl + 2 > UINT32_MAX)
    return SPAA_E_TOO_LARGE;
  l[0] = (unsigned char)((sl + 2) & 0xff);
  l[1] = (unsigned char)(((sl + 2) >> 8) & 0xff);
  l[2] = (unsigned char)(((sl + 2) >> 16) & 0xff);
  l[3] = (unsigned char)(((sl + 2) >> 24) & 0xff);
  if ((rc = spaa_buf_add(b, l, 4)) || (rc = spaa_buf_add(b, prefix, 2)))
    return rc;
  return spaa_buf_add(b, s, sl);
}

int spaa_dso_identity(struct spaa_buf *b, const struct spaa_dso *d)
{
  if (d->build_id && d->build_id[0])
    return put_prefixed(b, "b:", d->build_id);
  return put_prefixed(b, "n:", d->name ? d->name : "");
}

int spaa_frame_identity(struct spaa_buf *b, const struct spaa_frame *f, const struct spaa_dso *d)
{
  char tmp[32];
  int rc, n;
  /* 1. func: the symbol when resolved, "" when not (the raw ip is not an identity) */
  if ((rc = put_str(b, f->func_resolved ? f->func : "")))
    return rc;
  /* 2. dso key, "" when the frame has no dso */
  if (d) {
    if ((rc = spaa_dso_identity(b, d)))
      return rc;
  } else if ((rc = put_field(b, "", 0))) {
    return rc;
  }
  /* 3. srcline, "" when absent or unresolved */
  if ((rc = put_str(b, f->srcline_resolved ? f->srcline : NULL)))
    return rc;
  /* 4. inline depth in decimal ("0" when absent) */
  n = snprintf(tmp, sizeof(tmp), "%" PRIu32, f->has_inline_depth ? f->inline_depth : 0);
  if ((rc = put_field(b, tmp, (size_t)n)))
    return rc;
  /* 5. kind */
  if ((rc = put_str(b, f->kind ? f->kind : "unknown")))
    return rc;
  /* 6. address: only for unresolved frames, relative to the dso's mapping when known */
  if (!f->func_resolved && f->has_ip) {
    uint64_t a = f->ip;
    if (d && d->has_mapping && a >= d->map_start && a < d->map_limit)
      a = a - d->map_start + d->map_offset;
    n = snprintf(tmp, sizeof(tmp), "0x%" PRIx64, a);
    return put_field(b, tmp, (size_t)n);
  }
  return put_field(b, "", 0);
}

static void hash_to_cid(const void *data, size_t len, struct spaa_cid *out)
{
  XXH128_hash_t h = XXH3_128bits(data, len);
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  memcpy(out->b, c.digest, SPAA_CID_LEN);
}

int spaa_dso_cid(const struct spaa_dso *d, struct spaa_cid *out)
{
  struct spaa_buf b;
  int rc;
  spaa_buf_init(&b, 0);
  if (!(rc = spaa_dso_identity(&b, d)))
    hash_to_cid(b.p, b.len, out);
  spaa_buf_free(&b);
  return rc;
}

int spaa_frame_cid(const struct spaa_frame *f, const struct spaa_dso *d, struct spaa_cid *out)
{
  struct spaa_buf b;
  int rc;
  spaa_buf_init(&b, 0);
  if (!(rc = spaa_frame_identity(&b, f, d)))
    hash_to_cid(b.p, b.len, out);
  spaa_buf_free(&b);
  return rc;
}

static int skip_event(const char *k) { return strcmp(k, "event") == 0; }

int spaa_stack_cid(const char *event, const char *stack_type, const struct spaa_cid *leaf_first,
                   size_t n, const json_t *context, struct spaa_cid *out)
{
  struct spaa_buf b, ctx;
  unsigned char cnt[4];
  int rc;
  spaa_buf_init(&b, 0);
  spaa_buf_init(&ctx, 0);
  if (n > UINT32_MAX)
    return SPAA_E_TOO_LARGE;
  cnt[0] = (unsigned char)(n & 0xff);
  cnt[1] = (unsigned char)((n >> 8) & 0xff);
  cnt[2] = (unsigned char)((n >> 16) & 0xff);
  cnt[3] = (unsigned char)((n >> 24) & 0xff);
  if ((rc = put_str(&b, event)) || (rc = put_str(&b, stack_type ? stack_type : "unified")) ||
      (rc = spaa_buf_add(&b, cnt, 4)) ||
      (n && (rc = spaa_buf_add(&b, leaf_first, n * SPAA_CID_LEN))))
    goto out;
  /* context without "event": canonical JSON object members, "" when there are none */
  if (context && json_is_object(context)) {
    if ((rc = spaa_canon_members(&ctx, context, skip_event)))
      goto out;
    if (ctx.len) {
      /* members come as ",k:v,k:v": make an object of them */
      ctx.p[0] = '{';
      if ((rc = spaa_buf_add(&ctx, "}", 1)))
        goto out;
    }
  }
  if ((rc = put_field(&b, ctx.len ? ctx.p : "", ctx.len)))
    goto out;
  hash_to_cid(b.p, b.len, out);
out:
  spaa_buf_free(&b);
  spaa_buf_free(&ctx);
  return rc;
}

void spaa_cid_hex(const struct spaa_cid *c, char *out)
{
  static const char hex[] = "0123456789abcdef";
  int i;
  out[0] = '0';
  out[1] = 'x';
  for (i = 0; i < SPAA_CID_LEN; i++) {
    out[2 + 2 * i] = hex[c->b[i] >> 4];
    out[3 + 2 * i] = hex[c->b[i] & 15];
  }
  out[SPAA_CID_HEXLEN] = 0;
}

static int hexval(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

int spaa_cid_parse(const char *s, struct spaa_cid *out)
{
  int i;
  if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || strlen(s) != SPAA_CID_HEXLEN)
    return SPAA_E_INVALID;
  for (i = 0; i < SPAA_CID_LEN; i++) {
    int hi = hexval(s[2 + 2 * i]), lo = hexval(s[3 + 2 * i]);
    if (hi < 0 || lo < 0)
      return SPAA_E_INVALID;
    out->b[i] = (uint8_t)(hi << 4 | lo);
  }
  return 0;
}
