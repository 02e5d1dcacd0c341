/* server/budget.c: charges admitted and refused, a conversion's meter asking for more as its
 * models grow, the refusals' codes and words (a conversion's, a read's), JSON values counted
 * on the thread of the work and the body's decoders too, everything given back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/compress.h"
#include "base/limits.h"
#include "server/budget.h"

#define MIB ((size_t)1 << 20)

/* 1 when nothing is held: only then is a charge of the whole cap admitted without waiting */
static int empty(struct spaa_budget *b)
{
  if (spaa_budget_take(b, spaa_budget_cap(b), 0, 0))
    return 0;
  spaa_budget_give(b, spaa_budget_cap(b), 0);
  return 1;
}

static void test_take_give(void **state)
{
  struct spaa_budget *b;
  (void)state;
  assert_int_equal(spaa_budget_new(64 * MIB, NULL, &b), 0);
  assert_int_equal(spaa_budget_cap(b), 64 * MIB);
  assert_int_equal(spaa_budget_take(b, 40 * MIB, 0, 0), 0);
  assert_int_equal(spaa_budget_take(b, 30 * MIB, 0, 0), -1); /* does not fit, no wait */
  assert_int_equal(spaa_budget_take(b, 30 * MIB, 20, 0), -1); /* nor after waiting */
  assert_int_equal(spaa_budget_take(b, 24 * MIB, 0, 0), 0);   /* fits exactly */
  assert_int_equal(spaa_budget_peak(b), 64 * MIB);
  spaa_budget_give(b, 64 * MIB, 0);
  assert_true(empty(b));
  /* more than the cap is admitted when nothing else is held */
  assert_int_equal(spaa_budget_take(b, 100 * MIB, 0, 0), 0);
  spaa_budget_give(b, 100 * MIB, 0);
  /* a conversion is admitted over the cap when no other conversion holds it */
  assert_int_equal(spaa_budget_take(b, 10 * MIB, 0, 0), 0);
  assert_int_equal(spaa_budget_take(b, 60 * MIB, 0, 1), 0);
  assert_int_equal(spaa_budget_take(b, 1 * MIB, 0, 1), -1);
  spaa_budget_give(b, 60 * MIB, 1);
  spaa_budget_give(b, 10 * MIB, 0);
  assert_true(empty(b));
  spaa_budget_free(b);
}

/* A conversion's models grow past their advance charge: the meter asks, the budget gives
 * twice the growth in steps; all of it given back at the end. */
static void test_meter_grows(void **state)
{
  struct spaa_budget *b;
  struct spaa_budget_work w;
  (void)state;
  assert_int_equal(spaa_budget_new(64 * MIB, NULL, &b), 0);
  assert_int_equal(spaa_budget_work_begin(&w, b, 0, 4 * MIB, 0), 0);
  assert_int_equal(w.charged, 4 * MIB);
  assert_int_equal(spaa_meter_add(&w.meter, 3 * MIB), 0); /* within the advance charge */
  assert_int_equal(w.charged, 4 * MIB);
  assert_int_equal(spaa_meter_add(&w.meter, 2 * MIB), 0); /* 1 MiB past it: one step, twice */
  assert_int_equal(w.charged, 4 * MIB + 2 * SPAA_BUDGET_GROW_STEP);
  assert_true(w.meter.room >= w.meter.held);
  assert_int_equal(w.meter.peak, 5 * MIB);
  spaa_meter_sub(&w.meter, 5 * MIB);
  assert_int_equal(w.meter.held, 0);
  spaa_budget_work_give(&w);
  assert_null(w.b);
  assert_true(empty(b));
  spaa_budget_free(b);
}

/* JSON values made on the thread of a work count against its meter, until its end. */
static void test_json_metered(void **state)
{
  struct spaa_budget *b;
  struct spaa_budget_work w;
  json_t *a;
  size_t held;
  int i;
  (void)state;
  assert_int_equal(spaa_budget_new(64 * MIB, NULL, &b), 0);
  assert_int_equal(spaa_budget_work_begin(&w, b, 0, MIB, 0), 0);
  a = json_array();
  for (i = 0; i < 1000; i++)
    assert_int_equal(json_array_append_new(a, json_string("a string of some length")), 0);
  held = w.meter.held;
  assert_true(held > 1000 * 24);
  json_decref(a);
  assert_true(w.meter.held < held / 10);
  spaa_budget_work_end(&w);
  a = json_string("not metered");
  held = w.meter.held;
  json_decref(a);
  assert_int_equal(w.meter.held, held);
  spaa_budget_work_give(&w);
  assert_true(empty(b));
  spaa_budget_free(b);
}

/* Past what one request may hold (the budget, or SPAA_BUDGET_MIN_CEILING when larger): a
 * conversion is refused TOO_LARGE (413), a read OVER_BUDGET (422); JSON values fail from
 * then on; nothing stays charged. */
