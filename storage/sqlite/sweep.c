/* The sweep after a delete: the stacks, frames, dsos and block dictionaries nothing references
 * any more go, while puts go on. Shared rows carry no reference count, so the sweep reads
 * what the remaining blocks name. It reads on reader connections, in read transactions of a
 * few blocks each, and deletes on the writer in steps of about STORAGE_STEP_NS, so a put
 * waits for one step at most. Two things keep a row a put takes meanwhile:
 * - when the sweep begins (a writer step), it notes the highest row of each kind and the
 *   newest profile; rows above are newer than the sweep and never candidates, and only the
 *   profiles up to the newest are scanned (the others are the puts');
 * - from then on the writer notes every older row a put finds by content id (writer.c), and
 *   the sweep never deletes those. The writer's cache is emptied at the start, so a cache hit
 *   names a row found (and noted) since, or a new one.
 * Deletes run one at a time (s->del_mu), so no scanned profile goes away during the scan. */
#include <stdlib.h>
#include <string.h>

#include "storage/sqlite/sqlite_int.h"

#define SWEEP_ROWS (STORAGE_SWEEP_SCAN * 64) /* rows read per read transaction */

/* ---- the writer's side ------------------------------------------------------------------ */

static int bit(const uint8_t *b, int64_t max, int64_t row)
{
  return b && row > 0 && row <= max && (b[row >> 3] >> (row & 7) & 1);
}

static void set_bit(uint8_t *b, int64_t max, int64_t row)
{
  if (b && row > 0 && row <= max)
    b[row >> 3] |= (uint8_t)(1u << (row & 7));
}

void storage__sweep_used(struct storage__sweep *sw, enum storage__sweep_kind k, int64_t row)
{
  if (sw && sw->on)
    set_bit(sw->used[k], sw->max[k], row);
}

void storage__sweep_off(struct storage__sweep *sw)
{
  int k;
  if (!sw)
    return;
  for (k = 0; k < SW__N; k++)
    free(sw->used[k]);
  memset(sw, 0, sizeof(*sw));
}

/* What the deleting thread keeps of the sweep. */
struct sweep {
  struct storage__sqlite *s;
  int64_t max[SW__N];          /* the highest row of each kind when the sweep began */
  int64_t max_num;             /* the newest profile then */
  uint8_t *keep[SW__N];        /* bitmaps: rows the remaining blocks name (owned) */
  struct storage__rdict dict;  /* the dictionary of the last block read */
  struct spaa_buf raw;         /* one decompressed block */
  int64_t *ids;                /* candidates read, waiting for their delete step (owned) */
  size_t n_ids;
  uint64_t deleted[SW__N];     /* rows deleted */
  struct storage__pace pace[SW__N]; /* how many rows a step deletes */
  struct spaa_err *err;
};

/* The single integer `sql` answers (0 for NULL) on connection c. */
static int int_of(struct storage__conn *c, const char *sql, int64_t *v, struct spaa_err *err)
{
  sqlite3_stmt *st = NULL;
  int rc = 0;
  *v = 0;
  if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK ||
      sqlite3_step(st) != SQLITE_ROW)
    rc = storage__db_err(c, err, "starting the sweep");
  else
    *v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc;
}

/* Step: the highest rows, the writer's bitmaps, noting on, the cache emptied. */
static int step_begin(struct storage__sqlite *s, struct storage__job *j)
{
  static const char *const max_sql[SW__N] = {
      "SELECT max(id) FROM stack", "SELECT max(id) FROM frame", "SELECT max(id) FROM dso",
      "SELECT max(id) FROM block_dict"};
  struct sweep *w = j->arg;
  uint64_t hits = s->cache.hits, misses = s->cache.misses;
  int k, rc = 0;
  storage__sweep_off(&s->sweep);
  for (k = 0; k < SW__N && !rc; k++)
    rc = int_of(&s->wconn, max_sql[k], &w->max[k], &j->err);
  if (!rc)
    rc = int_of(&s->wconn, "SELECT max(num) FROM profile", &w->max_num, &j->err);
  for (k = 0; k < SW__N && !rc; k++) {
    s->sweep.max[k] = w->max[k];
    if (!(s->sweep.used[k] = calloc((size_t)(w->max[k] >> 3) + 1, 1)))
      rc = spaa_err_set(&j->err, SPAA_E_NOMEM, 0, 0, NULL);
  }
  if (rc) {
    storage__sweep_off(&s->sweep);
    return rc;
  }
  s->sweep.on = 1;
  storage__cache_free(&s->cache);
  s->cache.hits = hits; /* the dedup counters go on */
  s->cache.misses = misses;
  return 0;
}

