/* Normalization tests: content ids replace local ids everywhere they are used, stacks with the
 * same content merge (weights summed), records sort into the canonical order, and failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "spaa/spaa_io.h"

#define HEADER                                                                                \
  "{\"type\":\"header\",\"format\":\"spaa\",\"version\":\"1.0\",\"frame_order\":"            \
  "\"leaf_to_root\",\"stack_id_mode\":\"local\",\"events\":["                                 \
  "{\"name\":\"cycles\",\"kind\":\"hardware\",\"sampling\":{\"mode\":\"period\","             \
  "\"primary_metric\":\"period\"}},"                                                         \
  "{\"name\":\"malloc\",\"kind\":\"allocation\",\"sampling\":{\"mode\":\"event\","            \
  "\"primary_metric\":\"alloc_bytes\"}}]}\n"

static const char input[] =
    HEADER
    "{\"type\":\"dso\",\"id\":9,\"name\":\"b.so\"}\n"
    "{\"type\":\"dso\",\"id\":4,\"name\":\"a.so\"}\n"
    "{\"type\":\"frame\",\"id\":30,\"func\":\"c\",\"dso\":9}\n"
    "{\"type\":\"frame\",\"id\":10,\"func\":\"a\",\"dso\":4}\n"
    "{\"type\":\"frame\",\"id\":20,\"func\":\"b\",\"dso\":4}\n"
    /* a twin of frame 10 under another id: same content, same content id */
    "{\"type\":\"frame\",\"id\":11,\"func\":\"a\",\"dso\":4}\n"
    "{\"type\":\"thread\",\"pid\":1,\"tid\":300}\n"
    "{\"type\":\"thread\",\"pid\":1,\"tid\":100}\n"
    /* malloc stack first in the file: sorts after the cycles stacks */
    "{\"type\":\"stack\",\"id\":\"m\",\"frames\":[10,20],\"context\":{\"event\":\"malloc\"},"
    "\"weights\":[{\"metric\":\"alloc_bytes\",\"value\":64}]}\n"
    "{\"type\":\"stack\",\"id\":\"light\",\"frames\":[30],\"context\":{\"event\":\"cycles\"},"
    "\"weights\":[{\"metric\":\"period\",\"value\":5}]}\n"
    "{\"type\":\"stack\",\"id\":\"s1\",\"frames\":[10,20],\"context\":{\"event\":\"cycles\"},"
    "\"weights\":[{\"metric\":\"period\",\"value\":7},{\"metric\":\"samples\",\"value\":1}],"
    "\"related_stacks\":[\"light\"]}\n"
    /* the same stack through the twin frame: merges into s1 */
    "{\"type\":\"stack\",\"id\":\"s2\",\"frames\":[11,20],\"context\":{\"event\":\"cycles\"},"
    "\"weights\":[{\"metric\":\"period\",\"value\":3},{\"metric\":\"cpu_ns\",\"value\":2.5}],"
    "\"exclusive\":{\"frame\":11,\"weights\":[{\"metric\":\"period\",\"value\":3}]}}\n"
    "{\"type\":\"sample\",\"stack_id\":\"s2\"}\n"
    "{\"type\":\"sample\",\"stack_id\":\"nowhere\"}\n"
    "{\"type\":\"window\",\"id\":\"w\",\"start\":0,\"end\":1,\"by_stack\":[{\"stack_id\":\"s1\"},"
    "{\"stack_id\":\"light\"}]}\n";

