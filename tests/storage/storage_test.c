/* storage/: byte-identical round trips, dedup of shared rows, migrations, reopening, ids
 * already stored, the original payload and the retention-friendly schema. */
#include "tprofiles.h"

#include <sqlite3.h>
#include <zstd.h>

#include "storage/sqlite/sqlite_int.h"

static struct spaa_meta tmeta(const char *id)
{
  struct spaa_meta m = {0};
  m.id = id;
  m.service = "svc";
  m.source = "spaa";
  m.received_ns = 1700000000000000000LL;
  m.start_ns = 1700000000250000000LL;
  m.end_ns = 1700000001500000000LL;
  m.payload_bytes = 1234;
  return m;
}

static void put_ok(struct spaa_store *s, const struct spaa_profile *p, const char *id)
{
  struct spaa_meta m = tmeta(id);
  struct spaa_err err = {0};
  int rc = spaa_store_put(s, p, &m, &err);
  if (rc)
    fail_msg("put %s: %d %s", id, rc, err.msg);
}

static void assert_round_trip(struct spaa_store *s, const char *id, const char *want)
{
  struct spaa_profile *q = NULL;
  struct spaa_err err = {0};
  char *got;
  int rc = spaa_store_get(s, id, &q, &err);
  if (rc)
    fail_msg("get %s: %d %s", id, rc, err.msg);
  got = twrite(q);
  assert_string_equal(got, want);
  free(got);
  spaa_profile_free(q);
}

static struct spaa_store_counts counts(struct spaa_store *s)
{
  struct spaa_store_counts c;
  struct spaa_err err = {0};
  assert_int_equal(spaa_store_counts(s, &c, &err), 0);
  return c;
}

static void round_trip(enum spaa_frame_order order)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_rich(order, 0);
  char *want = twrite(p);
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  put_ok(s, p, "rich");
  assert_round_trip(s, "rich", want);
  spaa_store_close(s);
  /* reopening keeps everything */
  s = topen(t.db, 8, 8);
  assert_round_trip(s, "rich", want);
  assert_int_equal(counts(s).profiles, 1);
  spaa_store_close(s);
  free(want);
  spaa_profile_free(p);
  tdir_rm(&t);
}

/* A put allowed to take the records (spaa_meta.take_records) frees the samples and stacks once
 * prepared, before the writer runs, and stores the same profile: what the writer needs of
 * them (timestamps, integer and not, threads, stack events and types, checked content ids)
 * comes from the preparation. */
static void test_take_records(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_rich(SPAA_LEAF_TO_ROOT, 0);
  struct spaa_meta m = tmeta("taken");
  struct spaa_err err = {0};
  char *want = twrite(p);
  size_t n = p->n_samples;
  (void)state;
  assert_true(n > 1);
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  m.take_records = 1;
  assert_int_equal(spaa_store_put(s, p, &m, &err), 0);
  assert_int_equal(p->n_samples, 0);
  assert_null(p->samples);
  assert_int_equal(p->n_stacks, 0);
  assert_null(p->stacks);
  assert_round_trip(s, "taken", want);
  spaa_store_close(s);
  free(want);
  spaa_profile_free(p);
  tdir_rm(&t);
}

/* A profile past a few of the preparation's release runs: n stacks of three frames, every
 * third with a context of its own and every fifth with the shared one, records for half of
 * them (with contexts and extras), then compact samples for all (some with contexts). */
