/* A v1development protobuf request's samples left on the wire (see otlp_int.h): the request
 * is unpacked without them, and each profile's samples are read from its bytes one at a
 * time into a reused scratch Sample. Samples are most of a large request's bytes, and
 * protoc-c's unpacked form of one takes several times its wire size. The dictionary's
 * location and stack tables are left out of the unpacked copy too, and read into their
 * compact form (otlp_cdict.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/pbwire.h"
#include "otlp/otlp_int.h"

/* Nesting of the messages on the way to a sample: the field that leads one level down. */
enum { LV_REQUEST, LV_RESOURCE, LV_SCOPE, LV_PROFILE };
#define F_DOWN 2u        /* ResourceProfiles.scope_profiles, ScopeProfiles.profiles */
#define F_RESOURCES 1u   /* ExportProfilesServiceRequest.resource_profiles */
#define F_DICT 2u        /* ExportProfilesServiceRequest.dictionary */
#define F_LOCATIONS 2u   /* ProfilesDictionary.location_table */
#define F_STACKS 7u      /* ProfilesDictionary.stack_table */
#define F_SAMPLES 2u     /* Profile.samples */
#define SAMPLES_GIVE_BACK ((size_t)1 << 20) /* refetch: read bytes go back in runs this long */

struct strip {
  struct otlp_wire_profile *v; /* the profiles in wire order */
  size_t n, cap;
  struct otlp_wire_profile *d; /* the dictionaries in wire order */
  size_t n_d, cap_d;
};

