/* Compact binary packing of the per-profile parts of a profile (see engine_int.h): varints,
 * numbers, strings and canonical JSON text, with a reader that checks every bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spaa/canon.h"
#include "storage/engine_int.h"

int storage__put_uv(struct spaa_buf *b, uint64_t v)
{
  uint8_t tmp[10];
  size_t n = 0;
  do {
    uint8_t c = (uint8_t)(v & 0x7f);
    v >>= 7;
    tmp[n++] = (uint8_t)(c | (v ? 0x80 : 0));
  } while (v);
  return spaa_buf_add(b, tmp, n);
}

int storage__put_sv(struct spaa_buf *b, int64_t v)
{
  uint64_t u = (uint64_t)v;
  return storage__put_uv(b, (u << 1) ^ (v < 0 ? UINT64_MAX : 0));
}

int storage__put_num(struct spaa_buf *b, struct spaa_num n)
{
  int rc;
  if (!n.is_float) {
    if ((rc = spaa_buf_add(b, "\0", 1)))
      return rc;
    return storage__put_sv(b, n.i);
  } else {
    uint8_t tmp[9];
    uint64_t bits;
    int i;
    memcpy(&bits, &n.f, 8);
    tmp[0] = 1;
    for (i = 0; i < 8; i++)
      tmp[1 + i] = (uint8_t)(bits >> (8 * i));
    return spaa_buf_add(b, tmp, 9);
  }
}

int storage__put_str(struct spaa_buf *b, const char *s)
{
  size_t len;
  int rc;
  if (!s)
    return storage__put_uv(b, 0);
  len = strlen(s);
  if ((rc = storage__put_uv(b, (uint64_t)len + 1)))
    return rc;
  return spaa_buf_add(b, s, len);
}

int storage__put_json(struct spaa_buf *b, const json_t *v)
{
  uint8_t tmp[10];
  size_t start, len, n = 0;
  uint64_t u;
  int rc;
  if (!v)
    return storage__put_uv(b, 0);
  /* write the text first, then slide it to make room for its length prefix */
  start = b->len;
  if ((rc = spaa_canon_json(b, v)))
    return rc;
  len = b->len - start;
  u = (uint64_t)len + 1;
  do {
    uint8_t c = (uint8_t)(u & 0x7f);
    u >>= 7;
    tmp[n++] = (uint8_t)(c | (u ? 0x80 : 0));
  } while (u);
  if ((rc = spaa_buf_reserve(b, n)))
    return rc;
  memmove(b->p + start + n, b->p + start, len);
  memcpy(b->p + start, tmp, n);
  b->len += n;
  return 0;
}

void storage__rd_init(struct storage__rd *r, const void *p, size_t len)
{
  r->p = p;
  r->len = p ? len : 0;
  r->pos = 0;
  r->bad = 0;
}

uint64_t storage__get_uv(struct storage__rd *r)
{
  uint64_t v = 0;
  unsigned shift = 0;
  while (!r->bad) {
    uint8_t c;
    if (r->pos >= r->len || shift > 63) {
      r->bad = 1;
      break;
    }
    c = r->p[r->pos++];
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80))
      return v;
    shift += 7;
  }
  return 0;
}

int64_t storage__get_sv(struct storage__rd *r)
{
  uint64_t u = storage__get_uv(r);
  return (int64_t)((u >> 1) ^ (u & 1 ? UINT64_MAX : 0));
}

struct spaa_num storage__get_num(struct storage__rd *r)
{
  uint8_t tag;
  if (r->bad || r->pos >= r->len) {
    r->bad = 1;
    return spaa_int(0);
  }
  tag = r->p[r->pos++];
  if (tag == 0)
    return spaa_int(storage__get_sv(r));
  if (tag == 1 && r->len - r->pos >= 8) {
    uint64_t bits = 0;
    double d;
    int i;
    for (i = 0; i < 8; i++)
      bits |= (uint64_t)r->p[r->pos + i] << (8 * i);
    r->pos += 8;
    memcpy(&d, &bits, 8);
    return spaa_float(d);
  }
  r->bad = 1;
  return spaa_int(0);
}

/* The bytes of a string field: 1 with (*s, *len) set, 0 for NULL or on error. */
static int get_bytes(struct storage__rd *r, const char **s, size_t *len)
{
  uint64_t n = storage__get_uv(r);
  if (r->bad || n == 0)
    return 0;
  n--;
  if (n > r->len - r->pos) {
    r->bad = 1;
    return 0;
  }
  *s = (const char *)r->p + r->pos;
  *len = (size_t)n;
  r->pos += (size_t)n;
  return 1;
}

const char *storage__get_str(struct storage__rd *r, struct spaa_profile *p)
{
  const char *s, *out;
  size_t len;
  if (!get_bytes(r, &s, &len))
    return NULL;
  if (memchr(s, 0, len) || !(out = spaa_strndup(p, s, len))) {
    r->bad = 1;
    return NULL;
  }
  return out;
}

json_t *storage__json_parse(const char *s, size_t len)
{
  json_error_t je;
  return json_loadb(s, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
}

json_t *storage__get_json(struct storage__rd *r)
{
  const char *s;
  size_t len;
  json_t *v;
  if (!get_bytes(r, &s, &len))
    return NULL;
  if (!(v = storage__json_parse(s, len)))
    r->bad = 1;
  return v;
}

char *storage__json_text(const json_t *v, size_t *len)
{
  struct spaa_buf b;
  char *out;
  spaa_buf_init(&b, 0);
  if (spaa_canon_json(&b, v) || spaa_buf_add(&b, "", 1)) {
    spaa_buf_free(&b);
    return NULL;
  }
  out = spaa_buf_steal(&b, len);
  if (len)
    (*len)--; /* the NUL added above */
  return out;
}
