/* RFC 3339 date-times to unix nanoseconds: one strict parser for every input that carries
 * them (Sentry timestamps, query parameters). */
#ifndef SPAA_RFC3339_H
#define SPAA_RFC3339_H

#include <stddef.h>
#include <stdint.h>

/* Parse exactly `len` bytes of `s` ("YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM"; 't' or ' '
 * for 'T' and 'z' for 'Z' accepted; fractions past nanoseconds truncated) into *out, unix
 * ns. 0, or -1 when the text is not such a date-time or is out of the int64 ns range. */
int spaa_rfc3339_parse(const char *s, size_t len, int64_t *out);

#endif
