/* codecs/pprof.c: gunzip, protoc-c decode and validation, on every shared fixture (counts
 * from fixtures/pprof/SOURCES.md) and on hand-built profiles breaking one rule each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <zlib.h>

#include "base/compress.h"
#include "pprof/pprof_int.h"
#include "fixture.h"
#include "pprof_testlib.h"

/* The capped gunzip pprof decoding uses (base/compress), returning a malloc'd buffer. */
static int gunzip(const uint8_t *in, size_t len, size_t max, uint8_t **out, size_t *out_len,
                  struct spaa_err *err)
{
  struct spaa_buf b;
  int rc;
  spaa_buf_init(&b, 0);
  rc = spaa_decompress(SPAA_CODING_GZIP, in, len, max, &b, err);
  *out = (uint8_t *)spaa_buf_steal(&b, out_len);
  return rc;
}

struct fx {
  const char *name;
  int gzip;
  size_t types, samples, locations, functions, mappings;
};

/* From SOURCES.md (gzip = starts with 1f 8b, whatever the name says). */
static const struct fx fixtures[] = {
    {"google-pprof_sample.cpu", 1, 2, 76, 86, 14, 3},
    {"google-pprof_cppbench.cpu_no_samples_type", 1, 1, 52, 109, 0, 12},
    {"google-pprof_go.nomappings.crash", 1, 4, 2, 11, 0, 0},
    {"google-pprof_large.cpu", 1, 2, 20430, 23355, 23038, 4},
    {"pyroscope_heap", 1, 4, 11951, 4676, 2405, 1},
    {"pyroscope_go.cpu.labels.pprof", 1, 2, 480, 32, 22, 1},
    {"pyroscope_profile_java", 1, 1, 2614, 201, 201, 0},
    {"pyroscope_profile_python", 1, 1, 438, 463, 199, 1},
    {"pyroscope_pyspy-1.pb.gz", 0, 1, 16, 12, 7, 0},
    {"pyroscope_dotnet.labels.pprof", 0, 6, 2814, 48, 48, 0},
    {"pyroscope_single_group_with_optional_span_id.pb.gz", 1, 2, 63, 159, 115, 1},
    {"pyroscope_nodejs-wall.pb.gz", 1, 2, 16, 87, 67, 0},
    {"parca_node-profile.pb.gz", 1, 1, 190, 17, 3, 13},
    {"parca_profile-with-labels.pb.gz", 1, 1, 439, 989, 663, 3},
};

static void test_fixture_counts(void **state)
{
  size_t i;
  (void)state;
  if (!spaa_test_have_fixtures("pprof", __func__))
    skip();
  for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
    const struct fx *f = &fixtures[i];
    struct spaa_err err = {0};
    struct spaa_pprof *d = NULL;
    size_t len;
    uint8_t *buf = spaa_test_fixture_in("pprof", f->name, &len);
    int rc;
    assert_non_null(buf);
    assert_int_equal(spaa_pprof_is_gzip(buf, len), f->gzip);
    rc = spaa_pprof_decode(buf, len, &d, &err);
    if (rc)
      fail_msg("%s: %s", f->name, err.msg);
    assert_int_equal(d->was_gzip, f->gzip);
    assert_int_equal(d->msg->n_sample_type, f->types);
    assert_int_equal(d->n_samples, f->samples);
    assert_int_equal(d->msg->n_location, f->locations);
    assert_int_equal(d->msg->n_function, f->functions);
    assert_int_equal(d->msg->n_mapping, f->mappings);
    spaa_pprof_free(d);
    free(buf);
  }
}

/* The invalid UTF-8 fixture unpacks (1 sample, 2 locations, 2 functions, 1 mapping) but
 * is rejected as invalid (422), naming the string table entry. */
static void test_fixture_invalid_utf8(void **state)
{
  struct spaa_err err = {0};
  struct spaa_pprof *d = NULL;
  Perftools__Profiles__Profile *m;
  uint8_t *buf, *raw;
  size_t len, raw_len;
  (void)state;
  if (!spaa_test_have_fixtures("pprof", __func__))
    skip();
  buf = spaa_test_fixture_in("pprof", "pyroscope_invalid_utf8.pb.gz", &len);
  assert_non_null(buf);
  assert_int_equal(gunzip(buf, len, SPAA_PPROF_MAX_RAW, &raw, &raw_len, &err), 0);
  m = perftools__profiles__profile__unpack(NULL, raw_len, raw);
  assert_non_null(m);
  assert_int_equal(m->n_sample, 1);
  assert_int_equal(m->n_location, 2);
  assert_int_equal(m->n_function, 2);
  assert_int_equal(m->n_mapping, 1);
  perftools__profiles__profile__free_unpacked(m, NULL);
  free(raw);
  assert_int_equal(spaa_pprof_decode(buf, len, &d, &err), SPAA_E_INVALID);
  assert_null(d);
  assert_int_equal(spaa_err_status(err.code), 422);
  assert_non_null(strstr(err.msg, "string_table["));
  assert_non_null(strstr(err.msg, "not valid UTF-8"));
  free(buf);
}

