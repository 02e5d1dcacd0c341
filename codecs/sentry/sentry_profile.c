/* Sentry profile decoders: Sample Format V1 (profile items) and V2 (profile chunks), with
 * Relay's required fields, normalization and rejection reasons, in Relay's order. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "base/hex.h"
#include "base/limits.h"
#include "base/rfc3339.h"
#include "sentry/sentry_int.h"

static const struct {
  const char *name;
  int code;
} reasons[] = {
    {"", 0},
#define SENTRY__R(id, name, code) {name, SPAA_E_##code},
    SENTRY__REASONS(SENTRY__R)
#undef SENTRY__R
};

const char *sentry__reason_name(int reason)
{
  return reason > 0 && (size_t)reason < sizeof(reasons) / sizeof(reasons[0]) ? reasons[reason].name
                                                                            : "internal";
}

_Static_assert(sizeof(reasons) / sizeof(reasons[0]) == SENTRY_N_REASONS + 1,
               "SENTRY_N_REASONS must match the reason list");

const char *sentry_reason_at(size_t i)
{
  return i < SENTRY_N_REASONS ? reasons[i + 1].name : NULL;
}

int sentry__reason_code(int reason)
{
  return reason > 0 && (size_t)reason < sizeof(reasons) / sizeof(reasons[0]) ? reasons[reason].code
                                                                            : SPAA_E_INTERNAL;
}

int sentry__rej(struct sentry__profile *p, int reason, const char *fmt, ...)
{
  va_list ap;
  char msg[sizeof(p->err.msg)];
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  p->reason = reason;
  spaa_err_set(&p->err, sentry__reason_code(reason), 0, 0, "%s", msg);
  return reason;
}

#define BAD(p, ...) sentry__rej(p, SENTRY__R_INVALID_JSON, __VA_ARGS__)

/* ---- small parsers -------------------------------------------------------------------- */

int sentry__secs_to_ns(double d, int64_t *out)
{
  char buf[48], *e;
  uint64_t mant = 0;
  int prec, ndig = 0, exp10, shift, neg = d < 0, i;
  if (!isfinite(d) || fabs(d) > 9.2e9)
    return -1;
  for (prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof(buf), "%.*e", prec - 1, d);
    if (strtod(buf, NULL) == d)
      break;
  }
  /* buf: [-]D.DDDDe[+-]XX */
  for (e = buf + neg; *e && *e != 'e'; e++)
    if (*e >= '0' && *e <= '9') {
      mant = mant * 10 + (uint64_t)(*e - '0');
      ndig++;
    }
  if (*e != 'e')
    return -1;
  exp10 = atoi(e + 1);
  shift = exp10 + 9 - (ndig - 1);
  if (shift >= 0) {
    for (i = 0; i < shift; i++) {
      if (mant > UINT64_MAX / 10)
        return -1;
      mant *= 10;
    }
  } else {
    uint64_t div = 1, rem;
    if (shift < -19) {
      mant = 0;
    } else {
      for (i = 0; i < -shift; i++)
        div *= 10;
      rem = mant % div;
      mant /= div;
      if (rem * 2 >= div)
        mant++;
    }
  }
  if (mant > (uint64_t)INT64_MAX)
    return -1;
  *out = neg ? -(int64_t)mant : (int64_t)mant;
  return 0;
}

int sentry__parse_u64_str(const char *s, size_t n, uint64_t *out)
{
  uint64_t v = 0;
  size_t i;
  if (n == 0 || n > 20u)
    return -1;
  for (i = 0; i < n; i++) {
    int d = (unsigned char)s[i] - '0';
    if (d < 0 || d > 9)
      return -1;
    if (v > (UINT64_MAX - (uint64_t)d) / 10u)
      return -1;
    v = v * 10u + (uint64_t)d;
  }
  *out = v;
  return 0;
}

int sentry__parse_addr_str(const char *s, size_t n, uint64_t *out)
{
  if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    return spaa_hex_parse_u64(s + 2, n - 2, out);
  return sentry__parse_u64_str(s, n, out);
}

int sentry__parse_addr(const json_t *v, uint64_t *out)
{
  if (json_is_integer(v)) {
    if (json_integer_value(v) < 0)
      return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
  }
  if (json_is_string(v))
    return sentry__parse_addr_str(json_string_value(v), json_string_length(v), out);
  return -1;
}

