/* A JSON number kept as it was read: an exact 64-bit integer or a double. */
#ifndef SPAA_BASE_NUM_H
#define SPAA_BASE_NUM_H

#include <stdint.h>

/* A JSON number as it was: an integer (exact, 64 bits) or a double. */
struct spaa_num {
  int64_t i;    /* the value when !is_float */
  double f;     /* the value when is_float */
  int is_float; /* 1: f holds the value; 0: i does */
};

/* Small helpers for numbers. */
static inline struct spaa_num spaa_int(int64_t v)
{
  struct spaa_num n = {v, 0.0, 0};
  return n;
}
static inline struct spaa_num spaa_float(double v)
{
  struct spaa_num n = {0, v, 1};
  return n;
}
static inline double spaa_num_as_double(struct spaa_num n) { return n.is_float ? n.f : (double)n.i; }

#endif
