/* A strict multipart/form-data parser (RFC 7578 over RFC 2046) for whole request bodies in
 * memory: the boundary from the Content-Type, then every part's name, filename, content type
 * and bytes, as slices of the body. Pure: no HTTP, no allocation. */
#ifndef SPAA_SERVER_MULTIPART_H
#define SPAA_SERVER_MULTIPART_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/limits.h"

/* One part. Strings are NUL-terminated copies (fixed size); data points into the body. */
struct spaa_multipart_part {
  char name[SPAA_MULTIPART_MAX_NAME];     /* Content-Disposition name (never empty) */
  char filename[SPAA_MULTIPART_MAX_NAME]; /* its filename parameter, or "" */
  char content_type[SPAA_MULTIPART_MAX_NAME]; /* the part's Content-Type, or "" */
  const uint8_t *data;                    /* the part's bytes (borrowed from the body) */
  size_t len;                             /* bytes in data */
};

/* The parts of one body. */
struct spaa_multipart {
  struct spaa_multipart_part parts[SPAA_MULTIPART_MAX_PARTS]; /* n in use, in body order */
  size_t n;
};

/* 1 when a Content-Type value (NULL allowed) names multipart/form-data, else 0. */
int spaa_multipart_is_form(const char *content_type);

/* Take the boundary parameter of a multipart/form-data Content-Type (quoted or not) into
 * out (size n, at least SPAA_MULTIPART_MAX_BOUNDARY + 1). 0, or SPAA_E_BAD_REQUEST with err
 * saying what is wrong: not multipart/form-data, no boundary, one that is empty, longer than
 * 70 characters, or holds characters RFC 2046 does not allow. */
int spaa_multipart_boundary(const char *content_type, char *out, size_t n,
                            struct spaa_err *err);

/* Split `len` bytes of `body` on `boundary` into out (fully overwritten). Lines end in CRLF;
 * a preamble before the first delimiter and an epilogue after the closing one are ignored.
 * Every part needs a `Content-Disposition: form-data; name="..."` header; a name given twice
 * is refused. Returns 0, or SPAA_E_BAD_REQUEST (err names the part index and the fault:
 * no opening delimiter, no closing delimiter (truncated), a header line without ':' or over
 * the cap, too many headers or parts, a missing or malformed Content-Disposition, a
 * duplicate name). out->parts[].data stay valid as long as `body` does. */
int spaa_multipart_parse(const uint8_t *body, size_t len, const char *boundary,
                         struct spaa_multipart *out, struct spaa_err *err);

/* The part named `name`, or NULL. */
const struct spaa_multipart_part *spaa_multipart_get(const struct spaa_multipart *m,
                                                     const char *name);

#endif
