/* Internals of the pprof codec, shared by its sources and white-box tests: the protobuf-c
 * message behind struct spaa_pprof and the id maps that resolve its references. */
#ifndef SPAA_PPROF_INT_H
#define SPAA_PPROF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/idmap.h"
#include "pprof/pprof.h"
#include "pprof_profile.pb-c.h"

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

/* Only the validation step of spaa_pprof_decode, on a message the caller unpacked or built
 * (tests). Fills the id maps of `d` (d->msg set, the rest zeroed); same errors. */
int spaa_pprof_validate(struct spaa_pprof *d, struct spaa_err *err);

/* spaa_pprof_to_spaa without the final spaa_normalize (stacks keep local ids "" and are not
 * merged yet): for the benchmark's breakdown. Same returns. */
int spaa_pprof__build(const struct spaa_pprof *d, struct spaa_profile **out, int64_t *start_ns,
                      int64_t *end_ns, struct spaa_err *err);

/* Apply Pyroscope metadata (pprof_pyroscope.c) to a converted, normalized entry: its
 * labels, attrs (c->attrs must be an object), service when c has none, event annotations
 * and the time range (see spaa_convert_pprof). 0 or SPAA_E_NOMEM (err filled). */
int spaa_pprof__pyroscope_apply(const struct spaa_pprof_opts *o, struct spaa_converted *c,
                                struct spaa_err *err);

#endif