/* A u64 given as a JSON integer or a decimal string (Relay's number-from-string). */
static int num_or_str(const json_t *v, uint64_t *out)
{
  if (json_is_integer(v)) {
    if (json_integer_value(v) < 0)
      return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
  }
  if (json_is_string(v))
    return sentry__parse_u64_str(json_string_value(v), json_string_length(v), out);
  return -1;
}

/* ---- schema checks (invalid_json) ----------------------------------------------------- */

/* Optional string member: absent and null are fine; another type is an error. */
static int opt_str(struct sentry__profile *p, const json_t *o, const char *k, const char *path)
{
  const json_t *v = json_object_get(o, k);
  if (v && !json_is_null(v) && !json_is_string(v))
    return BAD(p, "%s%s: invalid type, expected a string", path, k);
  return 0;
}

static int req_str(struct sentry__profile *p, const json_t *o, const char *k, const char *path)
{
  const json_t *v = json_object_get(o, k);
  if (!v)
    return BAD(p, "%s: missing field `%s`", path[0] ? path : ".", k);
  if (!json_is_string(v))
    return BAD(p, "%s%s: invalid type, expected a string", path, k);
  return 0;
}

static int opt_type(struct sentry__profile *p, const json_t *o, const char *k, const char *path,
                    json_type t, const char *tname)
{
  const json_t *v = json_object_get(o, k);
  if (v && !json_is_null(v) && json_typeof(v) != t)
    return BAD(p, "%s%s: invalid type, expected %s", path, k, tname);
  return 0;
}

static int opt_u32(struct sentry__profile *p, const json_t *o, const char *k, const char *path)
{
  const json_t *v = json_object_get(o, k);
  if (v && !json_is_null(v) &&
      (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > UINT32_MAX))
    return BAD(p, "%s%s: invalid value, expected a u32", path, k);
  return 0;
}

static int opt_bool(struct sentry__profile *p, const json_t *o, const char *k, const char *path)
{
  const json_t *v = json_object_get(o, k);
  if (v && !json_is_null(v) && !json_is_boolean(v))
    return BAD(p, "%s%s: invalid type, expected a boolean", path, k);
  return 0;
}

static int req_uuid(struct sentry__profile *p, const json_t *o, const char *k, const char *path,
                    char out[33])
{
  const json_t *v = json_object_get(o, k);
  if (!v)
    return BAD(p, "%s: missing field `%s`", path[0] ? path : ".", k);
  if (!json_is_string(v) || sentry_uuid_normalize(json_string_value(v), json_string_length(v), out))
    return BAD(p, "%s%s: invalid value, expected a UUID", path, k);
  return 0;
}

static int is_nil(const char id[33]) { return strcmp(id, "00000000000000000000000000000000") == 0; }

static int check_thread_meta(struct sentry__profile *p, const json_t *tm)
{
  const char *k;
  json_t *v;
  char path[96];
  int rc;
  if (!tm || json_is_null(tm))
    return 0;
  if (!json_is_object(tm))
    return BAD(p, "profile.thread_metadata: invalid type, expected a map");
  json_object_foreach((json_t *)tm, k, v) {
    if (!json_is_object(v))
      return BAD(p, "profile.thread_metadata.%.40s: invalid type, expected an object", k);
    snprintf(path, sizeof(path), "profile.thread_metadata.%.40s.", k);
    if ((rc = opt_str(p, v, "name", path)) || (rc = opt_u32(p, v, "priority", path)))
      return rc;
  }
  return 0;
}

/* The part V1 and V2 share: the `profile` object (its maps in the slim root, its arrays
 * read in place), its `samples` array, frames and stacks, and thread metadata. */
static int profile_body(struct sentry__profile *p, const json_t *root, const json_t **prof)
{
  int rc;
  if (!(*prof = json_object_get(root, "profile")))
    return BAD(p, ".: missing field `profile`");
  if (!json_is_object(*prof))
    return BAD(p, "profile: invalid type, expected an object");
  if (!p->samples_v.v.p)
    return BAD(p, "profile: missing field `samples`");
  if (sentry__kind(p->samples_v.v) != SENTRY__J_ARR)
    return BAD(p, "profile.samples: invalid type, expected a sequence");
  if ((rc = sentry__load_frames_stacks(p)) ||
      (rc = check_thread_meta(p, json_object_get(*prof, "thread_metadata"))))
    return rc;
  return 0;
}

