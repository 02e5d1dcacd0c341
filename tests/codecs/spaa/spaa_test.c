/* codecs/spaa/spaa.c: the header's time range in unix nanoseconds, in every unit the model
 * knows, and the cases where there is none to give. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "spaa/spaa.h"

static void test_header_range_ns(void **state)
{
  static const struct {
    const char *unit;
    struct spaa_num start, end;
    int64_t want_start, want_end; /* with rc 0 */
    int rc;
  } t[] = {
      {NULL, {.i = 1700000000000000000LL}, {.i = 1700000001000000000LL},
       1700000000000000000LL, 1700000001000000000LL, 0},
      {"nanoseconds", {.i = 5}, {.i = 7}, 5, 7, 0},
      {"microseconds", {.i = 1700000000000000LL}, {.i = 1700000000500000LL},
       1700000000000000000LL, 1700000000500000000LL, 0},
      {"milliseconds", {.i = 1700000000000LL}, {.i = 1700000000500LL}, 1700000000000000000LL,
       1700000000500000000LL, 0},
      {"seconds", {.i = 1700000000}, {.is_float = 1, .f = 1700000000.5}, 1700000000000000000LL,
       1700000000500000000LL, 0},
      {"minutes", {.i = 1}, {.i = 2}, 0, 0, -1},
      /* epoch nanoseconds past 2^53 stay exact (through a double: ...054912) */
      {"nanoseconds", {.i = 1673511894614055000LL}, {.i = 1673511894614055001LL},
       1673511894614055000LL, 1673511894614055001LL, 0},
      /* past int64 once in nanoseconds: saturated, not wrapped */
      {"seconds", {.i = 9300000000LL}, {.i = -9300000000LL}, INT64_MAX, INT64_MIN, 0},
  };
  struct spaa_profile *p = spaa_profile_new();
  size_t i;
  (void)state;
  assert_non_null(p);
  for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    int64_t s = -1, e = -1;
    p->header.has_time_range = 1;
    p->header.time_unit = t[i].unit;
    p->header.start = t[i].start;
    p->header.end = t[i].end;
    if (spaa_header_range_ns(p, &s, &e) != t[i].rc)
      fail_msg("case %zu (%s): rc", i, t[i].unit ? t[i].unit : "no unit");
    if (t[i].rc) {
      assert_int_equal(s, -1); /* untouched */
      assert_int_equal(e, -1);
      continue;
    }
    assert_int_equal(s, t[i].want_start);
    assert_int_equal(e, t[i].want_end);
  }
  {
    int64_t s = 3, e = 4;
    p->header.has_time_range = 0;
    p->header.time_unit = "seconds";
    assert_int_equal(spaa_header_range_ns(p, &s, &e), -1);
    assert_int_equal(s, 3);
    assert_int_equal(e, 4);
  }
  spaa_profile_free(p);
}

/* Reserved sample records are taken without growing; fitting leaves the records as they
 * were with no slack behind them. */
static void test_reserve_and_fit(void **state)
{
  struct spaa_profile *p = spaa_profile_new();
  struct spaa_sample *first;
  size_t i;
  (void)state;
  assert_non_null(p);
  assert_int_equal(spaa_reserve_samples(p, 1000), 0);
  assert_int_equal(p->cap_samples, 1000);
  first = spaa_add_sample(p);
  assert_non_null(first);
  first->tid = 7;
  for (i = 1; i < 1000; i++)
    assert_non_null(spaa_add_sample(p));
  assert_ptr_equal(p->samples, first); /* never moved: the room was there */
  assert_int_equal(p->cap_samples, 1000);
  assert_non_null(spaa_add_sample(p)); /* past the reservation: grows as before */
  assert_true(p->cap_samples > 1001);
  assert_int_equal(spaa_reserve_samples(p, 0), 0);
  for (i = 0; i < 33; i++)
    assert_non_null(spaa_add_frame(p));
  assert_true(p->cap_frames > 33);
  spaa_profile_fit(p);
  assert_int_equal(p->cap_samples, 1001);
  assert_int_equal(p->cap_frames, 33);
  assert_int_equal(p->cap_stacks, 0); /* none: nothing to fit */
  assert_int_equal(p->samples[0].tid, 7);
  assert_string_equal(p->frames[32].kind, "unknown");
  spaa_profile_free(p);
}

