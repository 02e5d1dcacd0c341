/* The metrics registry (see metrics.h): per family an open-addressed table of series claimed
 * with compare-and-swap, values added with relaxed atomics; a histogram family also has a row
 * of bucket counts per series. The exposition sorts a snapshot. */
#include "server/metrics.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

#define SLOTS 256 /* series slots per family: a power of two above SPAA_METRICS_MAX_SERIES */

enum kind { COUNTER, GAUGE, HISTOGRAM };
enum slot_state { FREE = 0, CLAIMED, READY }; /* a slot's life: FREE -> CLAIMED -> READY */

static const struct {
  enum kind kind;
  const char *name;
  const char *help;
  const char *label[2];
} families[SPAA_METRIC__COUNT] = {
#define SPAA_METRIC_ROW(id, k, n, h, l0, l1) {k, n, h, {l0, l1}},
    SPAA_METRIC_FAMILIES(SPAA_METRIC_ROW)
#undef SPAA_METRIC_ROW
};

static const double bucket_le[] = {SPAA_METRICS_BUCKETS}; /* seconds */
#define NB (sizeof(bucket_le) / sizeof(bucket_le[0]))
#define HCOLS (NB + 2) /* a histogram row: NB buckets, +Inf, the sum of the observed ns */

_Static_assert(SLOTS > SPAA_METRICS_MAX_SERIES && (SLOTS & (SLOTS - 1)) == 0,
               "SLOTS is a power of two with room to spare");

/* One series: a label value pair and its value. */
struct series {
  int state;                               /* enum slot_state, read and written atomically */
  uint64_t value;                          /* added atomically; a gauge's is an int64_t */
  char v[2][SPAA_METRICS_MAX_VALUE];       /* label values, "" for an unused label */
};

struct family {
  unsigned n_series;           /* slots claimed (atomic), at most SPAA_METRICS_MAX_SERIES */
  struct series overflow;      /* where value pairs past the cap count */
  struct series slots[SLOTS];  /* open addressing on the hash of the label values */
  uint64_t (*hist)[HCOLS];     /* histograms: a row per slot, then the overflow's (atomic
                                  counts, not cumulative); NULL for the other kinds */
};

struct spaa_metrics {
  struct family f[SPAA_METRIC__COUNT];
};

int spaa_metrics_new(struct spaa_metrics **out)
{
  size_t i;
  if (!(*out = calloc(1, sizeof(**out))))
    return SPAA_E_NOMEM;
  for (i = 0; i < SPAA_METRIC__COUNT; i++) {
    struct series *o = &(*out)->f[i].overflow;
    if (families[i].kind == HISTOGRAM &&
        !((*out)->f[i].hist = calloc(SLOTS + 1, sizeof(*(*out)->f[i].hist)))) {
      spaa_metrics_free(*out);
      *out = NULL;
      return SPAA_E_NOMEM;
    }
    if (families[i].label[0])
      strcpy(o->v[0], SPAA_METRICS_OVERFLOW);
    if (families[i].label[1])
      strcpy(o->v[1], SPAA_METRICS_OVERFLOW);
    o->state = READY;
  }
  return 0;
}

void spaa_metrics_free(struct spaa_metrics *m)
{
  size_t i;
  for (i = 0; m && i < SPAA_METRIC__COUNT; i++)
    free(m->f[i].hist);
  free(m);
}

/* Copy a label value as the series keeps it: "" for none, cut to fit. */
static void key_copy(char *dst, const char *src)
{
  size_t n = src ? strnlen(src, SPAA_METRICS_MAX_VALUE - 1) : 0;
  memcpy(dst, src ? src : "", n);
  dst[n] = 0;
}

static size_t key_hash(const char (*k)[SPAA_METRICS_MAX_VALUE])
{
  uint64_t h = 1469598103934665603ULL; /* FNV-1a over both values and a separator */
  const unsigned char *s;
  int i;
  for (i = 0; i < 2; i++) {
    for (s = (const unsigned char *)k[i]; *s; s++)
      h = (h ^ *s) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  }
  return (size_t)(h ^ h >> 32);
}

/* Take a free slot for key k: 1 when it is now ours (READY, labels set), 0 when another
 * thread got there first (*state then holds what that thread made of it), -1 when the
 * family is full. */
