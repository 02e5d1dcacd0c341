/* The writer's content-id cache: content id -> row id of dsos, frames and stacks in one
 * array of entries (committed, then those of the open transaction) with an open-addressing
 * table over the committed ones, and the service dictionaries (engine_int.h). Used by one
 * writer thread (or connection) at a time. */
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
  free(c->ents);
  free(c->slots);
  for (i = 0; i < c->n_dicts; i++)
    dict_free(&c->dicts[i]);
  for (i = 0; i < c->n_pdicts; i++)
    dict_free(&c->pdicts[i]);
  memset(c, 0, sizeof(*c));
}

/* The slot of (kind, cid): the one naming the entry that holds it, or the empty slot where
 * it would go. */
static size_t slot_of(const struct storage__cache *c, enum storage__kind kind, const uint8_t *cid)
{
  uint64_t h;
  size_t i;
  memcpy(&h, cid, sizeof(h)); /* content ids are hashes: their bytes are spread already */
  i = (size_t)(h ^ (uint64_t)kind * 0x9e3779b97f4a7c15ull) & (c->cap - 1);
  while (c->slots[i]) {
    const struct storage__cent *e = &c->ents[c->slots[i] - 1];
    if ((e->rk & 3) == (uint64_t)kind && memcmp(e->cid, cid, SPAA_CID_LEN) == 0)
      break;
    i = (i + 1) & (c->cap - 1);
  }
  return i;
}

int storage__cache_get(struct storage__cache *c, enum storage__kind kind,
                       const struct spaa_cid *cid, int64_t *row)
{
  size_t i;
  struct storage__cent *e;
  if (!c->n)
    return 0;
  i = slot_of(c, kind, cid->b);
  if (!c->slots[i])
    return 0;
  e = &c->ents[c->slots[i] - 1];
  e->rk |= CENT_FOUND;
  *row = (int64_t)((e->rk & ~CENT_FOUND) >> 2);
  return 1;
}

static int table_build(struct storage__cache *c, size_t cap);

/* Make room in a full cache: the committed entries found since the last time go on (their
 * mark cleared), the others are forgotten; when those kept would still fill more than half
 * the bound, the oldest of them go too. The pending ones follow those kept, in their order
 * (a rollback's marks count them alone); the table is rebuilt at its size. */
static void evict(struct storage__cache *c)
{
  size_t i, w = 0, keep = SPAA_STORE_CID_CACHE / 2, from = 0;
  if (!c->n)
    return;
  for (i = 0; i < c->n; i++)
    w += (c->ents[i].rk & CENT_FOUND) != 0;
  for (i = 0; w > keep && i < c->n; i++) /* the oldest found ones beyond half the bound */
    if (c->ents[i].rk & CENT_FOUND) {
      w--;
      from = i + 1;
    }
  for (i = from, w = 0; i < c->n; i++)
    if (c->ents[i].rk & CENT_FOUND) {
      c->ents[w] = c->ents[i];
      c->ents[w++].rk &= ~CENT_FOUND;
    }
  memmove(c->ents + w, c->ents + c->n, c->n_pending * sizeof(*c->ents));
  c->n = w;
  if (c->slots && table_build(c, c->cap))
    c->n = 0; /* out of memory for the table: nothing committed is findable */
}

int storage__cache_pending(struct storage__cache *c, enum storage__kind kind,
                           const struct spaa_cid *cid, int64_t row)
{
  struct storage__cent *e;
  if (row < 0 || (uint64_t)row >= (uint64_t)1 << 61)
    return 0;
  if (c->n + c->n_pending >= SPAA_STORE_CID_CACHE) {
    if (!c->n)
      return 0; /* a huge transaction: the rest is simply not cached */
    evict(c);
    if (c->n + c->n_pending >= SPAA_STORE_CID_CACHE)
      return 0;
  }
  if (c->n + c->n_pending == c->cap_ents) {
    size_t nc = c->cap_ents ? 2 * c->cap_ents : 1024;
    struct storage__cent *nv;
    if (nc > SPAA_STORE_CID_CACHE)
      nc = SPAA_STORE_CID_CACHE;
    if (!(nv = realloc(c->ents, nc * sizeof(*nv))))
      return SPAA_E_NOMEM;
    c->ents = nv;
    c->cap_ents = nc;
  }
  e = &c->ents[c->n + c->n_pending++];
  memcpy(e->cid, cid->b, SPAA_CID_LEN);
  e->rk = (uint64_t)row << 2 | (uint64_t)kind;
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

/* The table starts small and doubles (at most half full) as committed entries come: a
 * writer that has seen few stacks holds a small one; the whole cache is 4 MiB at its bound
 * (entries of 24 bytes, slots of 4). */
#define CACHE_FIRST_SLOTS 4096

/* The table at cap slots, filled from the committed entries: 0, or SPAA_E_NOMEM (no table:
 * nothing committed is findable, which the caller turns into an empty cache). */
static int table_build(struct storage__cache *c, size_t cap)
{
  size_t i;
  free(c->slots); /* the entries are the truth: the old table is not needed to rebuild */
  c->cap = 0;
  if (!(c->slots = calloc(cap, sizeof(*c->slots))))
    return SPAA_E_NOMEM;
  c->cap = cap;
  for (i = 0; i < c->n; i++)
    c->slots[slot_of(c, (enum storage__kind)(c->ents[i].rk & 3), c->ents[i].cid)] =
        (uint32_t)(i + 1);
  return 0;
}

void storage__cache_commit(struct storage__cache *c)
{
  size_t i, w, cap = c->cap ? c->cap : CACHE_FIRST_SLOTS;
  /* the size the committed rows need, in one rebuild */
  while (2 * (c->n + c->n_pending) > cap)
    cap <<= 1;
  if ((!c->slots || cap > c->cap) && table_build(c, cap)) {
    c->n = c->n_pending = 0; /* out of memory: an empty cache */
    free(c->slots);
    c->slots = NULL;
    goto dicts;
  }
  /* the pending entries join the committed ones in place, each once */
  for (i = 0, w = c->n; i < c->n_pending; i++) {
    const struct storage__cent e = c->ents[c->n + i];
    size_t at = slot_of(c, (enum storage__kind)(e.rk & 3), e.cid);
    if (c->slots[at])
      continue;
    c->ents[w] = e;
    c->slots[at] = (uint32_t)(w + 1);
    w++;
  }
  c->n = w;
  c->n_pending = 0;
dicts:
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