/* ---- gzip ------------------------------------------------------------------------------ */

static uint8_t *gz(const uint8_t *in, size_t n, size_t *out_len)
{
  z_stream zs;
  size_t cap = n + n / 2 + 64;
  uint8_t *out = malloc(cap);
  memset(&zs, 0, sizeof(zs));
  assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  zs.next_in = (Bytef *)in, zs.avail_in = (uInt)n;
  zs.next_out = out, zs.avail_out = (uInt)cap;
  assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
  *out_len = zs.total_out;
  deflateEnd(&zs);
  return out;
}

static void test_gzip(void **state)
{
  struct tb b;
  struct spaa_err err = {0};
  struct spaa_pprof *d = NULL;
  uint8_t *pb, *z, *two, *out, zeros[4096] = {0}, *bomb;
  size_t pb_len, z_len, out_len, bomb_len;
  (void)state;
  tb_basic(&b);
  pb = tb_pack(&b, &pb_len);
  z = gz(pb, pb_len, &z_len);
  /* raw and gzipped decode the same */
  assert_int_equal(spaa_pprof_decode(pb, pb_len, &d, &err), 0);
  assert_int_equal(d->was_gzip, 0);
  spaa_pprof_free(d);
  assert_int_equal(spaa_pprof_decode(z, z_len, &d, &err), 0);
  assert_int_equal(d->was_gzip, 1);
  assert_int_equal(d->raw_len, pb_len);
  assert_int_equal(d->n_samples, 2);
  spaa_pprof_free(d);
  /* two members concatenated inflate to both */
  two = malloc(2 * z_len);
  memcpy(two, z, z_len);
  memcpy(two + z_len, z, z_len);
  assert_int_equal(gunzip(two, 2 * z_len, 1 << 20, &out, &out_len, &err), 0);
  assert_int_equal(out_len, 2 * pb_len);
  assert_memory_equal(out, pb, pb_len);
  assert_memory_equal(out + pb_len, pb, pb_len);
  free(out);
  /* garbage after the stream */
  two[z_len] = 'x';
  assert_int_equal(gunzip(two, z_len + 3, 1 << 20, &out, &out_len, &err),
                   SPAA_E_BAD_COMPRESSION);
  assert_null(out);
  /* truncated, at every length */
  for (size_t cut = 2; cut < z_len; cut++) {
    int rc = gunzip(z, cut, 1 << 20, &out, &out_len, &err);
    assert_int_equal(rc, SPAA_E_BAD_COMPRESSION);
    assert_int_equal(spaa_err_status(rc), 400);
  }
  /* corrupt */
  memcpy(two, z, z_len);
  two[12] ^= 0xff;
  assert_int_not_equal(spaa_pprof_decode(two, z_len, &d, &err), 0);
  assert_null(d);
  /* the cap: exact size passes, one byte less is 413 */
  assert_int_equal(gunzip(z, z_len, pb_len, &out, &out_len, &err), 0);
  free(out);
  assert_int_equal(gunzip(z, z_len, pb_len - 1, &out, &out_len, &err), SPAA_E_TOO_LARGE);
  assert_int_equal(spaa_err_status(err.code), 413);
  /* a small bomb: 4 KiB of zeros repeated far past a small cap, lying ISIZE */
  {
    z_stream zs;
    size_t cap = 1 << 16, i;
    bomb = malloc(cap);
    memset(&zs, 0, sizeof(zs));
    deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    zs.next_out = bomb, zs.avail_out = (uInt)cap;
    for (i = 0; i < 1024; i++) { /* 4 MiB */
      zs.next_in = zeros, zs.avail_in = sizeof(zeros);
      deflate(&zs, Z_NO_FLUSH);
    }
    deflate(&zs, Z_FINISH);
    bomb_len = zs.total_out;
    deflateEnd(&zs);
    bomb[bomb_len - 1] = bomb[bomb_len - 2] = bomb[bomb_len - 3] = 0, bomb[bomb_len - 4] = 8;
    assert_int_equal(gunzip(bomb, bomb_len, 1 << 20, &out, &out_len, &err),
                     SPAA_E_TOO_LARGE);
    assert_null(out);
    free(bomb);
  }
  free(two);
  free(z);
  free(pb);
}