static int step_end(struct storage__sqlite *s, struct storage__job *j)
{
  (void)j;
  storage__sweep_off(&s->sweep);
  return 0;
}

/* A delete step's work: candidates ids[done..n) of one kind. */
struct rows {
  enum storage__sweep_kind kind;
  const int64_t *ids;
  size_t n, done;     /* done: how far the steps got */
  uint64_t deleted;   /* rows they deleted */
  struct storage__pace *pace; /* the kind's */
};

/* Step: delete up to pace->n candidates (for STORAGE_STEP_NS at most), in id order, in one
 * transaction;
 * the rows a put found since the sweep began stay. A dso a frame still names and a
 * dictionary a block still uses stay as well (what the scan could not see: a put's frame
 * naming an older dso under another content id). */
static int step_rows(struct storage__sqlite *s, struct storage__job *j)
{
  static const char *const del_sql[SW__N] = {
      "DELETE FROM stack WHERE id = ?1", "DELETE FROM frame WHERE id = ?1",
      "DELETE FROM dso WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM frame WHERE dso = ?1)",
      ("DELETE FROM block_dict WHERE id = ?1"
       " AND NOT EXISTS (SELECT 1 FROM profile_block WHERE dict = ?1)")};
  struct rows *r = j->arg;
  struct storage__conn *c = &s->wconn;
  const struct storage__sweep *sw = &s->sweep;
  sqlite3_stmt *st = NULL;
  uint64_t t0 = storage__mono_ns(), n = 0;
  size_t i = r->done, max = r->pace->n ? r->pace->n : 16;
  int rc;
  if (!sw->on) /* without the notes of the puts nothing can be deleted safely */
    return spaa_err_set(&j->err, SPAA_E_INTERNAL, 0, 0, "the sweep was not started");
  if (sqlite3_prepare_v2(c->db, del_sql[r->kind], -1, &st, NULL) != SQLITE_OK)
    return storage__db_err(c, &j->err, "preparing the sweep");
  if (!(rc = storage__exec(c, ST_BEGIN_IMM, &j->err))) {
    for (; i < r->n && i - r->done < max && !rc &&
           (i == r->done || storage__mono_ns() - t0 < STORAGE_STEP_NS);
         i++) {
      if (r->ids[i] > sw->max[r->kind] || bit(sw->used[r->kind], sw->max[r->kind], r->ids[i]))
        continue;
      sqlite3_reset(st);
      sqlite3_bind_int64(st, 1, r->ids[i]);
      if (sqlite3_step(st) != SQLITE_DONE)
        rc = storage__db_err(c, &j->err, "sweeping a row");
      else
        n += (uint64_t)sqlite3_changes(c->db);
    }
    rc = storage__step_end(c, rc, &j->err, r->pace, i - r->done, t0);
  }
  sqlite3_finalize(st);
  if (!rc) {
    r->done = i;
    r->deleted += n;
  }
  return rc;
}

/* ---- the deleting thread's side ----------------------------------------------------------- */

/* Delete the candidates read so far (kind k), step after step. */
static int flush(struct sweep *w, enum storage__sweep_kind k)
{
  struct rows r;
  int rc = 0;
  memset(&r, 0, sizeof(r));
  r.kind = k;
  r.ids = w->ids;
  r.n = w->n_ids;
  r.pace = &w->pace[k];
  while (!rc && r.done < r.n)
    rc = storage__sq_step(w->s, step_rows, &r, w->err);
  w->deleted[k] += r.deleted;
  w->n_ids = 0;
  return rc;
}

