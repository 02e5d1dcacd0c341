/* Converters: wire formats -> SPAA models. Every codec exposes one entry point of type
 * spaa_convert_fn, listed in codecs/registry.c, used by `spaa-relay convert --from NAME` and by the
 * HTTP dialects. */
#ifndef SPAA_CONVERT_H
#define SPAA_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "spaa/spaa.h"

/* One profile out of an upload: converted (profile != NULL) or rejected on its own while
 * others in the same upload stand (OTLP partial success, a Sentry profile Relay drops). */
struct spaa_converted {
  struct spaa_profile *profile; /* owned, normalized (spaa_normalize), or NULL if rejected */
  char id[64];                  /* profile id from the source, or "" (the store assigns) */
  char *service;                /* malloc'd service/project name, or NULL */
  int64_t start_ns, end_ns;     /* unix ns, 0 when unknown */
  json_t *labels;               /* owned object string -> string, or NULL */
  json_t *attrs;                /* owned object of other metadata, or NULL */
  char reason[48];              /* when rejected: machine reason ("not_enough_samples") */
  struct spaa_err err;          /* when rejected: what was wrong and where */
  const void *original;         /* the bytes this profile came from as the source sent them
                                 * (with keep_original: a pprof, an envelope item; always: an
                                 * OTLP profile's own original_payload, which is source data
                                 * SPAA has no field for), borrowed from the input (or from a
                                 * decoded input passed in the options): valid as long as
                                 * that is; NULL when none */
  size_t original_len;          /* bytes at original */
  int taken;                    /* 1: converted, but the model was taken away by the
                                 * consumer (spaa_convert_opts.each): profile is NULL */
};

/* 1 when entry e was converted (its model present or taken), 0 when it was rejected. */
static inline int spaa_converted_ok(const struct spaa_converted *e)
{
  return e->profile != NULL || e->taken;
}

struct spaa_conv_list {
  struct spaa_converted *v; /* n entries, owned */
  size_t n;
  size_t cap;
};

/* Append a zeroed entry; NULL on OOM. */
struct spaa_converted *spaa_conv_add(struct spaa_conv_list *l);
/* NULL-safe; frees every entry and what it owns, leaves an empty list. */
void spaa_conv_list_free(struct spaa_conv_list *l);

/* Inputs a caller has already decoded, and format-specific options: declared by their
 * codec (named here only, so that this layer includes none of them). */
struct spaa_pprof_opts;  /* pprof/pprof.h */
struct spaa_folded_opts; /* folded/folded.h */
struct sentry_envelope;  /* sentry/sentry.h */
struct otlp_request;     /* otlp/otlp.h */

/* A consumer of entries as they are made (spaa_convert_opts.each), for inputs that hold
 * several profiles: called after entry k of l is appended (converted or rejected), in
 * order; entries before k may have been appended without a call. The callee may take
 * converted models away (free l->v[i].profile, set it NULL and l->v[i].taken = 1, for any
 * i <= k), so that a large upload holds one model at a time. Returns 0 to go on, or a
 * negative SPAA_E_* with err filled: the converter then stops and returns that code. */
typedef int (*spaa_convert_each_fn)(void *ctx, struct spaa_conv_list *l, size_t k,
                                    struct spaa_err *err);

/* Options a converter may use; zeroed = none. A converter ignores the fields of the other
 * formats. */
struct spaa_convert_opts {
  int keep_original;     /* 1: point spaa_converted.original at each profile's source bytes
                          * (borrowed, never copied) */
  const char *service;   /* a service name given by the caller (query, header, flag), or NULL */
  const struct spaa_pprof_opts *pprof;      /* pprof: Pyroscope metadata (application name
                                             * and labels, time range, sampleRate,
                                             * sample_type_config), or NULL */
  const struct spaa_folded_opts *folded;    /* folded: format=lines, sampleRate as read for
                                             * folded stacks, or NULL (folded, 100 Hz) */
  const struct sentry_envelope *sentry_env; /* sentry: the input already parsed as this
                                             * envelope (borrowed): converted as it is, buf
                                             * is not read again; or NULL */
  const struct otlp_request *otlp_req;      /* otlp: the input already decoded as this
                                             * request (borrowed), likewise; or NULL */
  struct spaa_meter *meter;  /* what the models may hold (spaa.h), or NULL: not metered */
  int input_spent;       /* 1: the caller reads none of buf after the converter returns, so
                          * the converter may give back the parts of it it is done with
                          * (spaa_mem_discard; otlp: each profile's samples) */
  int input_refetch;     /* 1: buf is the private mapping of a file, whose pages given back
                          * are read from the file again when touched: the converter may
                          * give back what it will read later (otlp: the Profiles' samples
                          * once the request is unpacked) */
  int compact_samples;   /* 1: the caller reads samples with spaa_profile_sample, so the
                          * converter may make compact ones (spaa.h; otlp) */
  spaa_convert_each_fn each; /* optional: called as entries are made (otlp), or NULL */
  void *each_ctx;            /* its first argument */
};

/* Convert `len` bytes into out (appending). Returns 0 when the input as a whole decoded
 * (individual profiles may still be rejected: see spaa_converted), or a negative SPAA_E_*
 * with err filled when the whole input is unusable. */
typedef int (*spaa_convert_fn)(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                               struct spaa_conv_list *out, struct spaa_err *err);

/* SPAA itself: read (plain or zstd), then normalize. */
int spaa_convert_spaa(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                      struct spaa_conv_list *out, struct spaa_err *err);

#endif
