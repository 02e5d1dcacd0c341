/* Block chains (see blocks.h). */
#include "base/blocks.h"

#include <stdint.h>
#include <stdlib.h>

void *spaa_blocks_take(struct spaa_block **head, size_t size, size_t align, size_t block,
                       const struct spaa_block_src *src)
{
  struct spaa_block *b = *head;
  size_t need = (size + align - 1) & ~(align - 1);
  void *r;
  if (need < size)
    return NULL;
  if (!b || b->size - b->used < need) {
    size_t bs = need > block / 4 ? need : block;
    if (bs > SIZE_MAX - sizeof(*b))
      return NULL;
    b = src ? src->get(src->arg, sizeof(*b) + bs) : malloc(sizeof(*b) + bs);
    if (!b)
      return NULL;
    b->size = bs;
    b->used = 0;
    if (need > block / 4 && *head) {
      b->next = (*head)->next;
      (*head)->next = b;
    } else {
      b->next = *head;
      *head = b;
    }
  }
  r = b->data + b->used;
  b->used += need;
  return r;
}

void spaa_blocks_free(struct spaa_block **head, const struct spaa_block_src *src)
{
  struct spaa_block *b = *head, *next;
  for (; b; b = next) {
    next = b->next;
    if (src)
      src->put(src->arg, b, sizeof(*b) + b->size);
    else
      free(b);
  }
  *head = NULL;
}
