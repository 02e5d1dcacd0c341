/* The stack weights of stored blocks, for spaa_store_scan on every engine: a block's stacks
 * with their weights named by metric, straight from the block, to the caller's callback. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "storage/engine_int.h"

static void strs_free(struct storage__scan *x)
{
  size_t i;
  for (i = 0; i < x->n_strs; i++)
    free(x->strs[i]);
  free(x->strs);
  x->strs = NULL;
  x->n_strs = 0;
}

/* The block's string table into x->strs. 0, SPAA_E_STORE (corrupt), SPAA_E_NOMEM. */
static int load_strs(struct storage__scan *x, struct storage__rd *r)
{
  uint64_t n = storage__get_uv(r), i;
  strs_free(x);
  if (r->bad || n > r->len)
    return SPAA_E_STORE;
  if (!(x->strs = calloc(n ? (size_t)n : 1, sizeof(*x->strs))))
    return SPAA_E_NOMEM;
  for (i = 0; i < n; i++) {
    uint64_t len = storage__get_uv(r);
    if (r->bad || !len || len - 1 > r->len - r->pos)
      return SPAA_E_STORE;
    if (!(x->strs[i] = strndup((const char *)r->p + r->pos, (size_t)(len - 1))))
      return SPAA_E_NOMEM;
    x->n_strs = (size_t)i + 1;
    r->pos += (size_t)(len - 1);
  }
  return 0;
}

/* Grow the weight arrays to hold n. 0 or SPAA_E_NOMEM. */
static int weights_room(struct storage__scan *x, size_t n)
{
  void *a, *b;
  if (n <= x->cap_w)
    return 0;
  if (!(a = realloc(x->w, n * sizeof(*x->w))))
    return SPAA_E_NOMEM;
  x->w = a;
  if (!(b = realloc(x->out, n * sizeof(*x->out))))
    return SPAA_E_NOMEM;
  x->out = b;
  x->cap_w = n;
  return 0;
}

int storage__scan_block(struct storage__scan *x, int64_t num, const char *id)
{
  struct storage__blk_rd b;
  struct spaa_store_scan_stack st;
  uint64_t i;
  size_t k, n;
  int rc;
  if (storage__blk_open(&b, x->raw.p, x->raw.len) || (rc = load_strs(x, &b.sec[BS_STRINGS])) ==
      SPAA_E_STORE)
    return SPAA_E_STORE;
  if (rc)
    return rc;
  st.profile = num;
  st.profile_id = id;
  for (i = 0; i < b.n[BN_STACKS]; i++) {
    struct storage__rd xr;
    size_t cap;
    if (storage__blk_next_stack(&b, &st.stack, &xr) ||
        (cap = storage__blk_peek_weights(&b)) == SIZE_MAX)
      return SPAA_E_STORE;
    if ((rc = weights_room(x, cap ? cap : 1)))
      return rc;
    if (storage__blk_next_weights(&b, x->w, x->cap_w, &n))
      return SPAA_E_STORE;
    for (k = 0; k < n; k++) {
      if (!x->w[k].metric || x->w[k].metric > x->n_strs || x->w[k].unit > x->n_strs)
        return SPAA_E_STORE;
      x->out[k].metric = x->strs[x->w[k].metric - 1];
      x->out[k].unit = x->w[k].unit ? x->strs[x->w[k].unit - 1] : NULL;
      x->out[k].value = x->w[k].value;
    }
    st.weights = x->out;
    st.n_weights = n;
    if ((rc = x->cb(x->ctx, &st)))
      return rc;
  }
  return 0;
}

int storage__scan_room(struct storage__scan *x, const void *z, size_t len)
{
  return spaa_meter_hold(x->meter, &x->metered, storage__blk_raw_size(z, len) + 1) ? SPAA_E_NOMEM
                                                                                  : 0;
}

void storage__scan_free(struct storage__scan *x)
{
  strs_free(x);
  spaa_buf_free(&x->raw);
  free(x->w);
  free(x->out);
  spaa_meter_give(x->meter, &x->metered, x->metered);
  x->w = NULL;
  x->out = NULL;
  x->cap_w = 0;
}
