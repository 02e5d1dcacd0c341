/* libFuzzer target: pprof bytes (gzip or not) -> decode, validate, convert to SPAA, write;
 * and a gzipped input once more read in windows (as large uploads are) and built.
 * Seeds: tests/fuzz/corpus/pprof/ (small hand-made profiles). Any crash, leak or sanitizer
 * report is a bug; errors returned by the codec are expected. */
#include <stddef.h>
#include <stdint.h>

#include "pprof/pprof.h"
#include "pprof/pprof_int.h"
#include "spaa/spaa_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err;
  if (spaa_convert_pprof(data, size, NULL, &l, &err) == 0 && l.n == 1) {
    struct spaa_buf out;
    spaa_buf_init(&out, 64u * 1024 * 1024);
    spaa_write_buf(l.v[0].profile, 0, &out, &err);
    spaa_buf_free(&out);
  }
  spaa_conv_list_free(&l);
  if (spaa_pprof_is_gzip(data, size)) {
    struct spaa_pprof *d = NULL;
    struct spaa_profile *p = NULL;
    if (spaa_pprof__decode(data, size, 0, &d, &err) == 0)
      spaa_pprof__build(d, NULL, &p, NULL, NULL, &err);
    spaa_profile_free(p);
    spaa_pprof_free(d);
  }
  return 0;
}
