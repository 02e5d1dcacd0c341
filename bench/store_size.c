/* Benchmark: how much disk the store takes for a service's history. 100 uploads derived from
 * fixtures/pprof/google-pprof_large.cpu, and 100 derived from real Go CPU profiles (written
 * by tests/e2e/go when `go` is on PATH), go through the server's pprof path (the registry's
 * converter, then spaa_store_put_many with the metadata the server gives); the data
 * directory's growth over an empty store is divided by the sum of the uploads' gzip sizes.
 * Targets (issue 16): <= 0.15 for large.cpu, <= 0.5 for the Go profiles. Asserts nothing.
 * A third series, 100 variants of fixtures/pprof/pyroscope_heap (four sample types, a block
 * of a few hundred KB: its service dictionary is digested at level 9), has no target.
 * Usage: bench_store_size [--originals] [large|go|heap]
 *   --originals: pass each upload to the store (spaa_meta.original), as the server does with
 *   keep_original = always; the default passes none, as the server's default (never).
 * Env: SPAA_SHARED (fixtures, as tests/support/fixture.h), TMPDIR (where the stores go). */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "base/compress.h"
#include "base/limits.h"
#include "codecs/registry.h"
#include "pprof/pprof.h"
#include "pprof/pprof_int.h"
#include "spaa/convert.h"
#include "storage/storage.h"

#include "fixture.h"
#include "variants.h"

#define N_UPLOADS 100
#define GO_RUNS 4          /* real Go profiles the variants are derived from */
#define GO_SECONDS "4"     /* of work under the profiler per run: ~2.7 KB of gzip */

static double mb(uint64_t bytes)
{
  return (double)bytes / 1e6;
}

/* ---- measuring the data directory -------------------------------------------------------- */

/* What `du` counts (st_blocks * 512) and the logical sizes, summed over the regular files of
 * dir (the store's database, -wal, -shm, and anything else a backend keeps there). */
struct usage {
  uint64_t disk;    /* allocated bytes */
  uint64_t logical; /* st_size */
};

static int dir_usage(const char *dir, struct usage *u, int print)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  memset(u, 0, sizeof(*u));
  if (!d)
    return -1;
  while ((e = readdir(d))) {
    char path[1400];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    u->disk += (uint64_t)st.st_blocks * 512;
    u->logical += (uint64_t)st.st_size;
    if (print)
      printf("    %-22s %10.2f MB logical, %10.2f MB on disk\n", e->d_name,
             mb((uint64_t)st.st_size), mb((uint64_t)st.st_blocks * 512));
  }
  closedir(d);
  return 0;
}

/* Fold the WAL into the database and truncate it, through a connection of our own (the
 * store is closed by then; closing the last connection removes -wal and -shm). */
static void checkpoint(const char *db)
{
  sqlite3 *h = NULL;
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK)
    sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
  sqlite3_close(h);
}

/* Open the store at db, or NULL with a line on stderr. */
static struct spaa_store *store_open(const char *db)
{
  struct spaa_store_opts o;
  struct spaa_store *s = NULL;
  struct spaa_err err = {0};
  memset(&o, 0, sizeof(o));
  o.path = db;
  o.queue_depth = 256;                 /* the server's default */
  o.batch_max = SPAA_SERVE_MAX_BATCH;  /* as the server opens it */
  o.readers = 1;
  if (spaa_store_open(&o, &s, &err)) {
    fprintf(stderr, "store open %s: %s\n", db, err.msg);
    return NULL;
  }
  return s;
}

/* Close the store, checkpoint, and measure the directory. */
static void store_settle(struct spaa_store *s, const char *dir, const char *db, struct usage *u,
                         int print)
{
  spaa_store_close(s);
  checkpoint(db);
  dir_usage(dir, u, print);
}

/* ---- where the bytes are: SQLite's dbstat ----------------------------------------------- */

#define DBSTAT_SQL                                                                           \
  "SELECT coalesce(m.tbl_name, d.name), d.name, sum(d.pgsize), "                             \
  "sum(CASE WHEN d.pagetype = 'leaf' THEN d.ncell ELSE 0 END) "                              \
  "FROM dbstat AS d LEFT JOIN sqlite_master AS m ON m.name = d.name "                        \
  "GROUP BY d.name ORDER BY 1, 3 DESC"

