/* The writer's content-id cache: committed content id -> row id of dsos, frames and stacks
 * in one open-addressing map, a pending list for the open transaction, and the service
 * dictionaries (engine_int.h). Used by one writer thread (or connection) at a time. */
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "storage/engine_int.h"

static void dict_free(struct storage__dict *d)
{
  storage__blk_cdict_free(d->cdict); /* it refers to raw */
  free(d->service);
  free(d->raw);
}

void storage__cache_free(struct storage__cache *c)
{
  size_t i;
  if (!c)
    return;
  free(c->slots);
  free(c->pending);
  for (i = 0; i < c->n_dicts; i++)
    dict_free(&c->dicts[i]);
  for (i = 0; i < c->n_pdicts; i++)
    dict_free(&c->pdicts[i]);
  memset(c, 0, sizeof(*c));
}

/* The slot of (kind, cid): the entry holding it, or the empty slot where it would go. */
static size_t slot_of(const struct storage__cache *c, enum storage__kind kind, const uint8_t *cid)
{
  uint64_t h;
  size_t i;
  memcpy(&h, cid, sizeof(h)); /* content ids are hashes: their bytes are spread already */
  i = (size_t)(h ^ (uint64_t)kind * 0x9e3779b97f4a7c15ull) & (c->cap - 1);
  while (c->slots[i].kind &&
         (c->slots[i].kind != kind + 1 || memcmp(c->slots[i].cid, cid, SPAA_CID_LEN) != 0))
    i = (i + 1) & (c->cap - 1);
  return i;
}

int storage__cache_get(const struct storage__cache *c, enum storage__kind kind,
                       const struct spaa_cid *cid, int64_t *row)
{
  size_t i;
  if (!c->n)
    return 0;
  i = slot_of(c, kind, cid->b);
  if (!c->slots[i].kind)
    return 0;
  *row = c->slots[i].row;
  return 1;
}

int storage__cache_pending(struct storage__cache *c, enum storage__kind kind,
                           const struct spaa_cid *cid, int64_t row)
{
  struct storage__cent *e;
  if (c->n_pending == c->cap_pending) {
    size_t nc = c->cap_pending ? 2 * c->cap_pending : 1024;
    struct storage__cent *nv;
    if (nc > SPAA_STORE_CID_CACHE)
      return 0; /* a huge transaction: the rest is simply not cached */
    if (!(nv = realloc(c->pending, nc * sizeof(*nv))))
      return SPAA_E_NOMEM;
    c->pending = nv;
    c->cap_pending = nc;
  }
  e = &c->pending[c->n_pending++];
  memcpy(e->cid, cid->b, SPAA_CID_LEN);
  e->kind = (uint8_t)(kind + 1);
  e->row = row;
  return 0;
}

void storage__cache_rollback(struct storage__cache *c, size_t mark)
{
  if (mark < c->n_pending)
    c->n_pending = mark;
  while (c->n_pdicts && c->pdict_mark[c->n_pdicts - 1] >= mark) {
    c->n_pdicts--;
    dict_free(&c->pdicts[c->n_pdicts]);
  }
}

static size_t dict_bytes(const struct storage__dict *d)
{
  return d->len + storage__blk_cdict_size(d->cdict);
}

/* Keep d (owned) among the committed dictionaries: the oldest go while there are
 * SPAA_STORE_DICT_CACHE of them or they hold more than SPAA_STORE_DICT_CACHE_BYTES with d (a
 * service whose dictionary went reads it again from the database). */
static void dict_keep(struct storage__cache *c, struct storage__dict d)
{
  size_t held = dict_bytes(&d), i, drop = 0;
  for (i = 0; i < c->n_dicts; i++)
    held += dict_bytes(&c->dicts[i]);
  while (drop < c->n_dicts &&
         (c->n_dicts - drop >= SPAA_STORE_DICT_CACHE || held > SPAA_STORE_DICT_CACHE_BYTES)) {
    held -= dict_bytes(&c->dicts[drop]);
    dict_free(&c->dicts[drop++]);
  }
  if (drop) {
    memmove(c->dicts, c->dicts + drop, (c->n_dicts - drop) * sizeof(*c->dicts));
    c->n_dicts -= drop;
  }
  c->dicts[c->n_dicts++] = d;
}

