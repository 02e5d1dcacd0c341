/* RFC 3339 date-times to unix nanoseconds and back: one strict parser for every input that
 * carries them (Sentry timestamps, query parameters), one formatter for every output. */
#ifndef SPAA_RFC3339_H
#define SPAA_RFC3339_H

#include <stddef.h>
#include <stdint.h>

/* Parse exactly `len` bytes of `s` ("YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM"; 't' or ' '
 * for 'T' and 'z' for 'Z' accepted; fractions past nanoseconds truncated) into *out, unix
 * ns. 0, or -1 when the text is not such a date-time or is out of the int64 ns range. */
int spaa_rfc3339_parse(const char *s, size_t len, int64_t *out);

#define SPAA_RFC3339_SIZE 32 /* room for "YYYY-MM-DDTHH:MM:SS.fffffffffZ" and a NUL */

/* Format unix nanoseconds `ns` as UTC "YYYY-MM-DDTHH:MM:SS[.fff]Z" into `out`
 * (SPAA_RFC3339_SIZE bytes of room) with `frac_digits` (0 to 9) digits of fraction,
 * truncated, not rounded ("2024-05-01T12:00:00.123456789Z" with 9, no '.' with 0). Times
 * before 1970 count down to the second below: -1 ns is "1969-12-31T23:59:59.999999999Z".
 * Returns the length written, NUL excluded. Never fails. */
size_t spaa_rfc3339_format_ns(char *out, int64_t ns, unsigned frac_digits);
/* The same for unix seconds, without a fraction ("2025-01-02T03:04:05Z"). Seconds outside
 * years 0000-9999 are clamped to the first or last second of that range. */
size_t spaa_rfc3339_format_s(char *out, int64_t sec);

#endif