/* ---- large inputs read in windows --------------------------------------------------------- */

/* 1 when every sample of a and b is the same (locations, values, labels), in the same order. */
static int same_samples(const struct spaa_pprof *a, const struct spaa_pprof *b)
{
  const Perftools__Profiles__Sample *x, *y;
  struct spaa_pprof_iter ia, ib;
  struct spaa_err err = {0};
  size_t k, n = 0;
  int same = 1;
  spaa_pprof_iter_init(&ia, a);
  spaa_pprof_iter_init(&ib, b);
  for (;;) {
    assert_int_equal(spaa_pprof_iter_next(&ia, &x, &err), 0);
    assert_int_equal(spaa_pprof_iter_next(&ib, &y, &err), 0);
    if (!x || !y) {
      same = !x && !y;
      break;
    }
    n++;
    if (x->n_location_id != y->n_location_id || x->n_value != y->n_value ||
        x->n_label != y->n_label ||
        memcmp(x->location_id, y->location_id, x->n_location_id * sizeof(uint64_t)) ||
        memcmp(x->value, y->value, x->n_value * sizeof(int64_t))) {
      same = 0;
      break;
    }
    for (k = 0; k < x->n_label; k++)
      if (x->label[k]->key != y->label[k]->key || x->label[k]->str != y->label[k]->str ||
          x->label[k]->num != y->label[k]->num || x->label[k]->num_unit != y->label[k]->num_unit)
        same = 0;
  }
  assert_int_equal(n, a->n_samples);
  spaa_pprof_iter_free(&ia);
  spaa_pprof_iter_free(&ib);
  return same;
}

/* Every gzipped fixture decodes the same whether gunzipped whole or read in windows. */
static void test_windows_fixtures(void **state)
{
  size_t i;
  (void)state;
  if (!spaa_test_have_fixtures("pprof", __func__))
    skip();
  for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
    struct spaa_err err = {0};
    struct spaa_pprof *whole = NULL, *win = NULL;
    size_t len;
    uint8_t *buf = spaa_test_fixture_in("pprof", fixtures[i].name, &len);
    assert_non_null(buf);
    assert_int_equal(spaa_pprof__decode(buf, len, SIZE_MAX, &whole, &err), 0);
    if (spaa_pprof__decode(buf, len, 0, &win, &err))
      fail_msg("%s in windows: %s", fixtures[i].name, err.msg);
    assert_int_equal(win->stream, fixtures[i].gzip);
    assert_int_equal(whole->stream, 0);
    assert_int_equal(win->raw_len, whole->raw_len);
    assert_int_equal(win->n_samples, whole->n_samples);
    assert_int_equal(win->msg->n_location, whole->msg->n_location);
    assert_int_equal(win->msg->n_string_table, whole->msg->n_string_table);
    if (!same_samples(win, whole))
      fail_msg("%s: the samples read in windows differ", fixtures[i].name);
    spaa_pprof_free(win);
    spaa_pprof_free(whole);
    free(buf);
  }
}

/* A sample larger than the window (300,000 location ids, 300 KB packed), then damage: a
 * corrupt stream, a truncated one, garbage after it, a sample that is not a Sample. */
