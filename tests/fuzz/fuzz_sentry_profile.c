/* libFuzzer target: the Sentry profile decoders and the SPAA builder. The first byte picks
 * the item kind (even: profile / V1, odd: profile_chunk / V2) and whether a transaction
 * item is present; the rest is the JSON payload. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sentry/sentry.h"

/* The codec sources are compiled into this target so that libFuzzer sees their coverage
 * (the archive copies are then not linked). */
#include "spaa/spaa_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spaa_converted c;
  struct sentry_item_ctx ctx;
  uint8_t sel;
  if (size < 1)
    return 0;
  sel = data[0];
  memset(&c, 0, sizeof(c));
  memset(&ctx, 0, sizeof(ctx));
  ctx.in_envelope = (sel & 2) != 0;
  ctx.has_transaction = (sel & 4) != 0;
  ctx.item_platform = (sel & 8) ? "cocoa" : NULL;
  if (sentry_profile_convert(data + 1, size - 1, (sel & 1) ? SENTRY_ITEM_CHUNK : SENTRY_ITEM_PROFILE,
                             &ctx, &c) == 0 &&
      c.profile) {
    struct spaa_buf out;
    struct spaa_err err;
    spaa_buf_init(&out, 0);
    spaa_write_buf(c.profile, 0, &out, &err);
    spaa_buf_free(&out);
  }
  spaa_profile_free(c.profile);
  json_decref(c.attrs);
  json_decref(c.labels);
  return 0;
}