/* ask for the meter test: grants 64 KiB more each time, up to a ceiling in ctx */
static int grant(struct spaa_meter *m, size_t need)
{
  size_t ceiling = *(size_t *)m->ctx;
  size_t more = need < 65536 ? 65536 : need;
  if (m->room + more > ceiling)
    return spaa_err_set(&m->why, SPAA_E_TOO_LARGE, 0, 0, "over %zu", ceiling);
  m->room += more;
  return 0;
}

/* A meter that starts with 4 KiB of room and grants up to *ceiling (grant). */
static void meter_init(struct spaa_meter *m, size_t *ceiling)
{
  memset(m, 0, sizeof(*m));
  m->room = 4096;
  m->ask = grant;
  m->ctx = ceiling;
}

static void test_meter(void **state)
{
  struct spaa_meter m;
  struct spaa_profile *p, *q, *unmetered;
  struct spaa_stack *st;
  uint64_t frames[512];
  size_t ceiling = (size_t)4 << 20, i, held;
  (void)state;
  meter_init(&m, &ceiling);
  memset(frames, 0, sizeof(frames));
  p = spaa_profile_new_metered(&m);
  q = spaa_profile_new_metered(&m);
  unmetered = spaa_profile_new();
  assert_non_null(p);
  assert_non_null(q);
  assert_non_null(unmetered);
  assert_ptr_equal(p->meter, &m);
  assert_null(unmetered->meter);
  /* what two profiles hold is counted as they grow, past the first room by asking */
  for (i = 0; i < 100; i++)
    assert_non_null(spaa_add_sample(p));
  assert_non_null(spaa_strdup(q, "a string in the arena"));
  assert_int_equal(m.held, p->metered + q->metered);
  assert_int_equal(p->metered, spaa_profile_bytes(p)); /* no arena: exactly its arrays */
  assert_true(q->metered > sizeof(*q) + 64 * 1024);   /* its arena block, whole */
  assert_true(m.room >= m.held);
  held = m.held;
  spaa_profile_fit(p);
  assert_true(m.held < held); /* the slack given back */
  /* past the ceiling the allocation fails and the meter says why */
  for (i = 0; i < 20000 && !m.refused; i++) {
    if (!(st = spaa_add_stack(q)) || spaa_stack_set_frames(q, st, frames, 512))
      break;
  }
  assert_true(i < 20000);
  assert_int_equal(m.refused, SPAA_E_TOO_LARGE);
  assert_string_equal(m.why.msg, "over 4194304");
  assert_true(m.held <= ceiling);
  assert_true(m.peak >= m.held);
  assert_null(spaa_alloc(q, 200000)); /* refused stays refused, without asking again */
  assert_non_null(spaa_add_stack(unmetered)); /* other profiles are not its business */
  spaa_profile_free(q);
  spaa_profile_free(p);
  assert_int_equal(m.held, 0); /* all given back */
  spaa_profile_free(unmetered);
  /* other holdings count the same way */
  assert_int_equal(spaa_meter_add(&m, 100), -1); /* still refused */
  m.refused = 0;
  assert_int_equal(spaa_meter_add(&m, 100), 0);
  assert_int_equal(m.held, 100);
  spaa_meter_sub(&m, 1000);
  assert_int_equal(m.held, 0);
}

/* Stacks sharing one frame list are charged as copies: a profile naming one deep list from
 * many stacks is refused at the same point as one copying it, and all is given back. */
