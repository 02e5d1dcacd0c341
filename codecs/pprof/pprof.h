/* pprof (perftools.profiles.Profile) in: gzip detected by magic and inflated under a cap,
 * protoc-c unpack into an arena, validation of every index and id, and conversion to the
 * SPAA model. The mapping of fields is documented in docs/pprof-mapping.md. */
#ifndef SPAA_PPROF_H
#define SPAA_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "spaa/convert.h"
#include "base/err.h"
#include "base/limits.h"
#include "spaa/spaa.h"

/* A decoded and validated pprof profile (its protobuf-c message and id maps: pprof_int.h). */
struct spaa_pprof;

/* 1 when `buf` starts with the gzip magic (1f 8b): spaa_is_gzip of base/compress.h, kept
 * for the pprof dialect's callers. Decoding goes through spaa_decompress. */
int spaa_pprof_is_gzip(const uint8_t *buf, size_t len);

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
