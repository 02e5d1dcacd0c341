/* Internals shared by the otlp_*.c files: short names for the protoc-c types, the decoded
 * request, and the functions one file offers the others. */
#ifndef SPAA_OTLP_INT_H
#define SPAA_OTLP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "otlp/otlp.h"

#include "otlp_common.pb-c.h"
#include "otlp_profiles.pb-c.h"
#include "otlp_profiles_service.pb-c.h"
#include "otlp_resource.pb-c.h"
#include "otlp_status.pb-c.h"
#include "otlp_v1exp_profiles.pb-c.h"
#include "otlp_v1exp_service.pb-c.h"

/* v1development and common types */
#define OT_Request Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
#define OT_Dict Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary
#define OT_ResourceProfiles Opentelemetry__Proto__Profiles__V1development__ResourceProfiles
#define OT_ScopeProfiles Opentelemetry__Proto__Profiles__V1development__ScopeProfiles
#define OT_Profile Opentelemetry__Proto__Profiles__V1development__Profile
#define OT_Link Opentelemetry__Proto__Profiles__V1development__Link
#define OT_ValueType Opentelemetry__Proto__Profiles__V1development__ValueType
#define OT_Sample Opentelemetry__Proto__Profiles__V1development__Sample
#define OT_Mapping Opentelemetry__Proto__Profiles__V1development__Mapping
#define OT_Stack Opentelemetry__Proto__Profiles__V1development__Stack
#define OT_Location Opentelemetry__Proto__Profiles__V1development__Location
#define OT_Line Opentelemetry__Proto__Profiles__V1development__Line
#define OT_Function Opentelemetry__Proto__Profiles__V1development__Function
#define OT_KVU Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit
#define OT_AnyValue Opentelemetry__Proto__Common__V1__AnyValue
#define OT_KeyValue Opentelemetry__Proto__Common__V1__KeyValue
#define OT_Scope Opentelemetry__Proto__Common__V1__InstrumentationScope
#define OT_Resource Opentelemetry__Proto__Resource__V1__Resource
#define OT_ANY(c) OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_##c

/* descriptors */
#define OT_REQUEST_DESC opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor
#define OT_RESPONSE_DESC opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__descriptor
#define OT_PROFILE_DESC opentelemetry__proto__profiles__v1development__profile__descriptor
#define OT_SAMPLE_DESC opentelemetry__proto__profiles__v1development__sample__descriptor
#define OT_DICT_DESC opentelemetry__proto__profiles__v1development__profiles_dictionary__descriptor
#define OT_STACK_DESC opentelemetry__proto__profiles__v1development__stack__descriptor
#define OT_LOCATION_DESC opentelemetry__proto__profiles__v1development__location__descriptor
#define OT_LINE_DESC opentelemetry__proto__profiles__v1development__line__descriptor
#define OT_FUNCTION_DESC opentelemetry__proto__profiles__v1development__function__descriptor
#define OT_MAPPING_DESC opentelemetry__proto__profiles__v1development__mapping__descriptor
#define OT_LINK_DESC opentelemetry__proto__profiles__v1development__link__descriptor
#define OT_KVU_DESC opentelemetry__proto__profiles__v1development__key_value_and_unit__descriptor
#define OT_VALUETYPE_DESC opentelemetry__proto__profiles__v1development__value_type__descriptor
#define OT_ANY_DESC opentelemetry__proto__common__v1__any_value__descriptor

/* v1experimental types */
#define OX_Request Opentelemetry__Proto__Collector__Profiles__V1experimental__ExportProfilesServiceRequest
#define OX_ResourceProfiles Opentelemetry__Proto__Profiles__V1experimental__ResourceProfiles
#define OX_ScopeProfiles Opentelemetry__Proto__Profiles__V1experimental__ScopeProfiles
#define OX_Container Opentelemetry__Proto__Profiles__V1experimental__ProfileContainer
#define OX_Profile Opentelemetry__Proto__Profiles__V1experimental__Profile
#define OX_Sample Opentelemetry__Proto__Profiles__V1experimental__Sample
#define OX_Location Opentelemetry__Proto__Profiles__V1experimental__Location
#define OX_Mapping Opentelemetry__Proto__Profiles__V1experimental__Mapping
#define OX_Function Opentelemetry__Proto__Profiles__V1experimental__Function
#define OX_REQUEST_DESC opentelemetry__proto__collector__profiles__v1experimental__export_profiles_service_request__descriptor

/* A Profile message's bytes on the wire (in the request's buffer). */
struct otlp_wire_profile {
  const uint8_t *wire;
  size_t len;
};

/* The location and stack tables of a dictionary in a compact form (protoc-c's takes about
 * twice the room: a message header per entry, pointer arrays, size_t counts). Every reader
 * goes through it; the OT_Dict's own location_table and stack_table are not read (a
 * protobuf request's are never unpacked). Entry i is locs[i] or stacks[i]; its lists are
 * runs [off, off + n) of the shared arrays. */