static int claim(struct family *fam, struct series *s, const char (*k)[SPAA_METRICS_MAX_VALUE],
                 int *state)
{
  int expect = FREE;
  if (__atomic_fetch_add(&fam->n_series, 1, __ATOMIC_RELAXED) >= SPAA_METRICS_MAX_SERIES) {
    __atomic_fetch_sub(&fam->n_series, 1, __ATOMIC_RELAXED);
    return -1;
  }
  if (!__atomic_compare_exchange_n(&s->state, &expect, CLAIMED, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    __atomic_fetch_sub(&fam->n_series, 1, __ATOMIC_RELAXED);
    *state = expect;
    return 0;
  }
  memcpy(s->v, k, sizeof(s->v));
  __atomic_store_n(&s->state, READY, __ATOMIC_RELEASE);
  return 1;
}

/* The series of key k, created when absent; the overflow series when the family is full. */
static struct series *find(struct family *fam, const char (*k)[SPAA_METRICS_MAX_VALUE])
{
  size_t h = key_hash(k), i;
  for (i = 0; i < SLOTS; i++) {
    struct series *s = &fam->slots[(h + i) & (SLOTS - 1)];
    int st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    if (st == FREE) {
      int r = claim(fam, s, k, &st);
      if (r > 0)
        return s;
      if (r < 0)
        return &fam->overflow;
    }
    while (st == CLAIMED) { /* its labels are being written: a few stores away */
      sched_yield();
      st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    }
    if (strcmp(s->v[0], k[0]) == 0 && strcmp(s->v[1], k[1]) == 0)
      return s;
  }
  return &fam->overflow;
}

/* The series of family f for labels l0, l1 (see find). */
static struct series *series_of(struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                                const char *l1)
{
  char k[2][SPAA_METRICS_MAX_VALUE];
  key_copy(k[0], families[f].label[0] ? l0 : NULL);
  key_copy(k[1], families[f].label[1] ? l1 : NULL);
  return find(&m->f[f], (const char (*)[SPAA_METRICS_MAX_VALUE])k);
}

void spaa_metrics_add(struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                      const char *l1, int64_t delta)
{
  if (!m || (unsigned)f >= SPAA_METRIC__COUNT || families[f].kind == HISTOGRAM ||
      (families[f].kind == COUNTER && delta < 0))
    return;
  __atomic_add_fetch(&series_of(m, f, l0, l1)->value, (uint64_t)delta, __ATOMIC_RELAXED);
}

void spaa_metrics_set(struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                      const char *l1, int64_t v)
{
  if (!m || (unsigned)f >= SPAA_METRIC__COUNT || families[f].kind != GAUGE)
    return;
  __atomic_store_n(&series_of(m, f, l0, l1)->value, (uint64_t)v, __ATOMIC_RELAXED);
}

void spaa_metrics_observe_ns(struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                             const char *l1, int64_t ns)
{
  struct family *fam;
  struct series *s;
  size_t row, i;
  if (!m || (unsigned)f >= SPAA_METRIC__COUNT || families[f].kind != HISTOGRAM)
    return;
  fam = &m->f[f];
  s = series_of(m, f, l0, l1);
  row = s == &fam->overflow ? SLOTS : (size_t)(s - fam->slots);
  if (ns < 0)
    ns = 0;
  for (i = 0; i < NB && (double)ns > bucket_le[i] * 1e9; i++)
    ;
  __atomic_add_fetch(&fam->hist[row][i], 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&fam->hist[row][NB + 1], (uint64_t)ns, __ATOMIC_RELAXED);
  __atomic_add_fetch(&s->value, 1, __ATOMIC_RELAXED); /* the count, for spaa_metrics_sum */
}

/* 1 when series s is in use and its labels match the pattern (NULL: any value). */
static int matches(const struct series *s, const char *l0, const char *l1)
{
  char k[SPAA_METRICS_MAX_VALUE];
  if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != READY)
    return 0;
  if (l0) {
    key_copy(k, l0);
    if (strcmp(k, s->v[0]) != 0)
      return 0;
  }
  if (l1) {
    key_copy(k, l1);
    if (strcmp(k, s->v[1]) != 0)
      return 0;
  }
  return 1;
}

int64_t spaa_metrics_sum(const struct spaa_metrics *m, enum spaa_metric f, const char *l0,
                         const char *l1)
{
  const struct family *fam;
  uint64_t sum = 0;
  size_t i;
  if (!m || (unsigned)f >= SPAA_METRIC__COUNT)
    return 0;
  fam = &m->f[f];
  for (i = 0; i < SLOTS; i++)
    if (matches(&fam->slots[i], l0, l1))
      sum += __atomic_load_n(&fam->slots[i].value, __ATOMIC_RELAXED);
  if (matches(&fam->overflow, l0, l1))
    sum += __atomic_load_n(&fam->overflow.value, __ATOMIC_RELAXED);
  return (int64_t)sum;
}

/* ---- exposition ------------------------------------------------------------------------- */

/* Append s with the escapes of the text format: \\ and \n, and \" when in a label value. */
static int add_escaped(struct spaa_buf *b, const char *s, int quote)
{
  int rc = 0;
  for (; *s && !rc; s++) {
    if (*s == '\\')
      rc = spaa_buf_add(b, "\\\\", 2);
    else if (*s == '\n')
      rc = spaa_buf_add(b, "\\n", 2);
    else if (*s == '"' && quote)
      rc = spaa_buf_add(b, "\\\"", 2);
    else
      rc = spaa_buf_add(b, s, 1);
  }
  return rc;
}

