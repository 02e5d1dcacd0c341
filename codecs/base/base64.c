/* Base64 decoding (see base64.h). */
#include "base/base64.h"

#include <stdint.h>

static int digit(unsigned char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+' || c == '-')
    return 62;
  if (c == '/' || c == '_')
    return 63;
  return -1;
}

int spaa_base64_decode(void *out, size_t cap, const char *s, size_t len, size_t *out_len)
{
  uint8_t *o = out;
  uint32_t acc = 0;
  size_t i, n = 0, pad = 0;
  int bits = 0;
  *out_len = 0;
  while (len && s[len - 1] == '=' && pad < 2) {
    len--;
    pad++;
  }
  for (i = 0; i < len; i++) {
    int v = digit((unsigned char)s[i]);
    if (v < 0)
      return -1;
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n >= cap)
        return -1;
      o[n++] = (uint8_t)(acc >> bits);
    }
  }
  if (bits >= 6)
    return -1;
  *out_len = n;
  return 0;
}
