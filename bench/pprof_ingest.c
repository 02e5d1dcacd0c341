/* Benchmark: pprof -> SPAA conversion (spaa_convert_pprof) of google-pprof_large.cpu and of a
 * larger synthetic profile, and ingest (conversion + spaa_store_put, original kept, into a
 * store that has seen the same profile before), against the floor of gunzip + protoc-c
 * unpack alone, measured in the same run; then whole processes: `spaa-relay convert --from
 * pprof` (or, while that command is not built, this program converting and writing SPAA in a
 * fresh process) against `go tool pprof -raw`, with peak RSS. Ends with a summary of issue
 * 16's targets for large.cpu.
 * Usage: bench_pprof_ingest [large.cpu]   (default fixtures/pprof/ of the shared folder,
 * found as tests/support/fixture.h does: $SPAA_SHARED or ../shared beside the source tree)
 *        bench_pprof_ingest --callgrind N [large.cpu]   (one ingest, then N more of the same
 *        profile in profiled_ingests(), for valgrind --tool=callgrind; prints nothing)
 * Env: SPAA_BIN = the spaa-relay binary (default ../spaa-relay beside this program). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "base/compress.h"
#include "pprof/pprof.h"
#include "pprof/pprof_int.h"
#include "spaa/spaa_io.h"
#include "storage/storage.h"

#include "fixture.h"
#include "variants.h"

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The floor: what any pprof consumer built on protoc-c has to do. */
static int floor_once(const uint8_t *buf, size_t len)
{
  struct spaa_buf raw;
  size_t raw_len = len;
  const uint8_t *pb = buf;
  ProtobufCMessage *m;
  spaa_buf_init(&raw, 0);
  if (spaa_is_gzip(buf, len)) {
    if (spaa_decompress(SPAA_CODING_GZIP, buf, len, SPAA_PPROF_MAX_RAW, &raw, NULL))
      return -1;
    pb = (const uint8_t *)raw.p;
    raw_len = raw.len;
  }
  m = protobuf_c_message_unpack(&perftools__profiles__profile__descriptor, NULL, raw_len, pb);
  spaa_buf_free(&raw);
  if (!m)
    return -1;
  protobuf_c_message_free_unpacked(m, NULL);
  return 0;
}

static int convert_once(const uint8_t *buf, size_t len)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  int rc = spaa_convert_pprof(buf, len, NULL, &l, &err);
  if (rc)
    fprintf(stderr, "convert: %s\n", err.msg);
  spaa_conv_list_free(&l);
  return rc;
}

static int decode_once(const uint8_t *buf, size_t len)
{
  struct spaa_pprof *d = NULL;
  int rc = spaa_pprof_decode(buf, len, &d, NULL);
  spaa_pprof_free(d);
  return rc;
}

static int build_once(const uint8_t *buf, size_t len)
{
  struct spaa_pprof *d = NULL;
  struct spaa_profile *p = NULL;
  int rc = spaa_pprof_decode(buf, len, &d, NULL);
  if (!rc)
    rc = spaa_pprof__build(d, NULL, &p, NULL, NULL, NULL);
  spaa_profile_free(p);
  spaa_pprof_free(d);
  return rc;
}

/* Best of `iters` runs, in seconds. */
static double best(int (*fn)(const uint8_t *, size_t), const uint8_t *buf, size_t len, int iters)
{
  double b = 1e30;
  int i;
  for (i = 0; i < iters; i++) {
    double t0 = now();
    if (fn(buf, len))
      return -1;
    t0 = now() - t0;
    if (t0 < b)
      b = t0;
  }
  return b;
}

