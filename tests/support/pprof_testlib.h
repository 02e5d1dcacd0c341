/* Helpers for the pprof tests: build small profiles with the protoc-c structs (fixed-size
 * tables, enough for hand-made cases) and pack them. Header-only. */
#ifndef SPAA_TESTS_PPROF_TESTLIB_H
#define SPAA_TESTS_PPROF_TESTLIB_H

#include <stdlib.h>
#include <string.h>

#include "pprof/pprof_int.h"

#define TB_MAX 16

struct tb {
  Perftools__Profiles__Profile p;
  ProtobufCBinaryData strs[64];
  size_t n_strs;
  Perftools__Profiles__ValueType vt[TB_MAX], *vtp[TB_MAX], period_type;
  Perftools__Profiles__Mapping maps[TB_MAX], *mapp[TB_MAX];
  Perftools__Profiles__Function fns[TB_MAX], *fnp[TB_MAX];
  Perftools__Profiles__Location locs[TB_MAX], *locp[TB_MAX];
  Perftools__Profiles__Line lines[TB_MAX][4], *linep[TB_MAX][4];
  Perftools__Profiles__Sample smp[TB_MAX], *smpp[TB_MAX];
  uint64_t ids[TB_MAX][8];
  int64_t vals[TB_MAX][4];
  Perftools__Profiles__Label labels[TB_MAX][4], *labelp[TB_MAX][4];
};

/* Index of `s` in the string table, added when new. */
static inline int64_t tb_str(struct tb *b, const char *s)
{
  size_t i, n = strlen(s);
  for (i = 0; i < b->n_strs; i++)
    if (b->strs[i].len == n && (n == 0 || memcmp(b->strs[i].data, s, n) == 0))
      return (int64_t)i;
  b->strs[b->n_strs].data = (uint8_t *)s;
  b->strs[b->n_strs].len = n;
  return (int64_t)b->n_strs++;
}

/* An empty profile: string_table = [""], no types. */
static inline void tb_init(struct tb *b)
{
  memset(b, 0, sizeof(*b));
  perftools__profiles__profile__init(&b->p);
  tb_str(b, "");
}

static inline void tb_type(struct tb *b, const char *type, const char *unit)
{
  size_t i = b->p.n_sample_type++;
  perftools__profiles__value_type__init(&b->vt[i]);
  b->vt[i].type = tb_str(b, type);
  b->vt[i].unit = tb_str(b, unit);
}

/* Returns the new mapping's id (position + 1). */
static inline uint64_t tb_map(struct tb *b, const char *file, uint64_t start, uint64_t limit,
                              const char *build_id)
{
  size_t i = b->p.n_mapping++;
  perftools__profiles__mapping__init(&b->maps[i]);
  b->maps[i].id = i + 1;
  b->maps[i].filename = tb_str(b, file);
  b->maps[i].memory_start = start;
  b->maps[i].memory_limit = limit;
  if (build_id)
    b->maps[i].build_id = tb_str(b, build_id);
  return i + 1;
}

static inline uint64_t tb_fn(struct tb *b, const char *name, const char *file)
{
  size_t i = b->p.n_function++;
  perftools__profiles__function__init(&b->fns[i]);
  b->fns[i].id = i + 1;
  b->fns[i].name = tb_str(b, name);
  b->fns[i].system_name = b->fns[i].name;
  b->fns[i].filename = tb_str(b, file);
  return i + 1;
}

/* A location with `n` lines: fn[0] is the deepest inline, fn[n-1] the physical function. */
static inline uint64_t tb_loc(struct tb *b, uint64_t mapping, uint64_t addr, size_t n,
                              const uint64_t *fn)
{
  size_t i = b->p.n_location++, j;
  perftools__profiles__location__init(&b->locs[i]);
  b->locs[i].id = i + 1;
  b->locs[i].mapping_id = mapping;
  b->locs[i].address = addr;
  b->locs[i].n_line = n;
  for (j = 0; j < n; j++) {
    perftools__profiles__line__init(&b->lines[i][j]);
    b->lines[i][j].function_id = fn[j];
    b->lines[i][j].line = (int64_t)(10 * (j + 1));
  }
  return i + 1;
}

/* A sample of `n` location ids (leaf first) and one value per sample type (v). */
static inline size_t tb_sample(struct tb *b, size_t n, const uint64_t *locs, const int64_t *v)
{
  size_t i = b->p.n_sample++;
  perftools__profiles__sample__init(&b->smp[i]);
  memcpy(b->ids[i], locs, n * sizeof(*locs));
  b->smp[i].n_location_id = n;
  memcpy(b->vals[i], v, b->p.n_sample_type * sizeof(*v));
  b->smp[i].n_value = b->p.n_sample_type;
  return i;
}