static void test_windows_edges(void **state)
{
  static uint64_t many[300000];
  struct tb b;
  struct spaa_err err = {0};
  struct spaa_pprof *whole = NULL, *win = NULL;
  uint8_t *pb, *z, *bad;
  size_t pb_len, z_len, i;
  (void)state;
  for (i = 0; i < sizeof(many) / sizeof(many[0]); i++)
    many[i] = 1 + i % 2;
  tb_basic(&b);
  free(tb_pack(&b, &pb_len)); /* wires the pointers, which are changed below */
  b.smp[0].location_id = many;
  b.smp[0].n_location_id = sizeof(many) / sizeof(many[0]);
  pb_len = perftools__profiles__profile__get_packed_size(&b.p);
  pb = malloc(pb_len);
  perftools__profiles__profile__pack(&b.p, pb);
  assert_true(pb_len > SPAA_PPROF_WINDOW);
  z = gz(pb, pb_len, &z_len);
  assert_int_equal(spaa_pprof__decode(z, z_len, SIZE_MAX, &whole, &err), 0);
  assert_int_equal(spaa_pprof__decode(z, z_len, 0, &win, &err), 0);
  assert_int_equal(win->stream, 1);
  assert_int_equal(win->raw_len, pb_len);
  assert_true(same_samples(win, whole));
  spaa_pprof_free(win);
  spaa_pprof_free(whole);
  win = NULL;
  /* a sample breaking a rule, read in windows: found when the conversion reads it */
  {
    struct spaa_profile *p = NULL;
    uint8_t *bp, *bz;
    size_t bp_len, bz_len;
    tb_basic(&b);
    b.smp[1].n_value = 1;
    bp = tb_pack(&b, &bp_len);
    bz = gz(bp, bp_len, &bz_len);
    assert_int_equal(spaa_pprof__decode(bz, bz_len, SIZE_MAX, &whole, &err), SPAA_E_INVALID);
    assert_int_equal(spaa_pprof__decode(bz, bz_len, 0, &win, &err), 0);
    assert_int_equal(spaa_pprof__build(win, NULL, &p, NULL, NULL, &err), SPAA_E_INVALID);
    assert_non_null(strstr(err.msg, "sample 1 has 1 values, but there are 2 sample types"));
    assert_null(p);
    spaa_pprof_free(win);
    win = whole = NULL;
    free(bz);
    free(bp);
  }
  /* two gzip members: their protobuf bytes concatenated, one message with every record
   * twice, refused the same way whether read whole or in windows (both members inflated) */
  {
    uint8_t *bp, *bz, *two;
    size_t bp_len, bz_len;
    tb_basic(&b);
    bp = tb_pack(&b, &bp_len);
    bz = gz(bp, bp_len, &bz_len);
    two = malloc(2 * bz_len);
    memcpy(two, bz, bz_len);
    memcpy(two + bz_len, bz, bz_len);
    assert_int_equal(spaa_pprof__decode(two, 2 * bz_len, SIZE_MAX, &whole, &err), SPAA_E_INVALID);
    assert_non_null(strstr(err.msg, "mapping 1 has id 1, already used by mapping 0"));
    assert_int_equal(spaa_pprof__decode(two, 2 * bz_len, 0, &win, &err), SPAA_E_INVALID);
    assert_non_null(strstr(err.msg, "mapping 1 has id 1, already used by mapping 0"));
    assert_null(win);
    free(two);
    free(bz);
    free(bp);
  }
  bad = malloc(z_len + 8);
  /* corrupt */
  memcpy(bad, z, z_len);
  bad[z_len / 2] ^= 0x55;
  assert_int_not_equal(spaa_pprof__decode(bad, z_len, 0, &win, &err), 0);
  assert_null(win);
  /* truncated */
  assert_int_equal(spaa_pprof__decode(z, z_len - 9, 0, &win, &err), SPAA_E_BAD_COMPRESSION);
  assert_null(win);
  /* garbage after the stream */
  memcpy(bad, z, z_len);
  memcpy(bad + z_len, "garbage!", 8);
  assert_int_equal(spaa_pprof__decode(bad, z_len + 8, 0, &win, &err), SPAA_E_BAD_COMPRESSION);
  assert_non_null(strstr(err.msg, "unexpected bytes after the end"));
  assert_null(win);
  free(bad);
  free(z);
  /* a sample whose bytes are not a Sample (field 1 as a 64-bit fixed), after the two of a
   * small profile */
  free(pb);
  tb_basic(&b);
  pb = tb_pack(&b, &pb_len);
  bad = malloc(pb_len + 4);
  memcpy(bad, pb, pb_len);
  bad[pb_len] = 0x12, bad[pb_len + 1] = 2, bad[pb_len + 2] = 0x09, bad[pb_len + 3] = 0x01;
  z = gz(bad, pb_len + 4, &z_len);
  assert_int_equal(spaa_pprof__decode(z, z_len, SIZE_MAX, &win, &err), SPAA_E_BAD_PROTOBUF);
  assert_non_null(strstr(err.msg, "sample 2 is not a Sample message"));
  assert_null(win);
  assert_int_equal(spaa_pprof__decode(z, z_len, 0, &win, &err), 0); /* found when read: */
  {
    struct spaa_profile *p = NULL;
    assert_int_equal(spaa_pprof__build(win, NULL, &p, NULL, NULL, &err), SPAA_E_BAD_PROTOBUF);
    assert_non_null(strstr(err.msg, "sample 2 is not a Sample message"));
    assert_null(p);
    spaa_pprof_free(win);
    win = NULL;
  }
  assert_int_equal(spaa_pprof__decode(bad, pb_len + 4, 0, &win, &err), SPAA_E_BAD_PROTOBUF);
  assert_null(win);
  free(z);
  free(bad);
  free(pb);
}