static struct spaa_profile *tp_large(size_t n)
{
  struct spaa_profile *p = tp_small(n, 0);
  json_t *shared = tjson("{\"x_thread\":\"worker\"}");
  struct spaa_err err = {0};
  size_t i;
  p->header.id_mode = SPAA_IDS_LOCAL;
  for (i = 0; i < p->n_stacks; i++) {
    struct spaa_stack *st = &p->stacks[i];
    snprintf(st->id, sizeof(st->id), "t%zu", i); /* local again: normalize makes new ids */
    if (i % 3 == 0)
      st->context = json_pack("{s:I}", "x_n", (json_int_t)i);
    else if (i % 5 == 0)
      st->context = json_incref(shared);
    if (i % 7 == 0)
      st->extra = json_pack("{s:I}", "x_e", (json_int_t)i);
  }
  for (i = 0; i < n / 2; i++) {
    struct spaa_sample *sm = spaa_add_sample(p);
    char id[32];
    snprintf(id, sizeof(id), "t%zu", i);
    sm->stack_id = spaa_strdup(p, id);
    sm->has_timestamp = 1;
    sm->timestamp = spaa_int(1700000000 + (int64_t)i);
    if (i % 4 == 0)
      sm->context = json_pack("{s:I}", "x_s", (json_int_t)i);
    if (i % 9 == 0)
      sm->extra = json_incref(shared);
  }
  p->cs.event = "cpu";
  p->cs.metric = "samples";
  for (i = 0; i < 13; i++) { /* entry i: thread i, no context */
    uint32_t k;
    struct spaa_cctx *x = spaa_add_cctx(p, &k);
    assert_non_null(x);
    x->tid = (int64_t)i;
  }
  for (i = 0; i < n; i++) {
    struct spaa_csample *c = spaa_add_csample(p);
    uint32_t k = (uint32_t)(i % 13);
    assert_non_null(c);
    c->stack = (uint32_t)((i * 7) % n); /* stack "t<that>" */
    c->timestamp = 1700001000 + (int64_t)i;
    c->value = 1;
    c->flags = SPAA_CS_TIMESTAMP | SPAA_CS_WEIGHT;
    if (i % 6 == 0) { /* an entry of its own, with a context */
      struct spaa_cctx *x = spaa_add_cctx(p, &k);
      assert_non_null(x);
      x->tid = (int64_t)(i % 13);
      x->context = json_pack("{s:I}", "x_c", (json_int_t)i);
    }
    c->ctx = k;
  }
  json_decref(shared);
  if (spaa_normalize(p, &err))
    fail_msg("normalize: %s", err.msg);
  return p;
}

/* The same for a profile large enough that the preparation gives back its records in runs
 * while it reads them (spaa_profile_release_*): stored taken or not, it reads back as the
 * same text, with the same event totals and sample count. */
static void test_take_records_large(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_large(40000), *q = tp_large(40000);
  struct spaa_meta m = tmeta("big-taken");
  struct spaa_store_profile_info a, b;
  struct spaa_err err = {0};
  char *want = twrite(p);
  size_t i, j;
  (void)state;
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  m.take_records = 1;
  assert_int_equal(spaa_store_put(s, p, &m, &err), 0);
  assert_null(p->stacks);
  assert_int_equal(spaa_profile_n_samples(p), 0);
  put_ok(s, q, "big-kept");
  assert_round_trip(s, "big-taken", want);
  assert_round_trip(s, "big-kept", want);
  assert_int_equal(spaa_store_meta(s, "big-taken", &a, &err), 0);
  assert_int_equal(spaa_store_meta(s, "big-kept", &b, &err), 0);
  assert_int_equal(a.samples, 40000 + 20000);
  assert_int_equal(a.samples, b.samples);
  assert_int_equal(a.n_events, b.n_events);
  for (i = 0; i < a.n_events; i++) {
    assert_string_equal(a.events[i].name, b.events[i].name);
    assert_int_equal(a.events[i].n_totals, b.events[i].n_totals);
    for (j = 0; j < a.events[i].n_totals; j++) {
      assert_string_equal(a.events[i].totals[j].metric, b.events[i].totals[j].metric);
      assert_int_equal(a.events[i].totals[j].value.is_float, b.events[i].totals[j].value.is_float);
      assert_int_equal(a.events[i].totals[j].value.i, b.events[i].totals[j].value.i);
    }
  }
  spaa_store_profile_info_free(&a);
  spaa_store_profile_info_free(&b);
  spaa_store_close(s);
  free(want);
  spaa_profile_free(p);
  spaa_profile_free(q);
  tdir_rm(&t);
}

static void test_round_trip_leaf_to_root(void **state) { round_trip(SPAA_LEAF_TO_ROOT); }
static void test_round_trip_root_to_leaf(void **state) { round_trip(SPAA_ROOT_TO_LEAF); }

static int count_stacks(void *ctx, const struct spaa_store_scan_stack *st)
{
  (void)st;
  ++*(size_t *)ctx;
  return 0;
}

/* A read reports to its meter: the model as it grows and, while it is read, the block
 * decompressed under it (given back after); refused past the meter's room, it fails as out
 * of memory, giving back everything it took. */