static inline void tb_label(struct tb *b, size_t sample, const char *key, const char *str,
                            int64_t num, const char *unit)
{
  size_t j = b->smp[sample].n_label++;
  perftools__profiles__label__init(&b->labels[sample][j]);
  b->labels[sample][j].key = tb_str(b, key);
  if (str)
    b->labels[sample][j].str = tb_str(b, str);
  b->labels[sample][j].num = num;
  if (unit)
    b->labels[sample][j].num_unit = tb_str(b, unit);
}

/* Wire the pointers and pack; the caller frees the bytes. */
static inline uint8_t *tb_pack(struct tb *b, size_t *len)
{
  size_t i, j;
  uint8_t *out;
  for (i = 0; i < b->p.n_sample_type; i++)
    b->vtp[i] = &b->vt[i];
  for (i = 0; i < b->p.n_mapping; i++)
    b->mapp[i] = &b->maps[i];
  for (i = 0; i < b->p.n_function; i++)
    b->fnp[i] = &b->fns[i];
  for (i = 0; i < b->p.n_location; i++) {
    for (j = 0; j < b->locs[i].n_line; j++)
      b->linep[i][j] = &b->lines[i][j];
    b->locs[i].line = b->linep[i];
    b->locp[i] = &b->locs[i];
  }
  for (i = 0; i < b->p.n_sample; i++) {
    for (j = 0; j < b->smp[i].n_label; j++)
      b->labelp[i][j] = &b->labels[i][j];
    b->smp[i].label = b->labelp[i];
    b->smp[i].location_id = b->ids[i];
    b->smp[i].value = b->vals[i];
    b->smpp[i] = &b->smp[i];
  }
  b->p.sample_type = b->vtp;
  b->p.mapping = b->mapp;
  b->p.function = b->fnp;
  b->p.location = b->locp;
  b->p.sample = b->smpp;
  b->p.string_table = b->strs;
  b->p.n_string_table = b->n_strs;
  *len = perftools__profiles__profile__get_packed_size(&b->p);
  out = malloc(*len ? *len : 1);
  perftools__profiles__profile__pack(&b->p, out);
  return out;
}

/* A small valid profile: samples/count + cpu/nanoseconds, one mapping, a location with an
 * inlined call (inl inlined into outer) and a caller location; two samples. */
static inline void tb_basic(struct tb *b)
{
  uint64_t f_inl, f_outer, f_main, l0, l1, m;
  uint64_t fns[2];
  tb_init(b);
  tb_type(b, "samples", "count");
  tb_type(b, "cpu", "nanoseconds");
  m = tb_map(b, "/usr/bin/app", 0x400000, 0x500000, "ABCDEF01");
  f_inl = tb_fn(b, "inl", "a.c");
  f_outer = tb_fn(b, "outer", "a.c");
  f_main = tb_fn(b, "main", "main.c");
  fns[0] = f_inl, fns[1] = f_outer;
  l0 = tb_loc(b, m, 0x401000, 2, fns);
  l1 = tb_loc(b, m, 0x402000, 1, &f_main);
  {
    uint64_t s0[2] = {l0, l1}, s1[1] = {l1};
    int64_t v0[2] = {3, 30000000}, v1[2] = {1, 10000000};
    tb_sample(b, 2, s0, v0);
    tb_sample(b, 1, s1, v1);
  }
}

/* Three samples of one function without a file ("work" at lines 135, 140 and none) under
 * main (main.js:10): a line without a file must keep frames of one function apart. */
static inline void tb_lines_without_file(struct tb *b)
{
  uint64_t f, g, l[3], top, m;
  size_t i;
  tb_init(b);
  tb_type(b, "cpu", "nanoseconds");
  m = tb_map(b, "/usr/bin/node", 0x1000, 0x9000, NULL);
  f = tb_fn(b, "work", "");
  g = tb_fn(b, "main", "main.js");
  for (i = 0; i < 3; i++)
    l[i] = tb_loc(b, m, 0, 1, &f);
  b->lines[0][0].line = 135;
  b->lines[1][0].line = 140;
  b->lines[2][0].line = 0;
  top = tb_loc(b, m, 0, 1, &g);
  for (i = 0; i < 3; i++)
    tb_sample(b, 2, (uint64_t[]){l[i], top}, (int64_t[]){(int64_t)(i + 1)});
}

#endif