static int check_debug_meta(struct sentry__profile *p, const json_t *root)
{
  const json_t *dm = json_object_get(root, "debug_meta"), *im;
  size_t i;
  if (!dm || json_is_null(dm))
    return 0;
  if (!json_is_object(dm))
    return BAD(p, "debug_meta: invalid type, expected an object");
  im = json_object_get(dm, "images");
  if (im && !json_is_null(im)) {
    if (!json_is_array(im))
      return BAD(p, "debug_meta.images: invalid type, expected a sequence");
    for (i = 0; i < json_array_size(im); i++)
      if (!json_is_object(json_array_get(im, i)))
        return BAD(p, "debug_meta.images[%zu]: invalid type, expected an object", i);
  }
  return 0;
}

/* ---- threads -------------------------------------------------------------------------- */

static void attach_thread_meta(struct sentry__profile *p, const json_t *tm)
{
  const char *k;
  json_t *v;
  size_t idx;
  if (!json_is_object(tm))
    return;
  json_object_foreach((json_t *)tm, k, v) {
    size_t kl = strlen(k);
    if (p->version == 2) {
      if (spaa_strmap_get(&p->tstr_map, k, kl, &idx))
        p->threads[idx].meta = v;
    } else {
      uint64_t id;
      /* Relay compares the key with the thread id written in decimal */
      if (!sentry__parse_u64_str(k, kl, &id) && (kl == 1 || k[0] != '0') &&
          spaa_idmap_get(&p->tid_map, id, &idx))
        p->threads[idx].meta = v;
    }
  }
}

/* ---- normalization -------------------------------------------------------------------- */

static int stack_busy(const struct sentry__profile *p, uint64_t s)
{
  return s < p->n_stacks && p->stack_off[s + 1] > p->stack_off[s];
}

/* Keep the samples for which keep[i] is set. */
static void compact(struct sentry__profile *p, const unsigned char *keep)
{
  size_t i, o = 0;
  for (i = 0; i < p->n_samples; i++)
    if (keep[i])
      p->samples[o++] = p->samples[i];
  p->n_samples = o;
}

/* Drop the samples of threads with at most one (V2: non-idle) sample; name one in detail. */
static void drop_single_threads(struct sentry__profile *p, unsigned char *keep, char *detail,
                                size_t dcap)
{
  size_t i;
  for (i = 0; i < p->n_threads; i++)
    p->threads[i].n = 0;
  for (i = 0; i < p->n_samples; i++)
    if (p->version == 1 || stack_busy(p, p->samples[i].stack))
      p->threads[p->samples[i].thread].n++;
  for (i = 0; i < p->n_samples; i++) {
    const struct sentry__thread *t = &p->threads[p->samples[i].thread];
    keep[i] = t->n > 1;
    if (!keep[i] && !detail[0]) {
      if (t->id_str)
        snprintf(detail, dcap, "thread %.64s has %zu %ssample%s", t->id_str, t->n,
                 p->version == 2 ? "non-idle " : "", t->n == 1 ? "" : "s");
      else
        snprintf(detail, dcap, "thread %" PRIu64 " has %zu sample%s", t->id_u64, t->n,
                 t->n == 1 ? "" : "s");
    }
  }
  compact(p, keep);
}

static int check_refs(struct sentry__profile *p)
{
  size_t i, j;
  for (i = 0; i < p->n_samples; i++)
    if (p->samples[i].stack >= p->n_stacks)
      return sentry__rej(p, SENTRY__R_MALFORMED_SAMPLES,
                 "sample %zu references stack %" PRIu64 ", but there are %zu stacks",
                 p->samples[i].index, p->samples[i].stack, p->n_stacks);
  for (i = 0; i < p->n_stacks; i++)
    for (j = p->stack_off[i]; j < p->stack_off[i + 1]; j++)
      if (p->stack_frames[j] >= p->n_frames)
        return sentry__rej(p, SENTRY__R_MALFORMED_STACKS,
                   "stack %zu references frame %" PRIu64 ", but there are %zu frames", i,
                   p->stack_frames[j], p->n_frames);
  return 0;
}

