/* libFuzzer target: the SPAA reader and the validator on the same bytes (plain or zstd), and
 * for what reads, normalize + write + read again, which must succeed and write the same bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spaa/spaa_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ignore_diag(void *ctx, const struct spaa_diag *d)
{
  /* every diagnostic must be a complete one */
  if (!d->rule || !d->rule[0] || !d->field || !d->msg)
    abort();
  (void)ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct spaa_profile *p = NULL, *q = NULL;
  struct spaa_validate_stats st;
  struct spaa_err err;
  struct spaa_buf a, b;
  int vrc, rrc;

  vrc = spaa_validate_buf(data, size, ignore_diag, NULL, 0, &st);
  if (vrc == 0 && st.errors)
    abort();
  rrc = spaa_read_buf(data, size, &p, &err);
  if (rrc) {
    if (p || !err.msg[0])
      abort();
    return 0;
  }
  spaa_buf_init(&a, 64u << 20);
  spaa_buf_init(&b, 64u << 20);
  /* whatever the reader accepts, the writer writes and the reader reads back identically */
  if (spaa_write_buf(p, 0, &a, &err) == 0) {
    if (spaa_read_buf(a.p, a.len, &q, &err) != 0)
      abort();
    if (spaa_write_buf(q, 0, &b, &err) != 0 || a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
      abort();
  }
  spaa_profile_free(q);
  /* normalization may refuse a profile (a stack naming a missing frame), never crash */
  if (spaa_normalize(p, &err) == 0) {
    b.len = 0;
    (void)spaa_write_buf(p, 1, &b, &err);
  }
  spaa_buf_free(&a);
  spaa_buf_free(&b);
  spaa_profile_free(p);
  return 0;
}
