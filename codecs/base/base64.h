/* RFC 4648 base64 decoding, either alphabet (standard "+/" or URL-safe "-_"), padding
 * optional but only at the end. */
#ifndef SPAA_BASE_BASE64_H
#define SPAA_BASE_BASE64_H

#include <stddef.h>

/* The most bytes `len` characters of base64 decode to. */
static inline size_t spaa_base64_max(size_t len) { return len / 4 * 3 + 3; }

/* Decode `len` characters of `s` into `out` (room for `cap` bytes; spaa_base64_max(len) is
 * always enough) and set *out_len. Returns 0; or -1 when a character is not a base64 digit,
 * '=' appears other than as the last one or two characters, the digits leave a lone 6-bit
 * group, or the bytes do not fit in cap (out may then hold part of them). */
int spaa_base64_decode(void *out, size_t cap, const char *s, size_t len, size_t *out_len);

#endif
