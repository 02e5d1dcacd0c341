/* Internals of the pprof codec, shared by its sources and white-box tests: the protobuf-c
 * message behind struct spaa_pprof and the id maps that resolve its references. */
#ifndef SPAA_PPROF_INT_H
#define SPAA_PPROF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/idmap.h"
#include "pprof/pprof.h"
#include "pprof_profile.pb-c.h"

struct spaa_pprof_arena;
struct spaa_pprof_src;

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

/* A decoded and validated pprof profile. Every index and id has been checked: string
 * indexes are in range, ids are unique and nonzero, references resolve through the maps
 * below, every string is valid UTF-8. Every sample is checked (one value per sample type,
 * locations and label strings that exist) each time spaa_pprof_iter reads it; decode reads
 * them all once too, except when the input is read in windows (`stream`): then the
 * conversion's read is the check, so that a large gzip input is inflated twice, not three
 * times.
 *
 * The samples, most of a profile's bytes, are not unpacked into `msg`: they stay on the wire
 * (`wire`) and are read one at a time into a reused scratch sample by spaa_pprof_iter, so a
 * profile of 1.4 M samples holds its protobuf bytes and not 1.4 M unpacked messages as well.
 * A message a caller built itself (tests, benchmarks: wire == NULL) keeps its samples in
 * msg->sample, and the iterator walks those. */
struct spaa_pprof {
  Perftools__Profiles__Profile *msg; /* every field but the samples (lives in `arena`) */
  struct spaa_pprof_ids loc_ids;     /* Location.id -> index in msg->location */
  struct spaa_pprof_ids fn_ids;      /* Function.id -> index in msg->function */
  struct spaa_pprof_ids map_ids;     /* Mapping.id -> index in msg->mapping */
  struct spaa_pprof_arena *arena;    /* owns msg and everything it points to */
  const uint8_t *wire;               /* the protobuf bytes (raw or the caller's), the gzip
                                      * bytes when `stream`, or NULL (msg built whole) */
  size_t wire_len;
  int stream;                        /* 1: wire is gzip, inflated a window at a time at
                                      * every pass (large uploads: SPAA_PPROF_STREAM_OVER) */
  size_t n_samples;                  /* Profile.sample fields on the wire, or msg->n_sample */
  struct spaa_buf raw;               /* the gunzipped bytes when the input was gzip */
  size_t raw_len;                    /* protobuf bytes (after gunzip) */
  int was_gzip;                      /* 1 when the input started with 1f 8b */
};

/* A walk over the samples of d in order. Start with spaa_pprof_iter_init, end with
 * spaa_pprof_iter_free. The sample returned lives until the next call. */
struct spaa_pprof_iter {
  const struct spaa_pprof *d;
  size_t i;                           /* index of the sample returned next */
  struct spaa_pprof_src *src;         /* the wire being read (pprof_decode.c) */
  Perftools__Profiles__Sample s;      /* the sample read last from the wire */
  uint64_t *loc, *val;                /* its location ids and values (reused) */
  Perftools__Profiles__Label *lab;    /* its labels (reused) */
  Perftools__Profiles__Label **labp;  /* s.label: labp[k] = &lab[k] */
  size_t cap_loc, cap_val, cap_lab, cap_labp;
};

void spaa_pprof_iter_init(struct spaa_pprof_iter *it, const struct spaa_pprof *d);
/* The next sample, checked: 0 with *s set (NULL past the last), or SPAA_E_INVALID (a sample
 * that breaks a rule), SPAA_E_BAD_PROTOBUF (not a Sample message), an inflate error (a
 * stream), SPAA_E_NOMEM; err names the sample. */
int spaa_pprof_iter_next(struct spaa_pprof_iter *it, const Perftools__Profiles__Sample **s,
                         struct spaa_err *err);
void spaa_pprof_iter_free(struct spaa_pprof_iter *it);

/* spaa_pprof_decode, with the gzip inputs larger than stream_over bytes read in windows
 * (pprof_decode.c) instead of gunzipped whole: for tests of both ways. */
int spaa_pprof__decode(const uint8_t *buf, size_t len, size_t stream_over,
                       struct spaa_pprof **out, struct spaa_err *err);

/* Only the validation step of spaa_pprof_decode, on a message the caller unpacked or built
 * (tests): its samples in msg->sample. Fills the id maps of `d` (d->msg set, the rest
 * zeroed); same errors. */
int spaa_pprof_validate(struct spaa_pprof *d, struct spaa_err *err);

/* spaa_pprof_to_spaa without the final spaa_normalize (stacks keep local ids "" and are not
 * merged yet): for the benchmark's breakdown. Same returns. */
int spaa_pprof__build(const struct spaa_pprof *d, struct spaa_meter *m, struct spaa_profile **out,
                      int64_t *start_ns, int64_t *end_ns, struct spaa_err *err);
/* The same with `type_hint`, the profile type a Pyroscope application name gives ("cpu" of
 * `app.cpu{env=prod}`, struct spaa_pprof_name.type), or NULL: when the profile has no
 * default_sample_type naming one of its types, the first sample type of that name is the
 * primary (else the last type, as without a hint). Same returns. */
int spaa_pprof__build_typed(const struct spaa_pprof *d, struct spaa_meter *m,
                            const char *type_hint, struct spaa_profile **out,
                            int64_t *start_ns, int64_t *end_ns, struct spaa_err *err);

/* Apply Pyroscope metadata (pprof_pyroscope.c) to a converted, normalized entry: its
 * labels, attrs (c->attrs must be an object), service when c has none, event annotations
 * and the time range (see spaa_convert_pprof). 0 or SPAA_E_NOMEM (err filled). */
int spaa_pprof__pyroscope_apply(const struct spaa_pprof_opts *o, struct spaa_converted *c,
                                struct spaa_err *err);

#endif
