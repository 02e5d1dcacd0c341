/* Inserting one prepared profile inside the open transaction: the profile row first (an id
 * already stored ends it there), shared dso, frame and stack rows found by content id (the
 * connection's cache, else SELECT, else INSERT ... ON CONFLICT DO NOTHING RETURNING and a
 * SELECT for the loser of a race with another relay), labels, events, and the block, built
 * and compressed as the SQLite engine does. */
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "storage/postgres/pg_int.h"

static void params0(struct pg__params *p) { memset(p, 0, sizeof(*p)); }

/* The single id column of a one-row answer: 1 with *row, 0 when no row came. */
static int one_id(struct pg__conn *c, enum pg__st id, const struct pg__params *p, int64_t *row,
                  struct spaa_err *err)
{
  PGresult *r = pg__run(c, id, p, err);
  int found;
  if (!r)
    return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  found = PQntuples(r) > 0;
  if (found)
    *row = pg__int(r, 0, 0);
  PQclear(r);
  return found;
}

/* The row of content id cid: cached, found (unless `absent`: the caller just looked), or
 * inserted with the kind's ADD statement (params in *ins, the cid first); a lost race is
 * found again. 0 or an error. */
static int row_of(struct pg__conn *c, enum storage__kind kind, const struct spaa_cid *cid,
                  const struct pg__params *ins, int absent, int64_t *row, struct spaa_err *err)
{
  static const enum pg__st get[] = {PS_DSO_GET, PS_FRAME_GET, PS_STACK_GET};
  static const enum pg__st add[] = {PS_DSO_ADD, PS_FRAME_ADD, PS_STACK_ADD};
  struct pg__params p;
  int rc;
  if (storage__cache_get(&c->cache, kind, cid, row)) {
    c->cache.hits++;
    return 0;
  }
  c->cache.misses++;
  params0(&p);
  pg__p_bytes(&p, cid->b, SPAA_CID_LEN);
  rc = absent ? 0 : one_id(c, get[kind], &p, row, err);
  if (rc == 0 &&
      (rc = one_id(c, add[kind], ins, row, err)) == 0)
    rc = one_id(c, get[kind], &p, row, err);
  if (rc < 0)
    return rc;
  if (rc == 0)
    return spaa_err_set(err, SPAA_E_STORE, 0, 0, "a shared row vanished while it was stored");
  return storage__cache_pending(&c->cache, kind, cid, *row)
             ? spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL) : 0;
}

static int add_dsos(struct pg__conn *c, const struct storage__prep *pr, int64_t *rows,
                    struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  char small[512];
  size_t i;
  int rc = 0;
  for (i = 0; i < p->n_dsos && !rc; i++) {
    struct pg__params ins;
    char *key = small;
    size_t n;
    if (storage__cache_get(&c->cache, SK_DSO, &pr->dso_cid[i], &rows[i]))
      continue;
    n = spaa_dso_key(&p->dsos[i], small, sizeof(small));
    if (n >= sizeof(small)) {
      if (!(key = malloc(n + 1)))
        return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      spaa_dso_key(&p->dsos[i], key, n + 1);
    }
    params0(&ins);
    pg__p_bytes(&ins, pr->dso_cid[i].b, SPAA_CID_LEN);
    pg__p_bytes(&ins, key, n);
    rc = row_of(c, SK_DSO, &pr->dso_cid[i], &ins, 0, &rows[i], err);
    if (key != small)
      free(key);
  }
  return rc;
}

static int add_frames(struct pg__conn *c, const struct storage__prep *pr, const int64_t *dso_rows,
                      int64_t *rows, struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  size_t i;
  int rc = 0;
  for (i = 0; i < p->n_frames && !rc; i++) {
    struct storage__frame_ident id;
    struct pg__params ins;
    if (storage__cache_get(&c->cache, SK_FRAME, &pr->frame_cid[i], &rows[i]))
      continue;
    params0(&ins);
    pg__p_bytes(&ins, pr->frame_cid[i].b, SPAA_CID_LEN);
    if (pr->frame_dso[i] != SIZE_MAX)
      pg__p_int(&ins, dso_rows[pr->frame_dso[i]]);
    else
      pg__p_null(&ins);
    storage__frame_ident(pr, i, &id);
    pg__p_str(&ins, id.func);
    pg__p_str(&ins, id.srcline);
    pg__p_int(&ins, id.inline_depth);
    pg__p_str(&ins, id.kind);
    if (id.has_addr)
      pg__p_int(&ins, id.addr);
    else
      pg__p_null(&ins);
    rc = row_of(c, SK_FRAME, &pr->frame_cid[i], &ins, 0, &rows[i], err);
  }
  return rc;
}