static void test_merge_and_order(void **state)
{
  struct spaa_profile *p = NULL;
  struct spaa_err err;
  const struct spaa_stack *s;
  const struct spaa_weight *w;
  (void)state;
  assert_int_equal(spaa_read_buf(input, strlen(input), &p, &err), 0);
  assert_int_equal(spaa_normalize(p, &err), 0);
  /* dictionaries by id, threads by tid */
  assert_int_equal(p->dsos[0].id, 4);
  assert_int_equal(p->dsos[1].id, 9);
  assert_int_equal(p->frames[0].id, 10);
  assert_int_equal(p->frames[1].id, 11);
  assert_int_equal(p->frames[3].id, 30);
  assert_int_equal(p->threads[0].tid, 100);
  /* s1 and s2 merged: 3 stacks left */
  assert_int_equal(p->n_stacks, 3);
  /* cycles (first event) before malloc; heaviest first within an event */
  s = &p->stacks[0];
  assert_string_equal(s->event, "cycles");
  w = spaa_weights_find(&s->weights, "period");
  assert_non_null(w);
  assert_int_equal(w->value.i, 10);
  assert_int_equal(spaa_weights_find(&s->weights, "samples")->value.i, 1);
  assert_true(spaa_weights_find(&s->weights, "cpu_ns")->value.f == 2.5);
  assert_true(s->has_exclusive); /* taken from the twin */
  assert_int_equal(s->excl_frame, 11);
  assert_string_equal(p->stacks[1].event, "cycles");
  assert_int_equal(spaa_weights_find(&p->stacks[1].weights, "period")->value.i, 5);
  assert_string_equal(p->stacks[2].event, "malloc");
  /* references follow the new ids */
  assert_string_equal(p->samples[0].stack_id, s->id);
  assert_string_equal(p->samples[1].stack_id, "nowhere");
  assert_int_equal(s->n_related, 1);
  assert_string_equal(s->related[0], p->stacks[1].id);
  assert_string_equal(json_string_value(json_object_get(json_array_get(p->windows[0].by_stack, 0),
                                                        "stack_id")),
                      s->id);
  assert_string_equal(json_string_value(json_object_get(json_array_get(p->windows[0].by_stack, 1),
                                                        "stack_id")),
                      p->stacks[1].id);
  /* the malloc stack has the same frames as s1 but another event: another id */
  assert_string_not_equal(p->stacks[2].id, s->id);
  assert_int_equal(p->header.id_mode, SPAA_IDS_CONTENT);
  spaa_profile_free(p);
}

/* Compact samples name their stacks by position: normalization moves them with their stacks,
 * a merged-away stack's to the one it went into; a position that names no stack names none
 * after. Read back, each carries the content id of its stack. */
static void test_compact_samples_follow_stacks(void **state)
{
  static const uint32_t named[] = {0, 1, 2, 3, SPAA_CS_NO_STACK, 99}; /* m, light, s1, s2 */
  struct spaa_profile *p = NULL;
  struct spaa_err err;
  struct spaa_sample_buf sb;
  size_t i;
  (void)state;
  assert_int_equal(spaa_read_buf(input, strlen(input), &p, &err), 0);
  assert_string_equal(p->stacks[0].id, "m");
  assert_string_equal(p->stacks[3].id, "s2");
  p->cs.event = "cycles";
  for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
    struct spaa_csample *c = spaa_add_csample(p);
    assert_non_null(c);
    c->stack = named[i];
    c->flags = SPAA_CS_TIMESTAMP;
    c->timestamp = 1000 + (int64_t)i;
  }
  assert_string_equal(spaa_profile_sample(p, 2 + 3, &sb)->stack_id, "s2"); /* before */
  assert_int_equal(spaa_normalize(p, &err), 0);
  /* s1 and s2 merged into stacks[0], light at 1, the malloc stack m at 2 */
  assert_int_equal(p->n_stacks, 3);
  assert_int_equal(p->csamples[0].stack, 2);
  assert_int_equal(p->csamples[1].stack, 1);
  assert_int_equal(p->csamples[2].stack, 0);
  assert_int_equal(p->csamples[3].stack, 0);
  assert_int_equal(p->csamples[4].stack, SPAA_CS_NO_STACK);
  assert_int_equal(p->csamples[5].stack, SPAA_CS_NO_STACK);
  assert_string_equal(spaa_profile_sample(p, 2 + 0, &sb)->stack_id, p->stacks[2].id);
  assert_string_equal(spaa_profile_sample(p, 2 + 3, &sb)->stack_id, p->stacks[0].id);
  assert_int_equal(spaa_profile_sample(p, 2 + 3, &sb)->timestamp.i, 1003);
  assert_string_equal(spaa_profile_sample(p, 2 + 4, &sb)->stack_id, "");
  /* the records still follow their ids */
  assert_string_equal(p->samples[0].stack_id, p->stacks[0].id);
  spaa_profile_free(p);
}

