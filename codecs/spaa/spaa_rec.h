/* One SPAA NDJSON record (one line) parsed into the model's structs, shared by the reader
 * (spaa_read.c) and the validator (validate.c). Dictionary, stack, sample and thread lines go
 * through the zero-copy scanner (jscan.h); header and window lines through jansson. */
#ifndef SPAA_SPAA_REC_H
#define SPAA_SPAA_REC_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/idmap.h"
#include "spaa/spaa.h"
#include "spaa/spaa_io.h"

enum spaa_rtype {
  SPAA_REC_NONE = 0,
  SPAA_REC_HEADER,
  SPAA_REC_DSO,
  SPAA_REC_FRAME,
  SPAA_REC_THREAD,
  SPAA_REC_STACK,
  SPAA_REC_SAMPLE,
  SPAA_REC_WINDOW,
  SPAA_REC_OTHER /* a "type" this version does not know */
};

/* Which optional-in-the-model fields a record carried (spaa_rec.present). */
enum {
  SPAA_HAS_NAME = 1 << 0,    /* dso.name */
  SPAA_HAS_FUNC = 1 << 1,    /* frame.func */
  SPAA_HAS_KIND = 1 << 2,    /* frame.kind */
  SPAA_HAS_FRAMES = 1 << 3,  /* stack.frames */
  SPAA_HAS_CONTEXT = 1 << 4, /* stack.context */
  SPAA_HAS_WEIGHTS = 1 << 5, /* stack.weights */
  SPAA_HAS_EXCL_W = 1 << 6,  /* stack.exclusive.weights */
  SPAA_HAS_ID = 1 << 7,      /* dso, frame, stack id; sample stack_id */
  SPAA_HAS_PID = 1 << 8,     /* thread.pid */
  SPAA_HAS_TID = 1 << 9      /* thread.tid */
};

/* What was wrong with a record: a rule name, the field and a message (no newline). */
struct spaa_fault {
  const char *rule; /* "json", "type", "field-missing", "bad-value", "bad-enum",
                       "header-format", "header-version" (static) */
  char field[64];   /* e.g. "weights[2].value"; "" for the record as a whole */
  char msg[200];
};

/* The keys one object of a record used, to refuse a key given twice (JSON leaves the
 * meaning to the reader; first-wins and last-wins readers would disagree). Keys are borrowed
 * from the line's scratch; a handful are compared in place, more go to a hash map. */
#define SPAA_REC_FEW_KEYS 16
struct spaa_keyset {
  const char *k[SPAA_REC_FEW_KEYS];
  size_t len[SPAA_REC_FEW_KEYS];
  size_t n;
  struct spaa_strmap many; /* every key once n passed SPAA_REC_FEW_KEYS */
};

struct spaa_rec {
  int want_json;            /* 1: keep unknown keys and contexts as JSON (the reader) */
  int type;                 /* enum spaa_rtype of the last record parsed */
  char type_name[32];       /* its "type" string, truncated */
  unsigned present;         /* SPAA_HAS_* bits */
  char *scratch;            /* decoded strings of the line (owned) */
  size_t scratch_cap;
  json_t *doc;              /* header and window lines: the parsed record (owned) */
  struct spaa_dso dso;      /* the record, by type; strings point into the scratch, */
  struct spaa_frame frame;  /* json members are owned by the rec until a caller takes */
  struct spaa_thread thread;/* them (sets them to NULL) */
  struct spaa_stack stack;  /* frames, related, weights arrays owned by the rec */
  struct spaa_sample sample;
  size_t cap_frames;        /* allocated entries of stack.frames */
  size_t cap_related;       /* allocated entries of stack.related */
  const char *unknown_ctx;  /* first context key of the record outside the known set */
  size_t n_unknown_ctx;     /* how many such keys */
  char sid[24];             /* a numeric sample stack_id, as text */
  struct spaa_keyset keys;  /* the record's top-level keys */
  struct spaa_keyset ctx_keys; /* its context's keys */
  struct spaa_fault fault;  /* set when spaa_rec_parse fails */
};

/* `want_json`: see struct spaa_rec. Allocates nothing yet. */
void spaa_rec_init(struct spaa_rec *r, int want_json);
/* NULL-safe. */
void spaa_rec_free(struct spaa_rec *r);

/* Parse one line (without its newline). 0 with r->type set, -1 with r->fault set, or
 * SPAA_E_NOMEM. A line of only whitespace is SPAA_REC_NONE. */
int spaa_rec_parse(struct spaa_rec *r, const char *line, size_t len);

/* Header record (r->doc) into p->header: strings interned in p, JSON taken as references.
 * Checks format, version, the types of known fields and the frame_order and stack_id_mode
 * values; 0 or -1 with `f` set, SPAA_E_NOMEM. */
int spaa_rec_header(const json_t *doc, struct spaa_profile *p, struct spaa_fault *f);
/* Window record into w (interned in p): 0, -1 with `f` set, SPAA_E_NOMEM. */
int spaa_rec_window(const json_t *doc, struct spaa_profile *p, struct spaa_window *w,
                    struct spaa_fault *f);

/* The validator's loop (validate.c) with a hook, so that the reader can build its model from
 * the records the validator parses (spaa_read_checked: one parse per line). `each` (may be
 * NULL) gets every record that parsed, after the validator's checks of it and before the
 * next line, with the line's number and byte offset; it may take the record's JSON members
 * (setting them to NULL). It returns 0, or an SPAA_E_* that ends the loop (returned as is;
 * SPAA_E_NOMEM also reported as a diagnostic). `want_json` as in spaa_rec_init. Otherwise
 * as spaa_validate. */
typedef int (*spaa__rec_cb)(void *ctx, struct spaa_rec *r, size_t line, size_t offset);
int spaa__validate_each(spaa_read_cb rd, void *rd_ctx, spaa_diag_cb cb, void *cb_ctx,
                        size_t max_errors, struct spaa_validate_stats *st, int want_json,
                        spaa__rec_cb each, void *each_ctx);

/* 1 when `key` is a context key the spec names (event, pid, tid, cpu, comm, probe, execname,
 * uid, zonename, trace_fields) or an "x_" extension. */
int spaa_ctx_key_known(const char *key, size_t len);

#endif
