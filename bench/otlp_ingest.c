/* Benchmark: OTLP decode+convert, and decode+convert+store (the ingest flow's
 * spaa_store_put_many, committed) into a database already holding the request's stacks (what
 * the next capture of an agent costs; issue 16's target) and into a fresh one, against the
 * floor of protobuf-c unpack alone measured in the same run, on the genuine ebpf-profiler
 * capture and on a synthetic request of 20+ MB built in memory; and OTLP/JSON decode+convert
 * against jansson's bare parse. Prints the ratios (targets: convert <= 1.5x, store with the
 * stacks stored <= 5x, JSON <= 3x) and a summary line for the capture; asserts nothing.
 * Usage: bench_otlp_ingest [SHARED_DIR [ebpf|json|synth]]   (default: as tests/support/fixture.h,
 * $SPAA_SHARED or ../shared beside the source tree)
 *        bench_otlp_ingest SHARED_DIR write FILE   (the synthetic request's bytes into FILE)
 *        bench_otlp_ingest SHARED_DIR callgrind [N]   (the capture stored once, then N times
 *        more in profiled_stores(), for valgrind --tool=callgrind; prints nothing) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "otlp/otlp.h"
#include "spaa/spaa_io.h"
#include "server/http.h"
#include "server/log.h"
#include "server/ingest.h"
#include "storage/storage.h"

#include "otlp_profiles_service.pb-c.h"

#include "fixture.h"
#include "variants.h"

#define REQ_DESC opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor
#define P(x) Opentelemetry__Proto__Profiles__V1development__##x
#define PI(x) opentelemetry__proto__profiles__v1development__##x##__init

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const uint8_t *g_buf;
static size_t g_len;

static void run_unpack(void)
{
  ProtobufCMessage *m = protobuf_c_message_unpack(&REQ_DESC, NULL, g_len, g_buf);
  if (!m)
    abort();
  protobuf_c_message_free_unpacked(m, NULL);
}

static void run_convert(void)
{
  struct spaa_conv_list l = {0};
  struct spaa_err e;
  if (spaa_convert_otlp(g_buf, g_len, NULL, &l, &e)) {
    fprintf(stderr, "convert failed: %s\n", e.msg);
    abort();
  }
  spaa_conv_list_free(&l);
}

/* decode + convert + store every profile into g_store, the way the ingest flow does it
 * (spaa_ingest_store_all: one spaa_store_put_many for the request); ids are random */
static struct spaa_store *g_store;
static int g_new_ids;  /* 1: drop the source's profile ids, so that a request stored again
                          is new profiles with known stacks, not duplicates */
static size_t g_dups;  /* profiles the store answered "already stored" */
static void run_store(void)
{
  struct spaa_config cfg;
  struct spaa_app app;
  struct spaa_req req;
  struct spaa_ingest x;
  struct otlp_request *r;
  struct spaa_err e;
  memset(&cfg, 0, sizeof(cfg));
  memset(&app, 0, sizeof(app));
  memset(&req, 0, sizeof(req));
  cfg.queue_depth = 256; /* the server's default */
  app.cfg = &cfg;
  app.store = g_store;
  req.app = &app;
  req.received_ns = 1;
  req.wire_len = g_len;
  req.body = g_buf;
  req.body_len = g_len;
  spaa_ingest_init(&x, &req, NULL, "otlp");
  x.opts.input_spent = 0; /* the next round reads g_buf again: its pages must stay */
  if (otlp_decode(g_buf, g_len, &r, &e)) {
    fprintf(stderr, "decode failed: %s\n", e.msg);
    abort();
  }
  x.opts.otlp_req = r;
  if (spaa_convert_otlp(x.body, x.body_len, &x.opts, &x.list, &e)) {
    fprintf(stderr, "convert failed: %s\n", e.msg);
    abort();
  }
  for (size_t i = 0; g_new_ids && i < x.list.n; i++)
    x.list.v[i].id[0] = 0; /* the store assigns a new one */
  if (spaa_ingest_store_all(&x, &e)) {
    fprintf(stderr, "store failed: %s\n", e.msg);
    abort();
  }
  g_dups += x.dups;
  spaa_ingest_release(&x);
  otlp_request_free(r);
}

static char g_dir[64];