/* Normalizing twice changes nothing; the written bytes do not depend on the input's order. */
static void test_idempotent_and_order_free(void **state)
{
  static const char shuffled[] =
      HEADER
      "{\"type\":\"dso\",\"id\":4,\"name\":\"a.so\"}\n"
      "{\"type\":\"dso\",\"id\":9,\"name\":\"b.so\"}\n"
      "{\"type\":\"frame\",\"id\":20,\"func\":\"b\",\"dso\":4}\n"
      "{\"type\":\"frame\",\"id\":11,\"func\":\"a\",\"dso\":4}\n"
      "{\"type\":\"frame\",\"id\":10,\"func\":\"a\",\"dso\":4}\n"
      "{\"type\":\"frame\",\"id\":30,\"func\":\"c\",\"dso\":9}\n"
      "{\"type\":\"thread\",\"pid\":1,\"tid\":100}\n"
      "{\"type\":\"thread\",\"pid\":1,\"tid\":300}\n"
      "{\"type\":\"stack\",\"id\":\"x2\",\"frames\":[11,20],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":3},{\"metric\":\"cpu_ns\",\"value\":2.5}],"
      "\"exclusive\":{\"frame\":11,\"weights\":[{\"metric\":\"period\",\"value\":3}]}}\n"
      "{\"type\":\"stack\",\"id\":\"x1\",\"frames\":[10,20],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":7},{\"metric\":\"samples\",\"value\":1}],"
      "\"related_stacks\":[\"x3\"]}\n"
      "{\"type\":\"stack\",\"id\":\"x3\",\"frames\":[30],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":5}]}\n"
      "{\"type\":\"stack\",\"id\":\"x4\",\"frames\":[10,20],\"context\":{\"event\":\"malloc\"},"
      "\"weights\":[{\"metric\":\"alloc_bytes\",\"value\":64}]}\n";
  struct spaa_profile *p = NULL, *q = NULL;
  struct spaa_err err;
  struct spaa_buf a, b, c;
  (void)state;
  spaa_buf_init(&a, 0);
  spaa_buf_init(&b, 0);
  spaa_buf_init(&c, 0);
  assert_int_equal(spaa_read_buf(input, strlen(input), &p, &err), 0);
  assert_int_equal(spaa_normalize(p, &err), 0);
  assert_int_equal(spaa_write_buf(p, 0, &a, &err), 0);
  assert_int_equal(spaa_normalize(p, &err), 0);
  assert_int_equal(spaa_write_buf(p, 0, &b, &err), 0);
  assert_int_equal(a.len, b.len);
  assert_memory_equal(a.p, b.p, a.len);
  /* the shuffled file has the same stacks (weights merged the other way round) */
  assert_int_equal(spaa_read_buf(shuffled, strlen(shuffled), &q, &err), 0);
  assert_int_equal(spaa_normalize(q, &err), 0);
  assert_int_equal(p->n_stacks, q->n_stacks);
  for (size_t i = 0; i < p->n_stacks; i++)
    assert_string_equal(p->stacks[i].id, q->stacks[i].id);
  spaa_buf_free(&a);
  spaa_buf_free(&b);
  spaa_buf_free(&c);
  spaa_profile_free(p);
  spaa_profile_free(q);
}

