/* Hexadecimal text: byte strings and 64-bit integers to lowercase hex digits, and hex digits
 * (either case, or lowercase only where a format asks for it) back to bytes or integers. */
#ifndef SPAA_BASE_HEX_H
#define SPAA_BASE_HEX_H

#include <stddef.h>
#include <stdint.h>

#define SPAA_HEX_U64_SIZE 17  /* bytes spaa_hex_u64 may write: 16 digits and a NUL */
#define SPAA_HEX_ADDR_SIZE 19 /* bytes spaa_hex_addr may write: "0x", 16 digits and a NUL */

/* "0123456789abcdef": the digit of a nibble, for callers that escape one byte at a time. */
extern const char spaa_hex_digits[17];

/* Digit values by byte: -1 for a byte that is not a hex digit. Read through the inlines. */
extern const int8_t spaa_hex__any[256];
extern const int8_t spaa_hex__lower[256];

/* The value (0-15) of the hex digit `c` ('0'-'9', 'a'-'f', 'A'-'F'), or -1. */
static inline int spaa_hex_val(unsigned char c) { return spaa_hex__any[c]; }
/* The same, accepting only lowercase letters: 'A'-'F' give -1. */
static inline int spaa_hex_lower_val(unsigned char c) { return spaa_hex__lower[c]; }

/* Write `n` bytes of `src` as 2n lowercase hex digits at `out`, followed by a NUL (so `out`
 * has room for 2n + 1 bytes). Never fails. */
void spaa_hex_encode(char *out, const void *src, size_t n);

/* Decode `len` hex digits of `s` into len / 2 bytes at `out`. `lower_only` refuses 'A'-'F'.
 * Returns 0, or -1 when `len` is odd or a character is not an accepted digit (out may then
 * hold part of the bytes). */
int spaa_hex_decode(void *out, const char *s, size_t len, int lower_only);

/* Parse exactly `len` hex digits (either case, 1 to 16 of them, no prefix) into *out.
 * Returns 0, or -1 (empty, too long, or not a digit) leaving *out unchanged. */
int spaa_hex_parse_u64(const char *s, size_t len, uint64_t *out);

/* Write `v` as lowercase hex without leading zeros ("0" for zero), NUL-terminated, into `out`
 * (SPAA_HEX_U64_SIZE bytes of room). Returns the number of digits (1 to 16). */
size_t spaa_hex_u64(char *out, uint64_t v);

/* The same with a "0x" prefix ("0x7f3a", as printf's "0x%" PRIx64 writes it), into `out`
 * (SPAA_HEX_ADDR_SIZE bytes of room). Returns the length (3 to 18). */
size_t spaa_hex_addr(char *out, uint64_t v);

/* The other ways of writing a profile id that is 32 hex digits or a dashed UUID (8-4-4-4-12,
 * as SDKs log ids and push clients send them), in the order a lookup tries them: 32
 * lowercase hex digits (the stores' own ids, the Sentry event ids), the dashed UUID in
 * lowercase, the dashed UUID in capitals, 32 capitals. Each form that differs from `id`
 * itself goes into out[0..n) (SPAA_HEX_ID_FORMS of 37 bytes); returns n (0 to 4; 0 also when
 * `id` is no id of this kind, NULL included). */
#define SPAA_HEX_ID_FORMS 4
int spaa_hex_id_forms(const char *id, char out[SPAA_HEX_ID_FORMS][37]);

#endif
