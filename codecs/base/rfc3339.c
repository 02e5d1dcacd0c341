/* RFC 3339 timestamps ("2026-11-21T12:00:00.123456789Z", offsets allowed) to unix ns. */
#include "base/rfc3339.h"

static int days_from_civil(int64_t y, unsigned m, unsigned d, int64_t *out)
{
  int64_t era;
  unsigned yoe, doy, doe;
  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = (unsigned)(y - era * 400);
  doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  *out = era * 146097 + (int64_t)doe - 719468;
  return 0;
}

static int digits(const char *s, size_t n, unsigned *out)
{
  unsigned v = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (unsigned)(s[i] - '0');
  }
  *out = v;
  return 0;
}

int spaa_rfc3339_parse(const char *s, size_t len, int64_t *out)
{
  static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  unsigned Y, M, D, h, mi, sec, oh = 0, om = 0;
  int64_t days, ns = 0, total;
  size_t i = 19, nd = 0;
  int sign = 0;
  if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      s[13] != ':' || s[16] != ':' || digits(s, 4, &Y) || digits(s + 5, 2, &M) ||
      digits(s + 8, 2, &D) || digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) ||
      digits(s + 17, 2, &sec))
    return -1;
  if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1] || h > 23 || mi > 59 || sec > 60)
    return -1;
  if (s[i] == '.') {
    for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, nd++)
      if (nd < 9)
        ns = ns * 10 + (s[i] - '0');
    if (nd == 0)
      return -1;
    for (; nd < 9; nd++)
      ns *= 10;
  }
  if (i >= len)
    return -1;
  if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == len) {
    sign = 0;
  } else if ((s[i] == '+' || s[i] == '-') && len - i == 6 && s[i + 3] == ':' &&
             !digits(s + i + 1, 2, &oh) && !digits(s + i + 4, 2, &om) && oh < 24 && om < 60) {
    sign = s[i] == '-' ? -1 : 1;
  } else {
    return -1;
  }
  days_from_civil(Y, M, D, &days);
  total = days * 86400 + h * 3600 + mi * 60 + sec - sign * (int64_t)(oh * 3600 + om * 60);
  if (total > INT64_MAX / 1000000000 - 1 || total < INT64_MIN / 1000000000 + 1)
    return -1;
  *out = total * 1000000000 + ns;
  return 0;
}
