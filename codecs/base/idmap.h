/* Open-addressing hash maps: u64 key -> size_t value, and string key -> size_t value.
 * Used to look dictionary ids up (never to index arrays by wire ids). */
#ifndef SPAA_IDMAP_H
#define SPAA_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct spaa_idmap {
  uint64_t *keys;   /* slot keys */
  size_t *vals;     /* slot values + 1; 0 marks an empty slot */
  size_t n;         /* entries */
  size_t mask;      /* slots - 1 (power of two), 0 when unallocated */
};

void spaa_idmap_init(struct spaa_idmap *m);
void spaa_idmap_free(struct spaa_idmap *m); /* NULL-safe */
/* Insert key -> val. Returns 0, 1 when the key was already there (value unchanged; *old
 * receives it when old != NULL), or SPAA_E_NOMEM. */
int spaa_idmap_put(struct spaa_idmap *m, uint64_t key, size_t val, size_t *old);
/* 1 and *val set when found, else 0. */
int spaa_idmap_get(const struct spaa_idmap *m, uint64_t key, size_t *val);
size_t spaa_idmap_bytes(const struct spaa_idmap *m); /* what its slots hold */

/* Id -> position over an array of records that each hold a u64 id: direct when the ids are
 * consecutive in array order (what converters write: no memory at all, where a map of 66 k
 * frame ids takes 2 MB), through a map otherwise. Never indexes by an unchecked id. */
struct spaa_idlookup {
  int dense;              /* ids are base, base+1, ... in array order */
  uint64_t base;
  size_t n;
  struct spaa_idmap map;  /* when !dense */
};
/* The ids of n records of `stride` bytes from arr, each at byte `off` of its record: 0, 1
 * when an id is there twice (*dup gets it when dup != NULL; the first is kept), or
 * SPAA_E_NOMEM. Free with spaa_idlookup_free whatever it returns. */
int spaa_idlookup_build(struct spaa_idlookup *l, const void *arr, size_t n, size_t stride,
                        size_t off, uint64_t *dup);
/* 1 and *idx set when id is there, else 0. */
int spaa_idlookup_get(const struct spaa_idlookup *l, uint64_t id, size_t *idx);
void spaa_idlookup_free(struct spaa_idlookup *l);

/* String keys are borrowed: they must outlive the map. */
struct spaa_strmap {
  const char **keys; /* slot keys (borrowed) */
  size_t *lens;      /* key lengths */
  size_t *vals;      /* slot values + 1; 0 marks an empty slot */
  size_t n;          /* entries */
  size_t mask;       /* slots - 1, 0 when unallocated */
};

void spaa_strmap_init(struct spaa_strmap *m);
void spaa_strmap_free(struct spaa_strmap *m); /* NULL-safe */
int spaa_strmap_put(struct spaa_strmap *m, const char *key, size_t len, size_t val, size_t *old);
/* Room for n entries in all, made at once (no doubling on the way): 0 or SPAA_E_NOMEM. */
int spaa_strmap_reserve(struct spaa_strmap *m, size_t n);
int spaa_strmap_get(const struct spaa_strmap *m, const char *key, size_t len, size_t *val);
size_t spaa_strmap_bytes(const struct spaa_strmap *m); /* its slots, not the borrowed keys */

#endif