static void store_open(void)
{
  struct spaa_store_opts o;
  struct spaa_err e;
  char path[128];
  snprintf(path, sizeof(path), "%s/bench.db", g_dir);
  memset(&o, 0, sizeof(o));
  o.path = path;
  o.queue_depth = 256;
  o.batch_max = 64;
  o.readers = 1;
  o.durability = bench_durability();
  if (spaa_store_open(&o, &g_store, &e)) {
    fprintf(stderr, "store open failed: %s\n", e.msg);
    abort();
  }
}

static void store_close(void)
{
  char path[160];
  static const char *const sfx[] = {"", "-wal", "-shm"};
  size_t i;
  spaa_store_close(g_store);
  g_store = NULL;
  for (i = 0; i < 3; i++) {
    snprintf(path, sizeof(path), "%s/bench.db%s", g_dir, sfx[i]);
    unlink(path);
  }
}

/* n stores of the capture into a store holding its stacks, and nothing else: what a
 * profiler is pointed at. Never inlined, so that valgrind's --zero-before / --dump-after
 * can name it. */
static __attribute__((noinline)) void profiled_stores(int n)
{
  int i;
  for (i = 0; i < n; i++)
    run_store();
}

/* The callgrind mode: open, store once (the stacks become known), profiled_stores(n). */
static int callgrind_mode(int n)
{
  static const char ebpf_bin[] = "pyroscope_otel-ebpf-profile.pb.bin";
  size_t len;
  uint8_t *b = spaa_test_fixture_in("otlp", ebpf_bin, &len);
  if (!b)
    return 2;
  g_buf = b;
  g_len = len;
  store_open();
  g_new_ids = 1;
  run_store();
  profiled_stores(n);
  store_close();
  free(b);
  return 0;
}

static void run_jansson(void)
{
  json_error_t je;
  json_t *j = json_loadb((const char *)g_buf, g_len, 0, &je);
  if (!j)
    abort();
  json_decref(j);
}

/* best of 3 rounds, each repeating fn for at least `secs` */
static double timeit(void (*fn)(void), double secs)
{
  double best = 1e30;
  int round;
  for (round = 0; round < 3; round++) {
    double t0 = now(), t;
    long n = 0;
    do {
      fn();
      n++;
    } while ((t = now() - t0) < secs);
    if (t / (double)n < best)
      best = t / (double)n;
  }
  return best;
}

/* best of 3 rounds of decode+convert+store, each into a fresh database (opening and
 * closing it are not timed): every dso, frame and stack is new, the costliest case */
static double time_store(double secs)
{
  double best = 1e30, spent = 0;
  int round = 0;
  while (round < 3 || spent < secs) {
    double t0, t;
    store_open();
    t0 = now();
    run_store();
    t = now() - t0;
    store_close();
    spent += t;
    if (t < best)
      best = t;
    round++;
  }
  return best;
}

/* decode+convert+store into one database that holds the request's stacks already (stored
 * once, untimed, before the timed rounds), each round as new profiles */
static double time_store_again(double secs)
{
  double t;
  store_open();
  g_new_ids = 1;
  run_store();
  g_dups = 0;
  t = timeit(run_store, secs);
  g_new_ids = 0;
  store_close();
  if (g_dups)
    printf("  (warning: %zu profiles were answered 'already stored': the figure is too low)\n",
           g_dups);
  return t;
}

/* The ratio of decode+convert+store with the stacks stored, for the summary; < 0 if unmeasured. */
static double g_again_ratio = -1, g_again_ms, g_floor_ms;

static void compare(const char *name, const uint8_t *buf, size_t len, int json)
{
  double floor, conv, store, again;
  g_buf = buf;
  g_len = len;
  floor = timeit(json ? run_jansson : run_unpack, 0.4);
  conv = timeit(run_convert, 0.4);
  printf("%-30s %6.2f MB  floor (%s) %9.3f ms\n", name, (double)len / 1e6,
         json ? "jansson parse" : "protobuf-c unpack", floor * 1e3);
  printf("%-30s %6s     decode+convert        %9.3f ms  ratio %5.2fx (target %s)\n", "", "",
         conv * 1e3, conv / floor, json ? "3x" : "1.5x");
  if (json)
    return;
  again = time_store_again(0.4);
  store = time_store(0.4);
  printf("%-30s %6s     decode+convert+store, stacks already stored %9.3f ms  ratio %5.2fx "
         "(target 5x)\n", "", "", again * 1e3, again / floor);
  printf("%-30s %6s     decode+convert+store into an empty store    %9.3f ms  ratio %5.2fx\n",
         "", "", store * 1e3, store / floor);
  if (strncmp(name, "ebpf capture", 12) == 0)
    g_again_ratio = again / floor, g_again_ms = again * 1e3, g_floor_ms = floor * 1e3;
}

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng % n);
}