/* One row of the dbstat answer. */
struct dbrow {
  char table[64]; /* the table the object belongs to */
  char name[64];  /* the table itself or one of its indexes */
  uint64_t bytes; /* pages it holds */
  uint64_t cells; /* leaf cells: rows of a table, entries of an index */
};

/* Print rows grouped by table (a table's rows + indexes, then each object). */
static void dbstat_print(const struct dbrow *r, size_t n, uint64_t total)
{
  size_t i = 0, j;
  printf("    dbstat (the whole file, %.2f MB of pages): table = its rows + its indexes\n",
         mb(total));
  while (i < n) {
    uint64_t sum = 0;
    for (j = i; j < n && strcmp(r[j].table, r[i].table) == 0; j++)
      sum += r[j].bytes;
    printf("      %-26s %10.2f MB %5.1f%%\n", r[i].table, mb(sum),
           total ? 100.0 * (double)sum / (double)total : 0.0);
    for (; i < j; i++)
      printf("        %-32s %10.2f MB  %10" PRIu64 " %s\n", r[i].name, mb(r[i].bytes),
             r[i].cells, strcmp(r[i].name, r[i].table) ? "entries" : "rows");
  }
}

/* dbstat through the C API, read-only; -1 when this SQLite has no dbstat table. */
static int dbstat_capi(const char *db, struct dbrow *r, size_t cap, size_t *n)
{
  sqlite3 *h = NULL;
  sqlite3_stmt *st = NULL;
  int rc = -1;
  *n = 0;
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(h, DBSTAT_SQL, -1, &st, NULL) != SQLITE_OK)
    goto out;
  while (sqlite3_step(st) == SQLITE_ROW && *n < cap) {
    snprintf(r[*n].table, sizeof(r[*n].table), "%s", (const char *)sqlite3_column_text(st, 0));
    snprintf(r[*n].name, sizeof(r[*n].name), "%s", (const char *)sqlite3_column_text(st, 1));
    r[*n].bytes = (uint64_t)sqlite3_column_int64(st, 2);
    r[*n].cells = (uint64_t)sqlite3_column_int64(st, 3);
    (*n)++;
  }
  rc = 0;
out:
  sqlite3_finalize(st);
  sqlite3_close(h);
  return rc;
}

/* The same query through the sqlite3 command-line shell; -1 when it is not there. */
static int dbstat_cli(const char *db, struct dbrow *r, size_t cap, size_t *n)
{
  char cmd[2048], line[512];
  FILE *f;
  *n = 0;
  snprintf(cmd, sizeof(cmd), "sqlite3 -readonly -separator '|' '%s' \"%s\" 2>/dev/null", db,
           DBSTAT_SQL);
  if (!(f = popen(cmd, "r")))
    return -1;
  while (fgets(line, sizeof(line), f) && *n < cap)
    if (sscanf(line, "%63[^|]|%63[^|]|%" SCNu64 "|%" SCNu64, r[*n].table, r[*n].name,
               &r[*n].bytes, &r[*n].cells) == 4)
      (*n)++;
  return pclose(f) == 0 && *n ? 0 : -1;
}

static void dbstat_report(const char *db)
{
  struct dbrow r[128];
  size_t n = 0, i;
  uint64_t total = 0;
  const char *how = "C API";
  if (dbstat_capi(db, r, 128, &n)) {
    how = "sqlite3 shell";
    if (dbstat_cli(db, r, 128, &n)) {
      printf("    dbstat: not compiled into this SQLite and no sqlite3 shell: no per-table "
             "sizes\n");
      return;
    }
  }
  for (i = 0; i < n; i++)
    total += r[i].bytes;
  printf("    (dbstat read through the %s)\n", how);
  dbstat_print(r, n, total);
}

/* ---- one series of uploads --------------------------------------------------------------- */

/* Unlink the regular files of dir, then dir. */
static void dir_remove(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[1400];
  while (d && (e = readdir(d))) {
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    if (e->d_name[0] != '.')
      unlink(path);
  }
  if (d)
    closedir(d);
  rmdir(dir);
}