/* ---- a synthetic profile: deep Go-like stacks, inlining, labels, two sample types ---- */

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static uint8_t *synthetic(size_t n_samples, size_t n_locs, size_t n_fns, size_t *out_len)
{
  Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
  Perftools__Profiles__ValueType vt[2] = {PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
                                          PERFTOOLS__PROFILES__VALUE_TYPE__INIT};
  Perftools__Profiles__ValueType *vtp[2] = {&vt[0], &vt[1]};
  Perftools__Profiles__ValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
  Perftools__Profiles__Mapping map = PERFTOOLS__PROFILES__MAPPING__INIT, *mapp = &map;
  size_t n_str = 8 + n_fns * 2, i, j, packed_len, gz_cap;
  ProtobufCBinaryData *strs = calloc(n_str, sizeof(*strs));
  char *strbuf = malloc(n_str * 48);
  Perftools__Profiles__Function *fns = calloc(n_fns, sizeof(*fns)), **fnp =
      calloc(n_fns, sizeof(*fnp));
  Perftools__Profiles__Location *locs = calloc(n_locs, sizeof(*locs)), **locp =
      calloc(n_locs, sizeof(*locp));
  Perftools__Profiles__Line *lines = calloc(n_locs * 3, sizeof(*lines)), **linep =
      calloc(n_locs * 3, sizeof(*linep));
  Perftools__Profiles__Sample *smp = calloc(n_samples, sizeof(*smp)), **smpp =
      calloc(n_samples, sizeof(*smpp));
  Perftools__Profiles__Label *labels = calloc(n_samples, sizeof(*labels)), **labelp =
      calloc(n_samples, sizeof(*labelp));
  uint64_t *ids = calloc(n_samples * 40, sizeof(*ids));
  int64_t *vals = calloc(n_samples * 2, sizeof(*vals));
  uint8_t *packed, *gz;
  z_stream zs;
  const char *fixed[8] = {"", "samples", "count", "cpu", "nanoseconds", "/usr/bin/app",
                          "thread", "worker"};

  for (i = 0; i < 8; i++) {
    strs[i].data = (uint8_t *)fixed[i];
    strs[i].len = strlen(fixed[i]);
  }
  for (i = 0; i < n_fns; i++) {
    char *s = strbuf + (8 + 2 * i) * 48;
    strs[8 + 2 * i].len = (size_t)sprintf(s, "github.com/example/pkg%zu.(*T).Method%zu", i % 97, i);
    strs[8 + 2 * i].data = (uint8_t *)s;
    s += 48;
    strs[9 + 2 * i].len = (size_t)sprintf(s, "/src/pkg%zu/file%zu.go", i % 97, i % 13);
    strs[9 + 2 * i].data = (uint8_t *)s;
    perftools__profiles__function__init(&fns[i]);
    fns[i].id = i + 1;
    fns[i].name = fns[i].system_name = (int64_t)(8 + 2 * i);
    fns[i].filename = (int64_t)(9 + 2 * i);
    fns[i].start_line = (int64_t)(i % 500);
    fnp[i] = &fns[i];
  }
  for (i = 0; i < n_locs; i++) {
    size_t nl = i % 10 == 0 ? 3 : 1;
    perftools__profiles__location__init(&locs[i]);
    locs[i].id = i + 1;
    locs[i].mapping_id = 1;
    locs[i].address = 0x400000 + i * 16;
    locs[i].n_line = nl;
    locs[i].line = &linep[i * 3];
    for (j = 0; j < nl; j++) {
      perftools__profiles__line__init(&lines[i * 3 + j]);
      lines[i * 3 + j].function_id = (rnd() % n_fns) + 1;
      lines[i * 3 + j].line = (int64_t)(rnd() % 2000);
      linep[i * 3 + j] = &lines[i * 3 + j];
    }
    locp[i] = &locs[i];
  }
  for (i = 0; i < n_samples; i++) {
    size_t depth = 8 + rnd() % 32;
    perftools__profiles__sample__init(&smp[i]);
    smp[i].location_id = &ids[i * 40];
    smp[i].n_location_id = depth;
    for (j = 0; j < depth; j++)
      ids[i * 40 + j] = (rnd() % n_locs) + 1;
    smp[i].value = &vals[i * 2];
    smp[i].n_value = 2;
    vals[i * 2] = 1 + (int64_t)(rnd() % 5);
    vals[i * 2 + 1] = vals[i * 2] * 10000000;
    if (i % 3 == 0) {
      perftools__profiles__label__init(&labels[i]);
      labels[i].key = 6;
      labels[i].str = 7;
      labelp[i] = &labels[i];
      smp[i].label = &labelp[i];
      smp[i].n_label = 1;
    }
    smpp[i] = &smp[i];
  }
  vt[0].type = 1, vt[0].unit = 2, vt[1].type = 3, vt[1].unit = 4;
  period_type.type = 3, period_type.unit = 4;
  map.id = 1, map.memory_start = 0x400000, map.memory_limit = 0x400000 + n_locs * 16 + 4096;
  map.filename = 5, map.has_functions = 1;
  p.sample_type = vtp, p.n_sample_type = 2;
  p.sample = smpp, p.n_sample = n_samples;
  p.mapping = &mapp, p.n_mapping = 1;
  p.location = locp, p.n_location = n_locs;
  p.function = fnp, p.n_function = n_fns;
  p.string_table = strs, p.n_string_table = n_str;
  p.period_type = &period_type, p.period = 10000000;
  p.time_nanos = 1700000000000000000LL, p.duration_nanos = 60000000000LL;
  packed_len = perftools__profiles__profile__get_packed_size(&p);
  packed = malloc(packed_len);
  perftools__profiles__profile__pack(&p, packed);
  gz_cap = packed_len + packed_len / 2 + 1024;
  gz = malloc(gz_cap);
  memset(&zs, 0, sizeof(zs));
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  zs.next_in = packed, zs.avail_in = (uInt)packed_len;
  zs.next_out = gz, zs.avail_out = (uInt)gz_cap;
  deflate(&zs, Z_FINISH);
  *out_len = zs.total_out;
  deflateEnd(&zs);
  fprintf(stderr, "synthetic: %zu samples, %zu locations, %zu functions: %zu bytes, %zu gzipped\n",
          n_samples, n_locs, n_fns, packed_len, *out_len);
  free(packed), free(strs), free(strbuf), free(fns), free(fnp), free(locs), free(locp);
  free(lines), free(linep), free(smp), free(smpp), free(labels), free(labelp), free(ids);
  free(vals);
  return gz;
}

