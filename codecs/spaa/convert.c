/* The list of converted profiles every converter fills, and SPAA's own converter. */
#include "spaa/convert.h"

#include <stdlib.h>
#include <string.h>

#include "spaa/spaa_io.h"

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
