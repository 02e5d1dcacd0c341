/* Benchmark of `spaa-relay validate` and `spaa-relay convert --from spaa` on a generated SPAA
 * file of >= 100 MB (20k frames, 250k stacks of 5-40 frames, weights and exclusive): wall time,
 * MB/s and peak RSS of each child, against floors measured in the same run (cat to /dev/null,
 * and the same chunked line reader the validator uses, without parsing).
 * usage: bench_spaa_validate [SPAA_BIN]   (or env SPAA_BIN; SPAA_BENCH_RUNS=N, default 3) */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "spaa/spaa_lines.h"

#define N_DSOS 200
#define N_KERNEL_FRAMES 1000
#define N_FRAMES 20000
#define N_STACKS 250000
#define MIN_BYTES 105000000ull /* keep the file over 100 MB */

static uint64_t rng_state = 0x5eed5eed12345678ull;

static uint64_t rnd(void)
{
  /* splitmix64: deterministic, the same file on every run */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t rnd_in(uint64_t lo, uint64_t hi) { return lo + rnd() % (hi - lo + 1); }

struct gen_out {
  FILE *plain;
  FILE *zf;
  ZSTD_CCtx *z;
  char zbuf[1 << 16];
  unsigned long long bytes;
};

static void emit(struct gen_out *g, const char *s, size_t n, ZSTD_EndDirective end)
{
  ZSTD_inBuffer in = {s, n, 0};
  fwrite(s, 1, n, g->plain);
  g->bytes += n;
  for (;;) {
    ZSTD_outBuffer o = {g->zbuf, sizeof(g->zbuf), 0};
    size_t left = ZSTD_compressStream2(g->z, &o, &in, end);
    if (ZSTD_isError(left)) {
      fprintf(stderr, "zstd: %s\n", ZSTD_getErrorName(left));
      exit(2);
    }
    fwrite(g->zbuf, 1, o.pos, g->zf);
    if (end == ZSTD_e_end ? left == 0 : in.pos == in.size)
      break;
  }
}

static void emitf(struct gen_out *g, char *line, int n) { emit(g, line, (size_t)n, ZSTD_e_continue); }

static void generate(const char *path, const char *zpath, unsigned long long *bytes,
                     size_t *n_samples)
{
  static char line[8192];
  static uint64_t stack_ids[N_STACKS][2];
  struct gen_out g;
  size_t i, j;
  int n;
  memset(&g, 0, sizeof(g));
  g.plain = fopen(path, "wb");
  g.zf = fopen(zpath, "wb");
  g.z = ZSTD_createCCtx();
  if (!g.plain || !g.zf || !g.z) {
    perror("generate");
    exit(2);
  }
  ZSTD_CCtx_setParameter(g.z, ZSTD_c_compressionLevel, 3);
  n = snprintf(line, sizeof(line),
               "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"source_tool\":"
               "\"perf\",\"frame_order\":\"leaf_to_root\",\"stack_id_mode\":"
               "\"content_addressable\",\"events\":[{\"name\":\"cycles\",\"kind\":\"hardware\","
               "\"sampling\":{\"mode\":\"period\",\"primary_metric\":\"period\","
               "\"sample_period\":100000}}],\"time_range\":{\"start\":1000.0,\"end\":1060.0,"
               "\"unit\":\"seconds\"}}\n");
  emitf(&g, line, n);
  for (i = 1; i <= N_DSOS; i++) {
    n = snprintf(line, sizeof(line),
                 "{\"type\":\"dso\",\"id\":%zu,\"name\":\"%s%zu.so\",\"build_id\":\"%016" PRIx64
                 "%08" PRIx64 "\",\"is_kernel\":%s}\n",
                 i, i == 1 ? "[kernel.kallsyms]" : "/usr/lib/libbench", i, rnd(),
                 rnd() & 0xffffffffu, i == 1 ? "true" : "false");
    emitf(&g, line, n);
  }
  for (i = 1; i <= N_FRAMES; i++) {
    int kernel = i <= N_KERNEL_FRAMES;
    n = snprintf(line, sizeof(line),
                 "{\"type\":\"frame\",\"id\":%zu,\"func\":\"%s::module_%" PRIu64
                 "::function_%zu\",\"func_resolved\":true,\"dso\":%" PRIu64 ",\"ip\":\"0x%" PRIx64
                 "\",\"srcline\":\"src/file_%" PRIu64 ".rs:%" PRIu64
                 "\",\"inlined\":false,\"kind\":\"%s\"}\n",
                 i, kernel ? "kernel" : "app", rnd_in(1, 500), i,
                 kernel ? (uint64_t)1 : rnd_in(2, N_DSOS), rnd_in(0x400000, 0x7fffffffff),
                 rnd_in(1, 3000), rnd_in(1, 2000), kernel ? "kernel" : "user");
    emitf(&g, line, n);
  }
  for (i = 0; i < N_STACKS; i++) {
    size_t nf = (size_t)rnd_in(5, 40), nk = (size_t)rnd_in(0, 3), len;
    uint64_t leaf = 0, period = rnd_in(100000, 1000000000);
    stack_ids[i][0] = rnd();
    stack_ids[i][1] = rnd();
    len = (size_t)snprintf(line, sizeof(line),
                           "{\"type\":\"stack\",\"id\":\"0x%016" PRIx64 "%016" PRIx64
                           "\",\"frames\":[",
                           stack_ids[i][0], stack_ids[i][1]);
    for (j = 0; j < nf; j++) {
      /* leaf first: a few kernel frames, then user frames */
      uint64_t f = j < nk ? rnd_in(1, N_KERNEL_FRAMES) : rnd_in(N_KERNEL_FRAMES + 1, N_FRAMES);
      if (!j)
        leaf = f;
      len += (size_t)snprintf(line + len, sizeof(line) - len, j ? ",%" PRIu64 : "%" PRIu64, f);
    }
    len += (size_t)snprintf(line + len, sizeof(line) - len,
                            "],\"stack_type\":\"unified\",\"context\":{\"event\":\"cycles\","
                            "\"pid\":%" PRIu64 ",\"tid\":%" PRIu64
                            "},\"weights\":[{\"metric\":\"samples\",\"value\":%" PRIu64
                            "},{\"metric\":\"period\",\"value\":%" PRIu64
                            ",\"unit\":\"events\"}],\"exclusive\":{\"frame\":%" PRIu64
                            ",\"weights\":[{\"metric\":\"period\",\"value\":%" PRIu64 "}]}}\n",
                            rnd_in(1000, 1100), rnd_in(1000, 1400), rnd_in(1, 5000), period,
                            leaf, period / 3);
    emit(&g, line, len, ZSTD_e_continue);
  }
  *n_samples = 0;
  while (g.bytes < MIN_BYTES) {
    size_t k = (size_t)rnd_in(0, N_STACKS - 1);
    n = snprintf(line, sizeof(line),
                 "{\"type\":\"sample\",\"timestamp\":%.6f,\"tid\":%" PRIu64
                 ",\"event\":\"cycles\",\"period\":%" PRIu64 ",\"stack_id\":\"0x%016" PRIx64
                 "%016" PRIx64 "\"}\n",
                 1000.0 + (double)*n_samples * 1e-4, rnd_in(1000, 1400), rnd_in(1000, 200000),
                 stack_ids[k][0], stack_ids[k][1]);
    emitf(&g, line, n);
    ++*n_samples;
  }
  emit(&g, "", 0, ZSTD_e_end);
  *bytes = g.bytes;
  fclose(g.plain);
  fclose(g.zf);
  ZSTD_freeCCtx(g.z);
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct result {
  double secs;    /* wall time */
  long rss_kib;   /* peak resident set of the child */
  int status;     /* exit status */
};

/* Run argv with stdout to `out` (NULL: /dev/null) and stderr to /dev/null. */
static struct result run(char *const argv[], const char *out)
{
  struct result r = {0, 0, -1};
  struct rusage ru;
  int st;
  double t0 = now();
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    int dn = open("/dev/null", O_WRONLY);
    int fo = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644) : dn;
    dup2(fo, 1);
    dup2(dn, 2);
    execvp(argv[0], argv);
    _exit(127);
  }
  if (wait4(pid, &st, 0, &ru) < 0) {
    perror("wait4");
    exit(2);
  }
  r.secs = now() - t0;
  r.rss_kib = ru.ru_maxrss;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

struct file_src {
  int fd;
};

static ssize_t fd_read(void *ctx, void *buf, size_t cap)
{
  struct file_src *f = ctx;
  return read(f->fd, buf, cap);
}

/* The floor inside the process: split the file into lines through spaa_lines, no parsing. */
static double lines_floor(const char *path, size_t *lines)
{
  struct file_src src;
  struct spaa_lines l;
  struct spaa_err err;
  const char *line;
  size_t len;
  double t0;
  int rc;
  src.fd = open(path, O_RDONLY);
  if (src.fd < 0) {
    perror(path);
    exit(2);
  }
  t0 = now();
  spaa_lines_init(&l, fd_read, &src);
  while ((rc = spaa_lines_next(&l, &line, &len, &err)) == 1)
    ;
  *lines = l.lineno;
  spaa_lines_free(&l);
  close(src.fd);
  if (rc < 0) {
    fprintf(stderr, "lines: %s\n", err.msg);
    exit(2);
  }
  return now() - t0;
}

static struct result best_of(int runs, char *const argv[], const char *out)
{
  struct result best = {1e30, 0, 0};
  int i;
  for (i = 0; i < runs; i++) {
    struct result r = run(argv, out);
    if (r.status != 0)
      return r;
    if (r.secs < best.secs)
      best = r;
  }
  return best;
}

static void report(const char *what, struct result r, double mb, double floor_s)
{
  printf("%-34s %7.3f s %8.1f MB/s  peak RSS %7.1f MiB  %5.2fx the floor's time  (exit %d)\n",
         what, r.secs, mb / r.secs, (double)r.rss_kib / 1024.0, r.secs / floor_s, r.status);
}

int main(int argc, char **argv)
{
  const char *bin = argc > 1 ? argv[1] : getenv("SPAA_BIN");
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  const char *runs_env = getenv("SPAA_BENCH_RUNS");
  int runs = runs_env ? atoi(runs_env) : 3;
  char dir[4096], path[4200], zpath[4200], outp[4200];
  unsigned long long bytes;
  size_t n_samples, lines, zsize;
  double mb, t, floor_lines = 1e30, floor_zlines = 1e30;
  struct result rcat, rv, rvz, rc;
  struct stat st;
  int i;
  if (!bin) {
    fprintf(stderr, "usage: %s SPAA_BIN (or set SPAA_BIN)\n", argv[0]);
    return 2;
  }
  if (runs < 1)
    runs = 1;
  snprintf(dir, sizeof(dir), "%s/spaa-bench-XXXXXX", tmp);
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 2;
  }
  snprintf(path, sizeof(path), "%s/bench.spaa", dir);
  snprintf(zpath, sizeof(zpath), "%s/bench.spaa.zst", dir);
  snprintf(outp, sizeof(outp), "%s/out.spaa", dir);
  t = now();
  generate(path, zpath, &bytes, &n_samples);
  stat(zpath, &st);
  zsize = (size_t)st.st_size;
  mb = (double)bytes / 1e6;
  printf("generated %.1f MB (%d dsos, %d frames, %d stacks, %zu samples; zstd %.1f MB) in %.2f s\n",
         mb, N_DSOS, N_FRAMES, N_STACKS, n_samples, (double)zsize / 1e6, now() - t);
  printf("best of %d runs, MB = 10^6 bytes of uncompressed SPAA\n\n", runs);

  {
    char *cat[] = {"cat", path, NULL};
    rcat = best_of(runs, cat, NULL);
  }
  for (i = 0; i < runs; i++) {
    t = lines_floor(path, &lines);
    if (t < floor_lines)
      floor_lines = t;
    t = lines_floor(zpath, &lines);
    if (t < floor_zlines)
      floor_zlines = t;
  }
  {
    char *v[] = {(char *)bin, "validate", path, NULL};
    char *vz[] = {(char *)bin, "validate", zpath, NULL};
    char *c[] = {(char *)bin, "convert", "--from", "spaa", path, "-o", outp, NULL};
    rv = best_of(runs, v, NULL);
    rvz = best_of(runs, vz, NULL);
    rc = best_of(runs, c, NULL);
  }
  printf("floor: cat > /dev/null               %7.3f s %8.1f MB/s  peak RSS %7.1f MiB\n",
         rcat.secs, mb / rcat.secs, (double)rcat.rss_kib / 1024.0);
  printf("floor: chunked lines, plain          %7.3f s %8.1f MB/s  (%zu lines)\n", floor_lines,
         mb / floor_lines, lines);
  printf("floor: chunked lines, zstd           %7.3f s %8.1f MB/s\n\n", floor_zlines,
         mb / floor_zlines);
  report("spaa-relay validate (plain)", rv, mb, floor_lines);
  report("spaa-relay validate (zstd)", rvz, mb, floor_zlines);
  report("spaa-relay convert --from spaa", rc, mb, floor_lines);
  printf("\nvalidate / cat: %.2fx the time; target >= 150 MB/s and RSS <= 64 MiB: %s\n",
         rv.secs / rcat.secs,
         (mb / rv.secs >= 150 && rv.rss_kib <= 64 * 1024 && rv.status == 0) ? "met" : "NOT met");
  if (!getenv("SPAA_BENCH_KEEP")) {
    unlink(path);
    unlink(zpath);
    unlink(outp);
    rmdir(dir);
  } else {
    printf("kept %s\n", dir);
  }
  return rv.status == 0 && rvz.status == 0 && rc.status == 0 ? 0 : 1;
}
