/* libFuzzer target: the SPAA reader and the validator on the same bytes (plain or zstd), the
 * two in one pass (spaa_read_checked) agreeing with them, and for what reads, normalize +
 * write + read again, which must succeed and write the same bytes. */
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
  struct spaa_profile *p = NULL, *q = NULL, *c = NULL;
  struct spaa_validate_stats st;
  struct spaa_err err, cerr;
  struct spaa_buf a, b;
  int vrc, rrc, crc;

  vrc = spaa_validate_buf(data, size, ignore_diag, NULL, 0, &st);
  if (vrc == 0 && st.errors)
    abort();
  rrc = spaa_read_buf(data, size, &p, &err);
  /* one pass: the validator's answer; where only the reader refused (a value its JSON cannot
   * hold, in a key the validator skips), refused too; else the reader's model */
  crc = spaa_read_checked_buf(data, size, ignore_diag, NULL, 1, NULL, &c, &cerr);
  if ((vrc && crc != vrc) || (!vrc && rrc && !crc) || (!vrc && !rrc && crc) ||
      (crc ? c != NULL || !cerr.msg[0] : c == NULL))
    abort();
  spaa_buf_init(&a, 64u << 20);
  spaa_buf_init(&b, 64u << 20);
  if (c) {
    int wa = spaa_write_buf(p, 0, &a, &cerr), wb = spaa_write_buf(c, 0, &b, &cerr);
    if (wa != wb || (!wa && (a.len != b.len || memcmp(a.p, b.p, a.len) != 0)))
      abort();
    a.len = b.len = 0;
  }
  spaa_profile_free(c);
  if (rrc) {
    if (p || !err.msg[0])
      abort();
    spaa_buf_free(&a);
    spaa_buf_free(&b);
    return 0;
  }
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
