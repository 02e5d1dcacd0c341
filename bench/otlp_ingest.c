/* Benchmark: OTLP decode+convert, and decode+convert+store (the ingest flow's
 * spaa_store_put_many, committed) into a database already holding the request's stacks (what
 * the next capture of an agent costs; issue 16's target) and into a fresh one, against the
 * floor of protobuf-c unpack alone measured in the same run, on the genuine ebpf-profiler
 * capture and on a synthetic request of 20+ MB built in memory; and OTLP/JSON decode+convert
 * against jansson's bare parse. Prints the ratios (targets: convert <= 1.5x, store with the
 * stacks stored <= 5x, JSON <= 3x) and a summary line for the capture; asserts nothing.
 * Usage: bench_otlp_ingest [SHARED_DIR [ebpf|json|synth]]   (default: as tests/support/fixture.h,
 * $SPAA_SHARED or ../shared beside the source tree)
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

static uint8_t *synth(size_t *len)
{
  static char *strs[NSTR];
  static P(Function) fn[NFUNC], *fnp[NFUNC];
  static P(Mapping) mp[NMAP], *mpp[NMAP];
  static P(Location) loc[NLOC], *locp[NLOC];
  static P(Line) lines[NLOC * 2], *linep[NLOC * 2];
  static P(Stack) st[NSTACK], *stp[NSTACK];
  static int32_t stidx[NSTACK * 32];
  static P(KeyValueAndUnit) at[NATTR], *atp[NATTR];
  static Opentelemetry__Proto__Common__V1__AnyValue av[NATTR];
  static P(Link) lk, *lkp[1];
  static P(Profile) pr[NPROF], *prp[NPROF];
  static P(ValueType) vt[2];
  static P(Sample) sm[NPROF][NSAMP], *smp[NPROF][NSAMP];
  static int32_t sattr[NPROF][NSAMP][2];
  static int64_t vals[NPROF][NSAMP][4];
  static uint64_t tss[NPROF][NSAMP][4];
  static P(ProfilesDictionary) d;
  static P(ScopeProfiles) sp, *spp[1];
  static P(ResourceProfiles) rp, *rpp[1];
  Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest r;
  size_t i, j, li = 0, si = 0;
  uint8_t *buf;
  opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__init(&r);
  PI(profiles_dictionary)(&d);
  strs[0] = "";
  for (i = 1; i < NSTR; i++) {
    char tmp[64];
    snprintf(tmp, sizeof(tmp), i < 8 ? "k%zu" : "pkg%zu/module.(*Type).method_%zu", i % 97, i);
    strs[i] = strdup(tmp);
  }
  strs[1] = "samples";
  strs[2] = "count";
  strs[3] = "thread.name";
  strs[4] = "thread.id";
  strs[5] = "off_cpu";
  strs[6] = "nanoseconds";
  for (i = 0; i < NFUNC; i++) {
    PI(function)(&fn[i]);
    fnp[i] = &fn[i];
    if (i) {
      fn[i].name_strindex = (int32_t)(8 + rnd(NSTR - 8));
      fn[i].filename_strindex = (int32_t)(8 + rnd(NSTR - 8));
      fn[i].start_line = rnd(2000);
    }
  }
  for (i = 0; i < NMAP; i++) {
    PI(mapping)(&mp[i]);
    mpp[i] = &mp[i];
    if (i) {
      mp[i].memory_start = 0x400000ull * i;
      mp[i].memory_limit = 0x400000ull * i + 0x100000;
      mp[i].filename_strindex = (int32_t)(8 + i);
    }
  }
  for (i = 0; i < NLOC; i++) {
    PI(location)(&loc[i]);
    locp[i] = &loc[i];
    if (!i)
      continue;
    loc[i].mapping_index = (int32_t)(1 + rnd(NMAP - 1));
    loc[i].address = mp[loc[i].mapping_index].memory_start + rnd(0x100000);
    loc[i].n_lines = i % 10 == 0 ? 2 : (i % 17 == 0 ? 0 : 1);
    loc[i].lines = &linep[li];
    for (j = 0; j < loc[i].n_lines; j++, li++) {
      PI(line)(&lines[li]);
      linep[li] = &lines[li];
      lines[li].function_index = (int32_t)(1 + rnd(NFUNC - 1));
      lines[li].line = rnd(5000);
    }
  }
  for (i = 0; i < NSTACK; i++) {
    PI(stack)(&st[i]);
    stp[i] = &st[i];
    if (!i)
      continue;
    st[i].n_location_indices = 8 + rnd(24);
    st[i].location_indices = &stidx[si];
    for (j = 0; j < st[i].n_location_indices; j++)
      stidx[si++] = (int32_t)(1 + rnd(NLOC - 1));
  }
  for (i = 0; i < NATTR; i++) {
    PI(key_value_and_unit)(&at[i]);
    opentelemetry__proto__common__v1__any_value__init(&av[i]);
    atp[i] = &at[i];
    if (!i)
      continue;
    at[i].key_strindex = i % 2 ? 3 : 4;
    at[i].value = &av[i];
    if (i % 2) {
      av[i].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE_STRINDEX;
      av[i].string_value_strindex = (int32_t)(8 + i);
    } else {
      av[i].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
      av[i].int_value = 1000 + (int64_t)i;
    }
  }
  PI(link)(&lk);
  lkp[0] = &lk;
  d.string_table = strs;
  d.n_string_table = NSTR;
  d.function_table = fnp;
  d.n_function_table = NFUNC;
  d.mapping_table = mpp;
  d.n_mapping_table = NMAP;
  d.location_table = locp;
  d.n_location_table = NLOC;
  d.stack_table = stp;
  d.n_stack_table = NSTACK;
  d.attribute_table = atp;
  d.n_attribute_table = NATTR;
  d.link_table = lkp;
  d.n_link_table = 1;
  PI(value_type)(&vt[0]);
  PI(value_type)(&vt[1]);
  vt[0].type_strindex = 1;
  vt[0].unit_strindex = 2;
  vt[1].type_strindex = 5;
  vt[1].unit_strindex = 6;
  for (i = 0; i < NPROF; i++) {
    int timed = i % 2;
    PI(profile)(&pr[i]);
    prp[i] = &pr[i];
    pr[i].sample_type = &vt[timed];
    pr[i].time_unix_nano = 1767225600000000000ull;
    pr[i].duration_nano = 60000000000ull;
    pr[i].samples = smp[i];
    pr[i].n_samples = NSAMP;
    for (j = 0; j < NSAMP; j++) {
      size_t k, n = 1 + rnd(4);
      PI(sample)(&sm[i][j]);
      smp[i][j] = &sm[i][j];
      sm[i][j].stack_index = (int32_t)(1 + rnd(NSTACK - 1));
      sattr[i][j][0] = (int32_t)(1 + 2 * rnd(NATTR / 2 - 1));
      sattr[i][j][1] = sattr[i][j][0] + 1;
      sm[i][j].attribute_indices = sattr[i][j];
      sm[i][j].n_attribute_indices = 2;
      sm[i][j].values = vals[i][j];
      sm[i][j].n_values = timed ? n : 1;
      for (k = 0; k < n; k++) {
        vals[i][j][k] = timed ? 1000 + rnd(100000000) : 1 + rnd(50);
        tss[i][j][k] = pr[i].time_unix_nano + rnd(60000) * 1000000ull;
      }
      if (timed) {
        sm[i][j].timestamps_unix_nano = tss[i][j];
        sm[i][j].n_timestamps_unix_nano = n;
      }
    }
  }
  PI(scope_profiles)(&sp);
  sp.profiles = prp;
  sp.n_profiles = NPROF;
  spp[0] = &sp;
  PI(resource_profiles)(&rp);
  rp.scope_profiles = spp;
  rp.n_scope_profiles = 1;
  rpp[0] = &rp;
  r.resource_profiles = rpp;
  r.n_resource_profiles = 1;
  r.dictionary = &d;
  *len = protobuf_c_message_get_packed_size(&r.base);
  buf = malloc(*len);
  if (buf)
    protobuf_c_message_pack(&r.base, buf);
  for (i = 8; i < NSTR; i++)
    free(strs[i]);
  return buf;
}

int main(int argc, char **argv)
{
  static const char ebpf_bin[] = "pyroscope_otel-ebpf-profile.pb.bin";
  static const char ebpf_json[] = "pyroscope_otel-ebpf-profile.pb.json";
  const char *only = argc > 2 ? argv[2] : NULL;
  size_t len;
  uint8_t *b;
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
