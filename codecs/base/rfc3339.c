/* RFC 3339 timestamps ("2026-11-21T12:00:00.123456789Z", offsets allowed) to unix ns, and
 * unix time back to UTC text. */
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
  if (total > INT64_MAX / 1000000000 || total < INT64_MIN / 1000000000 + 1 ||
      (total == INT64_MAX / 1000000000 && ns > INT64_MAX % 1000000000))
    return -1; /* no int64 nanosecond for it (past 2262-04-11T23:47:16.854775807Z) */
  *out = total * 1000000000 + ns;
  return 0;
}

/* Days since 1970-01-01 to a proleptic Gregorian date: the inverse of days_from_civil. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
  int64_t era;
  unsigned doe, yoe, doy, mp;
  z += 719468;
  era = (z >= 0 ? z : z - 146096) / 146097;
  doe = (unsigned)(z - era * 146097);
  yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

/* Write `v` as exactly `n` decimal digits (zero-padded, high digits dropped). */
static void put_digits(char *o, uint64_t v, unsigned n)
{
  while (n--) {
    o[n] = (char)('0' + v % 10);
    v /= 10;
  }
}

/* sec: unix seconds within years 0000-9999; frac: the nanoseconds (0 to 999999999). */
static size_t format(char *out, int64_t sec, uint32_t frac, unsigned frac_digits)
{
  int64_t days = sec / 86400, rem = sec % 86400, y;
  unsigned m, d, i;
  size_t n = 19;
  if (rem < 0) {
    rem += 86400;
    days--;
  }
  civil_from_days(days, &y, &m, &d);
  put_digits(out, (uint64_t)y, 4);
  out[4] = '-';
  put_digits(out + 5, m, 2);
  out[7] = '-';
  put_digits(out + 8, d, 2);
  out[10] = 'T';
  put_digits(out + 11, (uint64_t)rem / 3600, 2);
  out[13] = ':';
  put_digits(out + 14, (uint64_t)rem / 60 % 60, 2);
  out[16] = ':';
  put_digits(out + 17, (uint64_t)rem % 60, 2);
  if (frac_digits > 9)
    frac_digits = 9;
  if (frac_digits) {
    for (i = frac_digits; i < 9; i++)
      frac /= 10;
    out[n++] = '.';
    put_digits(out + n, frac, frac_digits);
    n += frac_digits;
  }
  out[n++] = 'Z';
  out[n] = 0;
  return n;
}

size_t spaa_rfc3339_format_ns(char *out, int64_t ns, unsigned frac_digits)
{
  int64_t sec = ns / 1000000000, frac = ns % 1000000000;
  if (frac < 0) {
    frac += 1000000000;
    sec--;
  }
  return format(out, sec, (uint32_t)frac, frac_digits);
}

size_t spaa_rfc3339_format_s(char *out, int64_t sec)
{
  const int64_t first = -62167219200, last = 253402300799; /* 0000-01-01, 9999-12-31 */
  return format(out, sec < first ? first : sec > last ? last : sec, 0, 0);
}
