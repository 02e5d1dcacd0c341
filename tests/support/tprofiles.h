/* The storage tests' own helpers (header only, static inline): a temporary database folder,
 * opening a store, and hand-built profiles (one touching every field, small ones). */
#ifndef SPAA_TESTS_STORAGE_TPROFILES_H
#define SPAA_TESTS_STORAGE_TPROFILES_H

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spaa/spaa_io.h"
#include "storage/storage.h"

/* A fresh temporary directory and the database path inside it. */
struct tdir {
  char dir[64];
  char db[96];
};

static inline void tdir_make(struct tdir *t)
{
  snprintf(t->dir, sizeof(t->dir), "/tmp/spaa-store-XXXXXX");
  assert_non_null(mkdtemp(t->dir));
  snprintf(t->db, sizeof(t->db), "%s/store.db", t->dir);
}

static inline void tdir_rm(struct tdir *t)
{
  char p[128];
  static const char *const suffix[] = {"", "-wal", "-shm", "-journal", ".lock", ".sweep"};
  for (size_t i = 0; i < 6; i++) {
    snprintf(p, sizeof(p), "%s%s", t->db, suffix[i]);
    unlink(p);
  }
  rmdir(t->dir);
}

static inline struct spaa_store *topen(const char *db, size_t depth, size_t batch)
{
  struct spaa_store_opts o = {.path = db, .queue_depth = depth, .batch_max = batch,
                              .readers = 2, .durability = SPAA_DURABILITY_FULL};
  struct spaa_store *s = NULL;
  struct spaa_err err = {0};
  int rc = spaa_store_open(&o, &s, &err);
  if (rc)
    fail_msg("open %s: %s", db, err.msg);
  return s;
}

static inline char *twrite(const struct spaa_profile *p)
{
  struct spaa_buf b;
  struct spaa_err err = {0};
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_write(p, spaa_buf_sink, &b, &err), 0);
  assert_int_equal(spaa_buf_add(&b, "", 0), 0);
  return spaa_buf_steal(&b, NULL);
}

static inline void tweight(struct spaa_profile *p, struct spaa_weights *w, const char *metric,
                           struct spaa_num v, const char *unit)
{
  assert_int_equal(spaa_weights_add(p, w, metric, v, unit), 0);
}

/* A stack with local id `id` and frames given leaf first (reversed for root_to_leaf). */
static inline struct spaa_stack *tstack(struct spaa_profile *p, const char *id, const char *event,
                                        const uint64_t *leaf_first, size_t n)
{
  uint64_t fr[32];
  struct spaa_stack *s = spaa_add_stack(p);
  assert_non_null(s);
  assert_true(n <= 32);
  for (size_t i = 0; i < n; i++)
    fr[i] = p->header.frame_order == SPAA_ROOT_TO_LEAF ? leaf_first[n - 1 - i] : leaf_first[i];
  snprintf(s->id, sizeof(s->id), "%s", id);
  s->event = spaa_strdup(p, event);
  assert_int_equal(spaa_stack_set_frames(p, s, fr, n), 0);
  return s;
}

static inline json_t *tjson(const char *text)
{
  json_error_t je;
  json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
  if (!v)
    fail_msg("bad test JSON %s: %s", text, je.text);
  return v;
}

/* tp_rich: the header and its two events. */
static inline void tp_rich_header(struct spaa_profile *p, enum spaa_frame_order order)
{
  struct spaa_event *e;
  p->header.source_tool = spaa_strdup(p, "perf");
  p->header.frame_order = order;
  p->header.id_mode = SPAA_IDS_LOCAL;
  e = spaa_add_event(p);
  e->name = "cycles";
  e->kind = "hardware";
  e->mode = "period";
  e->primary_metric = "period";
  e->has_sample_period = 1;
  e->sample_period = spaa_int(100003);
  e->sampling_extra = tjson("{\"precise\":true}");
  e->extra = tjson("{\"x_note\":\"hi \\u00e9\"}");
  e = spaa_add_event(p);
  e->name = "alloc";
  e->kind = "allocation";
  e->mode = "event";
  e->primary_metric = "bytes";
  e->has_frequency_hz = 1;
  e->frequency_hz = spaa_float(99.5);
  p->header.has_time_range = 1;
  p->header.start = spaa_float(1700000000.25);
  p->header.end = spaa_float(1700000001.5);
  p->header.time_unit = "seconds";
  p->header.source = tjson("{\"tool\":\"perf\",\"pid\":42,\"ratio\":0.1}");
  p->header.extra = tjson("{\"x_host\":\"box\\n1\"}");
}

/* tp_rich: four dsos (a mapped one, the kernel, one with an empty build id, a copy of the
 * first under another name). */