static int put_varint(struct spaa_buf *b, uint64_t v)
{
  uint8_t t[10];
  size_t n = 0;
  do {
    t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return spaa_buf_add(b, t, n);
}

int otlp__room(void **arr, size_t need, size_t *cap, size_t size)
{
  void *nv;
  size_t nc;
  if (need <= *cap)
    return 0;
  nc = *cap ? *cap * 2 : 16;
  if (nc < need)
    nc = need;
  if (nc > SIZE_MAX / size || !(nv = realloc(*arr, nc * size)))
    return SPAA_E_NOMEM;
  *arr = nv;
  *cap = nc;
  return 0;
}

/* Write the dictionary field whose message is [p, p + n) into out without the message's
 * location and stack tables (straight into out: a first walk sizes what stays); its bytes
 * are noted in s. 0, -1 when malformed, or SPAA_E_NOMEM. */
static int strip_dict(const uint8_t *p, size_t n, struct spaa_buf *out, struct strip *s)
{
  struct spaa_pb_field f;
  size_t pos, start, at, keep = n; /* at: where the field read last began */
  int r, pass;
  if (otlp__room((void **)&s->d, s->n_d + 1, &s->cap_d, sizeof(*s->d)))
    return SPAA_E_NOMEM;
  s->d[s->n_d].wire = p;
  s->d[s->n_d++].len = n;
  for (pass = 0; pass < 2; pass++) {
    if (pass && (put_varint(out, (uint64_t)F_DICT << 3 | SPAA_PB_LEN) || put_varint(out, keep)))
      return SPAA_E_NOMEM;
    pos = start = at = 0;
    while ((r = spaa_pb_next(p, n, &pos, &f)) > 0) {
      if ((f.num == F_LOCATIONS || f.num == F_STACKS) && f.wt == SPAA_PB_LEN) {
        if (!pass)
          keep -= pos - at;
        else if (at > start && spaa_buf_add(out, p + start, at - start))
          return SPAA_E_NOMEM;
        start = pos;
      }
      at = pos;
    }
    if (r < 0)
      return -1;
  }
  return n > start && spaa_buf_add(out, p + start, n - start) ? SPAA_E_NOMEM : 0;
}

/* Copy message [p, p + n) at nesting `level` into out, without the samples of a profile
 * and the dictionary's location and stack tables; each profile's bytes are noted in s.
 * 0, -1 when malformed, or SPAA_E_NOMEM. */
static int strip_msg(const uint8_t *p, size_t n, int level, struct spaa_buf *out,
                     struct strip *s)
{
  struct spaa_pb_field f;
  size_t pos = 0, start = 0;
  int r;
  if (level == LV_PROFILE) {
    if (otlp__room((void **)&s->v, s->n + 1, &s->cap, sizeof(*s->v)))
      return SPAA_E_NOMEM;
    s->v[s->n].wire = p;
    s->v[s->n++].len = n;
  }
  while ((r = spaa_pb_next(p, n, &pos, &f)) > 0) {
    int down = f.wt == SPAA_PB_LEN && level < LV_PROFILE &&
               f.num == (level == LV_REQUEST ? F_RESOURCES : F_DOWN);
    int dict = f.wt == SPAA_PB_LEN && level == LV_REQUEST && f.num == F_DICT;
    struct spaa_buf child;
    int rc;
    if (level == LV_PROFILE && f.num == F_SAMPLES && f.wt == SPAA_PB_LEN) {
      start = pos;
      continue;
    }
    if (dict) {
      if ((rc = strip_dict(f.data, f.len, out, s)))
        return rc;
      start = pos;
      continue;
    }
    if (!down) {
      if (spaa_buf_add(out, p + start, pos - start))
        return SPAA_E_NOMEM;
      start = pos;
      continue;
    }
    spaa_buf_init(&child, 0);
    if ((rc = strip_msg(f.data, f.len, level + 1, &child, s)) ||
        (rc = put_varint(out, (uint64_t)f.num << 3 | SPAA_PB_LEN) ? SPAA_E_NOMEM : 0) ||
        (rc = put_varint(out, child.len) ? SPAA_E_NOMEM : 0) ||
        (rc = child.len && spaa_buf_add(out, child.p, child.len) ? SPAA_E_NOMEM : 0)) {
      spaa_buf_free(&child);
      return rc;
    }
    spaa_buf_free(&child);
    start = pos;
  }
  return r < 0 ? -1 : 0;
}

int otlp__strip_samples(const uint8_t *buf, size_t len, struct spaa_buf *rest,
                        struct otlp_wire_profile **profiles, size_t *n, struct otlp_cdict *cd,
                        struct spaa_err *err)
{
  struct strip s = {0};
  int rc = strip_msg(buf, len, LV_REQUEST, rest, &s);
  *profiles = NULL;
  *n = 0;
  memset(cd, 0, sizeof(*cd));
  if (!rc)
    rc = otlp__cdict_wire(cd, s.d, s.n_d);
  free(s.d);
  if (rc) {
    free(s.v);
    spaa_buf_free(rest);
    if (rc == SPAA_E_NOMEM)
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    if (rc == SPAA_E_TOO_LARGE)
      return spaa_err_set(err, SPAA_E_TOO_LARGE, 0, 0,
                          "cannot decode ExportProfilesServiceRequest (v1development): the "
                          "dictionary holds more than 2^32-1 locations, lines or stack entries");
    return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0,
                        "cannot decode ExportProfilesServiceRequest (v1development): "
                        "malformed protobuf");
  }
  *profiles = s.v;
  *n = s.n;
  return 0;
}

/* ---- reading samples ------------------------------------------------------------------ */

void otlp__samples_open(struct otlp_samples *it, const struct otlp_unit *u)
{
  memset(it, 0, sizeof(*it));
  it->p = u->profile;
  it->wire = u->wire;
  it->len = u->wire_len;
  it->refetch = u->refetch;
  opentelemetry__proto__profiles__v1development__sample__init(&it->s);
}

void otlp__samples_close(struct otlp_samples *it)
{
  if (it->refetch && it->wire)
    spaa_mem_discard(it->wire + it->kept, it->pos - it->kept);
  free(it->s.attribute_indices);
  free(it->s.values);
  free(it->s.timestamps_unix_nano);
  memset(it, 0, sizeof(*it));
}

