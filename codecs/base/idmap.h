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