static void test_meter_shared_frames(void **state)
{
  struct spaa_meter m;
  struct spaa_profile *p;
  struct spaa_stack *st;
  uint64_t frames[512];
  uint64_t *list;
  size_t ceiling = (size_t)4 << 20, i, bulk;
  (void)state;
  meter_init(&m, &ceiling);
  memset(frames, 0, sizeof(frames));
  p = spaa_profile_new_metered(&m);
  assert_non_null(p);
  assert_non_null(st = spaa_add_stack(p));
  assert_int_equal(spaa_stack_set_frames(p, st, frames, 512), 0);
  list = st->frames;
  bulk = p->bulk_bytes;
  for (i = 0; i < 20000 && !m.refused; i++) {
    if (!(st = spaa_add_stack(p)) || spaa_stack_share_frames(p, st, list, 512))
      break;
    assert_ptr_equal(st->frames, list);
    assert_int_equal(st->n_frames, 512);
  }
  assert_int_equal(m.refused, SPAA_E_TOO_LARGE);
  assert_true(i > 100 && i < 1100); /* 4 MiB of 4 KiB lists, less the stack records */
  assert_int_equal(p->bulk_bytes, bulk); /* nothing copied */
  spaa_profile_free(p);
  assert_int_equal(m.held, 0);
}

/* Releasing records read (spaa_profile_release_*) lets go of their JSON values once, leaves
 * the others as they were, and the profile is then freed as usual. A compact sample's
 * context is its cs.ctxs entry's, which stays until the samples are dropped. */
static void test_release_records(void **state)
{
  struct spaa_profile *p = spaa_profile_new();
  json_t *o = json_object();
  struct spaa_cctx *x;
  uint32_t k = 7;
  size_t i, n = 20000; /* 3.4 MB of stack records: whole pages go back */
  (void)state;
  assert_non_null(p);
  assert_non_null(x = spaa_add_cctx(p, &k));
  assert_int_equal(k, 0);
  x->context = json_incref(o);
  for (i = 0; i < n; i++) {
    struct spaa_stack *s = spaa_add_stack(p);
    struct spaa_sample *sm = spaa_add_sample(p);
    struct spaa_csample *c = spaa_add_csample(p);
    assert_true(s && sm && c);
    snprintf(s->id, sizeof(s->id), "s%zu", i);
    s->context = json_incref(o);
    s->extra = json_incref(o);
    sm->context = json_incref(o);
    sm->extra = json_incref(o);
    c->ctx = k;
  }
  assert_int_equal(o->refcount, 2 + 4 * n);
  spaa_profile_release_stacks(p, 0, n / 2);
  assert_int_equal(o->refcount, 2 + 3 * n);
  spaa_profile_release_stacks(p, n / 2, n / 2); /* an empty range */
  assert_int_equal(o->refcount, 2 + 3 * n);
  assert_string_equal(p->stacks[n / 2].id, "s10000"); /* the rest as they were */
  assert_ptr_equal(p->stacks[n - 1].context, o);
  /* samples are numbered records first, then compact ones: a run across both */
  spaa_profile_release_samples(p, n - 100, n + 100);
  assert_int_equal(o->refcount, 2 + 3 * n - 200);
  spaa_profile_release_samples(p, 2 * n - 10, 3 * n); /* past the end: up to it */
  assert_int_equal(o->refcount, 2 + 3 * n - 200);
  assert_ptr_equal(p->samples[n - 101].context, o);
  assert_ptr_equal(p->cs.ctxs[0].context, o);
  spaa_profile_free(p); /* the released ones are not let go of twice */
  assert_int_equal(o->refcount, 1);
  json_decref(o);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_header_range_ns),
      cmocka_unit_test(test_reserve_and_fit),
      cmocka_unit_test(test_meter),
      cmocka_unit_test(test_meter_shared_frames),
      cmocka_unit_test(test_release_records),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