/* Append v to the scratch array of repeated field num (2, 4 or 5). 0 or SPAA_E_NOMEM. */
static int push(struct otlp_samples *it, uint32_t num, uint64_t v)
{
  OT_Sample *s = &it->s;
  switch (num) {
  case 2:
    if (otlp__room((void **)&s->attribute_indices, s->n_attribute_indices + 1, &it->cap_attr,
                   sizeof(int32_t)))
      return SPAA_E_NOMEM;
    s->attribute_indices[s->n_attribute_indices++] = (int32_t)(uint32_t)v;
    return 0;
  case 4:
    if (otlp__room((void **)&s->values, s->n_values + 1, &it->cap_val, sizeof(int64_t)))
      return SPAA_E_NOMEM;
    s->values[s->n_values++] = (int64_t)v;
    return 0;
  default:
    if (otlp__room((void **)&s->timestamps_unix_nano, s->n_timestamps_unix_nano + 1,
                   &it->cap_ts, sizeof(uint64_t)))
      return SPAA_E_NOMEM;
    s->timestamps_unix_nano[s->n_timestamps_unix_nano++] = v;
    return 0;
  }
}

static uint64_t le64(const uint8_t *b)
{
  uint64_t v = 0;
  int k;
  for (k = 7; k >= 0; k--)
    v = v << 8 | b[k];
  return v;
}

/* Append the values of repeated scalar field num (2 and 4 varints, 5 fixed64): one value,
 * or a packed run of them. `end` is where the field ends (a fixed64's bytes precede it).
 * 0, -1 when malformed, or SPAA_E_NOMEM. */
static int add_values(struct otlp_samples *it, uint32_t num, const struct spaa_pb_field *f,
                      const uint8_t *end)
{
  int fixed64 = num == 5;
  size_t pos = 0;
  uint64_t v;
  if (f->wt != SPAA_PB_LEN) {
    if (f->wt != (fixed64 ? SPAA_PB_I64 : SPAA_PB_VARINT))
      return -1;
    return push(it, num, fixed64 ? le64(end - 8) : f->v);
  }
  if (fixed64 && f->len % 8)
    return -1;
  while (pos < f->len) {
    if (fixed64) {
      v = le64(f->data + pos);
      pos += 8;
    } else if (spaa_pb_varint(f->data, f->len, &pos, &v)) {
      return -1;
    }
    if (push(it, num, v))
      return SPAA_E_NOMEM;
  }
  return 0;
}

/* Read the Sample message [p, p + n) into it->s. 0, -1 when malformed, or SPAA_E_NOMEM. */
static int read_sample(struct otlp_samples *it, const uint8_t *p, size_t n)
{
  OT_Sample *s = &it->s;
  struct spaa_pb_field f;
  size_t pos = 0;
  int r, rc;
  s->stack_index = s->link_index = 0;
  s->n_attribute_indices = s->n_values = s->n_timestamps_unix_nano = 0;
  while ((r = spaa_pb_next(p, n, &pos, &f)) > 0) {
    switch (f.num) {
    case 1:
    case 3:
      if (f.wt != SPAA_PB_VARINT)
        return -1;
      *(f.num == 1 ? &s->stack_index : &s->link_index) = (int32_t)(uint32_t)f.v;
      break;
    case 2:
    case 4:
    case 5:
      if ((rc = add_values(it, f.num, &f, p + pos)))
        return rc;
      break;
    default:
      break; /* unknown: skipped, as protoc-c would keep it aside */
    }
  }
  return r < 0 ? -1 : 0;
}

int otlp__samples_next(struct otlp_samples *it, const OT_Sample **s)
{
  struct spaa_pb_field f;
  int r, rc;
  if (!it->wire) {
    if (!it->p || it->i >= it->p->n_samples)
      return 0;
    *s = it->p->samples[it->i++];
    return 1;
  }
  while ((r = spaa_pb_next(it->wire, it->len, &it->pos, &f)) > 0) {
    if (f.num != F_SAMPLES || f.wt != SPAA_PB_LEN)
      continue;
    if ((rc = read_sample(it, f.data, f.len)))
      return rc == SPAA_E_NOMEM ? rc : SPAA_E_BAD_PROTOBUF;
    it->i++;
    *s = &it->s;
    if (it->refetch && it->pos - it->kept >= SAMPLES_GIVE_BACK) {
      spaa_mem_discard(it->wire + it->kept, it->pos - it->kept);
      it->kept = it->pos;
    }
    return 1;
  }
  return r < 0 ? SPAA_E_BAD_PROTOBUF : 0;
}
