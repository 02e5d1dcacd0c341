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

/* An upload is held to the same rules as `spaa-relay validate` (the reader alone would store
 * a file the validator refuses: header not first, a stack without the primary metric, an
 * undeclared event, two stacks under one id), in one pass: each line is parsed once for
 * both.
 *
 * Stack ids: whatever the header's stack_id_mode says, spaa_normalize replaces the file's
 * ids with the content ids of docs/content-ids.md and rewrites the samples, windows and
 * related_stacks that name them; stacks of equal content merge. The spec (§4.1) leaves a
 * content-addressable file's hash to its writer, so ids from another tool, or ids that are
 * not content ids at all, are no error; kept as given they would split one stack in two
 * across sources, or give one id two stacks in the store. */
int spaa_convert_spaa(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                      struct spaa_conv_list *out, struct spaa_err *err)
{
  struct spaa_profile *p = NULL;
  struct spaa_converted *c;
  int rc = spaa_read_checked_buf(buf, len, NULL, NULL, 1, NULL, &p, err);
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
