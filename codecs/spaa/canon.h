/* Canonical JSON text: the one way spaa-relay prints numbers, strings and JSON values, used
 * by the SPAA writer and by content ids so that both agree byte for byte. */
#ifndef SPAA_CANON_H
#define SPAA_CANON_H

#include <jansson.h>

#include "base/buf.h"
#include "spaa/spaa.h"

/* Append a JSON string literal (with quotes): '"' and '\\' escaped, control characters as
 * \b \f \n \r \t or \u00XX, everything else (UTF-8 included) as is. */
int spaa_canon_str(struct spaa_buf *b, const char *s, size_t len);
/* Append a number: integers in decimal; doubles in the shortest of %.15g/%.16g/%.17g that
 * reads back to the same double, with ".0" added when that text would read as an integer;
 * non-finite doubles are written as null. */
int spaa_canon_num(struct spaa_buf *b, struct spaa_num n);
int spaa_canon_double(struct spaa_buf *b, double d);
/* Append an unsigned / signed 64-bit integer in decimal (what %PRIu64 / %PRId64 print). */
int spaa_canon_u64(struct spaa_buf *b, uint64_t v);
int spaa_canon_i64(struct spaa_buf *b, int64_t v);
/* Append a JSON value: objects with keys in bytewise order, no spaces. */
int spaa_canon_json(struct spaa_buf *b, const json_t *v);
/* Append the members of object `o` (sorted, canonical) as `,"k":v` pairs, skipping the keys
 * for which skip(key) returns nonzero (skip may be NULL). For extending a record. */
int spaa_canon_members(struct spaa_buf *b, const json_t *o, int (*skip)(const char *key));

#endif