/* NAME{l0="v0",l1="v1",le="LE"} (suffix after NAME, le NULL: none; no braces without
 * labels). */
static int write_name(struct spaa_buf *b, size_t f, const struct series *s, const char *suffix,
                      const char *le)
{
  int rc = spaa_buf_addf(b, "%s%s", families[f].name, suffix), i, n = 0;
  for (i = 0; i < 2 && !rc && families[f].label[i]; i++, n++) {
    rc = spaa_buf_addf(b, "%s%s=\"", i ? "," : "{", families[f].label[i]);
    if (!rc)
      rc = add_escaped(b, s->v[i], 1);
    if (!rc)
      rc = spaa_buf_add(b, "\"", 1);
  }
  if (!rc && le)
    rc = spaa_buf_addf(b, "%sle=\"%s\"", n ? "," : "{", le);
  if (!rc && (n || le))
    rc = spaa_buf_add(b, "}", 1);
  return rc;
}

/* A histogram series from a snapshot of its row: the cumulative buckets, _sum, _count. */
static int write_hist(struct spaa_buf *b, size_t f, const struct series *s,
                      const uint64_t *row)
{
  uint64_t cum = 0, sum_ns = __atomic_load_n(&row[NB + 1], __ATOMIC_RELAXED);
  char le[32];
  size_t i;
  int rc = 0;
  for (i = 0; i <= NB && !rc; i++) {
    cum += __atomic_load_n(&row[i], __ATOMIC_RELAXED);
    if (i < NB)
      snprintf(le, sizeof(le), "%g", bucket_le[i]);
    else
      strcpy(le, "+Inf");
    if (!(rc = write_name(b, f, s, "_bucket", le)))
      rc = spaa_buf_addf(b, " %llu\n", (unsigned long long)cum);
  }
  if (!rc && !(rc = write_name(b, f, s, "_sum", NULL)))
    rc = spaa_buf_addf(b, " %.9f\n", (double)sum_ns / 1e9);
  if (!rc && !(rc = write_name(b, f, s, "_count", NULL)))
    rc = spaa_buf_addf(b, " %llu\n", (unsigned long long)cum);
  return rc;
}

/* One series: NAME{l0="v0",l1="v1"} VALUE, or a histogram's lines. */
static int write_series(struct spaa_buf *b, const struct family *fam, size_t f,
                        const struct series *s)
{
  uint64_t v = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
  int rc;
  if (families[f].kind == HISTOGRAM)
    return write_hist(b, f, s, fam->hist[s == &fam->overflow ? SLOTS : (size_t)(s - fam->slots)]);
  rc = write_name(b, f, s, "", NULL);
  if (!rc)
    rc = families[f].kind == GAUGE ? spaa_buf_addf(b, " %lld\n", (long long)(int64_t)v)
                                   : spaa_buf_addf(b, " %llu\n", (unsigned long long)v);
  return rc;
}

static int cmp_series(const void *a, const void *b)
{
  const struct series *x = *(const struct series *const *)a;
  const struct series *y = *(const struct series *const *)b;
  int c = strcmp(x->v[0], y->v[0]);
  return c ? c : strcmp(x->v[1], y->v[1]);
}

/* One family: HELP, TYPE, its series sorted by label values, the overflow last when used. */
static int write_family(struct spaa_buf *b, const struct family *fam, size_t f,
                        const struct series **tmp)
{
  size_t i, n = 0;
  int rc = spaa_buf_addf(b, "# HELP %s ", families[f].name);
  if (!rc)
    rc = add_escaped(b, families[f].help, 0);
  if (!rc)
    rc = spaa_buf_addf(b, "\n# TYPE %s %s\n", families[f].name,
                       families[f].kind == GAUGE       ? "gauge"
                       : families[f].kind == HISTOGRAM ? "histogram"
                                                       : "counter");
  for (i = 0; i < SLOTS; i++)
    if (__atomic_load_n(&fam->slots[i].state, __ATOMIC_ACQUIRE) == READY)
      tmp[n++] = &fam->slots[i];
  qsort(tmp, n, sizeof(*tmp), cmp_series);
  for (i = 0; i < n && !rc; i++)
    rc = write_series(b, fam, f, tmp[i]);
  if (!rc && (!families[f].label[0] ? n == 0
                                    : __atomic_load_n(&fam->overflow.value, __ATOMIC_RELAXED)))
    rc = write_series(b, fam, f, &fam->overflow); /* no labels: the family's one line */
  return rc;
}

int spaa_metrics_write(const struct spaa_metrics *m, struct spaa_buf *out)
{
  const struct series *tmp[SLOTS];
  size_t f;
  int rc = 0;
  for (f = 0; m && f < SPAA_METRIC__COUNT && !rc; f++)
    rc = write_family(out, &m->f[f], f, tmp);
  return rc;
}
