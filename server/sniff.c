/* File sniffing for `validate` (sniff.h): magic numbers, a walk over protobuf fields, and
 * key spotting in JSON text; compressed heads are inflated (partly) and looked at again. */
#include "server/sniff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/compress.h"

/* ---- protobuf ---------------------------------------------------------------------------- */

static int pb_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
  unsigned shift = 0;
  *v = 0;
  while (*pos < len && shift < 64) {
    uint8_t b = p[(*pos)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return 0;
    shift += 7;
  }
  return -1;
}

/* One field at *pos: its number, wire type and (LEN) payload bounds, the payload cut at the
 * end of the head. 0, 1 at the end of the head, -1 when the bytes cannot be protobuf. */
static int pb_field(const uint8_t *p, size_t len, size_t *pos, uint64_t *num, int *wt,
                    size_t *sub, size_t *sub_len)
{
  uint64_t tag, v;
  if (*pos >= len)
    return 1;
  if (pb_varint(p, len, pos, &tag))
    return *pos >= len ? 1 : -1;
  *num = tag >> 3;
  *wt = (int)(tag & 7);
  if (*num == 0 || *num > 536870911)
    return -1;
  switch (*wt) {
  case 0:
    return pb_varint(p, len, pos, &v) && *pos < len ? -1 : 0;
  case 1:
    *pos += 8;
    return 0;
  case 5:
    *pos += 4;
    return 0;
  case 2:
    if (pb_varint(p, len, pos, &v))
      return *pos >= len ? 1 : -1;
    *sub = *pos;
    *sub_len = v > len - *pos ? len - *pos : (size_t)v;
    *pos = v > len - *pos ? len : *pos + (size_t)v;
    return 0;
  default:
    return -1;
  }
}

/* Walk the top-level fields: 0 when all parse (up to the head's end), with the highest field
 * number seen and the first field's payload; -1 otherwise. */
static int pb_walk(const uint8_t *p, size_t len, uint64_t *max_num, size_t *first,
                   size_t *first_len, int *first_wt)
{
  size_t pos = 0, sub = 0, sub_len = 0;
  uint64_t num;
  int wt, n = 0, rc;
  *max_num = 0;
  while ((rc = pb_field(p, len, &pos, &num, &wt, &sub, &sub_len)) == 0) {
    if (!n++) {
      *first = sub;
      *first_len = sub_len;
      *first_wt = wt;
    }
    if (num > *max_num)
      *max_num = num;
  }
  return rc < 0 || !n ? -1 : 0;
}

/* The first field of a message: its number and wire type, its payload in *sub. -1 if none. */
static int pb_first(const uint8_t *p, size_t len, uint64_t *num, int *wt, size_t *sub,
                    size_t *sub_len)
{
  size_t pos = 0;
  *sub = 0;
  *sub_len = 0;
  return pb_field(p, len, &pos, num, wt, sub, sub_len) == 0 ? 0 : -1;
}

static int printable(const uint8_t *p, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++)
    if (p[i] < 0x20 || p[i] >= 0x7f)
      return 0;
  return n > 0;
}

/* pprof Profile, OTLP ExportProfilesServiceRequest or Pyroscope PushRequest. 0 or -1. */
static int sniff_protobuf(const uint8_t *p, size_t len, struct spaa_sniff *out)
{
  uint64_t max_num, num;
  size_t s1 = 0, l1 = 0, s2, l2, s3, l3;
  int wt1 = 0, wt;
  if (pb_walk(p, len, &max_num, &s1, &l1, &wt1))
    return -1;
  if (max_num >= 3 && max_num <= 14) { /* OTLP and push requests have fields 1 and 2 only */
    out->what = "a pprof profile (protobuf)";
    out->from = "pprof";
    return 0;
  }
  if (wt1 != 2 || pb_first(p + s1, l1, &num, &wt, &s2, &l2))
    return -1;
  if (wt == 0) { /* sample_type: ValueType {type, unit} */
    out->what = "a pprof profile (protobuf)";
    out->from = "pprof";
    return 0;
  }
  if (num != 1 || wt != 2 || pb_first(p + s1 + s2, l2, &num, &wt, &s3, &l3))
    return -1;
  if (num == 1 && wt == 2 && printable(p + s1 + s2 + s3, l3)) { /* series.labels.name */
    out->what = "a Pyroscope push request (push.v1.PushRequest, protobuf)";
    out->from = "pprof-push";
  } else { /* resource_profiles.resource.attributes */
    out->what = "an OTLP profiles export request (protobuf)";
    out->from = "otlp";
  }
  return 0;
}

