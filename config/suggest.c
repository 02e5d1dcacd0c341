/* Nearest known word by edit distance (optimal string alignment), for "did you mean" hints. */
#include "config/suggest.h"

#include <ctype.h>
#include <string.h>

size_t spaa_suggest_distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b), i, j;
  /* three rows of the dynamic-programming table: i-2, i-1, i */
  size_t rows[3][SPAA_SUGGEST_MAX_LEN + 1];
  if (la > SPAA_SUGGEST_MAX_LEN || lb > SPAA_SUGGEST_MAX_LEN)
    return SPAA_SUGGEST_MAX_LEN + 1;
  for (j = 0; j <= lb; j++)
    rows[1][j] = j;
  for (i = 1; i <= la; i++) {
    size_t *cur = rows[(i + 1) % 3], *prev = rows[i % 3], *prev2 = rows[(i + 2) % 3];
    cur[0] = i;
    for (j = 1; j <= lb; j++) {
      int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
      size_t best = prev[j - 1] + (ca != cb);
      if (prev[j] + 1 < best)
        best = prev[j] + 1;
      if (cur[j - 1] + 1 < best)
        best = cur[j - 1] + 1;
      if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
          tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < best)
        best = prev2[j - 2] + 1;
      cur[j] = best;
    }
  }
  return rows[(la + 1) % 3][lb];
}

/* The edits a word of `len` characters may be away from a suggestion. */
static size_t allowed(size_t len)
{
  return len <= 4 ? 1 : len <= 8 ? 2 : 3;
}

/* Length of word without leading dashes: "--ret" and "ret" weigh the same. */
static size_t core_len(const char *w)
{
  while (*w == '-')
    w++;
  return strlen(w);
}

const char *spaa_suggest(const char *word, const char *const *known, size_t n)
{
  const char *best = NULL, *prefix_of = NULL;
  size_t best_d = (size_t)-1, i, wl, prefixes = 0;
  if (!word || !word[0])
    return NULL;
  wl = strlen(word);
  for (i = 0; i < n; i++) {
    size_t d;
    if (!known[i])
      continue;
    if (strncasecmp(known[i], word, wl) == 0 && known[i][wl] && core_len(word) >= 2) {
      prefixes++;
      prefix_of = known[i];
    }
    d = spaa_suggest_distance(word, known[i]);
    if (d < best_d) {
      best_d = d;
      best = known[i];
    }
  }
  if (best && best_d <= allowed(core_len(word)))
    return best;
  if (prefixes == 1)
    return prefix_of;
  return NULL;
}
