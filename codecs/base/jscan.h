/* A strict, zero-copy JSON pull scanner over one buffer (one NDJSON line): the caller walks
 * objects and arrays key by key and takes the values it knows; strings are decoded into a
 * caller-given scratch area, everything else is read in place. RFC 8259 syntax, UTF-8 checked. */
#ifndef SPAA_JSCAN_H
#define SPAA_JSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "base/limits.h"
#include "base/num.h"

/* The kind of the next value, from its first byte. */
enum spaa_jtype {
  SPAA_J_BAD = 0, /* not the start of a value (end of input, stray byte) */
  SPAA_J_OBJ,
  SPAA_J_ARR,
  SPAA_J_STR,
  SPAA_J_NUM,
  SPAA_J_TRUE,
  SPAA_J_FALSE,
  SPAA_J_NULL
};

struct spaa_jscan {
  const char *p;          /* cursor */
  const char *end;        /* one past the last input byte */
  const char *base;       /* first input byte, for offsets */
  char *out;              /* scratch: decoded strings, each NUL-terminated (borrowed) */
  size_t out_len;         /* scratch bytes used */
  size_t out_cap;         /* scratch bytes available; must be >= input length + 1 */
  int depth;              /* containers open through obj_begin/arr_begin */
  unsigned char first[SPAA_JSCAN_MAXDEPTH + 1]; /* 1 until a container's first member */
  const char *err;        /* NULL, or a static message saying what was wrong */
  size_t err_off;         /* byte offset of the fault in the input */
};

/* Start scanning `len` bytes of `buf`. `scratch` (at least len + 1 bytes, borrowed) receives
 * the decoded strings: since a decoded string is never longer than its quoted form, every
 * string of the buffer fits. */
void spaa_jscan_init(struct spaa_jscan *s, const char *buf, size_t len, char *scratch,
                     size_t scratch_cap);

/* Skip whitespace and tell the kind of the next value without consuming it. */
enum spaa_jtype spaa_jscan_peek(struct spaa_jscan *s);

/* Containers. obj_begin/arr_begin consume the opening bracket (0, or -1 with s->err).
 * obj_key reads the next member's key and its colon: 1 with *key (NUL-terminated, in the
 * scratch) and *klen set, 0 when the object closed, -1 on a syntax error.
 * arr_next: 1 when another element follows, 0 when the array closed, -1 on error. */
int spaa_jscan_obj_begin(struct spaa_jscan *s);
int spaa_jscan_obj_key(struct spaa_jscan *s, const char **key, size_t *klen);
int spaa_jscan_arr_begin(struct spaa_jscan *s);
int spaa_jscan_arr_next(struct spaa_jscan *s);

/* Scalars; each returns 0, or -1 with s->err set (a type mismatch included).
 * str: decoded, NUL-terminated, in the scratch ("\u0000" is refused, as jansson does).
 * num: integers that fit in int64 exactly, anything else as a double.
 * u64: a non-negative integer without fraction or exponent that fits in 64 bits. */
int spaa_jscan_str(struct spaa_jscan *s, const char **v, size_t *len);
int spaa_jscan_num(struct spaa_jscan *s, struct spaa_num *v);
int spaa_jscan_u64(struct spaa_jscan *s, uint64_t *v);
int spaa_jscan_bool(struct spaa_jscan *s, int *v);

/* Skip one whole value, checking its syntax; vstart, vend (may be NULL) get its bytes. */
int spaa_jscan_skip(struct spaa_jscan *s, const char **vstart, const char **vend);

/* After the top-level value: 0 when only whitespace is left, else -1. */
int spaa_jscan_finish(struct spaa_jscan *s);

#endif