/* ---- text -------------------------------------------------------------------------------- */

/* `"key"` followed by optional blanks and ':' somewhere in s[0..n). */
static const char *find_key(const char *s, size_t n, const char *key)
{
  char q[64];
  size_t ql = (size_t)snprintf(q, sizeof(q), "\"%s\"", key), i;
  for (i = 0; i + ql <= n; i++)
    if (memcmp(s + i, q, ql) == 0) {
      size_t j = i + ql;
      while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r'))
        j++;
      if (j < n && s[j] == ':')
        return s + j + 1;
    }
  return NULL;
}

/* The string value after "type": on the first line, into v (empty when none). */
static void first_line_type(const char *s, size_t n, char *v, size_t cap)
{
  const char *nl = memchr(s, '\n', n), *t;
  size_t ln = nl ? (size_t)(nl - s) : n, k = 0;
  v[0] = 0;
  if (!(t = find_key(s, ln, "type")))
    return;
  while (t < s + ln && *t == ' ')
    t++;
  if (t >= s + ln || *t != '"')
    return;
  for (t++; t < s + ln && *t != '"' && k + 1 < cap; t++)
    v[k++] = *t;
  v[k] = 0;
}

/* Folded stacks: every full line "frame;frame;... N". */
static int looks_folded(const char *s, size_t n)
{
  size_t i = 0, lines = 0;
  while (i < n) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t e = nl ? (size_t)(nl - s) : n, d = e;
    if (!nl && lines)
      break; /* a line cut by the head's end */
    while (d > i && s[d - 1] >= '0' && s[d - 1] <= '9')
      d--;
    if (e > i && (d == e || d == i || s[d - 1] != ' '))
      return 0;
    if (e > i)
      lines++;
    i = e + 1;
  }
  return lines > 0 && memchr(s, ';', n) != NULL;
}

static void sniff_text(const char *s, size_t n, struct spaa_sniff *out)
{
  static const char *const spaa_types[] = {"header", "dso", "frame", "thread", "stack",
                                           "sample", "window"};
  char type[32];
  size_t i = 0;
  while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
    i++;
  if (i < n && s[i] == '{' && i == 0) {
    const char *nl = memchr(s, '\n', n);
    size_t k;
    first_line_type(s, n, type, sizeof(type));
    for (k = 0; k < sizeof(spaa_types) / sizeof(spaa_types[0]); k++)
      if (strcmp(type, spaa_types[k]) == 0) {
        out->is_spaa = 1;
        out->what = "SPAA";
        return;
      }
    if (nl && nl[-1 - (nl > s && nl[-1] == '\r')] == '}' && nl + 1 < s + n && nl[1] == '{' &&
        find_key(nl + 1, (size_t)(s + n - nl - 1), "type")) {
      out->what = "a Sentry envelope (a JSON header line, then items)";
      out->from = "sentry";
      return;
    }
  }
  if (i < n && (s[i] == '{' || s[i] == '[')) {
    if (find_key(s, n, "resourceProfiles") || find_key(s, n, "resource_profiles")) {
      out->what = "an OTLP profiles export request (OTLP-JSON)";
      out->from = "otlp";
    } else if (find_key(s, n, "chunk_id") || find_key(s, n, "profiler_id") ||
               (find_key(s, n, "profile") && find_key(s, n, "samples"))) {
      out->what = "a Sentry profile (JSON)";
      out->from = "sentry";
    } else if (strstr(s, "speedscope")) {
      out->what = "a speedscope profile (JSON), which no converter reads";
    } else {
      out->what = "JSON, but not SPAA (its first line is no SPAA record) nor a profile "
                  "format spaa-relay converts";
    }
    return;
  }
  if (looks_folded(s, n)) {
    out->what = "folded (collapsed) stacks text";
    out->from = "folded";
    return;
  }
  if (i == n) {
    out->is_spaa = 1; /* blank: the validator says the header is missing */
    out->what = "blank text";
    return;
  }
  out->what = "text that is not JSON (SPAA is one JSON object per line)";
}

