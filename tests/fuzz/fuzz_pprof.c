/* libFuzzer target: pprof bytes (gzip or not) -> decode, validate, convert to SPAA, write;
 * and a gzipped input once more read in windows (as large uploads are) and built, under a
 * meter whose room (from the last byte) runs out part way: allocations fail anywhere in the
 * build, as past a request's memory budget, and every byte reported is given back.
 * Seeds: tests/fuzz/corpus/pprof/ (small hand-made profiles). Any crash, leak or sanitizer
 * report is a bug; errors returned by the codec are expected. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

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
    struct spaa_meter m = {0};
    m.room = (size_t)data[size - 1] * 2048;
    if (spaa_pprof__decode(data, size, 0, &d, &err) == 0)
      spaa_pprof__build(d, &m, &p, NULL, NULL, &err);
    spaa_profile_free(p);
    spaa_pprof_free(d);
    if (m.held)
      abort(); /* a model's bytes not given back */
  }
  return 0;
}
