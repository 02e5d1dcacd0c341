/* The three arrays that make a Sentry profile large, read in place from the checked payload
 * (sentry_json.c) into the decoder's flat tables: frames (checked, their bytes kept for the
 * builder), stacks (flattened), samples of V1 and V2 (threads made as they appear). Errors
 * are Relay's, word for word and in Relay's order, as sentry_profile.c reports the rest. */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "base/hex.h"
#include "sentry/sentry_int.h"

#define BAD(p, ...) sentry__rej(p, SENTRY__R_INVALID_JSON, __VA_ARGS__)

/* A u64 read in place: an integer, or a string that parse_str reads (an address for
 * instruction_addr, a decimal number for Relay's number-from-string fields). 0, -1, or
 * SPAA_E_NOMEM. */
static int u64_span(struct sentry__profile *p, struct sentry__span v,
                    int (*parse_str)(const char *s, size_t n, uint64_t *out), uint64_t *out)
{
  const char *s;
  size_t n;
  int64_t i;
  switch (sentry__kind(v)) {
  case SENTRY__J_INT:
    if ((i = sentry__int(v)) < 0)
      return -1;
    *out = (uint64_t)i;
    return 0;
  case SENTRY__J_STR:
    if (sentry__str(v, &p->sc, &s, &n))
      return SPAA_E_NOMEM;
    return parse_str(s, n, out);
  default:
    return -1;
  }
}

/* The frame members the rules check, in the order Relay reports them. */
static const char *const frame_keys[] = {"abs_path", "filename", "file", "function", "name",
                                         "module", "package", "platform", "colno", "column",
                                         "lineno", "line", "in_app", "instruction_addr"};
#define FK_STR 8   /* frame_keys[0..FK_STR): optional strings */
#define FK_U32 12  /* [FK_STR..FK_U32): optional u32 */
#define FK_BOOL 12 /* in_app */
#define FK_ADDR 13 /* instruction_addr */

static int check_frame(struct sentry__profile *p, struct sentry__span f, size_t i)
{
  struct sentry__span v[sizeof(frame_keys) / sizeof(frame_keys[0])];
  size_t k;
  int rc;
  if (sentry__kind(f) != SENTRY__J_OBJ)
    return BAD(p, "profile.frames[%zu]: invalid type, expected an object", i);
  sentry__fields(f, frame_keys, sizeof(frame_keys) / sizeof(frame_keys[0]), v);
  for (k = 0; k < FK_ADDR; k++) {
    enum sentry__jkind t = sentry__kind(v[k]);
    if (t == SENTRY__J_ABSENT || t == SENTRY__J_NULL)
      continue;
    if (k < FK_STR && t != SENTRY__J_STR)
      return BAD(p, "profile.frames[%zu].%s: invalid type, expected a string", i, frame_keys[k]);
    if (k >= FK_STR && k < FK_U32 &&
        (t != SENTRY__J_INT || sentry__int(v[k]) < 0 || sentry__int(v[k]) > UINT32_MAX))
      return BAD(p, "profile.frames[%zu].%s: invalid value, expected a u32", i, frame_keys[k]);
    if (k == FK_BOOL && t != SENTRY__J_TRUE && t != SENTRY__J_FALSE)
      return BAD(p, "profile.frames[%zu].%s: invalid type, expected a boolean", i, frame_keys[k]);
  }
  if (v[FK_ADDR].p && sentry__kind(v[FK_ADDR]) != SENTRY__J_NULL) {
    if ((rc = u64_span(p, v[FK_ADDR], sentry__parse_addr_str, &p->addr[i])) < -1)
      return rc;
    if (rc)
      return BAD(p, "profile.frames[%zu].instruction_addr: invalid value, expected an address", i);
    p->has_addr[i] = 1;
  }
  p->frame[i] = f;
  return 0;
}