/* How a series is run and what it found. */
struct series {
  const char *title;   /* what the uploads are */
  const char *service; /* their service name */
  int originals;       /* pass originals to the store (as the server) */
  int keep;            /* leave the data directory in place */
  double ratio;        /* out: growth on disk / gzip bytes uploaded; < 0 when it failed */
};

/* Upload N_UPLOADS variants, variant i made from srcs[i % n_src], into a fresh store; print
 * what the directory grew by and where. */
static void run_series(struct series *se, struct bench_src *srcs, size_t n_src, uint64_t salt)
{
  char dir[1024], db[1100];
  const char *tmp = getenv("TMPDIR");
  struct bench_ingest g;
  struct usage u0, u1, u2;
  struct spaa_buf gz;
  uint64_t gz_total = 0, gz_first = 0, growth;
  double gen = 0, t;
  unsigned i;
  se->ratio = -1;
  memset(&g, 0, sizeof(g));
  spaa_buf_init(&gz, 0);
  snprintf(dir, sizeof(dir), "%s/spaa-bench-size-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return;
  }
  snprintf(db, sizeof(db), "%s/store.db", dir);
  if (!(g.store = store_open(db)))
    goto out;
  store_settle(g.store, dir, db, &u0, 0);
  g.conv = spaa_converter("pprof");
  g.service = se->service;
  g.labels = json_pack("{s:s, s:s}", "env", "bench", "region", "eu-1");
  g.originals = se->originals;
  g.ids = salt;
  g.received_ns = 1767225600000000000LL;
  if (!g.conv || !g.labels || !(g.store = store_open(db)))
    goto out;
  for (i = 0; i < N_UPLOADS; i++) {
    t = bench_now();
    if (bench_src_variant(&srcs[i % n_src], salt + i * 0x100000001b3ull, i, &gz))
      goto out;
    gen += bench_now() - t;
    gz_total += gz.len;
    if (bench_ingest_one(&g, (const uint8_t *)gz.p, gz.len))
      goto out;
    if (i == 0) { /* the first upload brings the dictionaries: measure it apart */
      gz_first = gz.len;
      store_settle(g.store, dir, db, &u1, 0);
      if (!(g.store = store_open(db)))
        goto out;
    }
  }
  store_settle(g.store, dir, db, &u2, 0);
  g.store = NULL;
  growth = u2.disk > u0.disk ? u2.disk - u0.disk : 0;
  se->ratio = (double)growth / (double)gz_total;
  printf("  %s: %d uploads, %.2f MB of gzip in all (%.1f KB each on average)\n", se->title,
         N_UPLOADS, mb(gz_total), (double)gz_total / N_UPLOADS / 1e3);
  printf("    variants made in %.1f s; converted and stored (committed) in %.1f s, "
         "%.1f ms per upload\n", gen, g.secs, g.secs * 1e3 / N_UPLOADS);
  printf("    empty store %.2f MB on disk; the first upload (%.1f KB gzip) grew it by %.2f MB; "
         "each of the other %d by %.3f MB on average\n", mb(u0.disk), (double)gz_first / 1e3,
         mb(u1.disk - u0.disk), N_UPLOADS - 1, mb(u2.disk - u1.disk) / (N_UPLOADS - 1));
  printf("    files after the last upload and a checkpoint:\n");
  dir_usage(dir, &u2, 1);
  printf("    data-dir growth %.2f MB (logical %.2f MB) / gzip %.2f MB = %.3f\n", mb(growth),
         mb(u2.logical - u0.logical), mb(gz_total), se->ratio);
  dbstat_report(db);
out:
  spaa_store_close(g.store);
  json_decref(g.labels);
  spaa_buf_free(&gz);
  if (se->keep)
    printf("    (data directory kept: %s)\n", dir);
  else
    dir_remove(dir);
}

/* ---- real Go CPU profiles ------------------------------------------------------------------ */

/* Run argv (in cwd when not NULL) with stdout to /dev/null (stderr too when quiet); its exit
 * status, 127 when it could not be started, -1 on other failures. */