static int null_sink(void *ctx, const void *data, size_t len)
{
  (void)data;
  *(size_t *)ctx += len;
  return 0;
}

/* Best time of writing the converted profile as SPAA NDJSON (to a sink that counts bytes). */
static double write_time(const uint8_t *buf, size_t len, int iters, size_t *bytes)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  double b = 1e30;
  int i;
  if (spaa_convert_pprof(buf, len, NULL, &l, &err))
    return -1;
  for (i = 0; i < iters; i++) {
    double t0 = now();
    *bytes = 0;
    if (spaa_write(l.v[0].profile, null_sink, bytes, &err))
      b = -1e31;
    t0 = now() - t0;
    if (t0 < b)
      b = t0;
  }
  spaa_conv_list_free(&l);
  return b < 0 ? -1 : b;
}

/* The figures issue 16 sets targets for, filled as the benchmarks run (< 0: not measured). */
struct figures {
  double conv_ms, conv_floor_ms;     /* large.cpu conversion, and its floor in that run */
  double ingest_ms, ingest_floor_ms; /* its ingest into a store holding its stacks, floor */
  double proc_ms;                    /* `convert --from pprof` whole process */
  double go_ms;                      /* `go tool pprof -raw` whole process */
  double rss_mib;                    /* our process's peak RSS */
};

static void compare(const char *name, const uint8_t *buf, size_t len, int iters,
                    struct figures *fig)
{
  size_t wbytes = 0;
  double wr = write_time(buf, len, iters, &wbytes);
  double fl = best(floor_once, buf, len, iters), cv = best(convert_once, buf, len, iters);
  double dec = best(decode_once, buf, len, iters), bld = best(build_once, buf, len, iters);
  if (fl < 0 || cv < 0 || dec < 0 || bld < 0) {
    printf("%-12s failed\n", name);
    return;
  }
  if (fig)
    fig->conv_ms = cv * 1e3, fig->conv_floor_ms = fl * 1e3;
  printf("%-12s floor (gunzip + protoc-c unpack) %8.2f ms   conversion %8.2f ms   ratio %.2fx "
         "(target <= 1.5x)\n", name, fl * 1e3, cv * 1e3, cv / fl);
  printf("%-12s   of which: decode+validate %.2f ms (%.2fx floor), model %.2f ms, "
         "spaa_normalize + free %.2f ms; without normalize %.2fx floor\n", "",
         dec * 1e3, dec / fl, (bld - dec) * 1e3, (cv - bld) * 1e3, bld / fl);
  if (wr >= 0)
    printf("%-12s   writing the SPAA (what `convert` adds): %.2f ms for %.1f MB\n", "",
           wr * 1e3, (double)wbytes / 1e6);
}

/* ---- ingest into a store that has seen the profile before --------------------------------- */

static struct spaa_store *g_store;
static int g_put_seq;

/* What the server does for one upload past HTTP: convert, then store with the original kept
 * (zstd in the store) under a new id. */