static void test_not_protobuf(void **state)
{
  struct spaa_err err = {0};
  struct spaa_pprof *d = NULL;
  const uint8_t junk[] = "this is not a profile at all";
  (void)state;
  assert_int_equal(spaa_pprof_decode(junk, sizeof(junk) - 1, &d, &err), SPAA_E_BAD_PROTOBUF);
  assert_int_equal(spaa_err_status(err.code), 400);
  /* an empty body decodes to an empty message, which has no string_table[0] */
  assert_int_equal(spaa_pprof_decode(junk, 0, &d, &err), SPAA_E_INVALID);
  assert_null(d);
}

/* ---- validation: one broken rule per case ------------------------------------------------ */

typedef void (*breaker_fn)(struct tb *b);

static void br_first_string(struct tb *b) { b->strs[0].data = (uint8_t *)"x", b->strs[0].len = 1; }
static void br_no_strings(struct tb *b) { b->n_strs = 0; }
static void br_type_index(struct tb *b) { b->vt[1].unit = 99; }
static void br_fn_name_index(struct tb *b) { b->fns[2].name = -1; }
static void br_map_file_index(struct tb *b) { b->maps[0].filename = 1000; }
static void br_loc_zero_id(struct tb *b) { b->locs[1].id = 0; }
static void br_fn_dup_id(struct tb *b) { b->fns[1].id = 1; }
static void br_map_dup_id(struct tb *b)
{
  tb_map(b, "/lib/x.so", 0, 0, NULL);
  b->maps[1].id = 1;
}
static void br_values(struct tb *b) { b->smp[1].n_value = 1; }
static void br_sample_loc(struct tb *b) { b->ids[1][0] = 99; }
static void br_loc_map(struct tb *b) { b->locs[0].mapping_id = 7; }
static void br_line_fn(struct tb *b) { b->lines[1][0].function_id = 42; }
static void br_utf8(struct tb *b) { tb_str(b, "ok"), tb_str(b, "bad \xc3\x28 here"); }
static void br_surrogate(struct tb *b) { tb_str(b, "\xed\xa0\x80"); }
static void br_nul(struct tb *b)
{
  size_t i = b->n_strs++;
  b->strs[i].data = (uint8_t *)"a\0b";
  b->strs[i].len = 3;
}
static void br_period(struct tb *b) { b->p.period = -5; }
static void br_duration(struct tb *b) { b->p.duration_nanos = -1; }
static void br_time(struct tb *b) { b->p.time_nanos = -1; }
static void br_label_key(struct tb *b)
{
  tb_label(b, 0, "k", "v", 0, NULL);
  b->labels[0][0].key = 77;
}
static void br_label_both(struct tb *b) { tb_label(b, 1, "k", "v", 5, NULL); }
static void br_comment(struct tb *b)
{
  static int64_t c[1] = {55};
  b->p.comment = c, b->p.n_comment = 1;
}
static void br_default_type(struct tb *b) { b->p.default_sample_type = 64; }

struct bad_case {
  const char *name;
  breaker_fn br;
  const char *msg; /* a substring the message must contain */
};