static void test_failures_and_overflow(void **state)
{
  static const char missing_frame[] =
      HEADER "{\"type\":\"dso\",\"id\":1,\"name\":\"a\"}\n"
      "{\"type\":\"stack\",\"id\":\"s\",\"frames\":[5],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[]}\n";
  static const char missing_dso[] = HEADER "{\"type\":\"frame\",\"id\":5,\"func\":\"f\",\"dso\":3}\n";
  static const char overflow[] =
      HEADER "{\"type\":\"frame\",\"id\":5,\"func\":\"f\"}\n"
      "{\"type\":\"stack\",\"id\":\"a\",\"frames\":[5],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":9223372036854775807}]}\n"
      "{\"type\":\"stack\",\"id\":\"b\",\"frames\":[5],\"context\":{\"event\":\"cycles\"},"
      "\"weights\":[{\"metric\":\"period\",\"value\":10}]}\n";
  struct spaa_profile *p = NULL;
  struct spaa_err err;
  (void)state;
  assert_int_equal(spaa_read_buf(missing_frame, strlen(missing_frame), &p, &err), 0);
  memset(&err, 0, sizeof(err));
  assert_int_equal(spaa_normalize(p, &err), SPAA_E_INVALID);
  assert_non_null(strstr(err.msg, "frame 5"));
  spaa_profile_free(p);
  assert_int_equal(spaa_read_buf(missing_dso, strlen(missing_dso), &p, &err), 0);
  assert_int_equal(spaa_normalize(p, &err), SPAA_E_INVALID);
  assert_non_null(strstr(err.msg, "dso 3"));
  spaa_profile_free(p);
  /* a sum past int64 becomes a double instead of wrapping */
  assert_int_equal(spaa_read_buf(overflow, strlen(overflow), &p, &err), 0);
  assert_int_equal(spaa_normalize(p, &err), 0);
  assert_int_equal(p->n_stacks, 1);
  assert_true(p->stacks[0].weights.v[0].value.is_float);
  assert_true(p->stacks[0].weights.v[0].value.f > 9.2e18);
  spaa_profile_free(p);
}

/* Many stacks in a scrambled order, a third of them twins of others (the same frames under
 * another local id), so that the stacks are put in order in place through long cycles with
 * merged-away stacks among them: every distinct stack is left once, with its twins' weights
 * summed, in the canonical order (event, then heaviest first), and none is lost or doubled. */
static void test_many_stacks_in_place(void **state)
{
  enum { N_FRAMES = 64, N_DISTINCT = 1500, N_STACKS = 2250 };
  struct spaa_buf in;
  struct spaa_profile *p = NULL;
  struct spaa_err err;
  int64_t want_total[2] = {0, 0}, got_total[2] = {0, 0}, prev = INT64_MAX;
  size_t i, k, distinct_seen = 0;
  unsigned rng = 12345;
  char *seen;
  (void)state;
  spaa_buf_init(&in, 0);
  assert_int_equal(spaa_buf_add(&in, HEADER, strlen(HEADER)), 0);
  for (i = 0; i < N_FRAMES; i++)
    assert_int_equal(spaa_buf_addf(&in, "{\"type\":\"frame\",\"id\":%zu,\"func\":\"f%zu\"}\n",
                                     i + 1, i), 0);
  for (i = 0; i < N_STACKS; i++) {
    /* stack i has the frames of distinct stack d: d's index in base N_FRAMES, two digits;
     * the event alternates with d; the weight is scrambled */
    size_t d = i < N_DISTINCT ? (i * 7919) % N_DISTINCT : (i * 104729) % N_DISTINCT;
    int ev = (int)(d % 2);
    int64_t w;
    rng = rng * 1103515245u + 12345u;
    w = 1 + (int64_t)((rng >> 8) % 100000);
    want_total[ev] += w;
    assert_int_equal(spaa_buf_addf(&in, "{\"type\":\"stack\",\"id\":\"s%zu\",\"frames\":[%zu,%zu,%zu],"
                                     "\"context\":{\"event\":\"%s\"},\"weights\":[{\"metric\":"
                                     "\"%s\",\"value\":%lld}]}\n",
                                     i, d % N_FRAMES + 1, d / N_FRAMES % N_FRAMES + 1,
                                     d / (N_FRAMES * N_FRAMES) + 1, ev ? "malloc" : "cycles",
                                     ev ? "alloc_bytes" : "period", (long long)w), 0);
  }
  assert_int_equal(spaa_read_buf(in.p, in.len, &p, &err), 0);
  assert_int_equal(spaa_normalize(p, &err), 0);
  assert_int_equal(p->n_stacks, N_DISTINCT);
  seen = calloc(N_DISTINCT, 1);
  assert_non_null(seen);
  for (i = 0; i < p->n_stacks; i++) {
    const struct spaa_stack *s = &p->stacks[i];
    int ev = strcmp(s->event, "malloc") == 0;
    const struct spaa_weight *w = spaa_weights_find(&s->weights, ev ? "alloc_bytes" : "period");
    size_t d;
    assert_non_null(w);
    assert_int_equal(s->n_frames, 3);
    /* frames back to the distinct stack's number: each is met once */
    for (d = 0, k = s->n_frames; k-- > 0;) {
      size_t f;
      for (f = 0; f < p->n_frames && p->frames[f].id != s->frames[k]; f++)
        ;
      assert_true(f < p->n_frames);
      d = d * N_FRAMES + (size_t)atoi(p->frames[f].func + 1);
    }
    assert_true(d < N_DISTINCT);
    assert_int_equal(seen[d], 0);
    seen[d] = 1;
    distinct_seen++;
    got_total[ev] += w->value.i;
    /* cycles (the first event) before malloc, heaviest first within each */
    if (i > 0 && strcmp(p->stacks[i - 1].event, s->event) != 0) {
      assert_string_equal(p->stacks[i - 1].event, "cycles");
      prev = INT64_MAX;
    }
    assert_true(w->value.i <= prev);
    prev = w->value.i;
  }
  assert_int_equal(distinct_seen, N_DISTINCT);
  assert_int_equal(got_total[0], want_total[0]);
  assert_int_equal(got_total[1], want_total[1]);
  free(seen);
  spaa_buf_free(&in);
  spaa_profile_free(p);
}