static void test_metered_read(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_rich(SPAA_LEAF_TO_ROOT, 0), *q = NULL;
  struct spaa_meter m;
  struct spaa_err err = {0};
  char *want = twrite(p), *got;
  size_t model, peak;
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  put_ok(s, p, "rich");
  memset(&m, 0, sizeof(m));
  m.room = SIZE_MAX;
  assert_int_equal(spaa_store_get_metered(s, "rich", &m, &q, &err), 0);
  got = twrite(q);
  assert_string_equal(got, want);
  free(got);
  model = m.held;
  peak = m.peak;
  assert_true(model > 0);
  assert_int_equal(model, q->metered);
  assert_true(peak > model); /* the block was counted beside the model, then given back */
  spaa_profile_free(q);
  q = NULL;
  assert_int_equal(m.held, 0);
  /* room for the model alone, not for the model beside its block */
  memset(&m, 0, sizeof(m));
  m.room = peak - 1;
  assert_int_equal(spaa_store_get_metered(s, "rich", &m, &q, &err), SPAA_E_NOMEM);
  assert_null(q);
  assert_int_equal(m.held, 0);
  assert_true(m.peak < peak);
  /* a scan reports its decompressed block while it runs: counted, then given back */
  {
    struct spaa_list_query sel;
    size_t stacks = 0;
    memset(&sel, 0, sizeof(sel));
    memset(&m, 0, sizeof(m));
    m.room = SIZE_MAX;
    assert_int_equal(spaa_store_scan_metered(s, &sel, &m, count_stacks, &stacks, &err), 0);
    assert_int_equal(stacks, p->n_stacks);
    assert_true(m.peak > 0);
    assert_int_equal(m.held, 0);
    memset(&m, 0, sizeof(m));
    m.room = 16;
    stacks = 0;
    assert_int_equal(spaa_store_scan_metered(s, &sel, &m, count_stacks, &stacks, &err),
                     SPAA_E_NOMEM);
    assert_int_equal(stacks, 0);
    assert_int_not_equal(m.refused, 0);
    assert_int_equal(m.held, 0);
  }
  spaa_store_close(s);
  free(want);
  spaa_profile_free(p);
  tdir_rm(&t);
}

/* Sanity of the fixture itself: it has what the round trip claims to cover. */
static void test_rich_profile_covers_fields(void **state)
{
  struct spaa_profile *p = tp_rich(SPAA_LEAF_TO_ROOT, 0);
  char *text = twrite(p);
  const char *needles[] = {"\"x_mapping\"", "\"inline_depth\":1", "\"func_resolved\":false",
                           "\"srcline_resolved\":false", "\"symoff\"", "\"exclusive\"",
                           "\"related_stacks\"", "\"x_weights\"", "\"context\":{}",
                           "\"type\":\"window\"", "\"type\":\"thread\"", "\"build_id\":\"\"",
                           "\"srcline\":\"\"", "\"stack_type\":\"unified\"", "0xdeadbeef",
                           "\"timestamp\":1700000000.5", "\"sampling\":{\"mode\":\"period\""};
  for (size_t i = 0; i < sizeof(needles) / sizeof(needles[0]); i++)
    if (!strstr(text, needles[i]))
      fail_msg("the rich profile lacks %s", needles[i]);
  free(text);
  spaa_profile_free(p);
}

static void test_dedup(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_rich(SPAA_LEAF_TO_ROOT, 0), *p2 = tp_rich(SPAA_LEAF_TO_ROOT, 1);
  struct spaa_store_counts a, b, c;
  char *want2 = twrite(p2);
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  put_ok(s, p, "first");
  a = counts(s);
  assert_int_equal(a.profiles, 1);
  assert_int_equal(a.dsos, 3);   /* dsos 1 and 9 share a build id */
  assert_int_equal(a.frames, 7); /* frames 14 and 15 share a content id */
  assert_int_equal(a.stacks, 6);
  assert_int_equal(a.profile_stacks, 6);
  assert_int_equal(a.samples, 4);
  /* the same profile under another id: no new shared rows */
  put_ok(s, p, "second");
  b = counts(s);
  assert_int_equal(b.profiles, 2);
  assert_int_equal(b.dsos, a.dsos);
  assert_int_equal(b.frames, a.frames);
  assert_int_equal(b.stacks, a.stacks);
  assert_int_equal(b.profile_stacks, 2 * a.profile_stacks);
  assert_int_equal(b.samples, 2 * a.samples);
  /* a profile sharing all but one stack adds just that one */
  put_ok(s, p2, "third");
  c = counts(s);
  assert_int_equal(c.stacks, a.stacks + 1);
  assert_int_equal(c.frames, a.frames);
  assert_int_equal(c.dsos, a.dsos);
  assert_round_trip(s, "third", want2);
  spaa_store_close(s);
  free(want2);
  spaa_profile_free(p);
  spaa_profile_free(p2);
  tdir_rm(&t);
}