static inline void tp_rich_dsos(struct spaa_profile *p)
{
  struct spaa_dso *d;
  d = spaa_add_dso(p);
  d->id = 1;
  d->name = "/usr/lib/libc.so.6";
  d->build_id = "abcdef01";
  d->has_mapping = 1;
  d->map_start = 0x7f0000000000ull;
  d->map_limit = 0x7f0000200000ull;
  d->map_offset = 0x1000;
  d->extra = tjson("{\"x_arch\":\"x86_64\"}");
  d = spaa_add_dso(p);
  d->id = 2;
  d->name = "[kernel.kallsyms]";
  d->is_kernel = 1;
  d = spaa_add_dso(p);
  d->id = 7;
  d->name = "/app/bin";
  d->build_id = "";
  d = spaa_add_dso(p); /* same build id as dso 1: the same content id, another name */
  d->id = 9;
  d->name = "/lib/libc-copy.so";
  d->build_id = "abcdef01";
}

/* tp_rich: frames 10..17 (inlined, unresolved, kernel, two of one content id, empty). */
static inline void tp_rich_frames(struct spaa_profile *p)
{
  struct spaa_frame *f;
  f = spaa_add_frame(p);
  f->id = 10; f->func = "main"; f->has_dso = 1; f->dso = 7; f->srcline = "main.c:10";
  f->kind = "user"; f->has_inline_depth = 1; f->inline_depth = 0;
  f = spaa_add_frame(p);
  f->id = 11; f->func = "helper"; f->has_dso = 1; f->dso = 7; f->srcline = "util.h:3";
  f->inlined = 1; f->has_inline_depth = 1; f->inline_depth = 1; f->kind = "user";
  f = spaa_add_frame(p);
  f->id = 12; f->func = "0x7f0000001234"; f->func_resolved = 0; f->has_dso = 1; f->dso = 1;
  f->has_ip = 1; f->ip = 0x7f0000001234ull; f->kind = "user";
  f = spaa_add_frame(p);
  f->id = 13; f->func = "schedule"; f->has_dso = 1; f->dso = 2; f->kind = "kernel";
  f->symoff = "0x1a"; f->has_ip = 1; f->ip = 0xffffffff81000000ull;
  f = spaa_add_frame(p);
  f->id = 14; f->func = "memcpy"; f->has_dso = 1; f->dso = 1; f->has_ip = 1;
  f->ip = 0x7f0000005000ull; f->srcline = "??:0"; f->srcline_resolved = 0; f->kind = "user";
  f->extra = tjson("{\"x_build\":\"debug\"}");
  f = spaa_add_frame(p); /* same content id as frame 14 */
  f->id = 15; f->func = "memcpy"; f->has_dso = 1; f->dso = 1; f->has_ip = 1;
  f->ip = 0x7f0000005100ull; f->kind = "user";
  f = spaa_add_frame(p);
  f->id = 16; f->func = "alloc_obj"; f->has_dso = 1; f->dso = 9; f->srcline = "";
  f->kind = "user";
  f = spaa_add_frame(p);
  f->id = 17; f->func = ""; f->kind = "unknown";
}

/* tp_rich: two threads of process 42. */
static inline void tp_rich_threads(struct spaa_profile *p)
{
  struct spaa_thread *t;
  t = spaa_add_thread(p);
  t->pid = 42; t->tid = 43; t->extra = tjson("{\"x_prio\":5}");
  t = spaa_add_thread(p);
  t->pid = 42; t->tid = 42; t->comm = "app";
}

/* tp_rich: stacks s1..s6 (s7 too with extra_stack). */
static inline void tp_rich_stacks(struct spaa_profile *p, int extra_stack)
{
  struct spaa_stack *s;
  s = tstack(p, "s1", "cycles", (uint64_t[]){12, 10}, 2);
  s->context = tjson("{\"x_trace\":\"abc\"}");
  tweight(p, &s->weights, "period", spaa_int(300), "events");
  tweight(p, &s->weights, "samples", spaa_int(3), NULL);
  s->has_exclusive = 1;
  s->excl_frame = 12;
  tweight(p, &s->excl_weights, "period", spaa_int(100), "events");
  s->extra = tjson("{\"x_k\":[1,2.5,null]}");
  s = tstack(p, "s2", "cycles", (uint64_t[]){14, 11, 10}, 3);
  s->stack_type = "unified";
  tweight(p, &s->weights, "period", spaa_float(200.5), "events");
  s->related = spaa_alloc(p, sizeof(*s->related));
  s->related[0] = "s3";
  s->n_related = 1;
  s = tstack(p, "s3", "cycles", (uint64_t[]){13}, 1);
  s->stack_type = "kernel";
  tweight(p, &s->weights, "period", spaa_int(50), "events");
  s->related = spaa_alloc(p, sizeof(*s->related));
  s->related[0] = "s2";
  s->n_related = 1;
  s = tstack(p, "s4", "cycles", (uint64_t[]){15, 10}, 2); /* frame 15 is not the first of its id */
  tweight(p, &s->weights, "period", spaa_int(10), "events");
  s = tstack(p, "s5", "alloc", (uint64_t[]){16, 17}, 2);
  s->context = tjson("{\"event\":\"alloc\",\"x_site\":\"a\"}");
  tweight(p, &s->weights, "bytes", spaa_int(4096), "bytes");
  s = tstack(p, "s6", "cycles", NULL, 0);
  tweight(p, &s->weights, "period", spaa_int(1), "events");
  if (extra_stack) {
    s = tstack(p, "s7", "cycles", (uint64_t[]){10}, 1);
    tweight(p, &s->weights, "period", spaa_int(7), "events");
  }
}