/* A converter may give a stack one weight array for its weights and its exclusive weights:
 * merging twins sums each once (12 and 12), the array is not added into twice. */
static void test_merge_shared_exclusive(void **state)
{
  static const char text[] =
    HEADER "{\"type\":\"frame\",\"id\":1,\"func\":\"a\"}\n"
           "{\"type\":\"stack\",\"id\":\"s1\",\"frames\":[1],\"context\":{\"event\":\"cycles\"},"
           "\"weights\":[{\"metric\":\"period\",\"value\":5}]}\n"
           "{\"type\":\"stack\",\"id\":\"s2\",\"frames\":[1],\"context\":{\"event\":\"cycles\"},"
           "\"weights\":[{\"metric\":\"period\",\"value\":7}]}\n";
  struct spaa_profile *p = NULL;
  struct spaa_err err;
  size_t i;
  (void)state;
  assert_int_equal(spaa_read_buf((const uint8_t *)text, strlen(text), &p, &err), 0);
  assert_int_equal(p->n_stacks, 2);
  for (i = 0; i < 2; i++) {
    p->stacks[i].has_exclusive = 1;
    p->stacks[i].excl_frame = p->stacks[i].frames[0];
    p->stacks[i].excl_weights = p->stacks[i].weights;
  }
  assert_int_equal(spaa_normalize(p, &err), 0);
  assert_int_equal(p->n_stacks, 1);
  assert_int_equal(p->stacks[0].weights.n, 1);
  assert_int_equal(p->stacks[0].excl_weights.n, 1);
  assert_int_equal(p->stacks[0].weights.v[0].value.i, 12);
  assert_int_equal(p->stacks[0].excl_weights.v[0].value.i, 12);
  spaa_profile_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_merge_and_order),
      cmocka_unit_test(test_compact_samples_follow_stacks),
      cmocka_unit_test(test_merge_shared_exclusive),
      cmocka_unit_test(test_idempotent_and_order_free),
      cmocka_unit_test(test_failures_and_overflow),
      cmocka_unit_test(test_many_stacks_in_place),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
