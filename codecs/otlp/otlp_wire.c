/* OTLP protobuf sniffing: walk the wire against the protoc-c descriptors before unpacking, to
 * bound nesting, check UTF-8, and tell v1development from v1experimental, v1.9 and v1.8. */
#include <stdio.h>
#include <string.h>

#include "base/limits.h"
#include "base/utf8.h"
#include "otlp/otlp_int.h"

struct walk {
  int mismatch;              /* a known field had a wire type (or content) its schema forbids */
  char where[128];           /* the first mismatch, for messages */
  int bad_utf8;              /* a string field held invalid UTF-8 or a NUL */
  char utf8_where[128];      /* what and where */
  int v19;                   /* v1.9 Sample numbering seen (field 3 LEN or field 4 varint) */
  int v18;                   /* v1.8 Profile numbering seen (8 LEN, 9 varint or field 12) */
  int too_deep;              /* nesting passed OTLP_MAX_DEPTH: a hard error */
  const ProtobufCMessageDescriptor *sample_d;  /* v1development Sample, or NULL */
  const ProtobufCMessageDescriptor *profile_d; /* v1development Profile, or NULL */
};

/* 0 and *v set, or -1 on a truncated or over-long varint. */
static int varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
  const uint8_t *p = *pp;
  uint64_t r = 0;
  unsigned shift;
  for (shift = 0; shift < 64 && p < end; shift += 7) {
    uint8_t b = *p++;
    r |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *pp = p;
      *v = r;
      return 0;
    }
  }
  return -1;
}

static int expected_wt(ProtobufCType t)
{
  switch (t) {
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_FLOAT:
    return 5;
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE:
    return 1;
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_BYTES:
  case PROTOBUF_C_TYPE_MESSAGE:
    return 2;
  default:
    return 0;
  }
}

static const char *short_name(const ProtobufCMessageDescriptor *d) { return d->short_name; }

static void note_mismatch(struct walk *w, const ProtobufCMessageDescriptor *d, uint32_t field,
                          int wt, const char *what)
{
  if (w->mismatch++)
    return;
  snprintf(w->where, sizeof(w->where), "field %u of %s %s (wire type %d)", field, short_name(d),
           what, wt);
}

/* Walk one message body [p, end). Returns 0, or -1 with err filled when the framing itself is
 * broken (truncated, bad wire type) or nesting passes the cap. Schema faults are noted in w. */