/* Called for each row read; c is the reader it was read on. */
typedef int (*row_cb)(struct sweep *w, struct storage__conn *c, sqlite3_stmt *st);

/* Every row of `sql` (?1: after this key, ?2: up to this key, ?3: at most this many rows,
 * column 0 the key, ascending) to fn, in read transactions of `chunk` rows on a reader
 * borrowed for each; after each, the candidates read go (kind k; SW__N: none). */
static int scan(struct sweep *w, const char *sql, int64_t upto, int chunk, row_cb fn,
                enum storage__sweep_kind k)
{
  int64_t after = 0;
  int rc = 0, n = chunk;
  while (!rc && n == chunk) {
    struct storage__conn *c = storage__reader_get(w->s, w->err);
    sqlite3_stmt *st = NULL;
    int step = SQLITE_DONE;
    if (!c)
      return SPAA_E_STORE;
    n = 0;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
      rc = storage__db_err(c, w->err, "preparing the sweep");
    } else {
      sqlite3_bind_int64(st, 1, after);
      sqlite3_bind_int64(st, 2, upto);
      sqlite3_bind_int(st, 3, chunk);
      while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        after = sqlite3_column_int64(st, 0);
        n++;
        rc = fn(w, c, st);
      }
      if (!rc && step != SQLITE_DONE)
        rc = storage__db_err(c, w->err, "reading rows to sweep");
    }
    sqlite3_finalize(st);
    storage__reader_put(w->s, c);
    if (!rc && k != SW__N && w->n_ids)
      rc = flush(w, k);
  }
  return rc;
}

static int keep_cb(void *ctx, int kind, int64_t row)
{
  struct sweep *w = ctx;
  if (kind >= 0 && kind < SW_DICT)
    set_bit(w->keep[kind], w->max[kind], row);
  return 0;
}

/* A block (profile, id, dict, data): keep its dictionary and every row it names. */
static int on_block(struct sweep *w, struct storage__conn *c, sqlite3_stmt *st)
{
  const char *id = (const char *)sqlite3_column_text(st, 1);
  int64_t dict = sqlite3_column_int64(st, 2);
  struct storage__blk_rd b;
  int rc;
  set_bit(w->keep[SW_DICT], w->max[SW_DICT], dict);
  rc = storage__sq_block_raw(c, &w->dict, dict, sqlite3_column_blob(st, 3),
                             (size_t)sqlite3_column_bytes(st, 3), &w->raw, w->err);
  if (!rc)
    rc = storage__blk_open(&b, w->raw.p, w->raw.len) ? SPAA_E_STORE
                                                      : storage__blk_rows(&b, 1, keep_cb, w);
  if (rc == SPAA_E_STORE && !w->err->code)
    spaa_err_set(w->err, rc, 0, 0, "stored profile %.64s is corrupt: block", id ? id : "");
  else if (rc == SPAA_E_NOMEM)
    spaa_err_set(w->err, rc, 0, 0, NULL);
  return rc;
}

/* A candidate unless kept. */
static int candidate(struct sweep *w, enum storage__sweep_kind k, int64_t row)
{
  if (!bit(w->keep[k], w->max[k], row))
    w->ids[w->n_ids++] = row; /* at most SWEEP_ROWS per read transaction, then flushed */
  return 0;
}

/* A stack (id, frames): a kept one keeps its frames (row ids as varints), else it goes. */
static int on_stack(struct sweep *w, struct storage__conn *c, sqlite3_stmt *st)
{
  int64_t id = sqlite3_column_int64(st, 0);
  struct storage__rd r;
  (void)c;
  if (!bit(w->keep[SW_STACK], w->max[SW_STACK], id))
    return candidate(w, SW_STACK, id);
  storage__rd_init(&r, sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1));
  while (r.pos < r.len) {
    uint64_t row = storage__get_uv(&r);
    if (r.bad || row > INT64_MAX)
      return spaa_err_set(w->err, SPAA_E_STORE, 0, 0, "stack row %lld is corrupt",
                          (long long)id);
    set_bit(w->keep[SW_FRAME], w->max[SW_FRAME], (int64_t)row);
  }
  return 0;
}