static int ingest_once(const uint8_t *buf, size_t len)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  struct spaa_meta m;
  char id[40];
  int rc = spaa_convert_pprof(buf, len, NULL, &l, &err);
  if (rc) {
    fprintf(stderr, "ingest: %s\n", err.msg);
    goto out;
  }
  memset(&m, 0, sizeof(m));
  snprintf(id, sizeof(id), "bench%08d", g_put_seq++);
  m.id = id;
  m.service = "bench";
  m.source = "pprof";
  m.received_ns = 1700000000000000000LL;
  m.start_ns = l.v[0].start_ns;
  m.end_ns = l.v[0].end_ns;
  m.payload_bytes = len;
  m.original = buf;
  m.original_len = len;
  rc = spaa_store_put(g_store, l.v[0].profile, &m, &err);
  if (rc < 0)
    fprintf(stderr, "store: %s\n", err.msg);
  else
    rc = 0;
out:
  spaa_conv_list_free(&l);
  return rc;
}

/* n ingests of a profile whose stacks are stored, and nothing else: what a profiler is
 * pointed at (`--callgrind N`; see docs/benchmarks.md). Never inlined, so that valgrind's
 * --zero-before / --dump-after can name it. 0 or -1. */
static __attribute__((noinline)) int profiled_ingests(const uint8_t *buf, size_t len, int n)
{
  int i;
  for (i = 0; i < n; i++)
    if (ingest_once(buf, len))
      return -1;
  return 0;
}

/* Time ingests into a fresh store (the first, then `iters` more of the same profile); with
 * profile_n > 0, after the first run profiled_ingests(profile_n) instead of timing. */
static void ingest_bench(const char *name, const uint8_t *buf, size_t len, int iters,
                         struct figures *fig, int profile_n)
{
  char dir[] = "/tmp/spaa-bench-pprof-XXXXXX", db[64], f[80];
  static const char *const suffix[] = {"", "-wal", "-shm"};
  struct spaa_store_opts o = {0};
  struct spaa_err err = {0};
  double fl, first, again;
  size_t i;
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return;
  }
  snprintf(db, sizeof(db), "%s/store.db", dir);
  o.path = db;
  o.queue_depth = 4;
  o.batch_max = 4;
  o.durability = bench_durability();
  o.readers = 1;
  if (spaa_store_open(&o, &g_store, &err)) {
    fprintf(stderr, "store open: %s\n", err.msg);
    goto out;
  }
  if (profile_n > 0) {
    if (ingest_once(buf, len) || profiled_ingests(buf, len, profile_n))
      printf("%-12s ingest failed\n", name);
    goto out;
  }
  fl = best(floor_once, buf, len, iters);
  first = best(ingest_once, buf, len, 1); /* a cold store: every stack and frame is new */
  again = best(ingest_once, buf, len, iters);
  if (fl < 0 || first < 0 || again < 0)
    printf("%-12s ingest failed\n", name);
  else if (fig)
    fig->ingest_ms = again * 1e3, fig->ingest_floor_ms = fl * 1e3;
  if (fl >= 0 && first >= 0 && again >= 0)
    printf("%-12s ingest, same profile again (new id, seen stacks): %8.2f ms   ratio %.2fx "
           "floor (target <= 3x); the first, into an empty store: %.2f ms (%.2fx)\n",
           name, again * 1e3, again / fl, first * 1e3, first / fl);
out:
  spaa_store_close(g_store);
  g_store = NULL;
  for (i = 0; i < 3; i++) {
    snprintf(f, sizeof(f), "%s%s", db, suffix[i]);
    unlink(f);
  }
  rmdir(dir);
}

/* ---- whole processes ------------------------------------------------------------------------ */

/* Run argv with stdout and stderr to /dev/null; wall seconds and peak RSS (KiB, of the process
 * itself) out. The exit status, or -1. */
static int run_proc(char *const *argv, double *wall, long *rss_kib)
{
  struct rusage ru;
  int status;
  double t0 = now();
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execvp(argv[0], argv);
    _exit(127);
  }
  if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
    return -1;
  *wall = now() - t0;
  *rss_kib = ru.ru_maxrss;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Best wall time of `iters` runs (the RSS of the best one), or -1 when a run failed. */
static double best_proc(char *const *argv, int iters, long *rss_kib)
{
  double b = 1e30, w;
  long r;
  int i;
  for (i = 0; i < iters; i++) {
    if (run_proc(argv, &w, &r) != 0)
      return -1;
    if (w < b)
      b = w, *rss_kib = r;
  }
  return b;
}

