/* What Pyroscope's /ingest makes of folded stacks besides their lines: the profile type from
 * the application name's suffix, the sample rate that turns cpu and wall counts into time,
 * and the service, labels, attrs and time range of the push (docs/folded-mapping.md). */
#include "folded/folded_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

/* Pyroscope's types for folded stacks, by the suffix of the application name, as its ingest
 * adapter turns them into a pprof sample type (an unknown suffix is refused there too). */
static const struct spaa_folded_type types[] = {
    {"cpu", "samples", "count", "cpu", "timer"},
    {"itimer", "samples", "count", "cpu", "timer"},
    {"wall", "samples", "count", "wall", "timer"},
    {"seconds", "samples", "count", "wall", "timer"},
    {"nanoseconds", "samples", "count", "wall", "timer"},
    {"microseconds", "samples", "count", "wall", "timer"},
    {"milliseconds", "samples", "count", "wall", "timer"},
    {"inuse_objects", "inuse_objects", "count", NULL, "allocation"},
    {"inuse_space", "inuse_space", "bytes", NULL, "allocation"},
    {"alloc_objects", "alloc_objects", "count", NULL, "allocation"},
    {"alloc_space", "alloc_space", "bytes", NULL, "allocation"},
    {"alloc_in_new_tlab_objects", "alloc_in_new_tlab_objects", "count", NULL, "allocation"},
    {"alloc_in_new_tlab_bytes", "alloc_in_new_tlab_bytes", "bytes", NULL, "allocation"},
    {"alloc_outside_tlab_objects", "alloc_outside_tlab_objects", "count", NULL, "allocation"},
    {"alloc_outside_tlab_bytes", "alloc_outside_tlab_bytes", "bytes", NULL, "allocation"},
    {"live", "live", "count", NULL, "allocation"},
    {"bytes", "samples", "bytes", NULL, "allocation"},
    {"goroutines", "goroutines", "count", NULL, "software"},
    {"mutex_count", "contentions", "count", NULL, "software"},
    {"mutex_duration", "delay", "nanoseconds", NULL, "software"},
    {"block_count", "contentions", "count", NULL, "software"},
    {"block_duration", "delay", "nanoseconds", NULL, "software"},
    {"lock_count", "contentions", "count", NULL, "software"},
    {"lock_duration", "delay", "nanoseconds", NULL, "software"},
    {"exceptions", "samples", "count", NULL, "software"},
};

#define N_TYPES (sizeof(types) / sizeof(types[0]))

void spaa_folded_opts_init(struct spaa_folded_opts *o)
{
  memset(o, 0, sizeof(*o));
  o->sample_rate = 100;
}

int spaa_folded_opts_sample_rate(struct spaa_folded_opts *o, const char *hz,
                                 struct spaa_err *err)
{
  const char *d = hz;
  char *end;
  long long r;
  if (!hz || !*hz)
    return 0;
  if (*d == '+' || *d == '-')
    d++;
  if (*d < '0' || *d > '9')
    return 0; /* not a number: Pyroscope keeps its default */
  errno = 0;
  r = strtoll(hz, &end, 10);
  if (*end)
    return 0;
  if (r < 0)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad sampleRate '%.40s': a rate is 0 "
                        "(counts only) or a number of Hz", hz);
  if (errno == ERANGE || r > SPAA_PPROF_MAX_SAMPLE_RATE)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad sampleRate '%.40s': over the "
                        "largest rate, %lld Hz", hz, (long long)SPAA_PPROF_MAX_SAMPLE_RATE);
  o->sample_rate = r;
  return 0;
}