static void test_ceiling(void **state)
{
  struct spaa_budget *b;
  struct spaa_budget_work w;
  json_t *a;
  int read;
  (void)state;
  for (read = 0; read < 2; read++) {
    assert_int_equal(spaa_budget_new(SPAA_BUDGET_MIN_CEILING * 2, NULL, &b), 0);
    assert_int_equal(spaa_budget_work_begin(&w, b, 0, MIB, 0), 0);
    w.read = read;
    assert_int_equal(spaa_meter_add(&w.meter, 100 * MIB), 0);
    assert_int_equal(spaa_meter_add(&w.meter, SPAA_BUDGET_MIN_CEILING), -1);
    assert_int_equal(w.meter.refused, read ? SPAA_E_OVER_BUDGET : SPAA_E_TOO_LARGE);
    assert_non_null(strstr(w.meter.why.msg, "the most one request may hold"));
    assert_non_null(strstr(w.meter.why.msg, read ? "this request reads" : "of this request"));
    assert_int_equal(spaa_meter_add(&w.meter, 1), -1); /* refused for good */
    assert_null(json_object());
    spaa_budget_work_end(&w);
    a = json_object();
    assert_non_null(a);
    json_decref(a);
    spaa_budget_work_give(&w);
    assert_true(empty(b));
    spaa_budget_free(b);
  }
}

/* Others hold the budget: growth waits briefly, then BUSY (503, retry later). */
static void test_busy(void **state)
{
  struct spaa_budget *b;
  struct spaa_budget_work w;
  (void)state;
  assert_int_equal(spaa_budget_new(64 * MIB, NULL, &b), 0);
  assert_int_equal(spaa_budget_take(b, 60 * MIB, 0, 0), 0); /* a body */
  assert_int_equal(spaa_budget_work_begin(&w, b, 0, MIB, 0), 0);
  w.read = 1;
  assert_int_equal(spaa_meter_add(&w.meter, 2 * MIB), -1);
  assert_int_equal(w.meter.refused, SPAA_E_BUSY);
  assert_non_null(strstr(w.meter.why.msg, "held by others; retry later"));
  assert_non_null(strstr(w.meter.why.msg, "grew to 2 MiB"));
  spaa_budget_work_give(&w);
  spaa_budget_give(b, 60 * MIB, 0);
  assert_true(empty(b));
  /* the same growth with the body's bytes its own request's: admitted */
  assert_int_equal(spaa_budget_take(b, 60 * MIB, 0, 0), 0);
  assert_int_equal(spaa_budget_work_begin(&w, b, 60 * MIB, MIB, 0), 0);
  assert_int_equal(spaa_meter_add(&w.meter, 2 * MIB), 0);
  spaa_meter_sub(&w.meter, 2 * MIB);
  spaa_budget_work_give(&w);
  spaa_budget_give(b, 60 * MIB, 0);
  assert_true(empty(b));
  spaa_budget_free(b);
}

/* `head -c 8388608 /dev/zero | brotli -q 11 -c`: 14 bytes whose decoder takes megabytes */
static const uint8_t BR_BOMB[] = {0x9f, 0xff, 0xff, 0x7f, 0xf8, 0x27, 0x00,
                                  0xe2, 0xb1, 0x40, 0x20, 0xf7, 0xfe, 0x0f};

/* A body's decoder on the thread of a work is charged to it: its window grows the charge,
 * and when others hold the budget the decoder is refused with the budget's BUSY. */
static void test_decoder_metered(void **state)
{
  struct spaa_budget *b;
  struct spaa_budget_work w;
  struct spaa_buf out;
  struct spaa_err err;
  (void)state;
  assert_int_equal(spaa_budget_new(64 * MIB, NULL, &b), 0);
  assert_int_equal(spaa_budget_work_begin(&w, b, 0, 64 << 10, 0), 0);
  spaa_buf_init(&out, 0);
  assert_int_equal(spaa_decompress(SPAA_CODING_BR, BR_BOMB, sizeof(BR_BOMB), 8 * MIB, &out,
                                   &err), 0);
  assert_int_equal(out.len, 8 * MIB);
  spaa_buf_free(&out);
  assert_true(w.meter.peak >= MIB);
  assert_true(w.charged > MIB);
  assert_true(w.meter.held < (64 << 10)); /* the decoder gave it back */
  spaa_budget_work_give(&w);
  assert_true(empty(b));
  /* the budget held by others: the window is refused, BUSY */
  assert_int_equal(spaa_budget_take(b, 63 * MIB, 0, 0), 0);
  assert_int_equal(spaa_budget_work_begin(&w, b, 0, 64 << 10, 0), 0);
  spaa_buf_init(&out, 0);
  assert_int_equal(spaa_decompress(SPAA_CODING_BR, BR_BOMB, sizeof(BR_BOMB), 8 * MIB, &out,
                                   &err), SPAA_E_NOMEM);
  assert_int_equal(w.meter.refused, SPAA_E_BUSY);
  spaa_budget_work_give(&w);
  spaa_budget_give(b, 63 * MIB, 0);
  assert_true(empty(b));
  spaa_budget_free(b);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_take_give),  cmocka_unit_test(test_meter_grows),
      cmocka_unit_test(test_json_metered), cmocka_unit_test(test_ceiling),
      cmocka_unit_test(test_busy),       cmocka_unit_test(test_decoder_metered),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
