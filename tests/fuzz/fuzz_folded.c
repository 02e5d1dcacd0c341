/* libFuzzer target: the folded stacks converter (codecs/folded/folded.c) and the text sniff.
 * The first byte picks the options (folded or lines, a type from the name, the sample rate);
 * the rest is the body. All or nothing: on an error nothing is appended and the message and
 * line are set; a converted profile has one event and every stack's frames exist. Seeds:
 * tests/fuzz/corpus/folded/, dictionary tests/fuzz/folded.dict. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "folded/folded.h"
#include "pprof/pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {"app.cpu{env=x}", "app.alloc_space", "app.wall", "app"};
static const char *const rates[] = {"100", "0", "3", "1000000000"};

/* 1 when every frame id a stack references is a frame of p. */
static int frames_exist(const struct spaa_profile *p)
{
  size_t i, j, k;
  for (i = 0; i < p->n_stacks; i++)
    for (j = 0; j < p->stacks[i].n_frames; j++) {
      for (k = 0; k < p->n_frames && p->frames[k].id != p->stacks[i].frames[j]; k++)
        ;
      if (k == p->n_frames)
        return 0;
    }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spaa_convert_opts o = {.keep_original = 1};
  struct spaa_conv_list l = {0};
  struct spaa_pprof_opts po;
  struct spaa_folded_opts fo;
  struct spaa_err err;
  uint8_t pick = size ? data[0] : 0;
  int rc;
  (void)spaa_folded_is_text(data, size);
  if (size) {
    data++;
    size--;
  }
  memset(&po, 0, sizeof(po));
  spaa_err_clear(&err);
  spaa_folded_opts_init(&fo);
  fo.lines = pick & 1;
  if (spaa_folded_opts_sample_rate(&fo, rates[(pick >> 1) & 3], &err) ||
      spaa_pprof_opts_name(&po, names[(pick >> 3) & 3], &err))
    abort();
  o.pprof = &po;
  o.folded = &fo;
  rc = spaa_convert_folded(data, size, &o, &l, &err);
  if (rc && (l.n || !err.msg[0]))
    abort();
  if (rc == SPAA_E_INVALID && !err.line)
    abort(); /* a refused body names its line */
  if (!rc && (l.n != 1 || l.v[0].profile->header.n_events != 1 || !frames_exist(l.v[0].profile)))
    abort();
  spaa_conv_list_free(&l);
  spaa_pprof_opts_clear(&po);
  return 0;
}
