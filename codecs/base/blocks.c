/* Block chains (see blocks.h). */
#include "base/blocks.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *spaa_blocks_take(struct spaa_block **head, size_t size, size_t align, size_t block,
                       const struct spaa_block_src *src)
{
  struct spaa_block *b = *head;
  size_t need = (size + align - 1) & ~(align - 1), at = 0;
  int own = need > block / 4;
  if (need < size)
    return NULL;
  if (b && !own) {
    at = (b->used + align - 1) & ~(align - 1);
    if (at > b->size || b->size - at < need)
      b = NULL;
  }
  if (!b || own) {
    size_t bs = own ? need : block;
    if (bs > SIZE_MAX - sizeof(*b))
      return NULL;
    b = src ? src->get(src->arg, sizeof(*b) + bs) : malloc(sizeof(*b) + bs);
    if (!b)
      return NULL;
    b->size = bs;
    b->used = at = 0;
    b->own = own;
    if (own && *head) { /* behind the current block, which goes on filling */
      b->next = (*head)->next;
      (*head)->next = b;
    } else {
      b->next = *head;
      *head = b;
    }
  }
  b->used = at + need;
  return b->data + at;
}

int spaa_blocks_give(struct spaa_block **head, void *p, const struct spaa_block_src *src)
{
  /* where p's header would be if p began a block: in some block's memory whatever p is (a
   * block's header, or the bytes before p in its block), so a cheap look before the walk,
   * which alone decides (the bytes before a shared p may be anything) */
  struct spaa_block h;
  struct spaa_block **at;
  memcpy(&h, (unsigned char *)p - offsetof(struct spaa_block, data),
         offsetof(struct spaa_block, data)); /* p may be only 8-aligned */
  if (h.own != 1 || h.used != h.size)
    return 0;
  for (at = head; *at; at = &(*at)->next) {
    struct spaa_block *b = *at;
    if (b->own && (void *)b->data == p) {
      *at = b->next;
      if (src)
        src->put(src->arg, b, sizeof(*b) + b->size);
      else
        free(b);
      return 1;
    }
  }
  return 0;
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