struct otlp_cline {
  int64_t line, column;
  int32_t function_index;
};
struct otlp_cloc {
  uint64_t address;
  int32_t mapping_index;
  uint32_t line_off, n_lines;   /* into otlp_cdict.lines */
  uint32_t attr_off, n_attrs;   /* into otlp_cdict.loc_attrs */
};
struct otlp_cstack {
  uint32_t off, n;              /* into otlp_cdict.stack_locs */
};
struct otlp_cdict {
  struct otlp_cloc *locs;
  size_t n_locs;
  struct otlp_cline *lines;
  size_t n_lines;
  int32_t *loc_attrs;           /* the locations' attribute_indices */
  size_t n_loc_attrs;
  struct otlp_cstack *stacks;
  size_t n_stacks;
  int32_t *stack_locs;          /* the stacks' location_indices */
  size_t n_stack_locs;
};

/* Location l's lines and attribute indices, stack i's location indices (NULL when none). */
static inline const struct otlp_cline *otlp__loc_lines(const struct otlp_cdict *cd,
                                                       const struct otlp_cloc *l)
{
  return l->n_lines ? cd->lines + l->line_off : NULL;
}
static inline const int32_t *otlp__loc_attrs(const struct otlp_cdict *cd,
                                             const struct otlp_cloc *l)
{
  return l->n_attrs ? cd->loc_attrs + l->attr_off : NULL;
}
static inline const int32_t *otlp__stack_locs(const struct otlp_cdict *cd, size_t i)
{
  return cd->stacks[i].n ? cd->stack_locs + cd->stacks[i].off : NULL;
}

/* One profile to convert: the dictionary and messages it reads (borrowed from the request,
 * or owned by the request for v1experimental translations) and where it came from. */
struct otlp_unit {
  const OT_Dict *dict;            /* the dictionary its indices point into */
  const struct otlp_cdict *cdict; /* its locations and stacks */
  const OT_Resource *resource;    /* NULL when absent */
  const char *resource_schema;    /* "" when absent */
  const OT_Scope *scope;          /* NULL when absent */
  const char *scope_schema;       /* "" when absent */
  const OT_Profile *profile;      /* NULL when a v1experimental translation failed */
  struct otlp_origin origin;      /* indices and original payload */
  int loose_timestamps;           /* v1experimental: values and timestamps may differ in length */
  int closed_window;              /* v1experimental: the container's end time is the last
                                   * sample's (inclusive), not one past the window */
  int shared_dict;                /* 1: dict is the request's (validated once for all) */
  const uint8_t *wire;            /* the Profile's bytes when its samples were left on the
                                   * wire (read them with otlp__samples_*), else NULL */
  size_t wire_len;
  int refetch;                    /* wire is in a file's mapping: read pages may go back */
  struct spaa_err xerr;           /* v1experimental translation error when profile == NULL */
};

struct otlp_request {
  enum otlp_version version;      /* detected version */
  int is_json;                    /* 1 when the body was OTLP/JSON */
  ProtobufCMessage *msg;          /* the decoded request (owned) */
  struct otlp_unit *units;        /* one per profile to convert (owned) */
  size_t n_units;
  ProtobufCMessage **owned;       /* translated dictionaries and profiles (owned) */
  size_t n_owned, cap_owned;
  OT_Dict empty_dict;             /* stands in for an absent dictionary */
  struct otlp_cdict cdict;        /* the request's dictionary's locations and stacks */
  struct otlp_cdict **xcdicts;    /* v1experimental: those of the translated dictionaries */
  size_t n_xcdicts, cap_xcdicts;
  struct otlp_wire_profile *wire; /* v1development protobuf: each Profile's bytes, whose
                                   * samples were left there (owned array), or NULL */
  size_t n_wire;
  const uint8_t *body;            /* with wire: the request's bytes those point into */
  size_t body_len;
  int refetch;                    /* body is a file's mapping (OTLP_DECODE_REFETCH) */
  struct spaa_block *blocks;      /* msg unpacked from protobuf: its memory, freed whole */
};

/* Room in the array *arr (capacity *cap elements of `size` bytes) for `need` elements: grown
 * by doubling, at least to need. 0 or SPAA_E_NOMEM (the array unchanged). */
int otlp__room(void **arr, size_t need, size_t *cap, size_t size);

/* otlp_samples.c: samples left on the wire. A v1development protobuf request is unpacked
 * from a copy without the profiles' samples (otlp__strip_samples, which lists each Profile's
 * bytes in wire order); the samples are then read one at a time. */
/* Copy the request [buf, buf + len) into rest (appending) without any Profile.samples and
 * without the dictionary's location_table and stack_table, which are read into cd (freed
 * with otlp__cdict_free, also on failure); list the Profile messages in *profiles
 * (malloc'ed, *n of them). 0, SPAA_E_BAD_PROTOBUF, SPAA_E_TOO_LARGE or SPAA_E_NOMEM with err
 * filled. */
