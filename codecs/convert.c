/* The table of converters (see convert.h). */
#include "codecs/convert.h"

#include <stdlib.h>
#include <string.h>

#include "codecs/otlp.h"
#include "codecs/sentry.h"
#include "codecs/pprof.h"
#include "codecs/spaa_io.h"

static const struct {
  const char *name;
  spaa_convert_fn fn;
} converters[] = {
    {"spaa", spaa_convert_spaa},
    {"sentry", spaa_convert_sentry},
    {"otlp", spaa_convert_otlp},
    {"pprof", spaa_convert_pprof},
};

spaa_convert_fn spaa_converter(const char *from)
{
  size_t i;
  for (i = 0; from && i < sizeof(converters) / sizeof(converters[0]); i++)
    if (strcmp(converters[i].name, from) == 0)
      return converters[i].fn;
  return NULL;
}

const char *spaa_converter_names(void)
{
  static char names[128];
  size_t i;
  if (!names[0])
    for (i = 0; i < sizeof(converters) / sizeof(converters[0]); i++) {
      if (i)
        strcat(names, ", ");
      strcat(names, converters[i].name);
    }
  return names;
}

struct spaa_converted *spaa_conv_add(struct spaa_conv_list *l)
{
  struct spaa_converted *e;
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 4;
    struct spaa_converted *nv = realloc(l->v, nc * sizeof(*nv));
    if (!nv)
      return NULL;
    l->v = nv;
    l->cap = nc;
  }
  e = &l->v[l->n++];
  memset(e, 0, sizeof(*e));
  return e;
}

void spaa_conv_list_free(struct spaa_conv_list *l)
{
  size_t i;
  if (!l)
    return;
  for (i = 0; i < l->n; i++) {
    spaa_profile_free(l->v[i].profile);
    free(l->v[i].service);
    json_decref(l->v[i].labels);
    json_decref(l->v[i].attrs);
  }
  free(l->v);
  memset(l, 0, sizeof(*l));
}

int spaa_convert_spaa(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                      struct spaa_conv_list *out, struct spaa_err *err)
{
  struct spaa_profile *p = NULL;
  struct spaa_converted *c;
  int rc = spaa_read_buf(buf, len, &p, err);
  if (rc)
    return rc;
  if ((rc = spaa_normalize(p, err))) {
    spaa_profile_free(p);
    return rc;
  }
  if (!(c = spaa_conv_add(out))) {
    spaa_profile_free(p);
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  c->profile = p;
  if (o && o->service)
    c->service = strdup(o->service);
  return 0;
}
