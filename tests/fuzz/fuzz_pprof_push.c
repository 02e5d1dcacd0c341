/* libFuzzer target: the push.v1 PushRequest converter (codecs/pprof/pprof_push.c), protobuf
 * or JSON by the first byte, every sample through the pprof converter. All or nothing: on an
 * error nothing stays appended and the message is set. Seeds: tests/fuzz/corpus/pprof_push/. */
#include <stdint.h>
#include <stdlib.h>

#include "pprof/pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spaa_convert_opts o = {.keep_original = 1};
  struct spaa_conv_list l = {0};
  struct spaa_err err;
  int rc;
  spaa_err_clear(&err);
  rc = spaa_convert_pprof_push(data, size, &o, &l, &err);
  if (rc && (l.n || !err.msg[0]))
    abort();
  spaa_conv_list_free(&l);
  return 0;
}
