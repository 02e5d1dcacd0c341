/* Internals shared by codecs/pprof.c, codecs/pprof_convert.c and their tests. */
#ifndef SPAA_PPROF_INT_H
#define SPAA_PPROF_INT_H

#include <stddef.h>
#include <stdint.h>

/* SIZE_MAX when s[0..n) is valid UTF-8 (no overlongs, no surrogates, nothing past
 * U+10FFFF), else the offset of the first byte of the first bad sequence. */
size_t spaa_pprof__utf8_check(const uint8_t *s, size_t n);

struct spaa_pprof;
struct spaa_profile;
struct spaa_err;
/* spaa_pprof_to_spaa without the final spaa_normalize (stacks keep local ids "" and are not
 * merged yet): for the benchmark's breakdown. Same returns. */
int spaa_pprof__build(const struct spaa_pprof *d, struct spaa_profile **out, int64_t *start_ns,
                      int64_t *end_ns, struct spaa_err *err);

#endif