static void strip_pac(struct sentry__profile *p)
{
  size_t i;
  for (i = 0; i < p->n_frames; i++)
    p->addr[i] &= 0xFFFFFFFFFull;
}

static int v1_normalize(struct sentry__profile *p, uint64_t win_start, uint64_t win_end,
                        const char *arch)
{
  unsigned char *keep;
  char detail[160] = "";
  size_t i, before = p->n_samples;
  if (!(keep = malloc(p->n_samples + 1)))
    return SPAA_E_NOMEM;
  /* 1. the transaction's relative window (when it has one) */
  if (win_end > 0) {
    for (i = 0; i < p->n_samples; i++)
      keep[i] = p->samples[i].elapsed >= win_start && p->samples[i].elapsed <= win_end;
    compact(p, keep);
    if (p->n_samples < before)
      snprintf(detail, sizeof(detail), "%zu of %zu samples are outside the transaction's window"
               " %" PRIu64 "..%" PRIu64 " ns", before - p->n_samples, before, win_start, win_end);
  }
  /* 2. idle samples before the first and after the last busy one, per thread */
  for (i = 0; i < p->n_threads; i++)
    p->threads[i].n_busy = 0;
  for (i = 0; i < p->n_samples; i++) {
    struct sentry__thread *t = &p->threads[p->samples[i].thread];
    if (!stack_busy(p, p->samples[i].stack))
      continue;
    if (!t->n_busy++)
      t->first = i;
    t->last = i;
  }
  for (i = 0; i < p->n_samples; i++) {
    const struct sentry__thread *t = &p->threads[p->samples[i].thread];
    keep[i] = t->n_busy && i >= t->first && i <= t->last;
  }
  before = p->n_samples;
  compact(p, keep);
  if (p->n_samples < before && !detail[0])
    snprintf(detail, sizeof(detail), "%zu idle samples (empty stacks) at the edges dropped",
             before - p->n_samples);
  /* 3. threads with a single sample */
  drop_single_threads(p, keep, detail, sizeof(detail));
  free(keep);
  if (p->n_samples == 0)
    return sentry__rej(p, SENTRY__R_NOT_ENOUGH_SAMPLES, "no samples left after normalization%s%s",
               detail[0] ? ": " : "", detail);
  if (check_refs(p))
    return p->reason;
  if (p->samples[p->n_samples - 1].elapsed > SENTRY_MAX_V1_DURATION_NS)
    return sentry__rej(p, SENTRY__R_DURATION_TOO_LONG,
               "last sample at %" PRIu64 " ns, more than 30 s after the profile start",
               p->samples[p->n_samples - 1].elapsed);
  if (strcmp(p->platform, "cocoa") == 0 && (strcmp(arch, "arm64") == 0 || strcmp(arch, "arm64e") == 0))
    strip_pac(p);
  for (i = 0; i < p->n_samples; i++) {
    struct sentry__sample *s = &p->samples[i];
    if (s->elapsed > (uint64_t)(INT64_MAX - (p->anchor_ns > 0 ? p->anchor_ns : 0)))
      return sentry__rej(p, SENTRY__R_MALFORMED_SAMPLES, "sample %zu: elapsed_since_start_ns %" PRIu64
                 " overflows the timestamp", s->index, s->elapsed);
    s->t_ns = p->anchor_ns + (int64_t)s->elapsed;
  }
  return 0;
}

static int sample_time_cmp(const void *a, const void *b)
{
  const struct sentry__sample *x = a, *y = b;
  if (x->t_ns != y->t_ns)
    return x->t_ns < y->t_ns ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index; /* stable */
}

static int v2_normalize(struct sentry__profile *p)
{
  unsigned char *keep;
  char detail[160] = "";
  if (!(keep = malloc(p->n_samples + 1)))
    return SPAA_E_NOMEM;
  drop_single_threads(p, keep, detail, sizeof(detail));
  free(keep);
  if (p->n_samples == 0)
    return sentry__rej(p, SENTRY__R_NOT_ENOUGH_SAMPLES, "no samples left after normalization%s%s",
               detail[0] ? ": " : "", detail);
  if (check_refs(p))
    return p->reason;
  qsort(p->samples, p->n_samples, sizeof(*p->samples), sample_time_cmp);
  if ((uint64_t)(p->samples[p->n_samples - 1].t_ns - p->samples[0].t_ns) > SENTRY_MAX_V2_DURATION_NS)
    return sentry__rej(p, SENTRY__R_DURATION_TOO_LONG, "samples span %.3f s, more than 66 s",
               (double)(p->samples[p->n_samples - 1].t_ns - p->samples[0].t_ns) / 1e9);
  if (strcmp(p->platform, "cocoa") == 0)
    strip_pac(p);
  return 0;
}