/* The map starts small and doubles (at most half full) up to the slots SPAA_STORE_CID_CACHE
 * entries need; there, when full, it starts over empty. A writer that has seen few stacks
 * holds a small map: the whole one is 16 MiB. */
#define CACHE_FIRST_SLOTS 4096

static size_t cache_max_slots(void)
{
  size_t cap = CACHE_FIRST_SLOTS;
  while (cap < 2 * (size_t)SPAA_STORE_CID_CACHE)
    cap <<= 1;
  return cap;
}

/* The map at cap slots with its entries moved over: 0, or SPAA_E_NOMEM (the map as it was). */
static int cache_resize(struct storage__cache *c, size_t cap)
{
  struct storage__cent *old = c->slots, *nv = calloc(cap, sizeof(*nv));
  size_t i, n = c->cap;
  if (!nv)
    return SPAA_E_NOMEM;
  c->slots = nv;
  c->cap = cap;
  for (i = 0; i < n; i++)
    if (old[i].kind)
      c->slots[slot_of(c, (enum storage__kind)(old[i].kind - 1), old[i].cid)] = old[i];
  free(old);
  return 0;
}

void storage__cache_commit(struct storage__cache *c)
{
  size_t i, cap = c->cap ? c->cap : CACHE_FIRST_SLOTS, want = c->n + c->n_pending;
  /* the size the committed rows need, in one resize: doubling step by step would hold each
   * smaller map beside the next, after a large profile's pending rows */
  while (cap < cache_max_slots() && 2 * want > cap)
    cap <<= 1;
  if ((!c->slots || cap > c->cap) && cache_resize(c, cap) && !c->slots) {
    c->n_pending = 0;
    return;
  }
  for (i = 0; i < c->n_pending; i++) {
    const struct storage__cent *e = &c->pending[i];
    size_t at;
    if (c->n >= SPAA_STORE_CID_CACHE) { /* full at its largest: start over */
      memset(c->slots, 0, c->cap * sizeof(*c->slots));
      c->n = 0;
    } else if (2 * (c->n + 1) > c->cap && c->cap < cache_max_slots() &&
               cache_resize(c, 2 * c->cap)) {
      break; /* out of memory: the rest is simply not cached */
    }
    at = slot_of(c, (enum storage__kind)(e->kind - 1), e->cid);
    if (!c->slots[at].kind) {
      c->slots[at] = *e;
      c->n++;
    }
  }
  c->n_pending = 0;
  for (i = 0; i < c->n_pdicts; i++)
    dict_keep(c, c->pdicts[i]);
  c->n_pdicts = 0;
}

struct storage__dict *storage__cache_dict(struct storage__cache *c,
                                                const char *service)
{
  size_t i;
  for (i = 0; i < c->n_dicts; i++)
    if (strcmp(c->dicts[i].service, service) == 0)
      return &c->dicts[i];
  for (i = 0; i < c->n_pdicts; i++)
    if (strcmp(c->pdicts[i].service, service) == 0)
      return &c->pdicts[i];
  return NULL;
}

int storage__cache_dict_put(struct storage__cache *c, const char *service, int64_t id,
                            const void *raw, size_t len, int pending)
{
  struct storage__dict d;
  if (storage__cache_dict(c, service) || (pending && c->n_pdicts == STORAGE_PENDING_DICTS))
    return 0;
  d.service = strdup(service);
  d.raw = malloc(len ? len : 1);
  d.id = id;
  d.len = len;
  d.cdict = NULL;
  if (!d.service || !d.raw) {
    free(d.service);
    free(d.raw);
    return SPAA_E_NOMEM;
  }
  memcpy(d.raw, raw, len);
  if (pending) {
    c->pdict_mark[c->n_pdicts] = c->n_pending;
    c->pdicts[c->n_pdicts++] = d;
  } else {
    dict_keep(c, d);
  }
  return 0;
}
