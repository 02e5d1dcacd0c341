/* Internals shared by folded.c (the parser and model) and folded_pyroscope.c (what the
 * Pyroscope name, time range and sample rate make of it). */
#ifndef SPAA_FOLDED_INT_H
#define SPAA_FOLDED_INT_H

#include "folded/folded.h"
#include "pprof/pprof.h"

/* What the converter applies to a parsed profile: resolved from the options once. */
struct spaa_folded__meta {
  const struct spaa_folded_type *type; /* never NULL */
  size_t service_len;                  /* bytes of the name's app that are the service */
  int64_t period;                      /* ns each count weighs (timer types with a rate), 0 */
  int64_t sample_rate;                 /* the rate behind period, 0 when period is 0 */
};

/* Resolve the type and the period from the options (either may be NULL). 0, or
 * SPAA_E_BAD_REQUEST with err set (an unknown type suffix). */
int spaa_folded__meta(const struct spaa_convert_opts *o, struct spaa_folded__meta *m,
                      struct spaa_err *err);

/* Service, labels, attrs and time range from o->pprof (and o->service) onto c, whose
 * profile is built and normalized. 0 or SPAA_E_NOMEM (err set). */
int spaa_folded__apply(const struct spaa_convert_opts *o, const struct spaa_folded__meta *m,
                       struct spaa_converted *c, struct spaa_err *err);

#endif