/* ---- V1 ------------------------------------------------------------------------------- */

static int check_txn(struct sentry__profile *p, const json_t *t, const char *path)
{
  char id[33];
  uint64_t u;
  const char *keys[] = {"active_thread_id", "relative_start_ns", "relative_end_ns",
                        "relative_cpu_start_ms", "relative_cpu_end_ms", "thread_id"};
  size_t i;
  int rc;
  if (!json_is_object(t))
    return BAD(p, "%s: invalid type, expected an object", path);
  if ((rc = req_uuid(p, t, "id", path, id)) || (rc = req_str(p, t, "name", path)) ||
      (rc = req_uuid(p, t, "trace_id", path, id)) || (rc = opt_str(p, t, "segment_id", path)))
    return rc;
  for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    const json_t *v = json_object_get(t, keys[i]);
    if (v && !json_is_null(v) && num_or_str(v, &u))
      return BAD(p, "%s.%s: invalid value, expected a u64 as a number or a string", path, keys[i]);
  }
  return 0;
}

static uint64_t txn_u64(const json_t *t, const char *k)
{
  uint64_t v = 0;
  const json_t *x = json_object_get(t, k);
  if (x && num_or_str(x, &v))
    v = 0;
  return v;
}

/* The V1 metadata schema (device, os, runtime, timestamp into p->anchor_ns, release and
 * friends, debug_meta, transaction and transactions[]), in Relay's order; *dev, *t and
 * *txs receive the device, transaction and transactions members (possibly NULL). 0 or a
 * rejection. */
static int v1_check_schema(struct sentry__profile *p, const json_t **dev, const json_t **t,
                           const json_t **txs)
{
  const json_t *root = p->root, *os, *rt, *ts;
  size_t i;
  int rc;
  if (!(*dev = json_object_get(root, "device")))
    return BAD(p, ".: missing field `device`");
  if (!json_is_object(*dev))
    return BAD(p, "device: invalid type, expected an object");
  if ((rc = req_str(p, *dev, "architecture", "device.")) ||
      (rc = opt_bool(p, *dev, "is_emulator", "device.")) ||
      (rc = opt_str(p, *dev, "locale", "device.")) || (rc = opt_str(p, *dev, "manufacturer", "device.")) ||
      (rc = opt_str(p, *dev, "model", "device.")))
    return rc;
  if (!(os = json_object_get(root, "os")))
    return BAD(p, ".: missing field `os`");
  if (!json_is_object(os))
    return BAD(p, "os: invalid type, expected an object");
  if ((rc = req_str(p, os, "name", "os.")) || (rc = req_str(p, os, "version", "os.")) ||
      (rc = opt_str(p, os, "build_number", "os.")))
    return rc;
  rt = json_object_get(root, "runtime");
  if (rt && !json_is_null(rt)) {
    if (!json_is_object(rt))
      return BAD(p, "runtime: invalid type, expected an object");
    if ((rc = req_str(p, rt, "name", "runtime.")) || (rc = req_str(p, rt, "version", "runtime.")))
      return rc;
  }
  if (!(ts = json_object_get(root, "timestamp")))
    return BAD(p, ".: missing field `timestamp`");
  if (!json_is_string(ts) ||
      spaa_rfc3339_parse(json_string_value(ts), json_string_length(ts), &p->anchor_ns))
    return BAD(p, "timestamp: invalid value, expected an RFC 3339 date and time");
  if (p->anchor_ns < 0)
    return BAD(p, "timestamp: invalid value, expected a date and time after 1970");
  if ((rc = opt_str(p, root, "release", "")) || (rc = opt_str(p, root, "environment", "")) ||
      (rc = opt_str(p, root, "dist", "")) ||
      (rc = opt_type(p, root, "measurements", "", JSON_OBJECT, "a map")) ||
      (rc = check_debug_meta(p, root)))
    return rc;
  *t = json_object_get(root, "transaction");
  if (*t && !json_is_null(*t) && (rc = check_txn(p, *t, "transaction")))
    return rc;
  *txs = json_object_get(root, "transactions");
  if (*txs && !json_is_null(*txs)) {
    char path[48];
    if (!json_is_array(*txs))
      return BAD(p, "transactions: invalid type, expected a sequence");
    for (i = 0; i < json_array_size(*txs); i++) {
      snprintf(path, sizeof(path), "transactions[%zu]", i);
      if ((rc = check_txn(p, json_array_get(*txs, i), path)))
        return rc;
    }
  }
  return 0;
}

