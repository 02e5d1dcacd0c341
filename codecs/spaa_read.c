/* SPAA reader (being written). */
#include "codecs/spaa_io.h"

int spaa_read_buf(const void *buf, size_t len, struct spaa_profile **out, struct spaa_err *err)
{
  return spaa_err_set(err, SPAA_E_UNSUPPORTED, 0, 0, "reader not built yet");
}
