/* libFuzzer target: the Sentry envelope parser, the auth grammar and the envelope-level
 * conversion (sentry_envelope.c, sentry_auth.c, sentry_spaa.c); the conversion once more
 * under a meter whose room (from the last byte) runs out part way, so that the model's
 * allocations fail anywhere in it: nothing may leak or crash, every byte is given back. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sentry/sentry.h"

/* The codec sources are compiled into this target so that libFuzzer sees their coverage
 * (the archive copies are then not linked). */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct sentry_envelope env;
  struct sentry_auth auth;
  struct spaa_err err;
  struct sentry_dsn dsn;
  if (sentry_envelope_parse(data, size, &env, &err) == 0) {
    struct spaa_conv_list l = {0};
    size_t i;
    for (i = 0; i < env.n_items; i++) /* touch every payload byte: slices must be in bounds */
      if (env.items[i].payload_len && env.items[i].payload[env.items[i].payload_len - 1] == 0xff)
        err.line++;
    sentry_envelope_convert(&env, NULL, &l, &err);
    spaa_conv_list_free(&l);
    if (size) {
      struct spaa_convert_opts o = {0};
      struct spaa_meter m = {0};
      m.room = (size_t)data[size - 1] * 1024;
      o.meter = &m;
      sentry_envelope_convert(&env, &o, &l, &err);
      spaa_conv_list_free(&l);
      if (m.held)
        abort(); /* a model's bytes not given back */
    }
  }
  sentry_envelope_free(&env);
  sentry_auth_parse_header((const char *)data, size, &auth, &err);
  sentry_auth_parse_query((const char *)data, size, &auth, &err);
  sentry_dsn_parse((const char *)data, size, &dsn, &err);
  return 0;
}
