/* A dictionary's location and stack tables in compact form (see otlp_int.h): read off the
 * wire for a v1development protobuf request, whose unpacked copy never holds them, or copied
 * from unpacked tables. The wire is read as protoc-c unpacks it: repeated int32 packed or
 * not, repeated fields appending, a repeated scalar's last value winning, int32 the low 32
 * bits of a varint, unknown fields skipped, a known field of another wire type refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/pbwire.h"
#include "otlp/otlp_int.h"

/* ProfilesDictionary, Location, Line and Stack field numbers */
#define D_LOCATIONS 2u
#define D_STACKS 7u
#define L_MAPPING 1u
#define L_ADDRESS 2u
#define L_LINES 3u
#define L_ATTRS 4u
#define LN_FUNCTION 1u
#define LN_LINE 2u
#define LN_COLUMN 3u
#define S_LOCATIONS 1u

void otlp__cdict_free(struct otlp_cdict *cd)
{
  if (!cd)
    return;
  free(cd->locs);
  free(cd->lines);
  free(cd->loc_attrs);
  free(cd->stacks);
  free(cd->stack_locs);
  memset(cd, 0, sizeof(*cd));
}

/* *p = room for n elements of `size` bytes (NULL for none). 0, SPAA_E_TOO_LARGE (n past what
 * a uint32 offset reaches) or SPAA_E_NOMEM. */
static int alloc_n(void **p, size_t n, size_t size)
{
  *p = NULL;
  if (n > UINT32_MAX || n > SIZE_MAX / size)
    return SPAA_E_TOO_LARGE;
  if (n && !(*p = malloc(n * size)))
    return SPAA_E_NOMEM;
  return 0;
}

/* Room for the counts in cd (each array exactly), the counts set back to 0 for filling. */
static int alloc_all(struct otlp_cdict *cd)
{
  int rc;
  if ((rc = alloc_n((void **)&cd->locs, cd->n_locs, sizeof(*cd->locs))) ||
      (rc = alloc_n((void **)&cd->lines, cd->n_lines, sizeof(*cd->lines))) ||
      (rc = alloc_n((void **)&cd->loc_attrs, cd->n_loc_attrs, sizeof(*cd->loc_attrs))) ||
      (rc = alloc_n((void **)&cd->stacks, cd->n_stacks, sizeof(*cd->stacks))) ||
      (rc = alloc_n((void **)&cd->stack_locs, cd->n_stack_locs, sizeof(*cd->stack_locs))))
    return rc;
  cd->n_locs = cd->n_lines = cd->n_loc_attrs = cd->n_stacks = cd->n_stack_locs = 0;
  return 0;
}

/* ---- off the wire ----------------------------------------------------------------------
 * Two passes over the same bytes with the same code: the first counts (the arrays are NULL),
 * the second fills arrays of exactly those counts. */

/* Repeated int32 field f (one varint, or a packed run of them) appended at arr[*n], or only
 * counted when arr is NULL. 0 or -1 when malformed. */
static int int32s(const struct spaa_pb_field *f, int32_t *arr, size_t *n)
{
  size_t pos = 0;
  uint64_t v;
  if (f->wt == SPAA_PB_VARINT) {
    if (arr)
      arr[*n] = (int32_t)(uint32_t)f->v;
    (*n)++;
    return 0;
  }
  if (f->wt != SPAA_PB_LEN)
    return -1;
  while (pos < f->len) {
    if (spaa_pb_varint(f->data, f->len, &pos, &v))
      return -1;
    if (arr)
      arr[*n] = (int32_t)(uint32_t)v;
    (*n)++;
  }
  return 0;
}

/* The Line message [p, p + n) into *o (read, not kept, when o is NULL). 0 or -1. */
static int read_line(const uint8_t *p, size_t n, struct otlp_cline *o)
{
  struct otlp_cline l = {0, 0, 0};
  struct spaa_pb_field f;
  size_t pos = 0;
  int r;
  while ((r = spaa_pb_next(p, n, &pos, &f)) > 0) {
    if (f.num < LN_FUNCTION || f.num > LN_COLUMN)
      continue;
    if (f.wt != SPAA_PB_VARINT)
      return -1;
    if (f.num == LN_FUNCTION)
      l.function_index = (int32_t)(uint32_t)f.v;
    else if (f.num == LN_LINE)
      l.line = (int64_t)f.v;
    else
      l.column = (int64_t)f.v;
  }
  if (r < 0)
    return -1;
  if (o)
    *o = l;
  return 0;
}

