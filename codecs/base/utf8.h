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
 * overlong, surrogate, past U+10FFFF). */
size_t spaa_utf8_seq(const unsigned char *s, size_t n);

/* Copy `len` bytes of `s` into `out` (`cap` >= 1 bytes of room) as valid UTF-8: each byte
 * that does not start a valid sequence becomes '?', and when `out` is full the text is cut
 * on a character boundary. Always NUL-terminates; returns the bytes written before the NUL. */
size_t spaa_utf8_clean(char *out, size_t cap, const char *s, size_t len);

#endif