/* profile.frames and profile.stacks into flat arrays. */
int sentry__load_frames_stacks(struct sentry__profile *p)
{
  const struct sentry__arr *stacks = &p->stacks_v, *frames = &p->frames_v;
  struct sentry__iter it, in;
  struct sentry__span e, f;
  size_t i, j, total = 0, bad_i = 0, bad_j = 0;
  int rc, bad = 0;
  if (!stacks->v.p)
    return BAD(p, "profile: missing field `stacks`");
  if (!frames->v.p)
    return BAD(p, "profile: missing field `frames`");
  if (sentry__kind(stacks->v) != SENTRY__J_ARR)
    return BAD(p, "profile.stacks: invalid type, expected a sequence");
  if (sentry__kind(frames->v) != SENTRY__J_ARR)
    return BAD(p, "profile.frames: invalid type, expected a sequence");
  p->n_frames = frames->n;
  p->n_stacks = stacks->n;
  if (!(p->addr = sentry__calloc(p, p->n_frames + 1, sizeof(*p->addr))) ||
      !(p->has_addr = sentry__calloc(p, p->n_frames + 1, 1)) ||
      !(p->frame = sentry__calloc(p, p->n_frames + 1, sizeof(*p->frame))) ||
      !(p->stack_off = sentry__calloc(p, p->n_stacks + 1, sizeof(*p->stack_off))) ||
      !(p->stack_frames = sentry__calloc(p, stacks->n_inner + 1, sizeof(*p->stack_frames))))
    return SPAA_E_NOMEM;
  sentry__iter_init(&it, frames->v);
  for (i = 0; i < p->n_frames && sentry__iter_next(&it, &e); i++)
    if ((rc = check_frame(p, e, i)))
      return rc;
  /* one pass: a stack that is not an array is reported before a bad index of any stack, as
   * Relay checks every stack's type first */
  sentry__iter_init(&it, stacks->v);
  for (i = 0; i < p->n_stacks && sentry__iter_next(&it, &e); i++) {
    if (sentry__kind(e) != SENTRY__J_ARR)
      return BAD(p, "profile.stacks[%zu]: invalid type, expected a sequence", i);
    p->stack_off[i] = total;
    sentry__iter_init(&in, e);
    for (j = 0; sentry__iter_next(&in, &f); j++) {
      if (bad)
        continue;
      if (sentry__kind(f) != SENTRY__J_INT || sentry__int(f) < 0) {
        bad = 1;
        bad_i = i;
        bad_j = j;
      } else if (total < stacks->n_inner) {
        p->stack_frames[total++] = (uint64_t)sentry__int(f);
      }
    }
  }
  if (bad)
    return BAD(p, "profile.stacks[%zu][%zu]: invalid value, expected a frame index", bad_i, bad_j);
  p->stack_off[p->n_stacks] = total;
  return 0;
}

/* The thread of id (V1) or sid (V2, sidlen bytes, read in place: copied when new) into *idx,
 * made on first sight. 0 or SPAA_E_NOMEM. */