static const struct bad_case bad_cases[] = {
    {"first string", br_first_string, "string_table[0] must be \"\""},
    {"no strings", br_no_strings, "string_table[0] must be \"\" (the table is empty)"},
    {"sample type index", br_type_index, "sample_type 1 unit: string index 99 is out of range"},
    {"function name index", br_fn_name_index, "function 2 (id 3) name: string index -1"},
    {"mapping file index", br_map_file_index, "mapping 0 (id 1) filename: string index 1000"},
    {"location id 0", br_loc_zero_id, "location 1 has id 0, which is reserved"},
    {"function id repeated", br_fn_dup_id, "function 1 has id 1, already used by function 0"},
    {"mapping id repeated", br_map_dup_id, "mapping 1 has id 1, already used by mapping 0"},
    {"value count", br_values, "sample 1 has 1 values, but there are 2 sample types"},
    {"sample location", br_sample_loc, "sample 1 references location 99 (position 0)"},
    {"location mapping", br_loc_map, "location 0 (id 1) references mapping 7"},
    {"line function", br_line_fn, "location 1 (id 2) line 0 references function 42"},
    {"invalid utf-8", br_utf8, "is not valid UTF-8 (byte 4)"},
    {"surrogate", br_surrogate, "is not valid UTF-8 (byte 0)"},
    {"nul", br_nul, "contains a NUL character"},
    {"negative period", br_period, "period is negative (-5)"},
    {"negative duration", br_duration, "duration_nanos is negative"},
    {"negative time", br_time, "time_nanos is negative"},
    {"label key index", br_label_key, "sample 0 label 0 key: string index 77"},
    {"label str and num", br_label_both, "sample 1 label 0 has both a string and a number"},
    {"comment index", br_comment, "comment 0: string index 55"},
    {"default_sample_type index", br_default_type, "default_sample_type: string index 64"},
};

static void test_validation_errors(void **state)
{
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
    struct tb b;
    struct spaa_err err = {0};
    struct spaa_pprof *d = NULL;
    uint8_t *buf;
    size_t len;
    int rc;
    tb_basic(&b);
    bad_cases[i].br(&b);
    buf = tb_pack(&b, &len);
    rc = spaa_pprof_decode(buf, len, &d, &err);
    if (rc != SPAA_E_INVALID || !strstr(err.msg, bad_cases[i].msg))
      fail_msg("%s: rc %d, message \"%s\", wanted \"%s\"", bad_cases[i].name, rc, err.msg,
               bad_cases[i].msg);
    assert_null(d);
    assert_int_equal(spaa_err_status(err.code), 422);
    free(buf);
  }
}

/* What pprof allows stays allowed: negative sample values (diff profiles), negative label
 * numbers, line numbers <= 0, function_id 0 in a line, sparse ids in any order, a sample
 * without locations. */
static void test_accepted(void **state)
{
  struct tb b;
  struct spaa_err err = {0};
  struct spaa_pprof *d = NULL;
  uint8_t *buf;
  size_t len, idx;
  (void)state;
  tb_basic(&b);
  b.vals[0][0] = -3;
  b.vals[0][1] = -30000000;
  tb_label(&b, 1, "delta", NULL, -12, "bytes");
  b.lines[1][0].line = -1;
  b.lines[0][0].function_id = 0;
  b.fns[0].id = 1000, b.fns[1].id = 7, b.fns[2].id = 3;
  b.lines[0][1].function_id = 7, b.lines[1][0].function_id = 3;
  b.locs[0].id = 0xffffffffffffffffULL, b.locs[1].id = 5;
  b.ids[0][0] = 0xffffffffffffffffULL, b.ids[0][1] = 5, b.ids[1][0] = 5;
  {
    uint64_t none[1] = {0};
    tb_sample(&b, 0, none, (int64_t[]){1, 1});
  }
  buf = tb_pack(&b, &len);
  if (spaa_pprof_decode(buf, len, &d, &err))
    fail_msg("%s", err.msg);
  assert_int_equal(d->loc_ids.dense, 0);
  assert_int_equal(d->fn_ids.dense, 0);
  assert_int_equal(d->map_ids.dense, 1);
  assert_int_equal(spaa_pprof_find(&d->loc_ids, 5, &idx), 1);
  assert_int_equal(idx, 1);
  assert_int_equal(spaa_pprof_find(&d->loc_ids, 2, &idx), 0);
  assert_int_equal(spaa_pprof_find(&d->fn_ids, 1000, &idx), 1);
  assert_int_equal(idx, 0);
  assert_int_equal(spaa_pprof_find(&d->map_ids, 2, &idx), 0);
  assert_int_equal(spaa_pprof_find(&d->map_ids, 0, &idx), 0);
  spaa_pprof_free(d);
  free(buf);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixture_counts),
      cmocka_unit_test(test_fixture_invalid_utf8),
      cmocka_unit_test(test_gzip),
      cmocka_unit_test(test_windows_fixtures),
      cmocka_unit_test(test_windows_edges),
      cmocka_unit_test(test_not_protobuf),
      cmocka_unit_test(test_validation_errors),
      cmocka_unit_test(test_accepted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