static int run_cmd(const char *cwd, char *const *argv, int quiet)
{
  int status;
  pid_t pid;
  fflush(stdout);
  if ((pid = fork()) == 0) {
    FILE *null = freopen("/dev/null", "w", stdout);
    if (quiet && null)
      dup2(fileno(stdout), 2);
    if (cwd && chdir(cwd) != 0)
      _exit(126);
    execvp(argv[0], argv);
    _exit(127);
  }
  if (pid < 0 || waitpid(pid, &status, 0) < 0)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Build tests/e2e/go into tmp and run it GO_RUNS times (GO_SECONDS s of work each): the CPU
 * profiles' bytes into out[] / lens[] (malloc'd). How many were made; 0 with a message when
 * go is not on PATH or a step fails. */
static size_t go_profiles(const char *tmp, uint8_t **out, size_t *lens)
{
  char src[4096], bin[4200], cpu[4200], heap[4200];
  const char *saved = getenv("SPAA_BENCH_GO_PROFILES");
  char *version[] = {"go", "version", NULL};
  char *build[] = {"go", "build", "-buildvcs=false", "-o", bin, ".", NULL};
  char *run[] = {bin, "-cpu", cpu, "-heap", heap, "-seconds", GO_SECONDS, NULL};
  size_t n = 0;
  /* SPAA_BENCH_GO_PROFILES=DIR: the profiles of an earlier run (DIR/cpu0.pprof...), so that
   * two builds can be compared on the same uploads; written there when DIR has none */
  if (saved && *saved) {
    for (n = 0; n < GO_RUNS; n++) {
      snprintf(cpu, sizeof(cpu), "%s/cpu%zu.pprof", saved, n);
      if (!(out[n] = spaa_test_read_file(cpu, &lens[n])))
        break;
    }
    if (n == GO_RUNS) {
      printf("  Go profiles: read from %s\n", saved);
      return n;
    }
    while (n > 0)
      free(out[--n]);
  }
  if (run_cmd(NULL, version, 1) != 0) {
    printf("  Go profiles: skipped, `go` is not on PATH (Debian: golang-go)\n");
    return 0;
  }
  spaa_test_source_path(src, sizeof(src), "tests/e2e/go");
  snprintf(bin, sizeof(bin), "%s/pprofgen", tmp);
  snprintf(heap, sizeof(heap), "%s/heap.pprof", tmp);
  if (!getenv("GOCACHE") && !getenv("HOME")) /* go needs a build cache: one kept in /tmp */
    setenv("GOCACHE", "/tmp/spaa-bench-gocache", 1);
  if (run_cmd(src, build, 0) != 0) {
    printf("  Go profiles: skipped, `go build` in %s failed\n", src);
    return 0;
  }
  for (n = 0; n < GO_RUNS; n++) {
    snprintf(cpu, sizeof(cpu), "%s/cpu%zu.pprof", tmp, n);
    if (run_cmd(NULL, run, 0) != 0 || !(out[n] = spaa_test_read_file(cpu, &lens[n]))) {
      printf("  Go profiles: skipped, %s failed\n", bin);
      break;
    }
    if (saved && *saved) {
      char keep[4200];
      snprintf(keep, sizeof(keep), "%s/cpu%zu.pprof", saved, n);
      if (rename(cpu, keep) != 0)
        perror(keep);
    }
    unlink(cpu);
  }
  unlink(heap);
  unlink(bin);
  if (n < GO_RUNS) {
    while (n > 0)
      free(out[--n]);
  }
  return n;
}

/* ---- the two series ---------------------------------------------------------------------- */

/* 100 variants of one fixture (label: how the report names it). */
static void series_fixture(struct series *se, const char *path, const char *label, uint64_t salt)
{
  struct bench_src s;
  size_t len;
  uint8_t *buf = spaa_test_fixture(path, &len);
  se->ratio = -1;
  if (!buf) {
    printf("  %s: skipped, no fixtures/%s (set SPAA_SHARED)\n", label, path);
    return;
  }
  if (bench_src_open(&s, buf, len) == 0) {
    printf("  %s: %zu samples, %zu locations; each variant keeps %d%% of the samples, "
           "values jittered by up to %.1f%%\n", label, s.n_all, s.msg->n_location,
           BENCH_KEEP_PERCENT, BENCH_JITTER_PERMILLE / 10.0);
    run_series(se, &s, 1, salt);
    bench_src_close(&s);
  }
  free(buf);
}

