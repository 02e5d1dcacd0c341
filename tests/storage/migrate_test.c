/* storage/: a database of schema version 2 (a row per dso, frame, thread, stack and sample
 * of each profile) is migrated to blocks on open, every profile reading back byte-identical;
 * the scan over blocks; a database newer than the code is refused naming both versions; a
 * migration is logged once (versions and time taken) through the store's log callback. The
 * version 2 rows are written here the way the version 2 writer wrote them (its row packing
 * is what storage__prep_build still produces). */
#include "tprofiles.h"

#include <sqlite3.h>

#include "storage/sqlite/sqlite_int.h"

static void exec_ok(sqlite3 *db, const char *sql)
{
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
    fail_msg("%s: %s", sql, msg ? msg : "?");
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    fail_msg("%s: %s", sql, sqlite3_errmsg(db));
  return st;
}

static void step_ok(sqlite3 *db, sqlite3_stmt *st)
{
  if (sqlite3_step(st) != SQLITE_DONE)
    fail_msg("step: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
}

static void blob_or_null(sqlite3_stmt *st, int i, const struct storage__prep *pr, size_t a,
                         size_t b)
{
  if (b > a)
    sqlite3_bind_blob(st, i, pr->blobs.p + a, (int)(b - a), SQLITE_TRANSIENT);
}

/* A shared row by content id: found, or inserted by `ins` bound by the caller. */
static int64_t shared(sqlite3 *db, const char *table, const struct spaa_cid *cid)
{
  char sql[96];
  sqlite3_stmt *st;
  int64_t row = 0;
  snprintf(sql, sizeof(sql), "SELECT id FROM %s WHERE cid = ?1", table);
  st = prep(db, sql);
  sqlite3_bind_blob(st, 1, cid->b, SPAA_CID_LEN, SQLITE_STATIC);
  if (sqlite3_step(st) == SQLITE_ROW)
    row = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return row;
}

/* The shared dso, frame and stack rows of p, as version 2 inserted them. */
static void v2_shared(sqlite3 *db, const struct storage__prep *pr, int64_t *drow, int64_t *frow,
                      int64_t *srow)
{
  const struct spaa_profile *p = pr->p;
  sqlite3_stmt *st;
  struct spaa_buf fb;
  char key[512];
  size_t i, j;
  for (i = 0; i < p->n_dsos; i++) {
    if ((drow[i] = shared(db, "dso", &pr->dso_cid[i])))
      continue;
    spaa_dso_key(&p->dsos[i], key, sizeof(key));
    st = prep(db, "INSERT INTO dso(cid, key) VALUES(?1, ?2)");
    sqlite3_bind_blob(st, 1, pr->dso_cid[i].b, SPAA_CID_LEN, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    step_ok(db, st);
    drow[i] = sqlite3_last_insert_rowid(db);
  }
  for (i = 0; i < p->n_frames; i++) {
    const struct spaa_frame *f = &p->frames[i];
    const struct spaa_dso *d = pr->frame_dso[i] == SIZE_MAX ? NULL : &p->dsos[pr->frame_dso[i]];
    if ((frow[i] = shared(db, "frame", &pr->frame_cid[i])))
      continue;
    st = prep(db, "INSERT INTO frame(cid, dso, func, srcline, inline_depth, kind, addr)"
                  " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    sqlite3_bind_blob(st, 1, pr->frame_cid[i].b, SPAA_CID_LEN, SQLITE_STATIC);
    if (d)
      sqlite3_bind_int64(st, 2, drow[pr->frame_dso[i]]);
    sqlite3_bind_text(st, 3, f->func_resolved && f->func ? f->func : "", -1, SQLITE_STATIC);
    if (f->srcline_resolved && f->srcline && f->srcline[0])
      sqlite3_bind_text(st, 4, f->srcline, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, f->has_inline_depth ? f->inline_depth : 0);
    sqlite3_bind_text(st, 6, f->kind ? f->kind : "unknown", -1, SQLITE_STATIC);
    step_ok(db, st);
    frow[i] = sqlite3_last_insert_rowid(db);
  }
  spaa_buf_init(&fb, 0);
  for (i = 0; i < p->n_stacks; i++) {
    const struct spaa_stack *s = &p->stacks[i];
    if ((srow[i] = shared(db, "stack", &pr->stack_cid[i])))
      continue;
    fb.len = 0;
    for (j = pr->stack_frames_off[i]; j < pr->stack_frames_off[i + 1]; j++)
      assert_int_equal(storage__put_uv(&fb, (uint64_t)frow[pr->stack_frames[j]]), 0);
    st = prep(db, "INSERT INTO stack(cid, event, stack_type, frames, context)"
                  " VALUES(?1, ?2, ?3, ?4, ?5)");
    sqlite3_bind_blob(st, 1, pr->stack_cid[i].b, SPAA_CID_LEN, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, s->event ? s->event : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, s->stack_type ? s->stack_type : "unified", -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 4, fb.p ? fb.p : "", (int)fb.len, SQLITE_TRANSIENT);
    if (pr->stack_ctx[i])
      sqlite3_bind_text(st, 5, pr->stack_ctx[i], -1, SQLITE_STATIC);
    step_ok(db, st);
    srow[i] = sqlite3_last_insert_rowid(db);
  }
  spaa_buf_free(&fb);
}

/* The profile row and its per-profile rows, as version 2 inserted them. */
static void v2_rows(sqlite3 *db, const struct storage__prep *pr, const int64_t *drow,
                    const int64_t *frow, const int64_t *srow)
{
  const struct spaa_profile *p = pr->p;
  struct storage__rd rd;
  int64_t prev_ts = 0, prev_stack = 0;
  sqlite3_stmt *st;
  int64_t num;
  size_t i;
  st = prep(db, "INSERT INTO profile(id, service, source, received_ns, start_ns, end_ns, samples,"
                " payload_bytes, header, strings, windows, labels, attrs)"
                " VALUES(?1, 'svc', 'spaa', ?2, 1, 2, ?3, 10, ?4, ?5, ?6, ?7, ?8)");
  sqlite3_bind_text(st, 1, pr->m->id, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, pr->m->received_ns);
  sqlite3_bind_int64(st, 3, pr->samples);
  blob_or_null(st, 4, pr, pr->header_off[0], pr->header_off[1]);
  blob_or_null(st, 5, pr, pr->strings_off[0], pr->strings_off[1]);
  blob_or_null(st, 6, pr, pr->windows_off[0], pr->windows_off[1]);
  if (pr->labels_text)
    sqlite3_bind_text(st, 7, pr->labels_text, -1, SQLITE_STATIC);
  if (pr->attrs_text)
    sqlite3_bind_text(st, 8, pr->attrs_text, -1, SQLITE_STATIC);
  step_ok(db, st);
  num = sqlite3_last_insert_rowid(db);
  for (i = 0; i < pr->n_events_out; i++) {
    st = prep(db, "INSERT INTO profile_event(profile, seq, name, totals) VALUES(?1, ?2, ?3, ?4)");
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    sqlite3_bind_text(st, 3, pr->event_names[i], -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, pr->event_totals[i], -1, SQLITE_STATIC);
    step_ok(db, st);
  }
  for (i = 0; i < p->n_dsos; i++) {
    st = prep(db, "INSERT INTO profile_dso VALUES(?1, ?2, ?3, ?4, ?5)");
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    sqlite3_bind_int64(st, 3, (int64_t)p->dsos[i].id);
    sqlite3_bind_int64(st, 4, drow[i]);
    sqlite3_bind_blob(st, 5, pr->blobs.p + pr->dso_inst[i],
                      (int)(pr->dso_inst[i + 1] - pr->dso_inst[i]), SQLITE_STATIC);
    step_ok(db, st);
  }
  for (i = 0; i < p->n_frames; i++) {
    const struct spaa_frame *f = &p->frames[i];
    int here = !f->srcline_resolved || (f->srcline && !f->srcline[0]);
    unsigned flags = (f->func_resolved ? 0 : PF_UNRESOLVED) |
                     (f->srcline_resolved ? 0 : PF_SRC_UNRESOLVED) | (f->inlined ? PF_INLINED : 0) |
                     (f->has_inline_depth ? 0 : PF_NO_DEPTH) | (here ? PF_SRC_HERE : 0);
    st = prep(db, "INSERT INTO profile_frame VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    sqlite3_bind_int64(st, 3, (int64_t)f->id);
    sqlite3_bind_int64(st, 4, frow[i]);
    if (f->has_dso)
      sqlite3_bind_int64(st, 5, (int64_t)f->dso);
    if (f->has_ip)
      sqlite3_bind_int64(st, 6, (int64_t)f->ip);
    sqlite3_bind_int64(st, 7, flags);
    if (!f->func_resolved && f->func)
      sqlite3_bind_text(st, 8, f->func, -1, SQLITE_STATIC);
    if (f->symoff)
      sqlite3_bind_text(st, 9, f->symoff, -1, SQLITE_STATIC);
    if (here && f->srcline)
      sqlite3_bind_text(st, 10, f->srcline, -1, SQLITE_STATIC);
    if (pr->frame_extra[i])
      sqlite3_bind_text(st, 11, pr->frame_extra[i], -1, SQLITE_STATIC);
    step_ok(db, st);
  }
  for (i = 0; i < p->n_threads; i++) {
    st = prep(db, "INSERT INTO profile_thread VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    sqlite3_bind_int64(st, 3, p->threads[i].pid);
    sqlite3_bind_int64(st, 4, p->threads[i].tid);
    if (p->threads[i].comm)
      sqlite3_bind_text(st, 5, p->threads[i].comm, -1, SQLITE_STATIC);
    if (pr->thread_extra[i])
      sqlite3_bind_text(st, 6, pr->thread_extra[i], -1, SQLITE_STATIC);
    step_ok(db, st);
  }
  for (i = 0; i < p->n_stacks; i++) {
    st = prep(db, "INSERT INTO profile_stack VALUES(?1, ?2, ?3, ?4, ?5)");
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    sqlite3_bind_int64(st, 3, srow[i]);
    sqlite3_bind_blob(st, 4, pr->blobs.p + pr->pstack_w[2 * i],
                      (int)(pr->pstack_w[2 * i + 1] - pr->pstack_w[2 * i]), SQLITE_STATIC);
    blob_or_null(st, 5, pr, pr->pstack_w[2 * i + 1], pr->pstack_w[2 * i + 2]);
    step_ok(db, st);
  }
  storage__rd_init(&rd, pr->psamples.p, pr->psamples.len);
  for (i = 0; i < p->n_samples; i++) {
    const struct spaa_sample *s = &p->samples[i];
    struct storage__blk_sample ps; /* stack_row: the stack's index */
    assert_int_equal(storage__get_sample(&rd, &prev_ts, &prev_stack, &ps), 0);
    st = prep(db, "INSERT INTO sample VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    sqlite3_bind_int64(st, 1, num);
    sqlite3_bind_int64(st, 2, (int64_t)i);
    if (s->has_timestamp && s->timestamp.is_float)
      sqlite3_bind_double(st, 3, s->timestamp.f);
    else if (s->has_timestamp)
      sqlite3_bind_int64(st, 3, s->timestamp.i);
    if (s->has_tid)
      sqlite3_bind_int64(st, 4, s->tid);
    if (ps.has_stack)
      sqlite3_bind_int64(st, 5, srow[ps.stack_row]);
    if (ps.rest_len)
      sqlite3_bind_blob(st, 6, ps.rest, (int)ps.rest_len, SQLITE_STATIC);
    step_ok(db, st);
  }
}

/* Write p as a version 2 database would hold it. The version 2 reader listed a stack's
 * frames explicitly when a profile had two frames of one content id; this writer keeps the
 * version 3 form of that list, which the migration copies as it is. */
static void v2_put(sqlite3 *db, const struct spaa_profile *p, const char *id, int64_t received)
{
  struct storage__prep pr;
  struct spaa_meta m = {0};
  struct spaa_err err = {0};
  int64_t *drow, *frow, *srow;
  m.id = id;
  m.service = "svc";
  m.source = "spaa";
  m.received_ns = received;
  if (storage__prep_build(&pr, p, &m, &err))
    fail_msg("prep: %s", err.msg);
  drow = calloc(p->n_dsos + 1, sizeof(int64_t));
  frow = calloc(p->n_frames + 1, sizeof(int64_t));
  srow = calloc(p->n_stacks + 1, sizeof(int64_t));
  v2_shared(db, &pr, drow, frow, srow);
  v2_rows(db, &pr, drow, frow, srow);
  free(drow);
  free(frow);
  free(srow);
  storage__prep_free(&pr);
}

static int count_stack(void *ctx, const struct spaa_store_scan_stack *st)
{
  int64_t *n = ctx;
  assert_true(st->stack > 0);
  assert_non_null(st->profile_id);
  n[0]++;
  n[1] += (int64_t)st->n_weights;
  return 0;
}

/* The store's log lines, as "LEVEL msg kv\n" (LEVEL 0 info, 1 warn, 2 error). */
struct logged {
  char text[4096];
  size_t len;
  int lines;
};

static void log_cb(void *ctx, enum spaa_store_log_level level, const char *msg, const char *kv)
{
  struct logged *l = ctx;
  int w = snprintf(l->text + l->len, sizeof(l->text) - l->len, "%d %s %s\n", (int)level, msg,
                   kv);
  if (w > 0 && (size_t)w < sizeof(l->text) - l->len)
    l->len += (size_t)w;
  l->lines++;
}

static struct spaa_store *open_logged(const char *db, struct logged *l)
{
  struct spaa_store_opts o = {.path = db, .queue_depth = 8, .batch_max = 8, .readers = 1,
                              .log = log_cb, .log_ctx = l};
  struct spaa_store *s = NULL;
  struct spaa_err err = {0};
  memset(l, 0, sizeof(*l));
  if (spaa_store_open(&o, &s, &err))
    fail_msg("open %s: %s", db, err.msg);
  return s;
}

/* A migration that runs is logged once at info, with both versions and the time it took; a
 * database already at the newest version logs nothing; a new database says from=0. */
static void test_migration_logged(void **state)
{
  struct logged l;
  struct spaa_store *s;
  struct tdir t;
  sqlite3 *db;
  char want[64];
  (void)state;
  tdir_make(&t);
  s = open_logged(t.db, &l); /* a new database: every migration, from 0 */
  spaa_store_close(s);
  snprintf(want, sizeof(want), "0 schema migrated from=0 to=%zu took_ms=",
           storage__n_migrations);
  assert_int_equal(l.lines, 1);
  assert_non_null(strstr(l.text, want));
  assert_non_null(strstr(l.text, t.db));

  /* back to version 4: the last migration's index dropped */
  assert_int_equal(storage__n_migrations, 5);
  assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
  exec_ok(db, "DROP INDEX profile_block_dict; UPDATE schema_version SET version = 4;");
  sqlite3_close(db);
  s = open_logged(t.db, &l);
  spaa_store_close(s);
  assert_int_equal(l.lines, 1);
  assert_non_null(strstr(l.text, "0 schema migrated from=4 to=5 took_ms="));
  {
    unsigned long ms = 0, us = 1000;
    const char *at = strstr(l.text, "took_ms=");
    assert_int_equal(sscanf(at, "took_ms=%lu.%3lu", &ms, &us), 2);
    assert_true(us < 1000);
  }
  assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
  {
    sqlite3_stmt *st =
        prep(db, "SELECT count(*) FROM sqlite_master WHERE name = 'profile_block_dict'");
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), 1);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);

  s = open_logged(t.db, &l); /* current: nothing to say */
  spaa_store_close(s);
  assert_int_equal(l.lines, 0);
  tdir_rm(&t);
}

static void test_v2_database_migrates(void **state)
{
  struct spaa_profile *ps[4];
  char *want[4], id[16];
  struct spaa_store *s;
  struct spaa_profile *q;
  struct spaa_err err = {0};
  struct spaa_list_query sel = {0};
  struct tdir t;
  sqlite3 *db;
  int64_t n[2] = {0, 0}, wn = 0, sn = 0;
  size_t i, k;
  (void)state;
  ps[0] = tp_rich(SPAA_LEAF_TO_ROOT, 0);
  ps[1] = tp_rich(SPAA_ROOT_TO_LEAF, 1);
  ps[2] = tp_small(6, 3);
  ps[3] = tp_small(2, 0);
  tdir_make(&t);
  assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
  exec_ok(db, "CREATE TABLE schema_version(version INTEGER NOT NULL);"
              "INSERT INTO schema_version VALUES(2);");
  exec_ok(db, storage__migrations[0]);
  exec_ok(db, storage__migrations[1]);
  for (i = 0; i < 4; i++) {
    want[i] = twrite(ps[i]);
    snprintf(id, sizeof(id), "old%zu", i);
    v2_put(db, ps[i], id, 100 + (int64_t)i);
    for (k = 0; k < ps[i]->n_stacks; k++)
      wn += (int64_t)ps[i]->stacks[k].weights.n;
    sn += (int64_t)ps[i]->n_stacks;
  }
  sqlite3_close(db);

  {
    struct logged l;
    char line[64];
    s = open_logged(t.db, &l);
    snprintf(line, sizeof(line), "0 schema migrated from=2 to=%zu took_ms=",
             storage__n_migrations);
    assert_int_equal(l.lines, 1);
    assert_non_null(strstr(l.text, line));
  }
  for (i = 0; i < 4; i++) {
    char *got;
    snprintf(id, sizeof(id), "old%zu", i);
    if (spaa_store_get(s, id, &q, &err))
      fail_msg("get %s: %s", id, err.msg);
    got = twrite(q);
    assert_string_equal(got, want[i]);
    free(got);
    spaa_profile_free(q);
  }
  /* the scan sees every stack of every block, weights and all */
  assert_int_equal(spaa_store_scan(s, &sel, count_stack, n, &err), 0);
  assert_int_equal(n[0], sn);
  assert_int_equal(n[1], wn);
  spaa_store_close(s);

  assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
  {
    sqlite3_stmt *st = prep(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('sample',"
                                " 'profile_stack', 'profile_frame', 'profile_dso', 'profile_thread')");
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), 0);
    sqlite3_finalize(st);
  }
  /* the version 2 database went all the way: the source index of version 2 is gone */
  {
    sqlite3_stmt *st = prep(db, "SELECT count(*) FROM sqlite_master WHERE name = 'profile_source'");
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), 0);
    sqlite3_finalize(st);
  }
  exec_ok(db, "UPDATE schema_version SET version = 7");
  sqlite3_close(db);
  {
    struct spaa_store_opts o = {.path = t.db, .queue_depth = 4, .batch_max = 4, .readers = 1,
                                .durability = SPAA_DURABILITY_FULL};
    s = NULL;
    assert_int_equal(spaa_store_open(&o, &s, &err), SPAA_E_STORE);
    assert_null(s);
    assert_non_null(strstr(err.msg, "version 7"));
    {
      char known[16];
      snprintf(known, sizeof(known), "(%zu)", storage__n_migrations);
      assert_non_null(strstr(err.msg, known));
    }
  }
  for (i = 0; i < 4; i++) {
    free(want[i]);
    spaa_profile_free(ps[i]);
  }
  tdir_rm(&t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_v2_database_migrates),
    cmocka_unit_test(test_migration_logged),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