/* Cocoa profiles need more metadata than the schema asks for. 0 or a rejection. */
static int v1_cocoa_metadata(struct sentry__profile *p)
{
  static const char *const need[][2] = {{"os", "build_number"}, {"device", "is_emulator"},
                                        {"device", "locale"}, {"device", "manufacturer"},
                                        {"device", "model"}};
  size_t i;
  if (strcmp(p->platform, "cocoa") != 0)
    return 0;
  for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
    const json_t *v = json_object_get(json_object_get(p->root, need[i][0]), need[i][1]);
    if (!v || json_is_null(v))
      return sentry__rej(p, SENTRY__R_INVALID_PROFILE_METADATA, "cocoa profiles need %s.%s",
                 need[i][0], need[i][1]);
  }
  return 0;
}

/* The transaction: the envelope must carry a transaction item; the profile's own
 * `transaction`, else the first of `transactions[]`, becomes p->txn, and *ws, *we its
 * relative start and end. 0 or a rejection. */
static int v1_transaction(struct sentry__profile *p, const struct sentry_item_ctx *ctx,
                          const json_t *t, const json_t *txs, uint64_t *ws, uint64_t *we)
{
  char id[33], trace[33];
  if (ctx && ctx->in_envelope && !ctx->has_transaction)
    return sentry__rej(p, SENTRY__R_NO_TRANSACTION,
               "a profile item needs a transaction item in the same envelope");
  if (!t || json_is_null(t))
    t = json_array_get(txs, 0);
  if (!t)
    return sentry__rej(p, SENTRY__R_NO_TRANSACTION,
               "the profile has neither `transaction` nor `transactions[]`");
  p->txn = t;
  sentry_uuid_normalize(json_string_value(json_object_get(t, "id")),
                        json_string_length(json_object_get(t, "id")), id);
  sentry_uuid_normalize(json_string_value(json_object_get(t, "trace_id")),
                        json_string_length(json_object_get(t, "trace_id")), trace);
  *ws = txn_u64(t, "relative_start_ns");
  *we = txn_u64(t, "relative_end_ns");
  if (is_nil(id) || is_nil(trace) || json_string_length(json_object_get(t, "name")) == 0 ||
      (*we > 0 && *ws >= *we) ||
      txn_u64(t, "relative_cpu_start_ms") > txn_u64(t, "relative_cpu_end_ms"))
    return sentry__rej(p, SENTRY__R_INVALID_TRANSACTION_METADATA,
               "transaction needs a non-nil id and trace_id, a name, and start < end");
  return 0;
}

static int v1_decode(struct sentry__profile *p, const struct sentry_item_ctx *ctx)
{
  const json_t *dev = NULL, *t = NULL, *txs = NULL, *prof;
  uint64_t ws = 0, we = 0;
  int rc;
  /* the whole schema first: Relay's JSON errors come before any other rule */
  if ((rc = v1_check_schema(p, &dev, &t, &txs)) || (rc = profile_body(p, p->root, &prof)) ||
      (rc = opt_type(p, prof, "queue_metadata", "profile.", JSON_OBJECT, "a map")) ||
      (rc = sentry__v1_samples(p)) || (rc = v1_cocoa_metadata(p)) ||
      (rc = v1_transaction(p, ctx, t, txs, &ws, &we)))
    return rc;
  attach_thread_meta(p, json_object_get(prof, "thread_metadata"));
  return v1_normalize(p, ws, we, json_string_value(json_object_get(dev, "architecture")));
}

/* ---- V2 ------------------------------------------------------------------------------- */

