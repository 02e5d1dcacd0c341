/* Memory carved from a chain of blocks and freed all at once: a profile's strings and frame
 * lists (spaa.c), an unpacked OTLP request's messages (otlp.c). No header per allocation, no
 * free of its own (but a large request's block may go back early: spaa_blocks_give). */
#ifndef SPAA_BASE_BLOCKS_H
#define SPAA_BASE_BLOCKS_H

#include <stddef.h>

struct spaa_block {
  struct spaa_block *next; /* older block */
  size_t used;             /* bytes used of data[] */
  size_t size;             /* bytes in data[] */
  int own;                 /* 1: made for one request over block / 4 (spaa_blocks_give) */
  _Alignas(16) unsigned char data[];
};

/* Where blocks come from: get(arg, n) gives n bytes or NULL, put(arg, p, n) takes back what
 * get gave. A NULL source is malloc and free. */
struct spaa_block_src {
  void *(*get)(void *arg, size_t n);
  void (*put)(void *arg, void *p, size_t n);
  void *arg;
};

/* size bytes (not zeroed) from the chain *head, at a multiple of align (a power of two, at
 * most 16). A full block is followed by a new one of `block` bytes; a request over block / 4
 * always gets a block of its own (so that it can be given back alone), linked behind the
 * current one so that the current one goes on filling. NULL when the size overflows or src
 * gives nothing. */
void *spaa_blocks_take(struct spaa_block **head, size_t size, size_t align, size_t block,
                       const struct spaa_block_src *src);

/* What spaa_blocks_take gave at p back at once, when it got a block of its own (a request
 * over block / 4): 1 when it did, 0 when p shares its block (it goes with the chain). For a
 * user whose large requests are scratch, e.g. a decoder's working arrays. */
int spaa_blocks_give(struct spaa_block **head, void *p, const struct spaa_block_src *src);

/* Every block of the chain given back; *head NULL after. */
void spaa_blocks_free(struct spaa_block **head, const struct spaa_block_src *src);

#endif