/* A host-profiler-like request: NPROF profiles sharing one dictionary; half of them carry
 * values only (pprof-like), half values + timestamps (off-CPU-like); samples have thread
 * attributes and deep stacks with some inlined locations. */
#define NSTR 60000
#define NFUNC 30000
#define NMAP 64
#define NLOC 60000
#define NSTACK 40000
#define NATTR 400
#define NPROF 8
#define NSAMP 62000

/* The synthetic request's parts (large: static storage, filled by synth's steps). */
static struct {
  char *strs[NSTR];
  P(Function) fn[NFUNC], *fnp[NFUNC];
  P(Mapping) mp[NMAP], *mpp[NMAP];
  P(Location) loc[NLOC], *locp[NLOC];
  P(Line) lines[NLOC * 2], *linep[NLOC * 2];
  P(Stack) st[NSTACK], *stp[NSTACK];
  int32_t stidx[NSTACK * 32];
  P(KeyValueAndUnit) at[NATTR], *atp[NATTR];
  Opentelemetry__Proto__Common__V1__AnyValue av[NATTR];
  P(Link) lk, *lkp[1];
  P(Profile) pr[NPROF], *prp[NPROF];
  P(ValueType) vt[2];
  P(Sample) sm[NPROF][NSAMP], *smp[NPROF][NSAMP];
  int32_t sattr[NPROF][NSAMP][2];
  int64_t vals[NPROF][NSAMP][4];
  uint64_t tss[NPROF][NSAMP][4];
  P(ProfilesDictionary) d;
  P(ScopeProfiles) sp, *spp[1];
  P(ResourceProfiles) rp, *rpp[1];
} sy;

/* String table, functions and mappings. */
static void synth_strings_functions(void)
{
  size_t i;
  sy.strs[0] = "";
  sy.strs[7] = "k7";
  for (i = 8; i < NSTR; i++) { /* owned: synth frees them */
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "pkg%zu/module.(*Type).method_%zu", i % 97, i);
    sy.strs[i] = strdup(tmp);
  }
  sy.strs[1] = "samples";
  sy.strs[2] = "count";
  sy.strs[3] = "thread.name";
  sy.strs[4] = "thread.id";
  sy.strs[5] = "off_cpu";
  sy.strs[6] = "nanoseconds";
  for (i = 0; i < NFUNC; i++) {
    PI(function)(&sy.fn[i]);
    sy.fnp[i] = &sy.fn[i];
    if (i) {
      sy.fn[i].name_strindex = (int32_t)(8 + rnd(NSTR - 8));
      sy.fn[i].filename_strindex = (int32_t)(8 + rnd(NSTR - 8));
      sy.fn[i].start_line = rnd(2000);
    }
  }
  for (i = 0; i < NMAP; i++) {
    PI(mapping)(&sy.mp[i]);
    sy.mpp[i] = &sy.mp[i];
    if (i) {
      sy.mp[i].memory_start = 0x400000ull * i;
      sy.mp[i].memory_limit = 0x400000ull * i + 0x100000;
      sy.mp[i].filename_strindex = (int32_t)(8 + i);
    }
  }
}