static int add_stacks(struct pg__conn *c, const struct storage__prep *pr,
                      const int64_t *frame_rows, int64_t *rows, struct spaa_err *err)
{
  struct spaa_buf fb;
  size_t i, j;
  int rc = 0;
  spaa_buf_init(&fb, 0);
  for (i = 0; i < pr->n_stacks && !rc; i++) {
    const struct storage__pstack *s = &pr->pstacks[i];
    struct pg__params ins;
    int64_t found;
    if (storage__cache_get(&c->cache, SK_STACK, &pr->stack_cid[i], &rows[i]))
      continue;
    c->cache.misses++;
    /* a known stack's id is trusted; only a new one is checked */
    params0(&ins);
    pg__p_bytes(&ins, pr->stack_cid[i].b, SPAA_CID_LEN);
    if ((rc = one_id(c, PS_STACK_GET, &ins, &found, err)) < 0)
      break;
    if (rc == 1) {
      rows[i] = found;
      rc = storage__cache_pending(&c->cache, SK_STACK, &pr->stack_cid[i], found)
               ? spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL) : 0;
      continue;
    }
    if ((rc = storage__prep_check_stack(pr, i, err)))
      break;
    fb.len = 0;
    for (j = pr->stack_frames_off[i]; j < pr->stack_frames_off[i + 1] && !rc; j++)
      rc = storage__put_uv(&fb, (uint64_t)frame_rows[pr->stack_frames[j]]);
    if (rc) {
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
      break;
    }
    pg__p_str(&ins, s->event ? s->event : "");
    pg__p_str(&ins, s->type ? s->type : "unified");
    pg__p_bytes(&ins, fb.p, fb.len);
    pg__p_str(&ins, pr->stack_ctx[i]);
    rc = row_of(c, SK_STACK, &pr->stack_cid[i], &ins, 1, &rows[i], err);
  }
  spaa_buf_free(&fb);
  return rc;
}

/* The profile row: 0 with *num, 1 when the id is already stored. */
static int add_profile_row(struct pg__conn *c, const struct storage__prep *pr, int64_t *num,
                           struct spaa_err *err)
{
  const struct spaa_meta *m = pr->m;
  struct pg__params p;
  int rc;
  params0(&p);
  pg__p_str(&p, m->id);
  pg__p_str(&p, m->service);
  pg__p_str(&p, m->source);
  pg__p_int(&p, m->received_ns);
  if (m->start_ns)
    pg__p_int(&p, m->start_ns);
  else
    pg__p_null(&p);
  if (m->end_ns)
    pg__p_int(&p, m->end_ns);
  else
    pg__p_null(&p);
  pg__p_int(&p, pr->samples);
  pg__p_int(&p, (int64_t)m->payload_bytes);
  pg__p_str(&p, pr->labels_text);
  pg__p_str(&p, pr->attrs_text);
  if (pr->original)
    pg__p_bytes(&p, pr->original, pr->original_len);
  else
    pg__p_null(&p);
  rc = one_id(c, PS_PROFILE_ADD, &p, num, err);
  return rc < 0 ? rc : !rc;
}

static int add_labels_events(struct pg__conn *c, const struct storage__prep *pr, int64_t num,
                             struct spaa_err *err)
{
  struct pg__params p;
  PGresult *r;
  const char *k;
  json_t *v;
  size_t i;
  if (pr->m->labels) {
    json_object_foreach((json_t *)pr->m->labels, k, v) {
      params0(&p);
      pg__p_int(&p, num);
      pg__p_str(&p, k);
      pg__p_bytes(&p, json_string_value(v), json_string_length(v));
      if (!(r = pg__run(c, PS_LABEL_ADD, &p, err)))
        return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
      PQclear(r);
    }
  }
  for (i = 0; i < pr->n_events_out; i++) {
    params0(&p);
    pg__p_int(&p, num);
    pg__p_int(&p, (int64_t)i);
    pg__p_str(&p, pr->event_names[i]);
    pg__p_str(&p, pr->event_totals[i]);
    if (!(r = pg__run(c, PS_EVENT_ADD, &p, err)))
      return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
    PQclear(r);
  }
  return 0;
}

/* Read the service's dictionary: 1 found (into *id, dz), 0 none, or an error. */
static int dict_read(struct pg__conn *c, const char *service, int64_t *id, struct spaa_buf *dz,
                     struct spaa_err *err)
{
  struct pg__params p;
  PGresult *r;
  int rc;
  params0(&p);
  pg__p_str(&p, service);
  if (!(r = pg__run(c, PS_DICT_GET, &p, err)))
    return c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  if (!PQntuples(r)) {
    PQclear(r);
    return 0;
  }
  *id = pg__int(r, 0, 0);
  dz->len = 0;
  rc = storage__blk_decompress(PQgetvalue(r, 0, 1), (size_t)PQgetlength(r, 0, 1), NULL, 0, dz);
  PQclear(r);
  if (rc)
    return spaa_err_set(err, SPAA_E_STORE, 0, 0, "the block dictionary of %.64s is corrupt",
                        service);
  return 1;
}