static int v2_decode(struct sentry__profile *p)
{
  const json_t *root = p->root, *sdk, *prof;
  int rc;
  if ((rc = req_uuid(p, root, "chunk_id", "", p->id)) ||
      (rc = req_uuid(p, root, "profiler_id", "", p->profiler_id)) ||
      (rc = opt_str(p, root, "release", "")) || (rc = opt_str(p, root, "environment", "")) ||
      (rc = opt_type(p, root, "measurements", "", JSON_OBJECT, "a map")) ||
      (rc = check_debug_meta(p, root)))
    return rc;
  if (!(sdk = json_object_get(root, "client_sdk")))
    return BAD(p, ".: missing field `client_sdk`");
  if (!json_is_object(sdk))
    return BAD(p, "client_sdk: invalid type, expected an object");
  if ((rc = req_str(p, sdk, "name", "client_sdk.")) || (rc = req_str(p, sdk, "version", "client_sdk.")))
    return rc;
  if ((rc = profile_body(p, root, &prof)) || (rc = sentry__v2_samples(p)))
    return rc;
  attach_thread_meta(p, json_object_get(prof, "thread_metadata"));
  return v2_normalize(p);
}

/* ---- entry ---------------------------------------------------------------------------- */

/* Android's legacy transaction-profile metadata: checked so that JSON errors read as Relay's,
 * then the format itself is refused (method traces are not converted). */
static int android_legacy(struct sentry__profile *p)
{
  static const char *const need[] = {"android_api_level", "device_cpu_frequencies",
                                     "device_is_emulator", "device_locale", "device_manufacturer",
                                     "device_model", "device_os_name", "device_os_version",
                                     "device_physical_memory_bytes", "version_code", "version_name"};
  size_t i;
  for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
    if (!json_object_get(p->root, need[i]))
      return BAD(p, ".: missing field `%s`", need[i]);
  return sentry__rej(p, SENTRY__R_PLATFORM_NOT_SUPPORTED,
             "android method-trace profiles are not supported (only Sample Format V1/V2)");
}

static int is_ui_platform(const char *pl)
{
  return strcmp(pl, "cocoa") == 0 || strcmp(pl, "android") == 0 || strcmp(pl, "javascript") == 0;
}

int sentry__profile_decode(struct sentry__doc *d, enum sentry_item_kind kind,
                           const struct sentry_item_ctx *ctx, struct sentry__profile *p)
{
  const json_t *v, *ver, *root = d->root;
  const char *version;
  static const char *const id_keys[] = {"event_id", "profile_id", "chunk_id"};
  size_t i, n_ids = 0;
  memset(p, 0, sizeof(*p));
  p->root = d->root;
  d->root = NULL;
  p->samples_v = d->samples;
  p->stacks_v = d->stacks;
  p->frames_v = d->frames;
  p->meter = ctx ? ctx->meter : NULL;
  spaa_idmap_init(&p->tid_map);
  spaa_strmap_init(&p->tstr_map);
  spaa_strmap_init(&p->queue_map);
  if (!json_is_object(root))
    return BAD(p, ".: invalid type, expected a profile object");
  /* the minimal profile: id (event_id, alias profile_id or chunk_id), platform, version */
  for (i = 0; i < 3; i++) {
    if (!(v = json_object_get(root, id_keys[i])))
      continue;
    if (n_ids++)
      return BAD(p, "%s: duplicate field `event_id` (also given as an alias)", id_keys[i]);
    if (!json_is_string(v) || sentry_uuid_normalize(json_string_value(v), json_string_length(v), p->id))
      return BAD(p, "%s: invalid value, expected a UUID", id_keys[i]);
  }
  if (!n_ids)
    return BAD(p, ".: missing field `event_id`");
  v = json_object_get(root, "platform");
  if (!v)
    return BAD(p, ".: missing field `platform`");
  if (!json_is_string(v))
    return BAD(p, "platform: invalid type, expected a string");
  p->platform = json_string_value(v);
  ver = json_object_get(root, "version");
  if (ver && !json_is_null(ver) && !json_is_string(ver))
    return BAD(p, "version: invalid type, expected a string");
  version = ver ? json_string_value(ver) : NULL;
  if (kind == SENTRY_ITEM_CHUNK) {
    if (ctx && ctx->item_platform && ctx->item_platform[0] &&
        is_ui_platform(ctx->item_platform) != is_ui_platform(p->platform))
      return sentry__rej(p, SENTRY__R_INVALID_PROFILE_TYPE,
                 "item header platform '%.32s' is a %s platform, the chunk's '%.32s' is a %s one",
                 ctx->item_platform, is_ui_platform(ctx->item_platform) ? "UI" : "backend",
                 p->platform, is_ui_platform(p->platform) ? "UI" : "backend");
    if (strcmp(p->platform, "android") == 0 && (!version || json_object_get(root, "sampled_profile")))
      return sentry__rej(p, SENTRY__R_PLATFORM_NOT_SUPPORTED,
                 "android trace chunks are not supported (only Sample Format V2 chunks)");
    if (!version || strcmp(version, "2") != 0)
      return sentry__rej(p, SENTRY__R_PLATFORM_NOT_SUPPORTED,
                 "profile chunks must be Sample Format version \"2\" (got %s%.16s%s)",
                 version ? "\"" : "", version ? version : "no version", version ? "\"" : "");
    p->version = 2;
    return v2_decode(p);
  }
  if (version && strcmp(version, "1") == 0) {
    p->version = 1;
    return v1_decode(p, ctx);
  }
  if (strcmp(p->platform, "android") == 0 && !version)
    return android_legacy(p);
  return sentry__rej(p, SENTRY__R_PLATFORM_NOT_SUPPORTED,
             "profile items must be Sample Format version \"1\" (got %s%.16s%s, platform %.32s)",
             version ? "\"" : "", version ? version : "no version", version ? "\"" : "",
             p->platform);
}