static void test_already_stored(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_small(3, 0), *other = tp_small(5, 2);
  struct spaa_meta m = tmeta("dup");
  struct spaa_err err = {0};
  struct spaa_store_stats st;
  char *want = twrite(p);
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  assert_int_equal(spaa_store_put(s, p, &m, &err), 0);
  /* same id, other content: 1 and nothing written */
  assert_int_equal(spaa_store_put(s, other, &m, &err), 1);
  assert_int_equal(counts(s).profiles, 1);
  assert_int_equal(counts(s).stacks, 3);
  assert_round_trip(s, "dup", want);
  spaa_store_stats(s, &st);
  assert_int_equal(st.stored, 1);
  assert_int_equal(st.duplicates, 1);
  spaa_store_close(s);
  free(want);
  spaa_profile_free(p);
  spaa_profile_free(other);
  tdir_rm(&t);
}

static void test_not_found_and_invalid(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_small(2, 0), *q = NULL;
  struct spaa_meta m = tmeta("x");
  struct spaa_err err = {0};
  struct spaa_store_profile_info j;
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  assert_int_equal(spaa_store_get(s, "nope", &q, &err), SPAA_E_NOT_FOUND);
  assert_null(q);
  assert_int_equal(spaa_store_meta(s, "nope", &j, &err), SPAA_E_NOT_FOUND);
  assert_null(j.id);
  /* a stack id that is not its content id is refused before anything is queued */
  p->stacks[0].id[5] = p->stacks[0].id[5] == 'a' ? 'b' : 'a';
  assert_int_equal(spaa_store_put(s, p, &m, &err), SPAA_E_INVALID);
  assert_non_null(strstr(err.msg, "normalize"));
  m.id = "";
  assert_int_equal(spaa_store_put(s, p, &m, &err), SPAA_E_INVALID);
  assert_int_equal(counts(s).profiles, 0);
  assert_int_equal(counts(s).stacks, 0);
  spaa_store_close(s);
  spaa_profile_free(p);
  tdir_rm(&t);
}

