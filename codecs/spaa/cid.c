/* Content ids (see cid.h and docs/content-ids.md). */
#include "spaa/cid.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "base/hex.h"
#include "spaa/canon.h"

/* The canonical encodings are written through an emitter that either appends to a buffer
 * (spaa_*_identity, for tests and docs) or feeds an XXH3-128 state directly (the cids: no
 * allocation on the hot path). Both see exactly the same bytes. */
struct enc {
  struct spaa_buf *b;  /* append here, or */
  XXH3_state_t *h;     /* hash here */
  int rc;              /* first error, sticky */
};

static void enc_bytes(struct enc *e, const void *p, size_t n)
{
  if (e->rc || !n)
    return;
  if (e->b)
    e->rc = spaa_buf_add(e->b, p, n);
  else if (XXH3_128bits_update(e->h, p, n) == XXH_ERROR)
    e->rc = SPAA_E_INTERNAL;
}

static void enc_u32(struct enc *e, size_t v)
{
  unsigned char l[4];
  if (v > UINT32_MAX) {
    e->rc = e->rc ? e->rc : SPAA_E_TOO_LARGE;
    return;
  }
  l[0] = (unsigned char)(v & 0xff);
  l[1] = (unsigned char)((v >> 8) & 0xff);
  l[2] = (unsigned char)((v >> 16) & 0xff);
  l[3] = (unsigned char)((v >> 24) & 0xff);
  enc_bytes(e, l, 4);
}

/* A field: u32 little-endian byte length, then the bytes. */
static void enc_field(struct enc *e, const char *s, size_t len)
{
  enc_u32(e, len);
  enc_bytes(e, s, len);
}

static void enc_str(struct enc *e, const char *s) { enc_field(e, s ? s : "", s ? strlen(s) : 0); }

/* One field made of a two-byte prefix and a string: "b:<build_id>" or "n:<name>". */
static void enc_prefixed(struct enc *e, const char *prefix, const char *s)
{
  size_t sl = strlen(s);
  enc_u32(e, sl + 2);
  enc_bytes(e, prefix, 2);
  enc_bytes(e, s, sl);
}

size_t spaa_dso_key(const struct spaa_dso *d, char *out, size_t cap)
{
  int n;
  if (d->build_id && d->build_id[0])
    n = snprintf(out, cap, "b:%s", d->build_id);
  else
    n = snprintf(out, cap, "n:%s", d->name ? d->name : "");
  return n < 0 ? cap : (size_t)n;
}

static void enc_dso(struct enc *e, const struct spaa_dso *d)
{
  if (d->build_id && d->build_id[0])
    enc_prefixed(e, "b:", d->build_id);
  else
    enc_prefixed(e, "n:", d->name ? d->name : "");
}

static void enc_frame(struct enc *e, const struct spaa_frame *f, const struct spaa_dso *d)
{
  char tmp[32];
  int n;
  /* 1. func: the symbol when resolved, "" when not (the raw ip is not an identity) */
  enc_str(e, f->func_resolved ? f->func : "");
  /* 2. dso key, "" when the frame has no dso */
  if (d)
    enc_dso(e, d);
  else
    enc_field(e, "", 0);
  /* 3. srcline, "" when absent or unresolved */
  enc_str(e, f->srcline_resolved ? f->srcline : NULL);
  /* 4. inline depth in decimal ("0" when absent) */
  n = snprintf(tmp, sizeof(tmp), "%" PRIu32, f->has_inline_depth ? f->inline_depth : 0);
  enc_field(e, tmp, (size_t)n);
  /* 5. kind */
  enc_str(e, f->kind ? f->kind : "unknown");
  /* 6. address: only for unresolved frames, relative to the dso's mapping when known */
  if (!f->func_resolved && f->has_ip) {
    uint64_t a = f->ip;
    if (d && d->has_mapping && a >= d->map_start && a < d->map_limit)
      a = a - d->map_start + d->map_offset;
    enc_field(e, tmp, spaa_hex_addr(tmp, a));
  } else {
    enc_field(e, "", 0);
  }
}