/* Locations (some inlined, some without lines) and stacks of 8 to 31 locations. */
static void synth_locations_stacks(void)
{
  size_t i, j, li = 0, si = 0;
  for (i = 0; i < NLOC; i++) {
    PI(location)(&sy.loc[i]);
    sy.locp[i] = &sy.loc[i];
    if (!i)
      continue;
    sy.loc[i].mapping_index = (int32_t)(1 + rnd(NMAP - 1));
    sy.loc[i].address = sy.mp[sy.loc[i].mapping_index].memory_start + rnd(0x100000);
    sy.loc[i].n_lines = i % 10 == 0 ? 2 : (i % 17 == 0 ? 0 : 1);
    sy.loc[i].lines = &sy.linep[li];
    for (j = 0; j < sy.loc[i].n_lines; j++, li++) {
      PI(line)(&sy.lines[li]);
      sy.linep[li] = &sy.lines[li];
      sy.lines[li].function_index = (int32_t)(1 + rnd(NFUNC - 1));
      sy.lines[li].line = rnd(5000);
    }
  }
  for (i = 0; i < NSTACK; i++) {
    PI(stack)(&sy.st[i]);
    sy.stp[i] = &sy.st[i];
    if (!i)
      continue;
    sy.st[i].n_location_indices = 8 + rnd(24);
    sy.st[i].location_indices = &sy.stidx[si];
    for (j = 0; j < sy.st[i].n_location_indices; j++)
      sy.stidx[si++] = (int32_t)(1 + rnd(NLOC - 1));
  }
}

/* Thread attributes, the one link, and the dictionary's tables. */
static void synth_attributes(void)
{
  size_t i;
  for (i = 0; i < NATTR; i++) {
    PI(key_value_and_unit)(&sy.at[i]);
    opentelemetry__proto__common__v1__any_value__init(&sy.av[i]);
    sy.atp[i] = &sy.at[i];
    if (!i)
      continue;
    sy.at[i].key_strindex = i % 2 ? 3 : 4;
    sy.at[i].value = &sy.av[i];
    if (i % 2) {
      sy.av[i].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE_STRINDEX;
      sy.av[i].string_value_strindex = (int32_t)(8 + i);
    } else {
      sy.av[i].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
      sy.av[i].int_value = 1000 + (int64_t)i;
    }
  }
  PI(link)(&sy.lk);
  sy.lkp[0] = &sy.lk;
  sy.d.string_table = sy.strs;
  sy.d.n_string_table = NSTR;
  sy.d.function_table = sy.fnp;
  sy.d.n_function_table = NFUNC;
  sy.d.mapping_table = sy.mpp;
  sy.d.n_mapping_table = NMAP;
  sy.d.location_table = sy.locp;
  sy.d.n_location_table = NLOC;
  sy.d.stack_table = sy.stp;
  sy.d.n_stack_table = NSTACK;
  sy.d.attribute_table = sy.atp;
  sy.d.n_attribute_table = NATTR;
  sy.d.link_table = sy.lkp;
  sy.d.n_link_table = 1;
}

/* NPROF profiles of NSAMP samples: even ones counts, odd ones timed off-CPU values. */
static void synth_profiles(void)
{
  size_t i, j;
  PI(value_type)(&sy.vt[0]);
  PI(value_type)(&sy.vt[1]);
  sy.vt[0].type_strindex = 1;
  sy.vt[0].unit_strindex = 2;
  sy.vt[1].type_strindex = 5;
  sy.vt[1].unit_strindex = 6;
  for (i = 0; i < NPROF; i++) {
    int timed = i % 2;
    PI(profile)(&sy.pr[i]);
    sy.prp[i] = &sy.pr[i];
    sy.pr[i].sample_type = &sy.vt[timed];
    sy.pr[i].time_unix_nano = 1767225600000000000ull;
    sy.pr[i].duration_nano = 60000000000ull;
    sy.pr[i].samples = sy.smp[i];
    sy.pr[i].n_samples = NSAMP;
    for (j = 0; j < NSAMP; j++) {
      size_t k, n = 1 + rnd(4);
      PI(sample)(&sy.sm[i][j]);
      sy.smp[i][j] = &sy.sm[i][j];
      sy.sm[i][j].stack_index = (int32_t)(1 + rnd(NSTACK - 1));
      sy.sattr[i][j][0] = (int32_t)(1 + 2 * rnd(NATTR / 2 - 1));
      sy.sattr[i][j][1] = sy.sattr[i][j][0] + 1;
      sy.sm[i][j].attribute_indices = sy.sattr[i][j];
      sy.sm[i][j].n_attribute_indices = 2;
      sy.sm[i][j].values = sy.vals[i][j];
      sy.sm[i][j].n_values = timed ? n : 1;
      for (k = 0; k < n; k++) {
        sy.vals[i][j][k] = timed ? 1000 + rnd(100000000) : 1 + rnd(50);
        sy.tss[i][j][k] = sy.pr[i].time_unix_nano + rnd(60000) * 1000000ull;
      }
      if (timed) {
        sy.sm[i][j].timestamps_unix_nano = sy.tss[i][j];
        sy.sm[i][j].n_timestamps_unix_nano = n;
      }
    }
  }
}