/* The service's block dictionary: cached, else read, else made of this raw block and
 * inserted (a relay that lost the race reads the winner's). */
static int service_dict(struct pg__conn *c, const char *service, const struct spaa_buf *raw,
                        struct storage__dict **d, struct spaa_err *err)
{
  struct spaa_buf z, dz;
  struct pg__params p;
  int64_t id = 0;
  int rc;
  if ((*d = storage__cache_dict(&c->cache, service)))
    return 0;
  spaa_buf_init(&z, 0);
  spaa_buf_init(&dz, 0);
  if ((rc = dict_read(c, service, &id, &dz, err)) == 0) {
    size_t len = raw->len < SPAA_STORE_MAX_DICT ? raw->len : SPAA_STORE_MAX_DICT;
    if ((rc = spaa_buf_add(&dz, raw->p, len)) ||
        (rc = storage__blk_compress(raw->p, len, NULL, 0, NULL, &z))) {
      spaa_err_set(err, rc, 0, 0, "making a block dictionary failed");
      goto out;
    }
    params0(&p);
    pg__p_str(&p, service);
    pg__p_bytes(&p, z.p, z.len);
    if ((rc = one_id(c, PS_DICT_ADD, &p, &id, err)) == 0)
      rc = dict_read(c, service, &id, &dz, err);
    if (rc == 0)
      rc = spaa_err_set(err, SPAA_E_STORE, 0, 0, "a block dictionary vanished");
  }
  if (rc < 0)
    goto out;
  if ((rc = storage__cache_dict_put(&c->cache, service, id, dz.p, dz.len, 1))) {
    spaa_err_set(err, rc, 0, 0, NULL);
    goto out;
  }
  *d = storage__cache_dict(&c->cache, service);
out:
  spaa_buf_free(&z);
  spaa_buf_free(&dz);
  return rc;
}

static int add_block(struct pg__conn *c, const struct storage__prep *pr, int64_t num,
                     const int64_t *dso_rows, const int64_t *frame_rows,
                     const int64_t *stack_rows, struct spaa_err *err)
{
  struct storage__dict *d = NULL;
  struct spaa_buf raw, z;
  struct pg__params p;
  PGresult *r;
  int rc;
  spaa_buf_init(&raw, 0);
  spaa_buf_init(&z, 0);
  if ((rc = storage__blk_build(pr, dso_rows, frame_rows, stack_rows, &raw))) {
    rc = spaa_err_set(err, rc, 0, 0, "packing the profile's block failed");
    goto out;
  }
  if ((rc = service_dict(c, pr->m->service, &raw, &d, err)))
    goto out;
  if ((rc = storage__blk_compress(raw.p, raw.len, d ? d->raw : NULL, d ? d->len : 0,
                                   d ? &d->cdict : NULL, &z))) {
    rc = spaa_err_set(err, rc, 0, 0, "compressing the profile's block failed");
    goto out;
  }
  params0(&p);
  pg__p_int(&p, num);
  if (d)
    pg__p_int(&p, d->id);
  else
    pg__p_null(&p);
  pg__p_int(&p, (int64_t)pr->n_stacks);
  pg__p_int(&p, (int64_t)pr->n_samples);
  pg__p_bytes(&p, z.p, z.len);
  if (!(r = pg__run(c, PS_BLOCK_ADD, &p, err)))
    rc = c->lost ? SPAA_E_BUSY : SPAA_E_STORE;
  PQclear(r);
out:
  spaa_buf_free(&raw);
  spaa_buf_free(&z);
  return rc;
}

int pg__insert(struct pg__conn *c, const struct storage__prep *pr, struct spaa_err *err)
{
  const struct spaa_profile *p = pr->p;
  int64_t *dso_rows = NULL, *frame_rows = NULL, *stack_rows = NULL, num = 0;
  int rc;
  if ((rc = add_profile_row(c, pr, &num, err)))
    return rc;
  if (!(dso_rows = malloc((p->n_dsos + 1) * sizeof(int64_t))) ||
      !(frame_rows = malloc((p->n_frames + 1) * sizeof(int64_t))) ||
      !(stack_rows = malloc((pr->n_stacks + 1) * sizeof(int64_t)))) {
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    goto out;
  }
  if ((rc = add_dsos(c, pr, dso_rows, err)) ||
      (rc = add_frames(c, pr, dso_rows, frame_rows, err)) ||
      (rc = add_stacks(c, pr, frame_rows, stack_rows, err)) ||
      (rc = add_labels_events(c, pr, num, err)))
    goto out;
  rc = add_block(c, pr, num, dso_rows, frame_rows, stack_rows, err);
out:
  free(dso_rows);
  free(frame_rows);
  free(stack_rows);
  return rc;
}
