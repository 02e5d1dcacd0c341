/* Strict UTF-8 (RFC 3629): no overlong forms, no UTF-16 surrogates, nothing past U+10FFFF.
 * One validator for every decoder that must refuse bad text, and a cleaner for messages
 * that must not carry it. */
#ifndef SPAA_BASE_UTF8_H
#define SPAA_BASE_UTF8_H

#include <stddef.h>

/* SIZE_MAX when the `n` bytes at `s` are valid UTF-8, else the offset of the first byte of
 * the first bad (or truncated) sequence. NUL bytes are valid (U+0000). */
size_t spaa_utf8_check(const void *s, size_t n);

/* The length (1 to 4) of the valid sequence that starts at `s`, reading at most `n` bytes
 * (n >= 1); 0 when the bytes there are not one (bad lead byte, bad or missing continuation,
 * overlong, surrogate, past U+10FFFF). Inline: the JSON scanner calls it for every non-ASCII
 * character. The rules are RFC 3629's table: the lead byte gives the length and the range
 * of the second byte, narrower than 80..BF where it rules out overlongs, surrogates or code
 * points past U+10FFFF. */
static inline size_t spaa_utf8_seq(const unsigned char *s, size_t n)
{
  unsigned c = s[0], lo = 0x80, hi = 0xbf;
  size_t len, i;
  if (c < 0x80)
    return 1;
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
  if (n < len || s[1] < lo || s[1] > hi)
    return 0;
  for (i = 2; i < len; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  return len;
}

/* Copy `len` bytes of `s` into `out` (`cap` >= 1 bytes of room) as valid UTF-8: each byte
 * that does not start a valid sequence becomes '?', and when `out` is full the text is cut
 * on a character boundary. Always NUL-terminates; returns the bytes written before the NUL. */
size_t spaa_utf8_clean(char *out, size_t cap, const char *s, size_t len);

#endif