static int64_t q_int(sqlite3 *db, const char *sql)
{
  sqlite3_stmt *st;
  int64_t v = -1;
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  if (sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static void test_migration_from_v1(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_store_opts o;
  struct spaa_err err = {0};
  struct spaa_profile *p = tp_small(4, 4);
  char *want = twrite(p);
  sqlite3 *db;
  tdir_make(&t);
  /* a version-1 database made by hand: the first step only */
  assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, "CREATE TABLE schema_version(version INTEGER NOT NULL);"
                                    "INSERT INTO schema_version VALUES(1);", NULL, NULL, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, storage__migrations[0], NULL, NULL, NULL), SQLITE_OK);
  assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE name='profile_label_kv'"), 0);
  sqlite3_close(db);

  s = topen(t.db, 8, 8);
  put_ok(s, p, "after-migration");
  assert_round_trip(s, "after-migration", want);
  spaa_store_close(s);

  assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
  assert_int_equal(q_int(db, "SELECT max(version) FROM schema_version"),
                   (int64_t)storage__n_migrations);
  assert_int_equal(q_int(db, "SELECT count(*) FROM schema_version"), 1);
  assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE name='profile_label_kv'"), 1);
  assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE name='profile_service'"), 1);
  /* a version from the future is refused */
  assert_int_equal(sqlite3_exec(db, "UPDATE schema_version SET version = 99", NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(db);
  o.path = t.db;
  o.queue_depth = o.batch_max = 4;
  o.readers = 1;
  o.durability = SPAA_DURABILITY_FULL;
  s = NULL;
  assert_int_equal(spaa_store_open(&o, &s, &err), SPAA_E_STORE);
  assert_null(s);
  assert_non_null(strstr(err.msg, "newer"));
  free(want);
  spaa_profile_free(p);
  tdir_rm(&t);
}

static void test_pragmas_and_original(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_small(2, 0);
  struct spaa_meta m = tmeta("orig");
  struct spaa_err err = {0};
  static const char payload[] = "the original upload, kept as it came in, the original upload";
  char back[sizeof(payload)];
  sqlite3 *db;
  sqlite3_stmt *st;
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  m.original = payload;
  m.original_len = sizeof(payload);
  assert_int_equal(spaa_store_put(s, p, &m, &err), 0);
  spaa_store_close(s);
  assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
  sqlite3_finalize(st);
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT original FROM profile WHERE id='orig'", -1, &st,
                                      NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(ZSTD_decompress(back, sizeof(back), sqlite3_column_blob(st, 0),
                                   (size_t)sqlite3_column_bytes(st, 0)), sizeof(payload));
  assert_memory_equal(back, payload, sizeof(payload));
  sqlite3_finalize(st);
  sqlite3_close(db);
  spaa_profile_free(p);
  tdir_rm(&t);
}

/* durability: FULL by default, NORMAL when asked; either way a put reads back. */
static void test_durability(void **state)
{
  struct tdir t;
  struct spaa_store *s = NULL;
  struct spaa_store_stats st;
  struct spaa_profile *p = tp_small(2, 0), *back = NULL;
  struct spaa_meta m = tmeta("sync");
  struct spaa_err err = {0};
  struct spaa_store_opts o;
  char *want = twrite(p), *got;
  int mode;
  (void)state;
  for (mode = 0; mode < 2; mode++) {
    tdir_make(&t);
    memset(&o, 0, sizeof(o));
    o.path = t.db;
    o.queue_depth = 8;
    o.batch_max = 8;
    o.readers = 1;
    o.durability = mode ? SPAA_DURABILITY_NORMAL : SPAA_DURABILITY_FULL;
    assert_int_equal(spaa_store_open(&o, &s, &err), 0);
    spaa_store_stats(s, &st);
    assert_int_equal(st.synchronous, mode ? 1 : 2);
    assert_int_equal(spaa_store_put(s, p, &m, &err), 0);
    assert_int_equal(spaa_store_get(s, "sync", &back, &err), 0);
    got = twrite(back);
    assert_string_equal(got, want);
    free(got);
    spaa_profile_free(back);
    back = NULL;
    spaa_store_close(s);
    tdir_rm(&t);
  }
  free(want);
  spaa_profile_free(p);
}

/* The location picks the engine: "sqlite:FILE" and a plain FILE are the same store; an
 * engine this build lacks is refused by name. */
static void test_location(void **state)
{
  struct tdir t;
  struct spaa_store *s = NULL;
  struct spaa_store_opts o = {0};
  struct spaa_profile *p = tp_small(2, 0);
  struct spaa_err err = {0};
  char loc[600];
  char *want = twrite(p);
  (void)state;
  tdir_make(&t);
  snprintf(loc, sizeof(loc), "sqlite:%s", t.db);
  o.path = loc;
  o.queue_depth = o.batch_max = 4;
  o.readers = 1;
  assert_int_equal(spaa_store_open(&o, &s, &err), 0);
  put_ok(s, p, "loc");
  spaa_store_close(s);
  s = topen(t.db, 8, 8); /* the plain path: the same file */
  assert_round_trip(s, "loc", want);
  spaa_store_close(s);
  o.path = "mysql://relay@db.invalid/spaa"; /* an engine this build lacks */
  assert_int_equal(spaa_store_open(&o, &s, &err), SPAA_E_STORE);
  assert_null(s);
  assert_non_null(strstr(err.msg, "'mysql'"));
  /* an engine it has, unreachable: opened not ready, every put busy (503 + Retry-After),
   * the message naming the location without its password */
  o.path = "postgres://relay:s3cret@db.invalid/spaa";
  assert_int_equal(spaa_store_open(&o, &s, &err), 0);
  assert_int_equal(spaa_store_ready(s), 0);
  assert_int_equal(spaa_store_put(s, p, &(struct spaa_meta){.id = "x1", .service = "svc",
                                                            .source = "pprof"}, &err),
                   SPAA_E_BUSY);
  assert_non_null(strstr(err.msg, "not ready"));
  assert_non_null(strstr(err.msg, "relay:***@db.invalid"));
  assert_null(strstr(err.msg, "s3cret"));
  spaa_store_close(s);
  o.path = "sqlite:";
  assert_int_equal(spaa_store_open(&o, &s, &err), SPAA_E_STORE);
  assert_non_null(strstr(err.msg, "empty location"));
  tdir_rm(&t);
  free(want);
  spaa_profile_free(p);
}

/* put with a service and a received time of its own */
static void put_in(struct spaa_store *s, const struct spaa_profile *p, const char *id,
                   const char *service, int64_t received)
{
  struct spaa_meta m = tmeta(id);
  struct spaa_err err = {0};
  int rc;
  m.service = service;
  m.received_ns = received;
  if ((rc = spaa_store_put(s, p, &m, &err)))
    fail_msg("put %s: %d %s", id, rc, err.msg);
}

static struct spaa_store_deleted del(struct spaa_store *s, const struct spaa_list_query *q)
{
  struct spaa_store_deleted d;
  struct spaa_err err = {0};
  int rc = spaa_store_delete(s, q, &d, &err);
  if (rc)
    fail_msg("delete: %d %s", rc, err.msg);
  return d;
}

/* Deleting a service's profiles takes them and the shared rows only they named; what the
 * other profiles name stays and reads back; the same profile put again is whole (the
 * writer's cache forgot the swept rows). */
static void test_delete_selection(void **state)
{
  struct tdir t, t1;
  struct spaa_store *s;
  struct spaa_profile *p = tp_rich(SPAA_LEAF_TO_ROOT, 0), *p2 = tp_rich(SPAA_LEAF_TO_ROOT, 1);
  struct spaa_profile *small = tp_small(3, 0);
  struct spaa_list_query q = {0};
  struct spaa_store_counts only_keep, c;
  struct spaa_store_deleted d;
  char *want = twrite(p), *want2 = twrite(p2), *want_small = twrite(small);
  (void)state;
  /* what a store holding only "keep" counts */
  tdir_make(&t1);
  s = topen(t1.db, 8, 8);
  put_in(s, p, "keep", "a", 1);
  only_keep = counts(s);
  spaa_store_close(s);
  tdir_rm(&t1);

  tdir_make(&t);
  s = topen(t.db, 8, 8);
  put_in(s, p, "keep", "a", 1);
  put_in(s, p2, "drop", "b", 2);
  put_in(s, small, "small", "b", 3);
  c = counts(s);
  assert_true(c.stacks > only_keep.stacks && c.frames > only_keep.frames);
  /* a selection matching nothing deletes and sweeps nothing */
  q.service = "nobody";
  d = del(s, &q);
  assert_int_equal(d.profiles + d.stacks + d.frames + d.dsos + d.dicts, 0);
  q.service = "b";
  d = del(s, &q);
  assert_int_equal(d.profiles, 2);
  c = counts(s);
  assert_int_equal(c.profiles, 1);
  assert_int_equal(c.stacks, only_keep.stacks);
  assert_int_equal(c.frames, only_keep.frames);
  assert_int_equal(c.dsos, only_keep.dsos);
  assert_true(d.stacks > 0 && d.frames > 0 && d.dicts == 1);
  assert_round_trip(s, "keep", want);
  /* put again: stored anew and whole */
  put_in(s, p2, "drop", "b", 4);
  put_in(s, small, "small", "b", 5);
  assert_round_trip(s, "drop", want2);
  assert_round_trip(s, "small", want_small);
  spaa_store_close(s);
  /* after a reopen as well */
  s = topen(t.db, 8, 8);
  assert_round_trip(s, "drop", want2);
  assert_round_trip(s, "keep", want);
  spaa_store_close(s);
  tdir_rm(&t);
  free(want);
  free(want2);
  free(want_small);
  spaa_profile_free(p);
  spaa_profile_free(p2);
  spaa_profile_free(small);
}

/* A limit deletes the oldest received first; a cursor is refused; deleting everything
 * leaves no shared row behind. */
static void test_delete_oldest(void **state)
{
  struct tdir t;
  struct spaa_store *s;
  struct spaa_profile *p = tp_rich(SPAA_LEAF_TO_ROOT, 0);
  struct spaa_list_query q = {0};
  struct spaa_store_cursor cur = {0};
  struct spaa_store_deleted d;
  struct spaa_store_counts c;
  struct spaa_profile *back = NULL;
  struct spaa_err err = {0};
  (void)state;
  tdir_make(&t);
  s = topen(t.db, 8, 8);
  put_in(s, p, "p1", "svc", 10);
  put_in(s, p, "p2", "svc", 30);
  put_in(s, p, "p3", "svc", 20);
  q.limit = 2;
  d = del(s, &q);
  assert_int_equal(d.profiles, 2);
  assert_int_equal(d.stacks, 0); /* p2 still names them all */
  assert_int_equal(spaa_store_get(s, "p1", &back, &err), SPAA_E_NOT_FOUND);
  assert_int_equal(spaa_store_get(s, "p3", &back, &err), SPAA_E_NOT_FOUND);
  assert_int_equal(spaa_store_get(s, "p2", &back, &err), 0);
  spaa_profile_free(back);
  cur.id = "p2";
  q.after = &cur;
  assert_int_equal(spaa_store_delete(s, &q, &d, &err), SPAA_E_BAD_REQUEST);
  q.after = NULL;
  q.limit = 0;
  q.received_before_ns = 30; /* p2 came at 30: not before */
  d = del(s, &q);
  assert_int_equal(d.profiles, 0);
  q.received_before_ns = 31;
  d = del(s, &q);
  assert_int_equal(d.profiles, 1);
  c = counts(s);
  assert_int_equal(c.profiles + c.stacks + c.frames + c.dsos, 0);
  /* the space went back: the log was checkpointed and truncated */
  assert_true(d.bytes_before > 0 && d.bytes_after < d.bytes_before);
  assert_int_equal(c.bytes, d.bytes_after);
  spaa_store_close(s);
  {
    sqlite3 *db;
    assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
    assert_int_equal(q_int(db, "PRAGMA auto_vacuum"), 2); /* incremental, set at creation */
    assert_int_equal(q_int(db, "PRAGMA freelist_count"), 0);
    sqlite3_close(db);
  }
  tdir_rm(&t);
  spaa_profile_free(p);
}

/* A damaged row makes get fail with a message, never crash or return half a profile. */
static void test_corrupt_rows(void **state)
{
  static const char *const damage[] = {
    "UPDATE profile_block SET data = x'05'",
    "UPDATE profile_block SET data = substr(data, 1, length(data) - 3)",
    "UPDATE profile_block SET data = x'28b52ffd2005290000010203ff'",
    "UPDATE stack SET frames = x'7f'",
    "UPDATE stack SET cid = x'01' WHERE id = 1",
    "DELETE FROM frame",
    "UPDATE block_dict SET data = x'0102'",
    "UPDATE profile_block SET dict = 99",
  };
  struct spaa_profile *p = tp_rich(SPAA_LEAF_TO_ROOT, 0), *q = NULL;
  struct spaa_err err = {0};
  struct spaa_store *s;
  struct tdir t;
  sqlite3 *db;
  for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
    tdir_make(&t);
    s = topen(t.db, 8, 8);
    put_ok(s, p, "victim");
    assert_int_equal(sqlite3_open(t.db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, damage[i], NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    if (spaa_store_get(s, "victim", &q, &err) != SPAA_E_STORE)
      fail_msg("get after \"%s\" did not fail", damage[i]);
    assert_null(q);
    assert_non_null(strstr(err.msg, "corrupt"));
    spaa_store_close(s);
    tdir_rm(&t);
  }
  spaa_profile_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_rich_profile_covers_fields),
    cmocka_unit_test(test_round_trip_leaf_to_root),
    cmocka_unit_test(test_round_trip_root_to_leaf),
    cmocka_unit_test(test_take_records),
    cmocka_unit_test(test_take_records_large),
    cmocka_unit_test(test_metered_read),
    cmocka_unit_test(test_dedup),
    cmocka_unit_test(test_already_stored),
    cmocka_unit_test(test_not_found_and_invalid),
    cmocka_unit_test(test_migration_from_v1),
    cmocka_unit_test(test_pragmas_and_original),
    cmocka_unit_test(test_durability),
    cmocka_unit_test(test_location),
    cmocka_unit_test(test_delete_selection),
    cmocka_unit_test(test_delete_oldest),
    cmocka_unit_test(test_corrupt_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