static int sink_file(void *ctx, const void *data, size_t len)
{
  return fwrite(data, 1, len, ctx) == len ? 0 : -1;
}

/* The child of the stand-in for `spaa-relay convert`: read, convert, write SPAA to stdout. */
static int convert_write(const char *path)
{
  struct spaa_conv_list l = {0};
  struct spaa_err err = {0};
  size_t len;
  uint8_t *buf = spaa_test_read_file(path, &len);
  int rc = !buf || spaa_convert_pprof(buf, len, NULL, &l, &err) ||
           spaa_write(l.v[0].profile, sink_file, stdout, &err);
  spaa_conv_list_free(&l);
  free(buf);
  return rc ? 1 : 0;
}

static void process_bench(const char *self, const char *path, struct figures *fig)
{
  char bin[4096], *conv[] = {bin, "convert", "--from", "pprof", (char *)path, NULL};
  char *standin[] = {(char *)self, "--convert-write", (char *)path, NULL};
  char *gopprof[] = {"go", "tool", "pprof", "-raw", (char *)path, NULL};
  const char *env = getenv("SPAA_BIN");
  const char *what = "spaa-relay convert --from pprof";
  double ours, go;
  long rss = -1, go_rss = -1;
  if (env)
    snprintf(bin, sizeof(bin), "%s", env);
  else {
    char *slash;
    ssize_t n = readlink(self, bin, sizeof(bin) - 32);
    bin[n > 0 ? n : 0] = 0;
    if ((slash = strrchr(bin, '/')))
      *slash = 0;
    strncat(bin, "/../spaa-relay", sizeof(bin) - strlen(bin) - 1);
  }
  ours = best_proc(conv, 5, &rss);
  if (ours < 0) {
    what = "stand-in (this program: read, convert, write SPAA; `spaa-relay convert` failed)";
    ours = best_proc(standin, 5, &rss);
  }
  if (ours < 0) {
    printf("process: %s failed\n", what);
    return;
  }
  printf("process: %s on large.cpu: %.1f ms, peak RSS %.1f MiB (target <= 40 MiB)\n", what,
         ours * 1e3, rss / 1024.0);
  fig->proc_ms = ours * 1e3;
  fig->rss_mib = rss / 1024.0;
  go = best_proc(gopprof, 3, &go_rss);
  if (go < 0) {
    printf("process: `go tool pprof -raw` not available (golang-go not installed?): no ratio\n");
    return;
  }
  fig->go_ms = go * 1e3;
  printf("process: go tool pprof -raw on large.cpu: %.1f ms (the go command's own peak RSS "
           "%.1f MiB); ours is %.1fx faster (target >= 10x)\n", go * 1e3, go_rss / 1024.0,
           go / ours);
}

static const char *met(int ok)
{
  return ok ? "met" : "missed";
}

/* One summary line: what, the figure, the target and whether it is met. */
static void summary_line(const char *what, const char *figure, const char *target, int ok)
{
  printf("  %-44s %-40s target %s: %s\n", what, figure, target, met(ok));
}

/* The targets for large.cpu, one line each, every figure from this run. */
static void summary(const struct figures *f)
{
  char fig[96];
  printf("\nsummary, google-pprof_large.cpu (issue 16 targets; floor = gunzip + protobuf-c "
         "unpack in the same run)\n");
  if (f->conv_ms >= 0) {
    snprintf(fig, sizeof(fig), "%6.2fx (%.1f ms / %.1f ms)", f->conv_ms / f->conv_floor_ms,
             f->conv_ms, f->conv_floor_ms);
    summary_line("pprof conversion / floor:", fig, "<= 1.5x",
                 f->conv_ms <= 1.5 * f->conv_floor_ms);
  }
  if (f->ingest_ms >= 0) {
    snprintf(fig, sizeof(fig), "%6.2fx (%.1f ms / %.1f ms)", f->ingest_ms / f->ingest_floor_ms,
             f->ingest_ms, f->ingest_floor_ms);
    summary_line("pprof ingest, stacks already stored / floor:", fig, "<= 3x",
                 f->ingest_ms <= 3 * f->ingest_floor_ms);
  }
  if (f->proc_ms >= 0 && f->go_ms >= 0) {
    snprintf(fig, sizeof(fig), "%6.2fx faster (%.1f ms vs %.1f ms)", f->go_ms / f->proc_ms,
             f->proc_ms, f->go_ms);
    summary_line("convert --from pprof vs go tool pprof -raw:", fig, ">= 10x",
                 f->go_ms >= 10 * f->proc_ms);
  } else {
    printf("  %-44s not measured (%s)\n", "convert --from pprof vs go tool pprof -raw:",
           f->proc_ms < 0 ? "our process failed" : "no go tool pprof");
  }
  if (f->rss_mib >= 0) {
    snprintf(fig, sizeof(fig), "%6.1f MiB", f->rss_mib);
    summary_line("convert --from pprof peak RSS:", fig, "<= 40 MiB", f->rss_mib <= 40);
  }
}