/* tp_rich: four samples, one naming no stack of the profile. */
static inline void tp_rich_samples(struct spaa_profile *p)
{
  struct spaa_sample *sm;
  sm = spaa_add_sample(p);
  sm->has_timestamp = 1; sm->timestamp = spaa_int(1700000000);
  sm->has_pid = 1; sm->pid = 42; sm->has_tid = 1; sm->tid = 42; sm->has_cpu = 1; sm->cpu = 1;
  sm->event = "cycles"; sm->has_period = 1; sm->period = spaa_int(100003);
  sm->stack_id = "s1";
  tweight(p, &sm->weights, "period", spaa_int(100), "events");
  sm->context = tjson("{\"x_span\":\"s1\"}");
  sm = spaa_add_sample(p);
  sm->has_timestamp = 1; sm->timestamp = spaa_float(1700000000.5);
  sm->has_tid = 1; sm->tid = 43; sm->stack_id = "s2";
  sm->context = tjson("{}");
  sm->extra = tjson("{\"x_flag\":true}");
  sm = spaa_add_sample(p);
  sm->stack_id = "0xdeadbeef"; /* names no stack of the profile */
  sm = spaa_add_sample(p);
  sm->stack_id = "s5"; sm->event = "alloc"; sm->has_period = 1; sm->period = spaa_float(1.5);
  sm->has_pid = 1; sm->pid = -1;
}

/* tp_rich: two windows. */
static inline void tp_rich_windows(struct spaa_profile *p)
{
  struct spaa_window *w;
  w = spaa_add_window(p);
  w->id = "w0"; w->start = spaa_int(0); w->end = spaa_int(10); w->unit = "seconds";
  w->by_stack = tjson("[{\"stack_id\":\"s1\",\"weights\":[{\"metric\":\"period\",\"value\":5}]}]");
  w->extra = tjson("{\"x_w\":1}");
  w = spaa_add_window(p);
  w->id = "w1"; w->start = spaa_float(10.5); w->end = spaa_float(20.25);
}

/* A profile that exercises every field of every record. `extra_stack` adds one more stack
 * (new content) so that a second profile shares all the others. Normalized. */
static inline struct spaa_profile *tp_rich(enum spaa_frame_order order, int extra_stack)
{
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_err err = {0};
  assert_non_null(p);
  tp_rich_header(p, order);
  tp_rich_dsos(p);
  tp_rich_frames(p);
  tp_rich_threads(p);
  tp_rich_stacks(p, extra_stack);
  tp_rich_samples(p);
  tp_rich_windows(p);
  if (spaa_normalize(p, &err))
    fail_msg("normalize: %s", err.msg);
  return p;
}

/* A small profile: one event "cpu" (primary metric "samples"), stacks of two frames, the
 * weight of stack i being i + 1 samples; `n_samples` sample records. Normalized. */
static inline struct spaa_profile *tp_small(size_t n_stacks, size_t n_samples)
{
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_event *e = spaa_add_event(p);
  struct spaa_dso *d = spaa_add_dso(p);
  struct spaa_err err = {0};
  char id[32];
  size_t i;
  p->header.source_tool = "test";
  p->header.id_mode = SPAA_IDS_LOCAL;
  e->name = "cpu";
  e->kind = "timer";
  e->mode = "frequency";
  e->primary_metric = "samples";
  d->id = 1;
  d->name = "app";
  for (i = 0; i < n_stacks + 1; i++) {
    struct spaa_frame *f = spaa_add_frame(p);
    char fn[32];
    snprintf(fn, sizeof(fn), "fn%zu", i);
    f->id = i + 1;
    f->func = spaa_strdup(p, fn);
    f->has_dso = 1;
    f->dso = 1;
  }
  for (i = 0; i < n_stacks; i++) {
    struct spaa_stack *s;
    snprintf(id, sizeof(id), "s%zu", i);
    s = tstack(p, id, "cpu", (uint64_t[]){i + 2, 1}, 2);
    tweight(p, &s->weights, "samples", spaa_int((int64_t)i + 1), NULL);
    tweight(p, &s->weights, "cpu_time", spaa_int(10 * ((int64_t)i + 1)), "nanoseconds");
  }
  for (i = 0; i < n_samples; i++) {
    struct spaa_sample *sm = spaa_add_sample(p);
    snprintf(id, sizeof(id), "s%zu", i % n_stacks);
    sm->stack_id = spaa_strdup(p, id);
  }
  if (spaa_normalize(p, &err))
    fail_msg("normalize: %s", err.msg);
  return p;
}

#endif
