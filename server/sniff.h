/* What a file looks like, from its first bytes: SPAA or not, and if not, which format
 * (pprof, OTLP, a Sentry envelope, JSON of another kind...) under which compression, with
 * the `convert` command that would turn it into SPAA. For `spaa-relay validate`. Pure. */
#ifndef SPAA_SERVER_SNIFF_H
#define SPAA_SERVER_SNIFF_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of a file's head worth looking at (compressed heads are inflated up to this too). */
#define SPAA_SNIFF_HEAD (64 * 1024)

struct spaa_sniff {
  int is_spaa;        /* 1: SPAA, or text close enough that the validator should judge it */
  const char *coding; /* "gzip", "zstd", or NULL (not compressed); static */
  const char *what;   /* "a pprof profile (protobuf)", ...; static, never NULL */
  const char *from;   /* the `convert --from` format that reads it, or NULL: none does */
};

/* Classify head[0..len) (the start of a file, or all of it). Never fails; unknown data is
 * "binary data of no known profile format" or "text ...". */
void spaa_sniff(const uint8_t *head, size_t len, struct spaa_sniff *out);

/* The advice for a non-SPAA file named `file` into buf (NUL-terminated, cut at cap):
 * "convert it first: spaa-relay convert --from pprof FILE -o FILE.spaa" (with a
 * decompression step first when the converter does not undo the coding itself), or what to
 * do when no converter reads it. */
void spaa_sniff_hint(const struct spaa_sniff *s, const char *file, char *buf, size_t cap);

#endif
