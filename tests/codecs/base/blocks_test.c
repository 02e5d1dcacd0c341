/* codecs/base/blocks.c: carving, blocks of their own for large requests, giving one of those
 * back (spaa_blocks_give) while the shared blocks stay, through a counting source. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/blocks.h"

#define BLOCK 4096

struct counting {
  size_t live;  /* blocks out */
  size_t bytes; /* their bytes */
};

static void *get(void *arg, size_t n)
{
  struct counting *c = arg;
  c->live++;
  c->bytes += n;
  return malloc(n);
}

static void put(void *arg, void *p, size_t n)
{
  struct counting *c = arg;
  c->live--;
  c->bytes -= n;
  free(p);
}

/* Small requests share blocks, at their alignment; a request over a quarter block gets one of
 * its own, and the shared block it interrupted goes on filling. */
static void test_take(void **state)
{
  struct counting c = {0, 0};
  struct spaa_block_src src = {get, put, &c};
  struct spaa_block *head = NULL;
  unsigned char *a, *b, *big, *d;
  (void)state;
  a = spaa_blocks_take(&head, 3, 8, BLOCK, &src);
  b = spaa_blocks_take(&head, 5, 8, BLOCK, &src);
  assert_non_null(a);
  assert_ptr_equal(b, a + 8);
  assert_int_equal(c.live, 1);
  big = spaa_blocks_take(&head, BLOCK / 4 + 1, 8, BLOCK, &src);
  assert_non_null(big);
  assert_int_equal(c.live, 2);
  d = spaa_blocks_take(&head, 8, 8, BLOCK, &src);
  assert_ptr_equal(d, b + 8); /* the shared block goes on */
  assert_int_equal(((uintptr_t)spaa_blocks_take(&head, 1, 16, BLOCK, &src)) % 16, 0);
  assert_null(spaa_blocks_take(&head, SIZE_MAX - 2, 8, BLOCK, &src));
  spaa_blocks_free(&head, &src);
  assert_null(head);
  assert_int_equal(c.live, 0);
  assert_int_equal(c.bytes, 0);
}

/* A large request's block goes back alone, wherever it sits in the chain; a pointer into a
 * shared block, even its first, is not given back, nor one whose preceding bytes look like a
 * header of a block of its own. */
static void test_give(void **state)
{
  struct counting c = {0, 0};
  struct spaa_block_src src = {get, put, &c};
  struct spaa_block *head = NULL, fake;
  unsigned char *first, *big1, *big2, *p;
  size_t i, before;
  (void)state;
  first = spaa_blocks_take(&head, 16, 8, BLOCK, &src);
  big1 = spaa_blocks_take(&head, BLOCK, 8, BLOCK, &src);
  for (i = 0; i < 8; i++) /* more shared blocks after it: big1 sits deep in the chain */
    assert_non_null(spaa_blocks_take(&head, BLOCK / 4, 8, BLOCK, &src));
  big2 = spaa_blocks_take(&head, 3 * BLOCK, 8, BLOCK, &src);
  memset(big1, 0xab, BLOCK);
  memset(big2, 0xcd, 3 * BLOCK);
  before = c.live;

  assert_int_equal(spaa_blocks_give(&head, first, &src), 0);
  assert_int_equal(c.live, before);

  /* bytes shaped like a header of its own, then the pointer just after them */
  p = spaa_blocks_take(&head, sizeof(fake) + 64, 16, BLOCK, &src);
  memset(&fake, 0, sizeof(fake));
  fake.own = 1;
  fake.used = fake.size = 64;
  memcpy(p, &fake, offsetof(struct spaa_block, data));
  assert_int_equal(spaa_blocks_give(&head, p + offsetof(struct spaa_block, data), &src), 0);
  assert_int_equal(c.live, before);

  assert_int_equal(spaa_blocks_give(&head, big1 + 16, &src), 0); /* inside: never */
  assert_int_equal(c.live, before);
  assert_int_equal(spaa_blocks_give(&head, big1, &src), 1);
  assert_int_equal(c.live, before - 1);
  assert_int_equal(spaa_blocks_give(&head, big2, &src), 1);
  assert_int_equal(c.live, before - 2);
  memset(first, 1, 16); /* the shared blocks are still there (ASan would say otherwise) */
  spaa_blocks_free(&head, &src);
  assert_int_equal(c.live, 0);
  assert_int_equal(c.bytes, 0);
}

/* A chain that is one block of its own: giving it back empties the chain. */
static void test_give_only(void **state)
{
  struct spaa_block *head = NULL;
  void *big;
  (void)state;
  big = spaa_blocks_take(&head, BLOCK, 8, BLOCK, NULL);
  assert_non_null(big);
  assert_int_equal(spaa_blocks_give(&head, big, NULL), 1);
  assert_null(head);
  assert_non_null(spaa_blocks_take(&head, 8, 8, BLOCK, NULL));
  spaa_blocks_free(&head, NULL);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_take),
    cmocka_unit_test(test_give),
    cmocka_unit_test(test_give_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
