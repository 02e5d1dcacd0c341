/* gRPC's wire rules without sockets (see grpc_wire.h): message prefixes, timeouts,
 * encodings, percent-encoding and the google.rpc.Status fields. */
#include "server/grpc_wire.h"

#include <stdio.h>
#include <string.h>

const char *spaa_grpc_status_name(int code)
{
#define SPAA__GRPC_NAME(name, n) case n: return #name;
  switch (code) { SPAA_GRPC_STATUS_MAP(SPAA__GRPC_NAME) }
#undef SPAA__GRPC_NAME
  return "UNKNOWN";
}

int spaa_grpc_frame(const uint8_t *buf, size_t len, size_t max_msg, struct spaa_grpc_msg *m,
                    struct spaa_err *err)
{
  memset(m, 0, sizeof(*m));
  if (len >= SPAA_GRPC_PREFIX) { /* the declared length first: grpc-go's order */
    m->len = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
    if (m->len > max_msg)
      return spaa_err_set(err, SPAA_E_TOO_LARGE, 1, 0, "the gRPC message is %u bytes, over "
                          "the %zu-byte cap", m->len, max_msg);
  }
  if (len >= 1 && buf[0] > 1)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "the gRPC message starts with flag "
                        "byte %u: only 0 (plain) and 1 (compressed) exist", buf[0]);
  if (len < SPAA_GRPC_PREFIX)
    return SPAA_GRPC_MORE;
  m->compressed = buf[0];
  if (len - SPAA_GRPC_PREFIX < m->len)
    return SPAA_GRPC_MORE;
  if (len - SPAA_GRPC_PREFIX > m->len)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, SPAA_GRPC_PREFIX + m->len, 0,
                        "%zu bytes follow the %u-byte gRPC message: a unary call carries one "
                        "request message, not more than one", len - SPAA_GRPC_PREFIX - m->len,
                        m->len);
  m->data = buf + SPAA_GRPC_PREFIX;
  return 0;
}

int spaa_grpc_content_subtype(const char *ct, const char **sub)
{
  static const char base[] = "application/grpc";
  const size_t n = sizeof(base) - 1;
  if (!ct || strncmp(ct, base, n) != 0 || (ct[n] && ct[n] != '+' && ct[n] != ';'))
    return 0;
  *sub = ct[n] ? ct + n + 1 : ct + n;
  return 1;
}

void spaa_grpc_prefix(uint8_t out[SPAA_GRPC_PREFIX], uint32_t len)
{
  out[0] = 0;
  out[1] = (uint8_t)(len >> 24);
  out[2] = (uint8_t)(len >> 16);
  out[3] = (uint8_t)(len >> 8);
  out[4] = (uint8_t)len;
}

int spaa_grpc_timeout(const char *v, int64_t *ns)
{
  static const struct {
    char unit;
    int64_t ns;
  } units[] = {{'H', 3600000000000LL}, {'M', 60000000000LL}, {'S', 1000000000LL},
               {'m', 1000000LL},       {'u', 1000LL},        {'n', 1LL}};
  int64_t n = 0;
  size_t i, digits = 0;
  if (!v)
    return -1;
  for (; *v >= '0' && *v <= '9'; v++, digits++)
    if (digits < 8)
      n = n * 10 + (*v - '0');
  if (digits < 1 || digits > 8 || !v[0] || v[1])
    return -1;
  for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
    if (units[i].unit == *v) {
      *ns = n > INT64_MAX / units[i].ns ? INT64_MAX : n * units[i].ns;
      return 0;
    }
  return -1;
}

int spaa_grpc_coding(const char *v)
{
  if (!v || !v[0] || strcmp(v, "identity") == 0)
    return SPAA_GRPC_IDENTITY;
  if (strcmp(v, "gzip") == 0)
    return SPAA_GRPC_GZIP;
  if (strcmp(v, "deflate") == 0)
    return SPAA_GRPC_DEFLATE;
  if (strcmp(v, "zstd") == 0)
    return SPAA_GRPC_ZSTD;
  if (strcmp(v, "snappy") == 0)
    return SPAA_GRPC_SNAPPY;
  return -1;
}

size_t spaa_grpc_pct_encode(char *out, size_t n, const char *msg)
{
  static const char hex[] = "0123456789ABCDEF";
  size_t o = 0;
  if (!n)
    return 0;
  for (; msg && *msg; msg++) {
    unsigned char c = (unsigned char)*msg;
    if (c >= 0x20 && c <= 0x7e && c != '%') {
      if (o + 1 >= n)
        break;
      out[o++] = (char)c;
    } else {
      if (o + 3 >= n)
        break;
      out[o++] = '%';
      out[o++] = hex[c >> 4];
      out[o++] = hex[c & 15];
    }
  }
  out[o] = 0;
  return o;
}

/* A varint at buf[*pos]; 0, or -1 when truncated or longer than 10 bytes. */
static int varint(const uint8_t *buf, size_t len, size_t *pos, uint64_t *v)
{
  unsigned shift;
  *v = 0;
  for (shift = 0; shift < 70 && *pos < len; shift += 7) {
    uint8_t b = buf[(*pos)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return 0;
  }
  return -1;
}

int spaa_grpc_status_read(const uint8_t *buf, size_t len, int32_t *code, char *msg, size_t n)
{
  size_t pos = 0;
  *code = 0;
  if (n)
    msg[0] = 0;
  while (pos < len) {
    uint64_t key, v;
    if (varint(buf, len, &pos, &key) || key >> 3 == 0)
      return -1;
    switch (key & 7) {
    case 0:
      if (varint(buf, len, &pos, &v))
        return -1;
      if (key >> 3 == 1)
        *code = (int32_t)v;
      break;
    case 1:
    case 5:
      if (len - pos < ((key & 7) == 1 ? 8u : 4u))
        return -1;
      pos += (key & 7) == 1 ? 8 : 4;
      break;
    case 2:
      if (varint(buf, len, &pos, &v) || v > len - pos)
        return -1;
      if (key >> 3 == 2 && n)
        snprintf(msg, n, "%.*s", (int)(v < n ? v : n - 1), (const char *)buf + pos);
      pos += (size_t)v;
      break;
    default:
      return -1;
    }
  }
  return 0;
}
