/* libFuzzer target: OTLP profiles protobuf bodies through sniffing, protoc-c unpacking,
 * validation, conversion to SPAA and writing; and the conversion once more under a meter
 * whose room (from the last byte) runs out part way, so that allocations fail anywhere in
 * it, as a request past its memory budget makes them: nothing may leak or crash, and every
 * byte the models reported is given back. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "otlp/otlp.h"
#include "spaa/spaa_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spaa_conv_list l = {0};
  struct spaa_err e;
  size_t i;
  char msg[512];
  /* keep the body binary: a leading '{' would take the JSON path */
  if (size && data[0] == '{')
    return 0;
  if (spaa_convert_otlp(data, size, NULL, &l, &e) == 0) {
    otlp_summarize(&l, 0, l.n, msg, sizeof(msg));
    for (i = 0; i < l.n; i++)
      if (l.v[i].profile) {
        struct spaa_buf b;
        spaa_buf_init(&b, 0);
        spaa_write_buf(l.v[i].profile, 0, &b, &e);
        spaa_buf_free(&b);
      }
  }
  spaa_conv_list_free(&l);
  if (size) {
    struct spaa_convert_opts o = {0};
    struct spaa_meter m = {0};
    m.room = (size_t)data[size - 1] * 2048;
    o.meter = &m;
    spaa_convert_otlp(data, size, &o, &l, &e);
    spaa_conv_list_free(&l);
    if (m.held)
      abort(); /* a model's bytes not given back */
  }
  return 0;
}