/* ---- entry points ------------------------------------------------------------------------ */

/* Inflate what the head holds, up to SPAA_SNIFF_HEAD bytes; a buffer to free, or NULL. */
static uint8_t *inflate_head(enum spaa_coding c, const uint8_t *p, size_t len, size_t *out_len)
{
  struct spaa_dstream *d = NULL;
  struct spaa_err err;
  uint8_t *out = malloc(SPAA_SNIFF_HEAD + 1);
  size_t in_pos = 0;
  *out_len = 0;
  if (!out || spaa_dstream_new(c, 0, &d, &err)) {
    free(out);
    return NULL;
  }
  while (*out_len < SPAA_SNIFF_HEAD) {
    size_t used = 0, made = 0;
    int rc = spaa_dstream_step(d, p + in_pos, len - in_pos, &used, out + *out_len,
                               SPAA_SNIFF_HEAD - *out_len, &made, &err);
    in_pos += used;
    *out_len += made;
    if (rc < 0 || (rc == 0 && !used && !made) || (rc == 1 && in_pos >= len))
      break;
  }
  spaa_dstream_free(d);
  out[*out_len] = 0;
  return out;
}

static void sniff_plain(const uint8_t *p, size_t len, struct spaa_sniff *out)
{
  size_t i, text = 0;
  if (!len) {
    out->is_spaa = 1; /* the validator reports an empty file */
    out->what = "empty";
    return;
  }
  for (i = 0; i < len && i < 4096; i++)
    if (p[i] >= 0x20 || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')
      text++;
  if (text == (len < 4096 ? len : 4096)) {
    char *s = malloc(len + 1);
    if (!s) {
      out->is_spaa = 1;
      return;
    }
    memcpy(s, p, len);
    s[len] = 0;
    sniff_text(s, len, out);
    free(s);
    return;
  }
  if (sniff_protobuf(p, len, out))
    out->what = "binary data of no known profile format";
}

void spaa_sniff(const uint8_t *head, size_t len, struct spaa_sniff *out)
{
  memset(out, 0, sizeof(*out));
  out->what = "binary data of no known profile format";
  if (spaa_is_gzip(head, len) || spaa_is_zstd(head, len)) {
    enum spaa_coding c = spaa_is_gzip(head, len) ? SPAA_CODING_GZIP : SPAA_CODING_ZSTD;
    size_t n;
    uint8_t *inner = inflate_head(c, head, len, &n);
    out->coding = c == SPAA_CODING_GZIP ? "gzip" : "zstd";
    if (inner && n)
      sniff_plain(inner, n, out);
    else if (c == SPAA_CODING_ZSTD)
      out->is_spaa = 1; /* the validator reads zstd and says what is wrong with it */
    else
      out->what = "gzip data that does not decompress";
    if (out->is_spaa && c == SPAA_CODING_GZIP)
      out->is_spaa = 0; /* validate reads zstd, not gzip */
    free(inner);
    return;
  }
  sniff_plain(head, len, out);
}

void spaa_sniff_hint(const struct spaa_sniff *s, const char *file, char *buf, size_t cap)
{
  const char *cat = s->coding && !strcmp(s->coding, "gzip") ? "zcat" : "zstd -dc";
  int pre = s->coding && !(s->from && !strcmp(s->from, "pprof") && !strcmp(s->coding, "gzip"));
  if (!strcmp(s->what, "SPAA") && s->coding && !strcmp(s->coding, "gzip"))
    snprintf(buf, cap, "validate reads plain or zstd SPAA: zcat %s | spaa-relay validate -",
             file);
  else if (!s->from)
    snprintf(buf, cap, "no converter reads it; spaa-relay converts %s",
             "sentry, otlp, pprof, pprof-push and folded inputs (spaa-relay convert --help)");
  else if (pre)
    snprintf(buf, cap, "convert it first: %s %s | spaa-relay convert --from %s - -o %s.spaa",
             cat, file, s->from, file);
  else
    snprintf(buf, cap, "convert it first: spaa-relay convert --from %s %s -o %s.spaa", s->from,
             file, file);
}
