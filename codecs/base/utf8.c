/* Strict UTF-8 validation and cleaning (see utf8.h). */
#include "base/utf8.h"

#include <stdint.h>
#include <string.h>

/* The sequence rules of RFC 3629, section 4, for a lead byte >= 0x80: the length, and the
 * range of the second byte (narrower than 80..BF where it rules out overlongs, surrogates
 * or code points past U+10FFFF). */
static inline size_t seq_len(const unsigned char *p, size_t n)
{
  unsigned c = p[0], lo = 0x80, hi = 0xbf;
  size_t len, i;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0)
      lo = 0xa0; /* overlong below U+0800 */
    else if (c == 0xed)
      hi = 0x9f; /* U+D800..U+DFFF */
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0)
      lo = 0x90; /* overlong below U+10000 */
    else if (c == 0xf4)
      hi = 0x8f; /* past U+10FFFF */
  } else {
    return 0; /* a continuation byte, C0, C1 or F5..FF */
  }
  if (n < len || p[1] < lo || p[1] > hi)
    return 0;
  for (i = 2; i < len; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  return len;
}

size_t spaa_utf8_seq(const unsigned char *s, size_t n)
{
  return s[0] < 0x80 ? 1 : seq_len(s, n);
}

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
    if (!(l = seq_len(s + i, n - i)))
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