static int walk_msg(struct walk *w, const ProtobufCMessageDescriptor *d, const uint8_t *start,
                    const uint8_t *p, const uint8_t *end, int depth, struct spaa_err *err)
{
  if (depth > OTLP_MAX_DEPTH) {
    w->too_deep = 1;
    return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, (size_t)(p - start),
                        "messages nested deeper than %d levels", OTLP_MAX_DEPTH);
  }
  while (p < end) {
    const uint8_t *fstart = p;
    uint64_t key, len = 0;
    uint32_t id;
    int wt;
    const ProtobufCFieldDescriptor *f;
    if (varint(&p, end, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
      goto bad;
    id = (uint32_t)(key >> 3);
    wt = (int)(key & 7);
    switch (wt) {
    case 0:
      if (varint(&p, end, &len))
        goto bad;
      break;
    case 1:
      if (end - p < 8)
        goto bad;
      p += 8;
      break;
    case 5:
      if (end - p < 4)
        goto bad;
      p += 4;
      break;
    case 2:
      if (varint(&p, end, &len) || len > (uint64_t)(end - p))
        goto bad;
      break;
    default:
      goto bad;
    }
    /* signatures of older numberings */
    if (d == w->sample_d && ((id == 3 && wt == 2) || (id == 4 && wt == 0)))
      w->v19 = 1;
    if (d == w->profile_d && ((id == 8 && wt == 2) || (id == 9 && wt == 0) || id == 12))
      w->v18 = 1;
    f = protobuf_c_message_descriptor_get_field(d, id);
    if (f) {
      int want = expected_wt(f->type);
      if (wt != want && !(wt == 2 && f->label == PROTOBUF_C_LABEL_REPEATED && want != 2)) {
        note_mismatch(w, d, id, wt, "has an unexpected wire type");
      } else if (wt == 2 && f->type == PROTOBUF_C_TYPE_MESSAGE) {
        struct spaa_err e2;
        if (walk_msg(w, f->descriptor, start, p, p + len, depth + 1, &e2)) {
          if (w->too_deep) {
            *err = e2;
            return e2.code;
          }
          note_mismatch(w, d, id, wt, "does not hold a valid message");
        }
      } else if (wt == 2 && f->type == PROTOBUF_C_TYPE_STRING && !w->bad_utf8) {
        /* a NUL is valid UTF-8 but would cut the string where the unpacked copy ends */
        const char *why = spaa_utf8_check(p, (size_t)len) != SIZE_MAX ? "invalid UTF-8 in a string"
                          : len && memchr(p, 0, (size_t)len) ? "a string holds a NUL byte (U+0000)"
                                                             : NULL;
        if (why) {
          w->bad_utf8 = 1;
          snprintf(w->utf8_where, sizeof(w->utf8_where), "%s: field %u of %s at byte %zu", why,
                   id, short_name(d), (size_t)(fstart - start));
        }
      }
    }
    if (wt == 2)
      p += len;
  }
  return 0;
bad:
  return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, (size_t)(p - start),
                      "malformed protobuf in %s near byte %zu", short_name(d), (size_t)(p - start));
}

int otlp__sniff_wire(const uint8_t *buf, size_t len, struct spaa_err *err)
{
  struct walk dev, exp;
  struct spaa_err e2;
  int rc;
  memset(&dev, 0, sizeof(dev));
  dev.sample_d = &OT_SAMPLE_DESC;
  dev.profile_d = &OT_PROFILE_DESC;
  if ((rc = walk_msg(&dev, &OT_REQUEST_DESC, buf, buf, buf + len, 0, err)))
    return rc;
  if (!dev.mismatch && !dev.v19 && !dev.v18)
    goto dev_ok;
  memset(&exp, 0, sizeof(exp));
  if (walk_msg(&exp, &OX_REQUEST_DESC, buf, buf, buf + len, 0, &e2) == 0 && !exp.mismatch) {
    if (exp.bad_utf8)
      return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0, "%s", exp.utf8_where);
    return OTLP_V1EXPERIMENTAL;
  }
  if (dev.v19)
    return spaa_err_set(err, SPAA_E_UNSUPPORTED, 0, 0,
                        "OTLP profiles proto v1.9.0 (Sample values=2, attribute_indices=3, "
                        "link_index=4), sent by OpenTelemetry Collector v0.140-v0.147: this "
                        "server speaks v1development as of proto v1.10.0/v1.11.0 (Collector "
                        "v0.148.0 and later, ebpf-profiler built on pdata v0.148+); upgrade the "
                        "sender");
  if (dev.v18)
    return spaa_err_set(err, SPAA_E_UNSUPPORTED, 0, 0,
                        "OTLP profiles proto v1.8.0 (Profile profile_id=8, "
                        "dropped_attributes_count=9, attribute_indices=12), sent by "
                        "OpenTelemetry Collector v0.136-v0.139: this server speaks "
                        "v1development as of proto v1.10.0/v1.11.0 (Collector v0.148.0 and "
                        "later); upgrade the sender");
  return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0,
                      "not an OTLP v1development (proto v1.10+) or v1experimental "
                      "ExportProfilesServiceRequest: %s (Collectors before v0.148.0 send "
                      "older, incompatible v1development layouts)",
                      dev.where);
dev_ok:
  if (dev.bad_utf8)
    return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0, "%s", dev.utf8_where);
  return OTLP_V1DEVELOPMENT;
}