static void series_go(struct series *se)
{
  uint8_t *raw[GO_RUNS];
  size_t lens[GO_RUNS], n, i, ok = 0, raw_total = 0;
  struct bench_src s[GO_RUNS];
  char tmp[4096];
  const char *t = getenv("TMPDIR");
  se->ratio = -1;
  snprintf(tmp, sizeof(tmp), "%s/spaa-bench-go-XXXXXX", t && *t ? t : "/tmp");
  if (!mkdtemp(tmp)) {
    perror("mkdtemp");
    return;
  }
  n = go_profiles(tmp, raw, lens);
  rmdir(tmp);
  for (i = 0; i < n; i++) {
    raw_total += lens[i];
    if (bench_src_open(&s[ok], raw[i], lens[i]) == 0)
      ok++;
  }
  if (n) {
    printf("  Go profiles: %zu real runs of tests/e2e/go (" GO_SECONDS " s of work each), %.0f bytes gzip "
           "each on average as Go wrote them, %zu samples in the first; variants keep %d%% of "
           "the samples, values jittered by up to %.1f%%\n", n, (double)raw_total / (double)n,
           ok ? s[0].n_all : 0, BENCH_KEEP_PERCENT, BENCH_JITTER_PERMILLE / 10.0);
  }
  if (ok == n && n > 0)
    run_series(se, s, ok, 0x90c0ffeeull);
  for (i = 0; i < ok; i++)
    bench_src_close(&s[i]);
  for (i = 0; i < n; i++)
    free(raw[i]);
}

static void verdict(const char *what, double ratio, double target)
{
  if (ratio < 0)
    printf("%-44s not measured   (target <= %.2f)\n", what, target);
  else
    printf("%-44s %6.3f   (target <= %.2f: %s)\n", what, ratio, target,
           ratio <= target ? "met" : "missed");
}

int main(int argc, char **argv)
{
  struct series large = {"large.cpu variants", "bench-large", 0, 0, -1};
  struct series go = {"Go CPU profile variants", "bench-go", 0, 0, -1};
  struct series heap = {"heap profile variants", "bench-heap", 0, 0, -1};
  const char *only = NULL;
  double t0 = bench_now();
  int i;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--originals") == 0)
      large.originals = go.originals = heap.originals = 1;
    else if (strcmp(argv[i], "--no-originals") == 0)
      large.originals = go.originals = heap.originals = 0;
    else if (strcmp(argv[i], "--keep") == 0)
      large.keep = go.keep = heap.keep = 1;
    else if (strcmp(argv[i], "large") == 0 || strcmp(argv[i], "go") == 0 ||
             strcmp(argv[i], "heap") == 0)
      only = argv[i];
    else {
      fprintf(stderr, "usage: %s [--originals] [--keep] [large|go|heap]\n", argv[0]);
      return 2;
    }
  }
  printf("stored size: data-dir growth over an empty store / gzip bytes uploaded; %d uploads "
         "per series, pprof converter + spaa_store_put_many as the server\n", N_UPLOADS);
  printf("originals: %s\n", large.originals
             ? "passed to the store in spaa_meta.original, as the server does with "
               "keep_original = always (--originals)"
             : "not passed (spaa_meta.original = NULL), as the server's default "
               "keep_original = never");
  if (!only || strcmp(only, "large") == 0)
    series_fixture(&large, "pprof/google-pprof_large.cpu", "large.cpu", 0x5eed1a26eull);
  if (!only || strcmp(only, "go") == 0)
    series_go(&go);
  if (!only || strcmp(only, "heap") == 0)
    series_fixture(&heap, "pprof/pyroscope_heap", "pyroscope_heap", 0x4ea9ull);
  printf("\nsummary (%.0f s in all, originals %s)\n", bench_now() - t0,
         large.originals ? "passed" : "not passed");
  verdict("stored size / gzip, 100 large.cpu variants:", large.ratio, 0.15);
  verdict("stored size / gzip, 100 Go CPU profiles:", go.ratio, 0.5);
  if (heap.ratio >= 0) /* a service dictionary of a few hundred KB: level 9's tables */
    printf("%-44s %6.3f   (no target)\n", "stored size / gzip, 100 heap profiles:", heap.ratio);
  return 0;
}