static int thread_add(struct sentry__profile *p, uint64_t id, const char *sid, size_t sidlen,
                      size_t *idx)
{
  struct sentry__thread *t;
  int rc;
  if (sid ? spaa_strmap_get(&p->tstr_map, sid, sidlen, idx) : spaa_idmap_get(&p->tid_map, id, idx))
    return 0;
  if (sid && !(sid = sentry__strs_put(&p->strs, sid, sidlen))) /* sid was read in place */
    return SPAA_E_NOMEM;
  if (p->n_threads == p->cap_threads) {
    size_t nc = p->cap_threads ? p->cap_threads * 2 : 8;
    struct sentry__thread *nt =
        sentry__realloc(p, p->threads, p->cap_threads * sizeof(*nt), nc, sizeof(*nt));
    if (!nt)
      return SPAA_E_NOMEM;
    p->threads = nt;
    p->cap_threads = nc;
  }
  t = &p->threads[p->n_threads];
  memset(t, 0, sizeof(*t));
  t->id_u64 = id;
  t->id_str = sid;
  if (sid) {
    uint64_t v;
    if (!sentry__parse_u64_str(sid, sidlen, &v) && v <= INT64_MAX && (sidlen == 1 || sid[0] != '0')) {
      t->tid = (int64_t)v;
      t->tid_exact = 1;
    } else if (sidlen > 2 && sid[0] == '0' && (sid[1] | 32) == 'x' &&
               !spaa_hex_parse_u64(sid + 2, sidlen - 2, &v) && v <= INT64_MAX) {
      t->tid = (int64_t)v;
    } else {
      t->tid = (int64_t)(XXH3_64bits(sid, sidlen) & 0x3fffffffffffffffull);
    }
    rc = spaa_strmap_put(&p->tstr_map, sid, sidlen, p->n_threads, NULL);
  } else {
    t->tid = id <= INT64_MAX ? (int64_t)id : (int64_t)(id & 0x7fffffffffffffffull);
    t->tid_exact = id <= INT64_MAX;
    rc = spaa_idmap_put(&p->tid_map, id, p->n_threads, NULL);
  }
  if (rc < 0)
    return SPAA_E_NOMEM;
  *idx = p->n_threads++;
  return 0;
}

/* A V1 sample's queue_address, kept once per distinct address. 0 or SPAA_E_NOMEM. */
static int queue_of(struct sentry__profile *p, const char *s, size_t n, const char **out)
{
  size_t idx;
  if (spaa_strmap_get(&p->queue_map, s, n, &idx)) {
    *out = p->queue_names[idx];
    return 0;
  }
  if (p->n_queues == p->cap_queues) {
    size_t nc = p->cap_queues ? p->cap_queues * 2 : 8;
    const char **nq = sentry__realloc(p, p->queue_names, p->cap_queues * sizeof(*nq), nc,
                                      sizeof(*nq));
    if (!nq)
      return SPAA_E_NOMEM;
    p->queue_names = nq;
    p->cap_queues = nc;
  }
  if (!(*out = sentry__strs_put(&p->strs, s, n)) ||
      spaa_strmap_put(&p->queue_map, *out, n, p->n_queues, NULL) < 0)
    return SPAA_E_NOMEM;
  p->queue_names[p->n_queues++] = *out;
  return 0;
}

/* The V1 samples array into p->samples (stack, thread, elapsed time, queue), threads made
 * as they appear. 0, SPAA_E_NOMEM or a rejection. */
int sentry__v1_samples(struct sentry__profile *p)
{
  static const char *const keys[] = {"stack_id", "thread_id", "elapsed_since_start_ns",
                                     "queue_address"};
  struct sentry__iter it;
  struct sentry__span e, v[4];
  size_t i;
  int rc;
  p->n_samples = p->samples_v.n;
  if (!(p->samples = sentry__calloc(p, p->n_samples + 1, sizeof(*p->samples))))
    return SPAA_E_NOMEM;
  sentry__iter_init(&it, p->samples_v.v);
  for (i = 0; i < p->n_samples && sentry__iter_next(&it, &e); i++) {
    struct sentry__sample *o = &p->samples[i];
    uint64_t tid;
    if (sentry__kind(e) != SENTRY__J_OBJ)
      return BAD(p, "profile.samples[%zu]: invalid type, expected an object", i);
    sentry__fields(e, keys, 4, v);
    if (!v[0].p)
      return BAD(p, "profile.samples[%zu]: missing field `stack_id`", i);
    if (sentry__kind(v[0]) != SENTRY__J_INT || sentry__int(v[0]) < 0)
      return BAD(p, "profile.samples[%zu].stack_id: invalid value, expected a stack index", i);
    o->stack = (uint64_t)sentry__int(v[0]);
    if (!v[1].p)
      return BAD(p, "profile.samples[%zu]: missing field `thread_id`", i);
    if ((rc = u64_span(p, v[1], sentry__parse_u64_str, &tid)) < -1)
      return rc;
    if (rc)
      return BAD(p, "profile.samples[%zu].thread_id: invalid value, expected a u64", i);
    if (!v[2].p)
      return BAD(p, "profile.samples[%zu]: missing field `elapsed_since_start_ns`", i);
    if ((rc = u64_span(p, v[2], sentry__parse_u64_str, &o->elapsed)) < -1)
      return rc;
    if (rc)
      return BAD(p, "profile.samples[%zu].elapsed_since_start_ns: invalid value, expected a u64", i);
    if (v[3].p && sentry__kind(v[3]) != SENTRY__J_NULL) {
      const char *q;
      size_t qn;
      if (sentry__kind(v[3]) != SENTRY__J_STR)
        return BAD(p, "profile.samples[%zu].queue_address: invalid type, expected a string", i);
      if (sentry__str(v[3], &p->sc, &q, &qn) || queue_of(p, q, qn, &o->queue))
        return SPAA_E_NOMEM;
    }
    o->index = i;
    if ((rc = thread_add(p, tid, NULL, 0, &o->thread)))
      return rc;
  }
  return 0;
}

