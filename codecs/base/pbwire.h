/* Protocol buffers read in place: a varint and one field at a time, every length checked
 * against the bytes left. For the codecs that walk a message without unpacking it whole
 * (a pprof's samples, a Pyroscope push's raw profiles). */
#ifndef SPAA_BASE_PBWIRE_H
#define SPAA_BASE_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

/* Wire types. */
enum { SPAA_PB_VARINT = 0, SPAA_PB_I64 = 1, SPAA_PB_LEN = 2, SPAA_PB_I32 = 5 };

/* One field: its number and wire type, the value of a varint or the length of a LEN field,
 * and a LEN field's bytes (in the buffer read). */
struct spaa_pb_field {
  uint32_t num;
  int wt;
  uint64_t v;
  const uint8_t *data;
  size_t len;
};

/* The varint at p[*pos] (n bytes in p): 0 with *v set and *pos past it, or -1 when it is
 * truncated or longer than 10 bytes. */
static inline int spaa_pb_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *v)
{
  unsigned shift;
  uint64_t r = 0;
  for (shift = 0; shift < 64 && *pos < n; shift += 7) {
    uint8_t b = p[(*pos)++];
    r |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = r;
      return 0;
    }
  }
  return -1;
}

/* The head of the field at p[*pos]: 1 with f set and *pos past the head (for a LEN field,
 * past its length: f->len bytes follow, not checked against n, f->data NULL; for the others,
 * past the whole field), 0 at the end of the bytes, -1 when malformed (a field number 0 or
 * past 2^29-1, a group, a truncated varint or fixed value). For a reader that gets a
 * message's bytes a window at a time. */
int spaa_pb_head(const uint8_t *p, size_t n, size_t *pos, struct spaa_pb_field *f);

/* The field at p[*pos]: 1 with f set and *pos past it, 0 at the end of the bytes, -1 when
 * malformed (a field number 0 or past 2^29-1, a group, a length past the end). */
int spaa_pb_next(const uint8_t *p, size_t n, size_t *pos, struct spaa_pb_field *f);

#endif
