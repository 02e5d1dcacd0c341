/* Hex digits in and out (see hex.h): two 256-entry tables so that a digit costs one load. */
#include "base/hex.h"

#include <string.h>

const char spaa_hex_digits[17] = "0123456789abcdef";

#define NO16 -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1
#define DIGITS 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1 /* 0x30: '0'-'9' */
#define LETTERS -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1 /* 'a'-'f' */

const int8_t spaa_hex__any[256] = {
    NO16, NO16, NO16, DIGITS, LETTERS, NO16, LETTERS, NO16, /* 0x00-0x7f */
    NO16, NO16, NO16, NO16,   NO16,    NO16, NO16,    NO16, /* 0x80-0xff */
};

const int8_t spaa_hex__lower[256] = {
    NO16, NO16, NO16, DIGITS, NO16, NO16, LETTERS, NO16, /* 0x00-0x7f */
    NO16, NO16, NO16, NO16,   NO16, NO16, NO16,    NO16, /* 0x80-0xff */
};

void spaa_hex_encode(char *out, const void *src, size_t n)
{
  const unsigned char *b = src;
  size_t i;
  for (i = 0; i < n; i++) {
    out[2 * i] = spaa_hex_digits[b[i] >> 4];
    out[2 * i + 1] = spaa_hex_digits[b[i] & 15];
  }
  out[2 * n] = 0;
}

int spaa_hex_decode(void *out, const char *s, size_t len, int lower_only)
{
  const int8_t *t = lower_only ? spaa_hex__lower : spaa_hex__any;
  const unsigned char *p = (const unsigned char *)s;
  unsigned char *o = out;
  size_t i;
  if (len % 2)
    return -1;
  for (i = 0; i < len; i += 2) {
    int hi = t[p[i]], lo = t[p[i + 1]];
    if ((hi | lo) < 0)
      return -1;
    *o++ = (unsigned char)(hi << 4 | lo);
  }
  return 0;
}

int spaa_hex_parse_u64(const char *s, size_t len, uint64_t *out)
{
  uint64_t v = 0;
  size_t i;
  if (len == 0 || len > 16)
    return -1;
  for (i = 0; i < len; i++) {
    int d = spaa_hex__any[(unsigned char)s[i]];
    if (d < 0)
      return -1;
    v = v << 4 | (uint64_t)d;
  }
  *out = v;
  return 0;
}

size_t spaa_hex_u64(char *out, uint64_t v)
{
  size_t n = (size_t)(64 - __builtin_clzll(v | 1) + 3) / 4, i;
  for (i = n; i > 0; i--, v >>= 4)
    out[i - 1] = spaa_hex_digits[v & 15];
  out[n] = 0;
  return n;
}

size_t spaa_hex_addr(char *out, uint64_t v)
{
  out[0] = '0';
  out[1] = 'x';
  return 2 + spaa_hex_u64(out + 2, v);
}

int spaa_hex_id_forms(const char *id, char out[SPAA_HEX_ID_FORMS][37])
{
  static const size_t dash[] = {8, 13, 18, 23};
  size_t n = id ? strlen(id) : 0, i, o = 0, d = 0, k;
  char digits[33], form[37];
  int count = 0, f;
  if (n != 32 && n != 36)
    return 0;
  for (i = 0; i < n; i++) {
    if (n == 36 && d < 4 && i == dash[d]) {
      if (id[i] != '-')
        return 0;
      d++;
      continue;
    }
    if (spaa_hex_val((unsigned char)id[i]) < 0)
      return 0;
    digits[o++] = spaa_hex_digits[spaa_hex_val((unsigned char)id[i])];
  }
  digits[o] = 0;
  for (f = 0; f < SPAA_HEX_ID_FORMS; f++) {
    int dashed = f == 1 || f == 2, caps = f >= 2;
    for (i = 0, o = 0, d = 0; i < 32; i++) {
      if (dashed && d < 4 && o == dash[d]) {
        form[o++] = '-';
        d++;
      }
      form[o++] = caps && digits[i] >= 'a' ? (char)(digits[i] - 'a' + 'A') : digits[i];
    }
    form[o] = 0;
    if (strcmp(form, id) == 0)
      continue;
    for (k = 0; k < (size_t)count && strcmp(out[k], form) != 0; k++)
      ;
    if (k == (size_t)count)
      memcpy(out[count++], form, o + 1);
  }
  return count;
}