/* The Location message [p, p + n) appended to cd (counted only, without arrays). 0 or -1. */
static int read_location(struct otlp_cdict *cd, const uint8_t *p, size_t n)
{
  struct otlp_cloc l;
  struct spaa_pb_field f;
  size_t pos = 0, line0 = cd->n_lines, attr0 = cd->n_loc_attrs;
  int r;
  memset(&l, 0, sizeof(l));
  while ((r = spaa_pb_next(p, n, &pos, &f)) > 0) {
    switch (f.num) {
    case L_MAPPING:
    case L_ADDRESS:
      if (f.wt != SPAA_PB_VARINT)
        return -1;
      if (f.num == L_MAPPING)
        l.mapping_index = (int32_t)(uint32_t)f.v;
      else
        l.address = f.v;
      break;
    case L_LINES:
      if (f.wt != SPAA_PB_LEN ||
          read_line(f.data, f.len, cd->lines ? &cd->lines[cd->n_lines] : NULL))
        return -1;
      cd->n_lines++;
      break;
    case L_ATTRS:
      if (int32s(&f, cd->loc_attrs, &cd->n_loc_attrs))
        return -1;
      break;
    default:
      break;
    }
  }
  if (r < 0)
    return -1;
  if (cd->locs) { /* filling: the counts fit in uint32 (alloc_all) */
    l.line_off = (uint32_t)line0;
    l.n_lines = (uint32_t)(cd->n_lines - line0);
    l.attr_off = (uint32_t)attr0;
    l.n_attrs = (uint32_t)(cd->n_loc_attrs - attr0);
    cd->locs[cd->n_locs] = l;
  }
  cd->n_locs++;
  return 0;
}

/* The Stack message [p, p + n) appended to cd (counted only, without arrays). 0 or -1. */
static int read_stack(struct otlp_cdict *cd, const uint8_t *p, size_t n)
{
  struct spaa_pb_field f;
  size_t pos = 0, first = cd->n_stack_locs;
  int r;
  while ((r = spaa_pb_next(p, n, &pos, &f)) > 0)
    if (f.num == S_LOCATIONS && int32s(&f, cd->stack_locs, &cd->n_stack_locs))
      return -1;
  if (r < 0)
    return -1;
  if (cd->stacks) {
    cd->stacks[cd->n_stacks].off = (uint32_t)first;
    cd->stacks[cd->n_stacks].n = (uint32_t)(cd->n_stack_locs - first);
  }
  cd->n_stacks++;
  return 0;
}

/* One pass over the dictionaries' two tables. 0 or -1. */
static int read_dicts(struct otlp_cdict *cd, const struct otlp_wire_profile *dicts, size_t n)
{
  struct spaa_pb_field f;
  size_t k, pos;
  int r;
  for (k = 0; k < n; k++) {
    pos = 0;
    while ((r = spaa_pb_next(dicts[k].wire, dicts[k].len, &pos, &f)) > 0) {
      if (f.num != D_LOCATIONS && f.num != D_STACKS)
        continue; /* left in the copy protoc-c unpacks */
      if (f.wt != SPAA_PB_LEN)
        return -1;
      if ((f.num == D_LOCATIONS ? read_location : read_stack)(cd, f.data, f.len))
        return -1;
    }
    if (r < 0)
      return -1;
  }
  return 0;
}

int otlp__cdict_wire(struct otlp_cdict *cd, const struct otlp_wire_profile *dicts, size_t n)
{
  int rc;
  memset(cd, 0, sizeof(*cd));
  if (read_dicts(cd, dicts, n))
    return -1;
  if ((rc = alloc_all(cd)))
    return rc;
  return read_dicts(cd, dicts, n); /* the same bytes: the same counts */
}

/* ---- from unpacked tables ------------------------------------------------------------- */

int otlp__cdict_msgs(struct otlp_cdict *cd, const OT_Dict *d)
{
  size_t i, j;
  int rc;
  memset(cd, 0, sizeof(*cd));
  cd->n_locs = d->n_location_table;
  for (i = 0; i < d->n_location_table; i++) {
    cd->n_lines += d->location_table[i]->n_lines;
    cd->n_loc_attrs += d->location_table[i]->n_attribute_indices;
  }
  cd->n_stacks = d->n_stack_table;
  for (i = 0; i < d->n_stack_table; i++)
    cd->n_stack_locs += d->stack_table[i]->n_location_indices;
  if ((rc = alloc_all(cd)))
    return rc;
  for (i = 0; i < d->n_location_table; i++) {
    const OT_Location *l = d->location_table[i];
    struct otlp_cloc *o = &cd->locs[cd->n_locs++];
    o->address = l->address;
    o->mapping_index = l->mapping_index;
    o->line_off = (uint32_t)cd->n_lines;
    o->n_lines = (uint32_t)l->n_lines;
    o->attr_off = (uint32_t)cd->n_loc_attrs;
    o->n_attrs = (uint32_t)l->n_attribute_indices;
    for (j = 0; j < l->n_lines; j++) {
      struct otlp_cline *ln = &cd->lines[cd->n_lines++];
      ln->function_index = l->lines[j]->function_index;
      ln->line = l->lines[j]->line;
      ln->column = l->lines[j]->column;
    }
    if (l->n_attribute_indices)
      memcpy(&cd->loc_attrs[cd->n_loc_attrs], l->attribute_indices,
             l->n_attribute_indices * sizeof(int32_t));
    cd->n_loc_attrs += l->n_attribute_indices;
  }
  for (i = 0; i < d->n_stack_table; i++) {
    const OT_Stack *s = d->stack_table[i];
    struct otlp_cstack *o = &cd->stacks[cd->n_stacks++];
    o->off = (uint32_t)cd->n_stack_locs;
    o->n = (uint32_t)s->n_location_indices;
    if (s->n_location_indices)
      memcpy(&cd->stack_locs[cd->n_stack_locs], s->location_indices,
             s->n_location_indices * sizeof(int32_t));
    cd->n_stack_locs += s->n_location_indices;
  }
  return 0;
}
