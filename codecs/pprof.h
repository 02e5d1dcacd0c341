/* pprof (perftools.profiles.Profile) in: gzip detected by magic and inflated under a cap,
 * protoc-c unpack into an arena, validation of every index and id, and conversion to the
 * SPAA model. The mapping of fields is documented in docs/pprof-mapping.md. */
#ifndef SPAA_PPROF_H
#define SPAA_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "codecs/convert.h"
#include "codecs/err.h"
#include "codecs/idmap.h"
#include "codecs/spaa.h"
#include "pprof_profile.pb-c.h"

#define SPAA_PPROF_MAX_RAW (50u * 1024 * 1024)      /* protobuf bytes after gunzip */
#define SPAA_PPROF_MAX_DECODED (512u * 1024 * 1024) /* unpacked structures in memory */
#define SPAA_PPROF_MAX_DEPTH 16384                  /* frames of one stack, inlines expanded */
#define SPAA_PPROF_MAX_FRAME_REFS (32u * 1024 * 1024) /* frame ids over all stacks */

struct spaa_pprof_arena;

/* Wire id -> index of one kind of record (location, function, mapping). Ids are only
 * required to be unique and nonzero, so they go through a hash map; when validation found
 * them to be exactly 1..n in record order (every file seen so far), the map is skipped and
 * the lookup is a range check. Either way an id is never trusted as an index. */
struct spaa_pprof_ids {
  struct spaa_idmap map; /* id -> index; empty when dense */
  size_t n;              /* records */
  int dense;             /* 1 when record i has id i + 1 for every i */
};

/* 1 and *idx set when `id` names a record, else 0. */
static inline int spaa_pprof_find(const struct spaa_pprof_ids *ids, uint64_t id, size_t *idx)
{
  if (ids->dense) {
    if (id == 0 || id > ids->n)
      return 0;
    *idx = (size_t)(id - 1);
    return 1;
  }
  return spaa_idmap_get(&ids->map, id, idx);
}

/* A decoded and validated pprof profile. Every index and id in `msg` has been checked:
 * string indexes are in range, ids are unique and nonzero, references resolve through the
 * maps below, every sample has one value per sample type, every string is valid UTF-8. */
struct spaa_pprof {
  Perftools__Profiles__Profile *msg; /* the unpacked message (lives in `arena`) */
  struct spaa_pprof_ids loc_ids;     /* Location.id -> index in msg->location */
  struct spaa_pprof_ids fn_ids;      /* Function.id -> index in msg->function */
  struct spaa_pprof_ids map_ids;     /* Mapping.id -> index in msg->mapping */
  struct spaa_pprof_arena *arena;    /* owns msg and everything it points to */
  size_t raw_len;                    /* protobuf bytes (after gunzip) */
  int was_gzip;                      /* 1 when the input started with 1f 8b */
};

/* 1 when `buf` starts with the gzip magic (1f 8b). */
int spaa_pprof_is_gzip(const uint8_t *buf, size_t len);

/* Inflate a gzip stream (one member or several concatenated) into a new malloc'd buffer
 * (*out, freed by the caller with free(); *out_len bytes). More than `max` bytes of output
 * fails with SPAA_E_TOO_LARGE; a corrupt or truncated stream, or bytes after the last
 * member that are not another member, with SPAA_E_BAD_COMPRESSION; SPAA_E_NOMEM. */
int spaa_pprof_gunzip(const uint8_t *buf, size_t len, size_t max, uint8_t **out, size_t *out_len,
                      struct spaa_err *err);

/* Decode `len` bytes of pprof, gzipped or not, into a new struct (*out, owned by the caller,
 * freed with spaa_pprof_free). Returns 0, or:
 *   SPAA_E_TOO_LARGE       over SPAA_PPROF_MAX_RAW after gunzip, or SPAA_PPROF_MAX_DECODED;
 *   SPAA_E_BAD_COMPRESSION a corrupt gzip stream;
 *   SPAA_E_BAD_PROTOBUF    bytes that are not a Profile message;
 *   SPAA_E_INVALID         a Profile that breaks a rule (err names the sample, location,
 *                          function or mapping index at fault, and the string index);
 *   SPAA_E_NOMEM. */
int spaa_pprof_decode(const uint8_t *buf, size_t len, struct spaa_pprof **out,
                      struct spaa_err *err);
/* Only the validation step of spaa_pprof_decode, on a message the caller unpacked or built
 * (tests). Fills the id maps of `d` (d->msg set, the rest zeroed); same errors. */
int spaa_pprof_validate(struct spaa_pprof *d, struct spaa_err *err);
/* NULL-safe. Frees the arena and with it msg when decode made it; a msg the caller set
 * with arena == NULL stays the caller's. */
void spaa_pprof_free(struct spaa_pprof *d);

/* Convert a validated profile to a new, normalized SPAA model (*out, owned by the caller).
 * start_ns/end_ns (may be NULL) receive the unix-ns time range, 0 when unknown.
 * 0, SPAA_E_TOO_LARGE (stacks deeper than SPAA_PPROF_MAX_DEPTH or more frame references
 * than SPAA_PPROF_MAX_FRAME_REFS in all), SPAA_E_NOMEM. */
int spaa_pprof_to_spaa(const struct spaa_pprof *d, struct spaa_profile **out, int64_t *start_ns,
                       int64_t *end_ns, struct spaa_err *err);

/* The converter (spaa_convert_fn): decode, validate, convert; one entry appended to `out`
 * with service = o->service (copied) when given. Errors as spaa_pprof_decode and
 * spaa_pprof_to_spaa; nothing is appended on error. */
int spaa_convert_pprof(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                       struct spaa_conv_list *out, struct spaa_err *err);

#endif