void *sentry__calloc(struct sentry__profile *p, size_t count, size_t size)
{
  void *r;
  if (count > SIZE_MAX / size || spaa_meter_take(p->meter, &p->metered, count * size))
    return NULL;
  if (!(r = calloc(count, size)))
    spaa_meter_give(p->meter, &p->metered, count * size);
  return r;
}

void *sentry__realloc(struct sentry__profile *p, void *old, size_t was, size_t count, size_t size)
{
  void *r;
  if (count > SIZE_MAX / size || count * size < was ||
      spaa_meter_take(p->meter, &p->metered, count * size - was))
    return NULL;
  if (!(r = realloc(old, count * size)))
    spaa_meter_give(p->meter, &p->metered, count * size - was);
  return r;
}

void sentry__profile_drop_stacks(struct sentry__profile *p)
{
  size_t bytes = 0;
  if (p->frame) /* the frame tables, as sentry_arrays.c sized them */
    bytes += (p->n_frames + 1) * (sizeof(*p->addr) + 1 + sizeof(*p->frame));
  if (p->stack_off)
    bytes += (p->n_stacks + 1) * sizeof(*p->stack_off) +
             (p->stack_off[p->n_stacks] + 1) * sizeof(*p->stack_frames);
  free(p->stack_frames);
  free(p->stack_off);
  free(p->frame);
  free(p->addr);
  free(p->has_addr);
  p->stack_frames = NULL;
  p->stack_off = NULL;
  p->frame = NULL;
  p->addr = NULL;
  p->has_addr = NULL;
  spaa_meter_give(p->meter, &p->metered, bytes);
}

void sentry__profile_drop_tables(struct sentry__profile *p)
{
  sentry__profile_drop_stacks(p);
  free(p->samples);
  free(p->threads);
  p->samples = NULL;
  p->threads = NULL;
  p->n_samples = p->n_stacks = p->n_frames = p->n_threads = p->cap_threads = 0;
  spaa_meter_give(p->meter, &p->metered, p->metered);
}

void sentry__profile_free(struct sentry__profile *p)
{
  if (!p)
    return;
  spaa_meter_give(p->meter, &p->metered, p->metered);
  json_decref(p->root);
  free(p->addr);
  free(p->has_addr);
  free(p->frame);
  free(p->stack_off);
  free(p->stack_frames);
  free(p->samples);
  free(p->threads);
  free(p->queue_names);
  spaa_idmap_free(&p->tid_map);
  spaa_strmap_free(&p->tstr_map);
  spaa_strmap_free(&p->queue_map);
  sentry__strs_free(&p->strs);
  sentry__scratch_free(&p->sc);
  memset(p, 0, sizeof(*p));
}
