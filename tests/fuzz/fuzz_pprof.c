/* libFuzzer target: pprof bytes (gzip or not) -> decode, validate, convert to SPAA, write.
 * Seeds: tests/fuzz/corpus/pprof/ (small hand-made profiles). Any crash, leak or sanitizer
 * report is a bug; errors returned by the codec are expected. */
#include <stddef.h>
#include <stdint.h>

#include "pprof/pprof.h"
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
  return 0;
}
