/* Protocol buffers read in place (see pbwire.h). */
#include "base/pbwire.h"

int spaa_pb_head(const uint8_t *p, size_t n, size_t *pos, struct spaa_pb_field *f)
{
  uint64_t key;
  if (*pos >= n)
    return 0;
  if (spaa_pb_varint(p, n, pos, &key) || key >> 3 == 0 || key >> 3 > 0x1fffffff)
    return -1;
  f->num = (uint32_t)(key >> 3);
  f->wt = (int)(key & 7);
  f->data = NULL;
  f->len = 0;
  switch (f->wt) {
  case SPAA_PB_VARINT:
    return spaa_pb_varint(p, n, pos, &f->v) ? -1 : 1;
  case SPAA_PB_I64:
  case SPAA_PB_I32:
    if (n - *pos < (f->wt == SPAA_PB_I64 ? 8u : 4u))
      return -1;
    *pos += f->wt == SPAA_PB_I64 ? 8 : 4;
    return 1;
  case SPAA_PB_LEN:
    if (spaa_pb_varint(p, n, pos, &f->v) || f->v > SIZE_MAX)
      return -1;
    f->len = (size_t)f->v;
    return 1;
  default:
    return -1;
  }
}

int spaa_pb_next(const uint8_t *p, size_t n, size_t *pos, struct spaa_pb_field *f)
{
  int r = spaa_pb_head(p, n, pos, f);
  if (r != 1 || f->wt != SPAA_PB_LEN)
    return r;
  if (f->len > n - *pos)
    return -1;
  f->data = p + *pos;
  *pos += f->len;
  return 1;
}
