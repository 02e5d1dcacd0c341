/* Open-addressing hash maps with linear probing (see idmap.h). */
#include "base/idmap.h"

#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "base/err.h"

static uint64_t mix64(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

void spaa_idmap_init(struct spaa_idmap *m) { memset(m, 0, sizeof(*m)); }

void spaa_idmap_free(struct spaa_idmap *m)
{
  if (!m)
    return;
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof(*m));
}

static int idmap_grow(struct spaa_idmap *m)
{
  size_t ns = m->mask ? (m->mask + 1) * 2 : 64, i;
  uint64_t *nk = calloc(ns, sizeof(*nk));
  size_t *nv = calloc(ns, sizeof(*nv));
  if (!nk || !nv) {
    free(nk);
    free(nv);
    return SPAA_E_NOMEM;
  }
  if (m->mask) {
    for (i = 0; i <= m->mask; i++) {
      size_t j;
      if (!m->vals[i])
        continue;
      j = mix64(m->keys[i]) & (ns - 1);
      while (nv[j])
        j = (j + 1) & (ns - 1);
      nk[j] = m->keys[i];
      nv[j] = m->vals[i];
    }
  }
  free(m->keys);
  free(m->vals);
  m->keys = nk;
  m->vals = nv;
  m->mask = ns - 1;
  return 0;
}

int spaa_idmap_put(struct spaa_idmap *m, uint64_t key, size_t val, size_t *old)
{
  size_t i;
  if ((m->n + 1) * 4 > (m->mask + 1) * 3 || !m->mask) {
    int rc = idmap_grow(m);
    if (rc)
      return rc;
  }
  i = mix64(key) & m->mask;
  while (m->vals[i]) {
    if (m->keys[i] == key) {
      if (old)
        *old = m->vals[i] - 1;
      return 1;
    }
    i = (i + 1) & m->mask;
  }
  m->keys[i] = key;
  m->vals[i] = val + 1;
  m->n++;
  return 0;
}

int spaa_idmap_get(const struct spaa_idmap *m, uint64_t key, size_t *val)
{
  size_t i;
  if (!m->mask)
    return 0;
  i = mix64(key) & m->mask;
  while (m->vals[i]) {
    if (m->keys[i] == key) {
      if (val)
        *val = m->vals[i] - 1;
      return 1;
    }
    i = (i + 1) & m->mask;
  }
  return 0;
}

void spaa_strmap_init(struct spaa_strmap *m) { memset(m, 0, sizeof(*m)); }

void spaa_strmap_free(struct spaa_strmap *m)
{
  if (!m)
    return;
  free(m->keys);
  free(m->lens);
  free(m->vals);
  memset(m, 0, sizeof(*m));
}

/* The map at ns slots (a power of two holding its entries). */
static int strmap_resize(struct spaa_strmap *m, size_t ns)
{
  size_t i;
  const char **nk = calloc(ns, sizeof(*nk));
  size_t *nl = calloc(ns, sizeof(*nl));
  size_t *nv = calloc(ns, sizeof(*nv));
  if (!nk || !nl || !nv) {
    free(nk);
    free(nl);
    free(nv);
    return SPAA_E_NOMEM;
  }
  if (m->mask) {
    for (i = 0; i <= m->mask; i++) {
      size_t j;
      if (!m->vals[i])
        continue;
      j = XXH3_64bits(m->keys[i], m->lens[i]) & (ns - 1);
      while (nv[j])
        j = (j + 1) & (ns - 1);
      nk[j] = m->keys[i];
      nl[j] = m->lens[i];
      nv[j] = m->vals[i];
    }
  }
  free(m->keys);
  free(m->lens);
  free(m->vals);
  m->keys = nk;
  m->lens = nl;
  m->vals = nv;
  m->mask = ns - 1;
  return 0;
}

static int strmap_grow(struct spaa_strmap *m)
{
  return strmap_resize(m, m->mask ? (m->mask + 1) * 2 : 64);
}

int spaa_strmap_reserve(struct spaa_strmap *m, size_t n)
{
  size_t ns = m->mask ? m->mask + 1 : 64;
  while (n * 4 > ns * 3) {
    if (ns > SIZE_MAX / 2 / sizeof(size_t))
      return SPAA_E_NOMEM;
    ns *= 2;
  }
  return ns > m->mask + 1 || !m->mask ? strmap_resize(m, ns) : 0;
}

int spaa_strmap_put(struct spaa_strmap *m, const char *key, size_t len, size_t val, size_t *old)
{
  size_t i;
  if ((m->n + 1) * 4 > (m->mask + 1) * 3 || !m->mask) {
    int rc = strmap_grow(m);
    if (rc)
      return rc;
  }
  i = XXH3_64bits(key, len) & m->mask;
  while (m->vals[i]) {
    if (m->lens[i] == len && memcmp(m->keys[i], key, len) == 0) {
      if (old)
        *old = m->vals[i] - 1;
      return 1;
    }
    i = (i + 1) & m->mask;
  }
  m->keys[i] = key;
  m->lens[i] = len;
  m->vals[i] = val + 1;
  m->n++;
  return 0;
}

int spaa_strmap_get(const struct spaa_strmap *m, const char *key, size_t len, size_t *val)
{
  size_t i;
  if (!m->mask)
    return 0;
  i = XXH3_64bits(key, len) & m->mask;
  while (m->vals[i]) {
    if (m->lens[i] == len && memcmp(m->keys[i], key, len) == 0) {
      if (val)
        *val = m->vals[i] - 1;
      return 1;
    }
    i = (i + 1) & m->mask;
  }
  return 0;
}

size_t spaa_idmap_bytes(const struct spaa_idmap *m)
{
  return m->mask ? (m->mask + 1) * (sizeof(*m->keys) + sizeof(*m->vals)) : 0;
}

size_t spaa_strmap_bytes(const struct spaa_strmap *m)
{
  return m->mask ? (m->mask + 1) * (sizeof(*m->keys) + sizeof(*m->lens) + sizeof(*m->vals)) : 0;
}

int spaa_idlookup_build(struct spaa_idlookup *l, const void *arr, size_t n, size_t stride,
                        size_t off, uint64_t *dup)
{
  const char *a = arr;
  size_t i;
  int twice = 0;
  memset(l, 0, sizeof(*l));
  spaa_idmap_init(&l->map);
  l->n = n;
  l->dense = 1;
  if (n)
    memcpy(&l->base, a + off, sizeof(uint64_t));
  for (i = 0; i < n && l->dense; i++) {
    uint64_t id;
    memcpy(&id, a + i * stride + off, sizeof(id));
    if (id != l->base + i || l->base + i < l->base) /* (no wrapping past 2^64 - 1) */
      l->dense = 0;
  }
  for (i = 0; !l->dense && i < n; i++) {
    uint64_t id;
    int rc;
    memcpy(&id, a + i * stride + off, sizeof(id));
    if ((rc = spaa_idmap_put(&l->map, id, i, NULL)) < 0)
      return rc;
    if (rc == 1 && !twice++ && dup)
      *dup = id;
  }
  return twice ? 1 : 0;
}

int spaa_idlookup_get(const struct spaa_idlookup *l, uint64_t id, size_t *idx)
{
  if (l->dense) {
    if (id < l->base || id - l->base >= l->n)
      return 0;
    *idx = (size_t)(id - l->base);
    return 1;
  }
  return spaa_idmap_get(&l->map, id, idx);
}

void spaa_idlookup_free(struct spaa_idlookup *l)
{
  spaa_idmap_free(&l->map);
  l->dense = 0;
  l->n = 0;
}