/* The V2 samples array into p->samples (time, stack, thread), threads made as they appear.
 * 0, SPAA_E_NOMEM or a rejection. */
int sentry__v2_samples(struct sentry__profile *p)
{
  static const char *const keys[] = {"timestamp", "stack_id", "thread_id"};
  struct sentry__iter it;
  struct sentry__span e, v[3];
  size_t i;
  int rc;
  p->n_samples = p->samples_v.n;
  if (!(p->samples = sentry__calloc(p, p->n_samples + 1, sizeof(*p->samples))))
    return SPAA_E_NOMEM;
  sentry__iter_init(&it, p->samples_v.v);
  for (i = 0; i < p->n_samples && sentry__iter_next(&it, &e); i++) {
    struct sentry__sample *o = &p->samples[i];
    enum sentry__jkind k;
    const char *tid;
    size_t tn;
    if (sentry__kind(e) != SENTRY__J_OBJ)
      return BAD(p, "profile.samples[%zu]: invalid type, expected an object", i);
    sentry__fields(e, keys, 3, v);
    if (!v[0].p)
      return BAD(p, "profile.samples[%zu]: missing field `timestamp`", i);
    k = sentry__kind(v[0]);
    if ((k != SENTRY__J_INT && k != SENTRY__J_REAL) ||
        (k == SENTRY__J_REAL ? sentry__secs_to_ns(sentry__real(v[0]), &o->t_ns)
                             : sentry__secs_to_ns((double)sentry__int(v[0]), &o->t_ns)))
      return BAD(p, "profile.samples[%zu].timestamp: invalid value, expected seconds as a number", i);
    if (o->t_ns < 0)
      return BAD(p, "profile.samples[%zu].timestamp: invalid value, expected seconds since "
                 "1970, not a negative number", i);
    if (!v[1].p)
      return BAD(p, "profile.samples[%zu]: missing field `stack_id`", i);
    if (sentry__kind(v[1]) != SENTRY__J_INT || sentry__int(v[1]) < 0)
      return BAD(p, "profile.samples[%zu].stack_id: invalid value, expected a stack index", i);
    o->stack = (uint64_t)sentry__int(v[1]);
    if (!v[2].p)
      return BAD(p, "profile.samples[%zu]: missing field `thread_id`", i);
    if (sentry__kind(v[2]) != SENTRY__J_STR)
      return BAD(p, "profile.samples[%zu].thread_id: invalid type, expected a string", i);
    o->index = i;
    if (sentry__str(v[2], &p->sc, &tid, &tn))
      return SPAA_E_NOMEM;
    if ((rc = thread_add(p, 0, tid, tn, &o->thread)))
      return rc;
  }
  return 0;
}

