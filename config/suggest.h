/* "Did you mean ...?": the known word nearest to a mistyped one (an unknown flag, a config
 * key, a format name), by edit distance. Pure; no allocation. */
#ifndef SPAA_CONFIG_SUGGEST_H
#define SPAA_CONFIG_SUGGEST_H

#include <stddef.h>

/* Longest word compared; longer words are never matched (and get no suggestion). */
#define SPAA_SUGGEST_MAX_LEN 64

/* Optimal string alignment distance (insertions, deletions, substitutions and swaps of two
 * adjacent characters, each 1) between a and b, ASCII case-insensitive. Words longer than
 * SPAA_SUGGEST_MAX_LEN give SPAA_SUGGEST_MAX_LEN + 1. */
size_t spaa_suggest_distance(const char *a, const char *b);

/* The entry of known[0..n) nearest to `word` (NULL entries skipped), or NULL when none is
 * close enough to be a likely typo: at most 1 edit for words of up to 4 characters, 2 up to
 * 8, 3 beyond; or `word` a prefix of exactly one entry (--ret for --retention). Ties go to
 * the first entry. The result points into `known`. */
const char *spaa_suggest(const char *word, const char *const *known, size_t n);

#endif