static uint8_t *synth(size_t *len)
{
  Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest r;
  size_t i;
  uint8_t *buf;
  opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__init(&r);
  PI(profiles_dictionary)(&sy.d);
  synth_strings_functions();
  synth_locations_stacks();
  synth_attributes();
  synth_profiles();
  PI(scope_profiles)(&sy.sp);
  sy.sp.profiles = sy.prp;
  sy.sp.n_profiles = NPROF;
  sy.spp[0] = &sy.sp;
  PI(resource_profiles)(&sy.rp);
  sy.rp.scope_profiles = sy.spp;
  sy.rp.n_scope_profiles = 1;
  sy.rpp[0] = &sy.rp;
  r.resource_profiles = sy.rpp;
  r.n_resource_profiles = 1;
  r.dictionary = &sy.d;
  *len = protobuf_c_message_get_packed_size(&r.base);
  buf = malloc(*len);
  if (buf)
    protobuf_c_message_pack(&r.base, buf);
  for (i = 8; i < NSTR; i++)
    free(sy.strs[i]);
  return buf;
}

int main(int argc, char **argv)
{
  static const char ebpf_bin[] = "pyroscope_otel-ebpf-profile.pb.bin";
  static const char ebpf_json[] = "pyroscope_otel-ebpf-profile.pb.json";
  const char *only = argc > 2 ? argv[2] : NULL;
  size_t len;
  uint8_t *b = NULL;
  if (argc > 1 && setenv("SPAA_SHARED", argv[1], 1) != 0) { /* where fixture.h looks */
    perror("setenv");
    return 1;
  }
  spaa_log_set_level(SPAA_LOG_ERROR);
  snprintf(g_dir, sizeof(g_dir), "%s/spaa-bench-otlp.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  if (!mkdtemp(g_dir)) {
    perror("mkdtemp");
    return 1;
  }
  if (only && strcmp(only, "write") == 0) { /* the synthetic request into a file */
    FILE *f = argc > 3 ? fopen(argv[3], "wb") : NULL;
    int ok = f && (b = synth(&len)) && fwrite(b, 1, len, f) == len;
    free(b);
    if (f && fclose(f))
      ok = 0;
    rmdir(g_dir);
    if (!ok)
      fprintf(stderr, "usage: bench_otlp_ingest SHARED_DIR write FILE (could not write it)\n");
    return ok ? 0 : 1;
  }
  if (only && strcmp(only, "callgrind") == 0) {
    int rc = callgrind_mode(argc > 3 ? atoi(argv[3]) : 20);
    rmdir(g_dir);
    return rc;
  }
  printf("OTLP ingest benchmark (best of 3 rounds or more; ratio = time / floor)\n");
  if ((!only || strcmp(only, "ebpf") == 0) && (b = spaa_test_fixture_in("otlp", ebpf_bin, &len))) {
    compare("ebpf capture (protobuf)", b, len, 0);
    free(b);
  } else if (!only) {
    printf("(no fixtures/otlp/%s: skipping the genuine capture)\n", ebpf_bin);
  }
  if ((!only || strcmp(only, "json") == 0) && (b = spaa_test_fixture_in("otlp", ebpf_json, &len))) {
    compare("ebpf capture (OTLP/JSON)", b, len, 1);
    free(b);
  }
  if ((!only || strcmp(only, "synth") == 0) && (b = synth(&len))) {
    compare("synthetic request (protobuf)", b, len, 0);
    free(b);
  }
  rmdir(g_dir);
  if (g_again_ratio >= 0)
    printf("\nsummary (issue 16): OTLP ebpf capture, decode+convert+store (committed) with its "
           "stacks already stored / protobuf-c unpack: %.2fx (%.2f ms / %.3f ms), target <= 5x: "
           "%s\n", g_again_ratio, g_again_ms, g_floor_ms, g_again_ratio <= 5 ? "met" : "missed");
  return 0;
}