enum spaa_folded_sniff spaa_folded_sniff(const uint8_t *buf, size_t len, size_t *at)
{
  size_t n = len < SPAA_FOLDED_SNIFF ? len : SPAA_FOLDED_SNIFF, i = 0, dummy;
  if (!at)
    at = &dummy;
  *at = 0;
  if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
    return SPAA_FOLDED_GZIP;
  while (i < n) {
    size_t l;
    *at = i;
    if ((buf[i] < 0x20 && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r') || buf[i] == 0x7f)
      return SPAA_FOLDED_CONTROL;
    /* a sequence cut by the end of the window is read whole */
    if (!(l = spaa_utf8_seq(buf + i, len - i)))
      return SPAA_FOLDED_NOT_UTF8;
    i += l;
  }
  *at = 0;
  return SPAA_FOLDED_TEXT;
}

int spaa_folded_is_text(const uint8_t *buf, size_t len)
{
  return spaa_folded_sniff(buf, len, NULL) == SPAA_FOLDED_TEXT;
}

const struct spaa_folded_type *spaa_folded_type(const char *app, size_t *service_len,
                                                struct spaa_err *err)
{
  const char *dot = strrchr(app, '.');
  size_t i;
  if (!dot) {
    *service_len = strlen(app);
    return &types[0];
  }
  for (i = 0; i < N_TYPES; i++)
    if (strcmp(dot + 1, types[i].suffix) == 0) {
      if (dot == app)
        break;
      *service_len = (size_t)(dot - app);
      return &types[i];
    }
  if (dot == app && i < N_TYPES) {
    spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad name: the application name before "
                 "'.%s' (the profile type) is empty: name the application, e.g. "
                 "myapp.%s", types[i].suffix, types[i].suffix);
    return NULL;
  }
  spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad name: '%.64s' ends in no profile type "
               "known for folded stacks: give the application name a suffix such as .cpu, "
               ".wall, .alloc_space, .inuse_objects, .mutex_count, .block_duration, "
               ".goroutines (the text after the last '.' is the type)", app);
  return NULL;
}

int spaa_folded__meta(const struct spaa_convert_opts *o, struct spaa_folded__meta *m,
                      struct spaa_err *err)
{
  const struct spaa_pprof_opts *po = o ? o->pprof : NULL;
  int64_t rate = o && o->folded ? o->folded->sample_rate : 100;
  memset(m, 0, sizeof(*m));
  m->type = &types[0];
  if (po && po->name_raw && !(m->type = spaa_folded_type(po->name.app, &m->service_len, err)))
    return SPAA_E_BAD_REQUEST;
  if (m->type->timer && rate > 0) {
    m->period = 1000000000LL / rate; /* as Pyroscope: whole nanoseconds */
    m->sample_rate = rate;
    if (!m->period)
      return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "bad sampleRate %lld: over 1e9 Hz",
                          (long long)rate);
  }
  return 0;
}

/* Set o[k] = v (stealing v); 0 or SPAA_E_NOMEM. */
static int jset(json_t *o, const char *k, json_t *v)
{
  return v && json_object_set_new(o, k, v) == 0 ? 0 : SPAA_E_NOMEM;
}

/* Service, labels and attrs from the name (its service_name label as Pyroscope's ingest
 * adapter reads it: spaa_pprof_name_service). 0 or SPAA_E_NOMEM. */
static int apply_name(const struct spaa_pprof_opts *po, const struct spaa_folded__meta *m,
                      struct spaa_converted *c)
{
  const char *suffix = m->type->suffix; /* "cpu" for a name without one, as Pyroscope reads it */
  char *service;
  if (spaa_pprof_name_service(&po->name, po->name.app, m->service_len, &service, &c->labels))
    return SPAA_E_NOMEM;
  if (!c->service)
    c->service = service;
  else
    free(service);
  if (!c->labels && !(c->labels = json_object()))
    return SPAA_E_NOMEM;
  if (jset(c->labels, "__name__", json_string(suffix)) ||
      jset(c->attrs, "pyroscope_name", json_string(po->name_raw)) ||
      jset(c->attrs, "profile_type", json_string(suffix)))
    return SPAA_E_NOMEM;
  return 0;
}

int spaa_folded__apply(const struct spaa_convert_opts *o, const struct spaa_folded__meta *m,
                       struct spaa_converted *c, struct spaa_err *err)
{
  const struct spaa_pprof_opts *po = o ? o->pprof : NULL;
  struct spaa_header *h = &c->profile->header;
  int lines = o && o->folded && o->folded->lines;
  if ((o && o->service && !(c->service = strdup(o->service))) || !(c->attrs = json_object()) ||
      jset(c->attrs, "folded_format", json_string(lines ? "lines" : "folded")) ||
      (m->sample_rate && jset(c->attrs, "sample_rate", json_integer(m->sample_rate))) ||
      (po && po->name_raw && apply_name(po, m, c)))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  if (po && po->has_range) {
    if (jset(c->attrs, "from_ns", json_integer(po->from_ns)) ||
        jset(c->attrs, "until_ns", json_integer(po->until_ns)))
      return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
    c->start_ns = po->from_ns;
    c->end_ns = po->until_ns;
    h->has_time_range = 1;
    h->start = spaa_int(po->from_ns);
    h->end = spaa_int(po->until_ns);
    h->time_unit = "nanoseconds";
  }
  return 0;
}