/* A frame (id, dso): a kept one keeps its dso, else it goes. */
static int on_frame(struct sweep *w, struct storage__conn *c, sqlite3_stmt *st)
{
  int64_t id = sqlite3_column_int64(st, 0);
  (void)c;
  if (!bit(w->keep[SW_FRAME], w->max[SW_FRAME], id))
    return candidate(w, SW_FRAME, id);
  set_bit(w->keep[SW_DSO], w->max[SW_DSO], sqlite3_column_int64(st, 1));
  return 0;
}

static int on_dso(struct sweep *w, struct storage__conn *c, sqlite3_stmt *st)
{
  (void)c;
  return candidate(w, SW_DSO, sqlite3_column_int64(st, 0));
}

static int on_dict(struct sweep *w, struct storage__conn *c, sqlite3_stmt *st)
{
  (void)c;
  return candidate(w, SW_DICT, sqlite3_column_int64(st, 0));
}

/* Scan the blocks, then each kind of shared row, children before parents (a stack names
 * frames, a frame its dso, a block its dictionary): what is kept marks what it names. */
static int sweep_run(struct sweep *w)
{
  int rc;
  if ((rc = scan(w, "SELECT b.profile, p.id, b.dict, b.data FROM profile_block b"
                    " JOIN profile p ON p.num = b.profile WHERE b.profile > ?1"
                    " AND b.profile <= ?2 ORDER BY b.profile LIMIT ?3",
                 w->max_num, STORAGE_SWEEP_SCAN, on_block, SW__N)))
    return rc;
  if (w->s->sweep_hook)
    w->s->sweep_hook(w->s->sweep_hook_ctx);
  if ((rc = scan(w, "SELECT id, frames FROM stack WHERE id > ?1 AND id <= ?2 ORDER BY id"
                    " LIMIT ?3", w->max[SW_STACK], SWEEP_ROWS, on_stack, SW_STACK)) ||
      (rc = scan(w, "SELECT id, dso FROM frame WHERE id > ?1 AND id <= ?2 ORDER BY id"
                    " LIMIT ?3", w->max[SW_FRAME], SWEEP_ROWS, on_frame, SW_FRAME)) ||
      (rc = scan(w, "SELECT id FROM dso WHERE id > ?1 AND id <= ?2 ORDER BY id LIMIT ?3",
                 w->max[SW_DSO], SWEEP_ROWS, on_dso, SW_DSO)))
    return rc;
  return scan(w, "SELECT id FROM block_dict WHERE id > ?1 AND id <= ?2 ORDER BY id LIMIT ?3",
              w->max[SW_DICT], SWEEP_ROWS, on_dict, SW_DICT);
}

int storage__sq_sweep(struct storage__sqlite *s, struct spaa_store_deleted *out,
                      struct spaa_err *err)
{
  struct sweep w;
  struct spaa_err ignored;
  int k, rc;
  memset(&w, 0, sizeof(w));
  w.s = s;
  w.err = err;
  spaa_buf_init(&w.dict.raw, 0);
  spaa_buf_init(&w.raw, 0);
  if ((rc = storage__sq_step(s, step_begin, &w, err)))
    goto out;
  for (k = 0; k < SW__N && !rc; k++)
    if (!(w.keep[k] = calloc((size_t)(w.max[k] >> 3) + 1, 1)))
      rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if (!rc && !(w.ids = malloc(SWEEP_ROWS * sizeof(*w.ids))))
    rc = spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if (!rc)
    rc = sweep_run(&w);
  storage__sq_step(s, step_end, NULL, &ignored); /* (the close ends it when this cannot) */
out:
  out->stacks = w.deleted[SW_STACK];
  out->frames = w.deleted[SW_FRAME];
  out->dsos = w.deleted[SW_DSO];
  out->dicts = w.deleted[SW_DICT];
  for (k = 0; k < SW__N; k++)
    free(w.keep[k]);
  free(w.ids);
  spaa_buf_free(&w.dict.raw);
  spaa_buf_free(&w.raw);
  return rc;
}