static int skip_event(const char *k) { return strcmp(k, "event") == 0; }

static void enc_stack(struct enc *e, const char *event, const char *stack_type,
                      const struct spaa_cid *leaf_first, size_t n, const json_t *context)
{
  enc_str(e, event);
  enc_str(e, stack_type ? stack_type : "unified");
  enc_u32(e, n);
  if (n > UINT32_MAX)
    return;
  enc_bytes(e, leaf_first, n * SPAA_CID_LEN);
  /* context without "event": canonical JSON object members, "" when there are none */
  if (context && json_is_object(context) && json_object_size(context) > 0) {
    struct spaa_buf ctx;
    int rc;
    spaa_buf_init(&ctx, 0);
    rc = spaa_canon_members(&ctx, context, skip_event);
    if (!rc && ctx.len) {
      /* members come as ",k:v,k:v": make an object of them */
      ctx.p[0] = '{';
      rc = spaa_buf_add(&ctx, "}", 1);
    }
    if (rc)
      e->rc = e->rc ? e->rc : rc;
    else
      enc_field(e, ctx.len ? ctx.p : "", ctx.len);
    spaa_buf_free(&ctx);
  } else {
    enc_field(e, "", 0);
  }
}

int spaa_dso_identity(struct spaa_buf *b, const struct spaa_dso *d)
{
  struct enc e = {b, NULL, 0};
  enc_dso(&e, d);
  return e.rc;
}

int spaa_frame_identity(struct spaa_buf *b, const struct spaa_frame *f, const struct spaa_dso *d)
{
  struct enc e = {b, NULL, 0};
  enc_frame(&e, f, d);
  return e.rc;
}

/* Hashing: a stack-allocated XXH3 state (static-linking API of libxxhash). */
static void hash_begin(struct enc *e, XXH3_state_t *st)
{
  e->b = NULL;
  e->h = st;
  e->rc = XXH3_128bits_reset(st) == XXH_ERROR ? SPAA_E_INTERNAL : 0;
}

static int hash_end(struct enc *e, struct spaa_cid *out)
{
  XXH128_canonical_t c;
  if (e->rc)
    return e->rc;
  XXH128_canonicalFromHash(&c, XXH3_128bits_digest(e->h));
  memcpy(out->b, c.digest, SPAA_CID_LEN);
  return 0;
}

int spaa_dso_cid(const struct spaa_dso *d, struct spaa_cid *out)
{
  XXH3_state_t st;
  struct enc e;
  hash_begin(&e, &st);
  enc_dso(&e, d);
  return hash_end(&e, out);
}

int spaa_frame_cid(const struct spaa_frame *f, const struct spaa_dso *d, struct spaa_cid *out)
{
  XXH3_state_t st;
  struct enc e;
  hash_begin(&e, &st);
  enc_frame(&e, f, d);
  return hash_end(&e, out);
}

int spaa_stack_cid(const char *event, const char *stack_type, const struct spaa_cid *leaf_first,
                   size_t n, const json_t *context, struct spaa_cid *out)
{
  XXH3_state_t st;
  struct enc e;
  hash_begin(&e, &st);
  enc_stack(&e, event, stack_type, leaf_first, n, context);
  return hash_end(&e, out);
}

void spaa_cid_hex(const struct spaa_cid *c, char *out)
{
  out[0] = '0';
  out[1] = 'x';
  spaa_hex_encode(out + 2, c->b, SPAA_CID_LEN);
}

int spaa_cid_parse(const char *s, struct spaa_cid *out)
{
  struct spaa_cid c;
  if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || strlen(s) != SPAA_CID_HEXLEN ||
      spaa_hex_decode(c.b, s + 2, 2 * SPAA_CID_LEN, 0))
    return SPAA_E_INVALID;
  *out = c;
  return 0;
}