/* VmHWM (peak resident set) of this process in KiB, from /proc/self/status; -1 if unknown. */
static long vm_hwm_kib(void)
{
  char line[256];
  long v = -1;
  FILE *f = fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  while (fgets(line, sizeof(line), f))
    if (sscanf(line, "VmHWM: %ld kB", &v) == 1)
      break;
  fclose(f);
  return v;
}

/* Peak RSS of one run of this program in `mode` on `path`, in a fresh process (exec resets
 * the high-water mark the child would otherwise inherit from this big parent). */
static long child_rss_kib(const char *self, const char *mode, const char *path)
{
  int fds[2], status;
  long v = -1;
  pid_t pid;
  FILE *f;
  if (pipe(fds))
    return -1;
  fflush(stdout);
  if ((pid = fork()) == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    execl(self, self, mode, path, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  if ((f = fdopen(fds[0], "r"))) {
    if (fscanf(f, "%ld", &v) != 1)
      v = -1;
    fclose(f);
  }
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
    return -1;
  return v;
}

int main(int argc, char **argv)
{
  char def[4096];
  const char *path = NULL;
  uint8_t *buf, *syn;
  size_t len, syn_len;
  long base_rss, rss;
  struct figures fig = {-1, -1, -1, -1, -1, -1, -1};

  if (argc == 3 && strcmp(argv[1], "--once") == 0) { /* the child of child_rss_kib */
    int rc;
    buf = spaa_test_read_file(argv[2], &len);
    rc = buf && convert_once(buf, len) == 0 ? 0 : 1;
    printf("%ld\n", vm_hwm_kib());
    return rc;
  }
  if (argc == 3 && strcmp(argv[1], "--convert-write") == 0)
    return convert_write(argv[2]);
  if (argc >= 3 && strcmp(argv[1], "--callgrind") == 0) { /* n ingests, stacks stored */
    const char *p = argc > 3 ? argv[3] : def;
    if (argc == 3 && spaa_test_fixture_path(def, sizeof(def), "pprof/google-pprof_large.cpu"))
      return 2;
    if (!(buf = spaa_test_read_file(p, &len)))
      return 2;
    ingest_bench("large.cpu", buf, len, 1, NULL, atoi(argv[2]));
    free(buf);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "--nothing") == 0) {
    printf("%ld\n", vm_hwm_kib());
    return 0;
  }
  if (argc > 1) {
    path = argv[1];
  } else if (spaa_test_fixture_path(def, sizeof(def), "pprof/google-pprof_large.cpu") == 0) {
    path = def;
  } else {
    fprintf(stderr, "usage: %s [google-pprof_large.cpu] (or set SPAA_SHARED)\n", argv[0]);
    return 2;
  }
  /* whole processes first, while this parent is small: a child's peak RSS as wait4 reports
   * it starts from the parent's at fork */
  process_bench("/proc/self/exe", path, &fig);
  if (!(buf = spaa_test_read_file(path, &len))) {
    fprintf(stderr, "cannot read %s\n", path);
    return 2;
  }
  compare("large.cpu", buf, len, 20, &fig);
  ingest_bench("large.cpu", buf, len, 10, &fig, 0);
  syn = synthetic(200000, 60000, 40000, &syn_len);
  compare("synthetic", syn, syn_len, 5, NULL);
  ingest_bench("synthetic", syn, syn_len, 3, NULL, 0);
  base_rss = child_rss_kib("/proc/self/exe", "--nothing", path);
  rss = child_rss_kib("/proc/self/exe", "--once", path);
  printf("peak RSS converting large.cpu in a fresh process: %.1f MiB (an empty run: %.1f MiB)\n",
         rss / 1024.0, base_rss / 1024.0);
  summary(&fig);
  free(buf);
  free(syn);
  return 0;
}