int otlp__strip_samples(const uint8_t *buf, size_t len, struct spaa_buf *rest,
                        struct otlp_wire_profile **profiles, size_t *n, struct otlp_cdict *cd,
                        struct spaa_err *err);

/* otlp_cdict.c: the compact tables. */
/* Read the location_table and stack_table fields of the ProfilesDictionary messages
 * dicts[0..n) (in wire order: their tables concatenate) into cd, zeroed first. 0, -1 when
 * the bytes are malformed as protoc-c would find them, SPAA_E_TOO_LARGE (a count past
 * 2^32-1) or SPAA_E_NOMEM; cd is left for otlp__cdict_free. */
int otlp__cdict_wire(struct otlp_cdict *cd, const struct otlp_wire_profile *dicts, size_t n);
/* The same from an unpacked dictionary's tables (OTLP/JSON, v1experimental translations).
 * 0, SPAA_E_TOO_LARGE or SPAA_E_NOMEM. */
int otlp__cdict_msgs(struct otlp_cdict *cd, const OT_Dict *d);
void otlp__cdict_free(struct otlp_cdict *cd); /* its arrays; NULL-safe */

/* The samples of one unit, in order: off the wire into a scratch Sample (valid until the
 * next call), or the unpacked profile's. */
struct otlp_samples {
  const OT_Profile *p;  /* the unpacked samples' profile (when wire is NULL) */
  const uint8_t *wire;  /* the Profile's bytes, or NULL */
  size_t len, pos;
  int refetch;          /* wire is in a file's mapping: what was read goes back as it goes */
  size_t kept;          /* wire bytes before this were given back (refetch) */
  size_t i;             /* samples handed out so far */
  OT_Sample s;          /* scratch */
  size_t cap_attr, cap_val, cap_ts;
};
void otlp__samples_open(struct otlp_samples *it, const struct otlp_unit *u);
/* 1 with *s the next sample, 0 after the last, SPAA_E_BAD_PROTOBUF (the wire is malformed)
 * or SPAA_E_NOMEM. */
int otlp__samples_next(struct otlp_samples *it, const OT_Sample **s);
void otlp__samples_close(struct otlp_samples *it); /* the scratch freed */

/* otlp_wire.c: walk a protobuf body against the v1development then v1experimental schema
 * (well-formedness, nesting cap, wire types) and tell which it is. Returns OTLP_V1* or a
 * negative SPAA_E_BAD_PROTOBUF / SPAA_E_UNSUPPORTED with err filled. */
int otlp__sniff_wire(const uint8_t *buf, size_t len, struct spaa_err *err);

/* otlp_json.c: decode an OTLP/JSON body into a new protoc-c request of the detected version
 * (*version set). 0 or SPAA_E_BAD_JSON / SPAA_E_UNSUPPORTED / SPAA_E_TOO_LARGE / SPAA_E_NOMEM. */
int otlp__json_decode(const uint8_t *buf, size_t len, ProtobufCMessage **out, int *version,
                      struct spaa_err *err);

/* otlp_v1exp.c: build the units of a v1experimental request (translations into
 * v1development dictionaries and profiles, owned by r). 0 or SPAA_E_NOMEM. */
int otlp__v1exp_units(struct otlp_request *r);

/* otlp_check.c: validation. A dictionary context is opened once per dictionary: it checks
 * the dictionary (broken -> the whole request fails) and keeps what per-profile checks and
 * the converter need. */
struct otlp_dictx {
  const OT_Dict *d;   /* the dictionary (borrowed) */
  const struct otlp_cdict *cd; /* its locations and stacks (borrowed) */
  int32_t *canon;     /* per string index: the first index holding an equal string */
  uint32_t *stamp;    /* per string index: generation mark, for key uniqueness */
  uint32_t gen;       /* current generation */
};
/* 0, SPAA_E_INVALID (err names the table, entry and fault) or SPAA_E_NOMEM. */
int otlp__dict_open(struct otlp_dictx *x, const OT_Dict *d, const struct otlp_cdict *cd,
                    struct spaa_err *err);
void otlp__dict_close(struct otlp_dictx *x); /* NULL-safe */
/* Check one profile against its dictionary: 0 or SPAA_E_INVALID with err filled (message
 * without the "profile P of ..." prefix) and a machine reason. *n_warn counts soft faults
 * (timestamps outside the window); the first is described in warn. *n_stamps is the number
 * of sample timestamps (the sample records the profile converts to). */
int otlp__check_profile(struct otlp_dictx *x, const struct otlp_unit *u, size_t *n_stamps,
                        char *reason, size_t reason_cap, size_t *n_warn, char *warn,
                        size_t warn_cap, struct spaa_err *err);
/* 0 when the attribute keys named by idx[0..n) are unique (indices already range-checked),
 * else the position of the first repeated one + 1. */
size_t otlp__dup_key(struct otlp_dictx *x, const int32_t *idx, size_t n);
/* The string at index i of the dictionary ("" for 0); NULL when out of range. */
const char *otlp__str(const OT_Dict *d, int32_t i);

#endif
