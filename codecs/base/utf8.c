/* Strict UTF-8 validation and cleaning (see utf8.h). */
#include "base/utf8.h"

#include <stdint.h>
#include <string.h>

size_t spaa_utf8_check(const void *str, size_t n)
{
  const unsigned char *s = str;
  size_t i = 0;
  while (i < n) {
    size_t l;
    if (s[i] < 0x80) {
      /* ASCII runs eight bytes at a time */
      while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull)
          break;
        i += 8;
      }
      if (i < n && s[i] < 0x80)
        i++;
      continue;
    }
    if (!(l = spaa_utf8_seq(s + i, n - i)))
      return i;
    i += l;
  }
  return SIZE_MAX;
}

size_t spaa_utf8_clean(char *out, size_t cap, const char *s, size_t len)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t o = 0, i = 0;
  while (i < len && o + 1 < cap) {
    size_t l = spaa_utf8_seq(p + i, len - i);
    if (!l) {
      out[o++] = '?';
      i++;
      continue;
    }
    if (o + l >= cap)
      break;
    memcpy(out + o, p + i, l);
    o += l;
    i += l;
  }
  out[o] = 0;
  return o;
}
