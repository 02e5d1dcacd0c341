/* Tests for the Sentry profile decoders (codecs/sentry_profile.c, codecs/sentry_spaa.c):
 * every rejection reason, the SPAA mapping of one fixture field by field, conformance of
 * every shared fixture with SOURCES.md, determinism and validity of the SPAA. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sentry/sentry.h"
#include "spaa/spaa_io.h"

#include "fixture.h"


/* ---- helpers: envelopes around payloads ------------------------------------------------ */

static const char TXN[] = "{\"type\":\"transaction\",\"transaction\":\"GET /from-item\","
                          "\"release\":\"item-release\",\"environment\":\"staging\","
                          "\"tags\":{\"region\":\"eu\"},"
                          "\"contexts\":{\"trace\":{\"trace_id\":\"4b25bc58f14243d8b208d1e22a054164\","
                          "\"op\":\"http.server\",\"status\":\"ok\"}}}";

/* "{}" header, optional transaction item, then one item of `type` holding payload. */
static char *wrap(const char *type, const char *item_platform, int with_txn, const void *payload,
                  size_t plen, size_t *len)
{
  char *b = malloc(plen + sizeof(TXN) + 256);
  size_t n = (size_t)sprintf(b, "{}\n");
  if (with_txn)
    n += (size_t)sprintf(b + n, "{\"type\":\"transaction\",\"length\":%zu}\n%s\n", strlen(TXN), TXN);
  if (item_platform)
    n += (size_t)sprintf(b + n, "{\"type\":\"%s\",\"platform\":\"%s\",\"length\":%zu}\n", type,
                         item_platform, plen);
  else
    n += (size_t)sprintf(b + n, "{\"type\":\"%s\",\"length\":%zu}\n", type, plen);
  memcpy(b + n, payload, plen);
  n += plen;
  b[n] = 0;
  *len = n;
  return b;
}

/* Convert an envelope; exactly one entry expected. */
static int convert_env(const char *env, size_t len, struct spaa_conv_list *l)
{
  struct spaa_err err;
  int rc;
  memset(l, 0, sizeof(*l));
  spaa_err_clear(&err);
  rc = spaa_convert_sentry((const uint8_t *)env, len, NULL, l, &err);
  if (rc)
    fail_msg("convert: %s", err.msg);
  assert_int_equal(l->n, 1);
  return rc;
}

/* ---- JSON patching for the rejection table ---------------------------------------------- */

/* Set (or delete when v == NULL) the member at a path like "profile.samples[1].stack_id". */
static void patch(json_t *root, const char *path, json_t *v)
{
  char buf[256], *p = buf, *tok;
  json_t *cur = root;
  snprintf(buf, sizeof(buf), "%s", path);
  for (;;) {
    size_t idx = (size_t)-1;
    char *br, *dot = strchr(p, '.');
    if (dot)
      *dot = 0;
    tok = p;
    if ((br = strchr(tok, '['))) {
      *br = 0;
      idx = strtoul(br + 1, NULL, 10);
    }
    if (!dot && idx == (size_t)-1) {
      if (v)
        json_object_set_new(cur, tok, v);
      else
        json_object_del(cur, tok);
      return;
    }
    cur = json_object_get(cur, tok);
    if (idx != (size_t)-1) {
      if (!dot) {
        if (v)
          json_array_set_new(cur, idx, v);
        else
          json_array_remove(cur, idx);
        return;
      }
      cur = json_array_get(cur, idx);
    }
    assert_non_null(cur);
    p = dot + 1;
  }
}

static const char V1_BASE[] =
    "{\"event_id\":\"11111111-2222-3333-4444-555555555555\",\"version\":\"1\","
    "\"platform\":\"python\",\"timestamp\":\"2024-01-01T00:00:00.5Z\","
    "\"device\":{\"architecture\":\"x86_64\"},\"os\":{\"name\":\"Linux\",\"version\":\"6.1\"},"
    "\"release\":\"r1\",\"environment\":\"prod\","
    "\"transaction\":{\"id\":\"30976f2ddbe04ac9b6bffe6e35d4710c\",\"name\":\"GET /\","
    "\"trace_id\":\"4b25bc58f14243d8b208d1e22a054164\",\"active_thread_id\":\"1\","
    "\"relative_start_ns\":\"0\",\"relative_end_ns\":\"100000000\"},"
    "\"profile\":{\"samples\":["
    "{\"stack_id\":0,\"thread_id\":\"1\",\"elapsed_since_start_ns\":\"10\"},"
    "{\"stack_id\":1,\"thread_id\":1,\"elapsed_since_start_ns\":20},"
    "{\"stack_id\":0,\"thread_id\":1,\"elapsed_since_start_ns\":30}],"
    "\"stacks\":[[0,1],[1],[]],"
    "\"frames\":[{\"function\":\"leaf\",\"filename\":\"a.py\",\"lineno\":3,\"module\":\"app\"},"
    "{\"function\":\"main\",\"filename\":\"m.py\",\"lineno\":1,\"module\":\"app\",\"in_app\":true}],"
    "\"thread_metadata\":{\"1\":{\"name\":\"MainThread\"},\"2\":{\"name\":\"unused\"}}}}";

static const char V2_BASE[] =
    "{\"chunk_id\":\"0432a0a4c25f4697bf9f0a2fcbe6a814\",\"profiler_id\":"
    "\"4d229f1d3807421ba62a5f8bc295d836\",\"version\":\"2\",\"platform\":\"python\","
    "\"release\":\"1.0\",\"client_sdk\":{\"name\":\"sentry.python\",\"version\":\"2.0.0\"},"
    "\"profile\":{\"samples\":["
    "{\"stack_id\":0,\"thread_id\":\"7\",\"timestamp\":1710805788.51},"
    "{\"stack_id\":1,\"thread_id\":\"7\",\"timestamp\":1710805788.5},"
    "{\"stack_id\":0,\"thread_id\":\"7\",\"timestamp\":1710805788.52}],"
    "\"stacks\":[[0,1],[1],[]],"
    "\"frames\":[{\"function\":\"leaf\"},{\"function\":\"main\"}],"
    "\"thread_metadata\":{\"7\":{\"name\":\"MainThread\"}}}}";

struct rej_case {
  const char *name;
  int v2;                 /* 0: V1 profile item, 1: V2 chunk item */
  const char *path;       /* member to change, NULL for none */
  const char *value;      /* its new JSON value, NULL to delete it */
  const char *reason;     /* expected reason, "" when accepted */
  const char *detail;     /* substring of the detail, or NULL */
  int no_txn_item;        /* V1: leave the transaction item out of the envelope */
  const char *item_platform;
};

/* Second changes some cases need, by case name. */
static const struct {
  const char *name, *path, *value;
} rej_more[] = {
    {"last sample after 30 s", "transaction.relative_end_ns", "0"},
    {"a sample before the last after 30 s", "transaction.relative_end_ns", "0"},
};

static const struct rej_case rej_cases[] = {
    {"v1 valid", 0, NULL, NULL, "", NULL, 0, NULL},
    {"v1 missing device", 0, "device", NULL, "invalid_json", "missing field `device`", 0, NULL},
    {"v1 architecture not a string", 0, "device.architecture", "1", "invalid_json",
     "device.architecture", 0, NULL},
    {"v1 missing os.version", 0, "os.version", NULL, "invalid_json", "`version`", 0, NULL},
    {"v1 bad timestamp", 0, "timestamp", "\"yesterday\"", "invalid_json", "RFC 3339", 0, NULL},
    {"v1 timestamp before 1970", 0, "timestamp", "\"1901-01-01T00:00:00Z\"", "invalid_json",
     "timestamp: invalid value, expected a date and time after 1970", 0, NULL},
    {"v1 missing event_id", 0, "event_id", NULL, "invalid_json", "event_id", 0, NULL},
    {"v1 float elapsed", 0, "profile.samples[0].elapsed_since_start_ns", "1.5", "invalid_json",
     "samples[0].elapsed_since_start_ns", 0, NULL},
    {"v1 missing thread_id", 0, "profile.samples[2].thread_id", NULL, "invalid_json",
     "samples[2]", 0, NULL},
    {"v1 lineno as a string", 0, "profile.frames[0].lineno", "\"3\"", "invalid_json",
     "frames[0].lineno", 0, NULL},
    {"v1 bad instruction_addr", 0, "profile.frames[0].instruction_addr", "\"0xzz\"",
     "invalid_json", "instruction_addr", 0, NULL},
    {"v1 negative frame index", 0, "profile.stacks[0]", "[-1]", "invalid_json", "stacks[0][0]", 0,
     NULL},
    {"v1 missing stacks", 0, "profile.stacks", NULL, "invalid_json", "stacks", 0, NULL},
    {"version 3", 0, "version", "\"3\"", "platform_not_supported", NULL, 0, NULL},
    {"legacy, no version", 0, "version", NULL, "platform_not_supported", "no version", 0, NULL},
    {"cocoa without build_number", 0, "platform", "\"cocoa\"", "invalid_profile_metadata",
     "os.build_number", 0, NULL},
    {"no transaction in the profile", 0, "transaction", NULL, "no_transaction_associated", NULL, 0,
     NULL},
    {"no transaction item", 0, NULL, NULL, "no_transaction_associated", "transaction item", 1,
     NULL},
    {"empty transaction name", 0, "transaction.name", "\"\"", "invalid_transaction_metadata", NULL,
     0, NULL},
    {"nil transaction id", 0, "transaction.id", "\"00000000000000000000000000000000\"",
     "invalid_transaction_metadata", NULL, 0, NULL},
    {"window excludes every sample", 0, "transaction.relative_start_ns", "\"40\"",
     "not_enough_samples", "outside the transaction's window", 0, NULL},
    {"one sample per thread", 0, "profile.samples",
     "[{\"stack_id\":0,\"thread_id\":\"1\",\"elapsed_since_start_ns\":\"10\"},"
     "{\"stack_id\":0,\"thread_id\":\"259\",\"elapsed_since_start_ns\":\"20\"}]",
     "not_enough_samples", "thread 1 has 1 sample", 0, NULL},
    {"only idle samples", 0, "profile.stacks[0]", "[]", "not_enough_samples", NULL, 0, NULL},
    {"sample stack out of range", 0, "profile.samples[1].stack_id", "9", "malformed_samples",
     "sample 1 references stack 9, but there are 3 stacks", 0, NULL},
    {"stack frame out of range", 0, "profile.stacks[2]", "[7]", "malformed_stacks",
     "stack 2 references frame 7, but there are 2 frames", 0, NULL},
    {"last sample after 30 s", 0, "profile.samples[2].elapsed_since_start_ns", "\"30000000001\"",
     "duration_is_too_long", "30000000001 ns", 0, NULL},
    {"a sample before the last after 30 s", 0, "profile.samples[1].elapsed_since_start_ns",
     "\"30000000001\"", "", NULL, 0, NULL},
    {"v2 valid", 1, NULL, NULL, "", NULL, 0, NULL},
    {"v2 valid, same class on the item", 1, NULL, NULL, "", NULL, 0, "node"},
    {"v2 missing client_sdk", 1, "client_sdk", NULL, "invalid_json", "client_sdk", 0, NULL},
    {"v2 missing chunk_id", 1, "chunk_id", NULL, "invalid_json", "event_id", 0, NULL},
    {"v2 thread_id as a number", 1, "profile.samples[0].thread_id", "7", "invalid_json",
     "thread_id", 0, NULL},
    {"v2 timestamp as a string", 1, "profile.samples[0].timestamp", "\"1\"", "invalid_json",
     "timestamp", 0, NULL},
    {"v2 negative timestamp", 1, "profile.samples[0].timestamp", "-1000000000.5", "invalid_json",
     "profile.samples[0].timestamp: invalid value, expected seconds since 1970", 0, NULL},
    {"v2 version 1", 1, "version", "\"1\"", "platform_not_supported", NULL, 0, NULL},
    {"v2 android trace", 1, "platform", "\"android\"", "platform_not_supported", NULL, 0, "android"},
    {"v2 UI item, backend chunk", 1, NULL, NULL, "invalid_profile_type", "cocoa", 0, "cocoa"},
    {"v2 one busy sample", 1, "profile.samples",
     "[{\"stack_id\":2,\"thread_id\":\"7\",\"timestamp\":1.0},"
     "{\"stack_id\":0,\"thread_id\":\"7\",\"timestamp\":2.0},"
     "{\"stack_id\":2,\"thread_id\":\"7\",\"timestamp\":3.0}]", "not_enough_samples",
     "thread 7 has 1 non-idle sample", 0, NULL},
    {"v2 stack out of range", 1, "profile.samples[1].stack_id", "5", "malformed_samples",
     "references stack 5", 0, NULL},
    {"v2 frame out of range", 1, "profile.stacks[1]", "[2]", "malformed_stacks", "frame 2", 0, NULL},
    {"v2 longer than 66 s", 1, "profile.samples[2].timestamp", "1710805854.6",
     "duration_is_too_long", "66 s", 0, NULL},
    {"v2 exactly 66 s", 1, "profile.samples[2].timestamp", "1710805854.5", "", NULL, 0, NULL},
};

static void run_rej_case(const struct rej_case *c)
{
  json_t *root = json_loads(c->v2 ? V2_BASE : V1_BASE, 0, NULL);
  char *payload, *env;
  size_t len;
  struct spaa_conv_list l;
  size_t i;
  assert_non_null(root);
  if (c->path)
    patch(root, c->path, c->value ? json_loads(c->value, JSON_DECODE_ANY, NULL) : NULL);
  for (i = 0; i < sizeof(rej_more) / sizeof(rej_more[0]); i++)
    if (strcmp(rej_more[i].name, c->name) == 0)
      patch(root, rej_more[i].path, json_loads(rej_more[i].value, JSON_DECODE_ANY, NULL));
  if (c->v2 && c->item_platform && strcmp(c->item_platform, "android") == 0)
    json_object_del(root, "version");
  payload = json_dumps(root, JSON_COMPACT);
  env = wrap(c->v2 ? "profile_chunk" : "profile", c->item_platform, !c->v2 && !c->no_txn_item,
             payload, strlen(payload), &len);
  convert_env(env, len, &l);
  if (strcmp(l.v[0].reason, c->reason) != 0)
    fail_msg("%s: reason '%s' (%s), want '%s'", c->name, l.v[0].reason, l.v[0].err.msg, c->reason);
  if (c->reason[0]) {
    assert_null(l.v[0].profile);
    assert_true(l.v[0].err.code < 0);
    if (c->detail && !strstr(l.v[0].err.msg, c->detail))
      fail_msg("%s: detail '%s' lacks '%s'", c->name, l.v[0].err.msg, c->detail);
  } else {
    assert_non_null(l.v[0].profile);
  }
  spaa_conv_list_free(&l);
  free(env);
  free(payload);
  json_decref(root);
}

static void test_rejections(void **state)
{
  size_t i;
  (void)state;
  for (i = 0; i < sizeof(rej_cases) / sizeof(rej_cases[0]); i++)
    run_rej_case(&rej_cases[i]);
}

static void test_not_json_and_two_profiles(void **state)
{
  struct spaa_conv_list l;
  struct spaa_err err;
  size_t len;
  char *env = wrap("profile", NULL, 1, "{nope", 5, &len);
  static const char two[] = "{}\n{\"type\":\"profile\"}\n{}\n{\"type\":\"profile_chunk\"}\n{}\n";
  (void)state;
  convert_env(env, len, &l);
  assert_string_equal(l.v[0].reason, "invalid_json");
  assert_int_equal(l.v[0].err.code, SPAA_E_BAD_JSON);
  spaa_conv_list_free(&l);
  free(env);
  memset(&l, 0, sizeof(l));
  /* a profile and a chunk: each stands alone (both invalid here: {} is no profile) */
  assert_int_equal(spaa_convert_sentry((const uint8_t *)two, strlen(two), NULL, &l, &err), 0);
  assert_int_equal(l.n, 2);
  assert_null(l.v[0].profile);
  assert_null(l.v[1].profile);
  assert_string_not_equal(l.v[1].reason, "too_many_profiles");
  spaa_conv_list_free(&l);
}

/* V1 mapping details on the constructed base profile. */
static void test_v1_base_mapping(void **state)
{
  struct spaa_conv_list l;
  size_t len;
  char *env = wrap("profile", NULL, 1, V1_BASE, strlen(V1_BASE), &len);
  const struct spaa_profile *p;
  (void)state;
  convert_env(env, len, &l);
  p = l.v[0].profile;
  assert_non_null(p);
  assert_string_equal(l.v[0].id, "11111111222233334444555555555555");
  /* time: 2024-01-01T00:00:00.5Z = 1704067200.5 s, plus elapsed ns, exact */
  assert_int_equal(p->header.start.i, 1704067200500000010LL);
  assert_int_equal(p->header.end.i, 1704067200500000030LL);
  assert_int_equal(p->n_samples, 3);
  assert_int_equal(p->samples[1].timestamp.i, 1704067200500000020LL);
  /* two stacks used: [0,1] twice and [1] once, heaviest first */
  assert_int_equal(p->n_stacks, 2);
  assert_int_equal(p->stacks[0].weights.v[0].value.i, 2);
  assert_int_equal(p->stacks[0].n_frames, 2);
  assert_int_equal(p->stacks[0].frames[0], 0); /* leaf first */
  assert_int_equal(p->stacks[0].excl_frame, 0);
  assert_int_equal(p->stacks[1].weights.v[0].value.i, 1);
  /* one dso for the module "app" */
  assert_int_equal(p->n_dsos, 1);
  assert_string_equal(p->dsos[0].name, "app");
  assert_string_equal(p->frames[0].srcline, "a.py:3");
  assert_true(json_is_true(json_object_get(p->frames[1].extra, "x_sentry_in_app")));
  assert_string_equal(json_string_value(json_object_get(p->frames[1].extra, "x_sentry_module")),
                      "app");
  /* only thread 1 is used */
  assert_int_equal(p->n_threads, 1);
  assert_int_equal(p->threads[0].tid, 1);
  assert_string_equal(p->threads[0].comm, "MainThread");
  /* the transaction item overrides the name and environment; the profile keeps its release */
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "transaction")),
                      "GET /from-item");
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "environment")), "staging");
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "release")), "r1");
  assert_string_equal(json_string_value(json_object_get(l.v[0].labels, "region")), "eu");
  spaa_conv_list_free(&l);
  free(env);
}

/* V2: float seconds to exact ns, sorting, string thread ids. */
static void test_v2_base_mapping(void **state)
{
  struct spaa_conv_list l;
  size_t len;
  char *env = wrap("profile_chunk", "python", 0, V2_BASE, strlen(V2_BASE), &len);
  const struct spaa_profile *p;
  (void)state;
  convert_env(env, len, &l);
  p = l.v[0].profile;
  assert_non_null(p);
  assert_string_equal(l.v[0].id, "0432a0a4c25f4697bf9f0a2fcbe6a814");
  assert_int_equal(p->n_samples, 3);
  assert_int_equal(p->samples[0].timestamp.i, 1710805788500000000LL);
  assert_int_equal(p->samples[1].timestamp.i, 1710805788510000000LL);
  assert_int_equal(p->samples[2].timestamp.i, 1710805788520000000LL);
  assert_int_equal(p->threads[0].tid, 7);
  assert_null(json_object_get(p->threads[0].extra, "x_sentry_thread_id"));
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "kind")), "continuous");
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "profiler_id")),
                      "4d229f1d3807421ba62a5f8bc295d836");
  assert_int_equal(l.v[0].start_ns, 1710805788500000000LL);
  assert_int_equal(l.v[0].end_ns, 1710805788520000000LL);
  spaa_conv_list_free(&l);
  free(env);
}

/* ---- read in place: what jansson would have read -----------------------------------------
 * The payload is not parsed into a tree (sentry_json.c): duplicate members count by their
 * last occurrence, escaped keys are keys, a NUL jansson skips is skipped, errors come in
 * Relay's order whatever the members' order in the bytes. */

static const char V2_FMT[] =
    "{\"chunk_id\":\"0432a0a4c25f4697bf9f0a2fcbe6a814\",\"profiler_id\":"
    "\"4d229f1d3807421ba62a5f8bc295d836\",\"version\":\"2\",\"platform\":\"python\","
    "\"client_sdk\":{\"name\":\"sentry.python\",\"version\":\"2.0.0\"},"
    "\"profile\":{\"samples\":[%s],\"stacks\":[[0,1],[1]],\"frames\":[%s]}}";
#define SAMPLES3 "{\"stack_id\":0,\"thread_id\":\"7\",\"timestamp\":1.0}," \
                 "{\"stack_id\":1,\"thread_id\":\"7\",\"timestamp\":1.5}," \
                 "{\"stack_id\":0,\"thread_id\":\"7\",\"timestamp\":2.0}"
#define FRAMES2 "{\"function\":\"leaf\"},{\"function\":\"main\"}"

static void test_read_in_place(void **state)
{
  static const struct {
    const char *name, *samples, *frames; /* the payload's arrays (NULL: the defaults) */
    size_t len;                          /* bytes of samples when it holds NULs, else 0 */
    const char *reason, *detail, *func;  /* outcome; a function the model must have */
  } cases[] = {
      {"a duplicate stack_id: the last", "{\"stack_id\":9,\"thread_id\":\"7\",\"timestamp\":1.0,"
       "\"stack_id\":0}," SAMPLES3, NULL, 0, "", NULL, "leaf"},
      {"a duplicate stack_id, the last out of range", "{\"stack_id\":0,\"thread_id\":\"7\","
       "\"timestamp\":1.0,\"stack_id\":9}," SAMPLES3, NULL, 0, "malformed_samples",
       "sample 0 references stack 9", NULL},
      {"an escaped key", NULL, "{\"\\u0066unction\":\"le\\u0061f\"},{\"function\":\"main\"}",
       0, "", NULL, "leaf"},
      {"Relay's order, not the bytes'", NULL, "{\"lineno\":\"3\",\"abs_path\":1},{}", 0,
       "invalid_json", "profile.frames[0].abs_path: invalid type, expected a string", NULL},
      {"a frame member twice: the last", NULL, "{\"function\":7,\"function\":\"leaf\"},{}", 0,
       "", NULL, "leaf"},
      {"NULs jansson skips", "{\"stack_id\":0\0,\"thread_id\":\"7\",\"timestamp\":1.0\0},"
       SAMPLES3, NULL, sizeof("{\"stack_id\":0\0,\"thread_id\":\"7\",\"timestamp\":1.0\0},"
       SAMPLES3) - 1, "", NULL, "leaf"},
      {"a number jansson refuses", "{\"stack_id\":99999999999999999999,\"thread_id\":\"7\","
       "\"timestamp\":1.0}," SAMPLES3, NULL, 0, "invalid_json",
       "payload is not valid JSON: too big integer", NULL},
  };
  size_t i, k;
  (void)state;
  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const char *sm = cases[i].samples ? cases[i].samples : SAMPLES3;
    size_t sl = cases[i].len ? cases[i].len : strlen(sm), plen, elen;
    const char *fr = cases[i].frames ? cases[i].frames : FRAMES2;
    char *payload = malloc(sizeof(V2_FMT) + sl + strlen(fr)), *env, *at;
    struct spaa_conv_list l;
    assert_non_null(payload);
    /* the samples go in as bytes (they may hold NULs) */
    at = strstr(V2_FMT, "%s");
    plen = (size_t)(at - V2_FMT);
    memcpy(payload, V2_FMT, plen);
    memcpy(payload + plen, sm, sl);
    plen += sl;
    plen += (size_t)sprintf(payload + plen, at + 2, fr);
    env = wrap("profile_chunk", NULL, 0, payload, plen, &elen);
    convert_env(env, elen, &l);
    if (strcmp(l.v[0].reason, cases[i].reason) != 0)
      fail_msg("%s: reason '%s' (%s), want '%s'", cases[i].name, l.v[0].reason, l.v[0].err.msg,
               cases[i].reason);
    if (cases[i].detail && !strstr(l.v[0].err.msg, cases[i].detail))
      fail_msg("%s: detail '%s' lacks '%s'", cases[i].name, l.v[0].err.msg, cases[i].detail);
    if (cases[i].func) {
      assert_non_null(l.v[0].profile);
      for (k = 0; k < l.v[0].profile->n_frames; k++)
        if (strcmp(l.v[0].profile->frames[k].func, cases[i].func) == 0)
          break;
      if (k == l.v[0].profile->n_frames)
        fail_msg("%s: no frame '%s'", cases[i].name, cases[i].func);
    }
    spaa_conv_list_free(&l);
    free(env);
    free(payload);
  }
}

/* The decoder's tables count to the conversion's meter, as the tree did: a chunk of 300,000
 * empty stacks no sample uses (2.4 MB of offsets, nothing in the model) is refused under a
 * meter of 1 MiB, and gives back what it held. */
static void test_tables_metered(void **state)
{
  struct spaa_meter m;
  struct sentry_item_ctx ctx;
  struct spaa_converted c;
  size_t n = 300000, i, plen;
  char *stacks = malloc(n * 3 + 16), *payload;
  const char *fmt = "{\"chunk_id\":\"0432a0a4c25f4697bf9f0a2fcbe6a814\",\"profiler_id\":"
                    "\"4d229f1d3807421ba62a5f8bc295d836\",\"version\":\"2\",\"platform\":"
                    "\"python\",\"client_sdk\":{\"name\":\"s\",\"version\":\"1\"},"
                    "\"profile\":{\"samples\":[" SAMPLES3 "],\"stacks\":[[0,1],[1]%s],"
                    "\"frames\":[" FRAMES2 "]}}";
  (void)state;
  assert_non_null(stacks);
  for (i = 0; i < n; i++)
    memcpy(stacks + 3 * i, ",[]", 3);
  stacks[3 * n] = 0;
  payload = malloc(strlen(fmt) + 3 * n);
  assert_non_null(payload);
  plen = (size_t)sprintf(payload, fmt, stacks);
  memset(&m, 0, sizeof(m));
  m.room = (size_t)1 << 20;
  memset(&ctx, 0, sizeof(ctx));
  ctx.in_envelope = 1;
  ctx.meter = &m;
  memset(&c, 0, sizeof(c));
  assert_true(sentry_profile_convert((const uint8_t *)payload, plen, SENTRY_ITEM_CHUNK, &ctx, &c) < 0);
  assert_null(c.profile);
  assert_int_equal(m.refused, SPAA_E_TOO_LARGE);
  assert_int_equal(m.held, 0);
  /* with room, it converts */
  memset(&m, 0, sizeof(m));
  m.room = (size_t)64 << 20;
  memset(&c, 0, sizeof(c));
  assert_int_equal(sentry_profile_convert((const uint8_t *)payload, plen, SENTRY_ITEM_CHUNK, &ctx, &c), 0);
  assert_non_null(c.profile);
  assert_int_equal(c.profile->n_stacks, 2);
  spaa_profile_free(c.profile);
  json_decref(c.attrs);
  json_decref(c.labels);
  assert_int_equal(m.held, 0);
  free(payload);
  free(stacks);
}

/* ---- the mapping of one fixture, field by field ----------------------------------------- */

static const struct spaa_frame *frame_by_id(const struct spaa_profile *p, uint64_t id)
{
  size_t i;
  for (i = 0; i < p->n_frames; i++)
    if (p->frames[i].id == id)
      return &p->frames[i];
  return NULL;
}

static void test_fixture_mapping(void **state)
{
  struct spaa_conv_list l;
  const struct spaa_profile *p;
  const struct spaa_header *h;
  const struct spaa_frame *f;
  const json_t *x;
  uint8_t *b;
  size_t len, i;
  (void)state;
  if (!spaa_test_have_fixtures("sentry", NULL))
    skip();
  b = spaa_test_fixture_in("sentry", "constructed_envelope_transaction_profile_v1.envelope", &len);
  assert_non_null(b);
  convert_env((const char *)b, len, &l);
  p = l.v[0].profile;
  assert_non_null(p);
  h = &p->header;
  /* entry */
  assert_string_equal(l.v[0].id, "41fed0925670468bb0457f61a74688ec");
  assert_null(l.v[0].service);
  assert_string_equal(l.v[0].reason, "");
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "platform")), "cocoa");
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "release")), "0.1 (199)");
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "transaction")),
                      "a-transaction"); /* from the transaction item, as Relay does */
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "trace_id")),
                      "4b25bc58f14243d8b208d1e22a054164");
  assert_string_equal(json_string_value(json_object_get(l.v[0].attrs, "transaction_id")),
                      "30976f2ddbe04ac9b6bffe6e35d4710c");
  /* header */
  assert_string_equal(h->source_tool, "sentry");
  assert_int_equal(h->frame_order, SPAA_LEAF_TO_ROOT);
  assert_int_equal(h->n_events, 1);
  assert_string_equal(h->events[0].name, "wall");
  assert_string_equal(h->events[0].kind, "timer");
  assert_string_equal(h->events[0].mode, "frequency");
  assert_string_equal(h->events[0].primary_metric, "samples");
  assert_int_equal(h->events[0].frequency_hz.i, 101);
  assert_string_equal(h->time_unit, "nanoseconds");
  /* 2022-09-01T09:45:00.000Z = 1662025500 s; samples at 10500500 .. 40500500 ns */
  assert_int_equal(h->start.i, 1662025500010500500LL);
  assert_int_equal(h->end.i, 1662025500040500500LL);
  assert_int_equal(l.v[0].start_ns, h->start.i);
  assert_int_equal(l.v[0].end_ns, h->end.i);
  assert_string_equal(json_string_value(json_object_get(h->extra, "x_sentry_platform")), "cocoa");
  assert_string_equal(json_string_value(json_object_get(json_object_get(h->extra, "x_sentry_os"),
                                                        "build_number")), "19H253");
  assert_string_equal(json_string_value(json_object_get(json_object_get(h->extra, "x_sentry_device"),
                                                        "model")), "iPhone14,3");
  x = json_object_get(h->extra, "x_sentry_transaction");
  assert_string_equal(json_string_value(json_object_get(x, "segment_id")), "bd2eb23da2beb459");
  assert_string_equal(json_string_value(json_object_get(x, "name")), "a-transaction");
  x = json_object_get(h->extra, "x_sentry_queue_metadata");
  assert_int_equal(json_object_size(x), 1); /* only the queue a sample uses */
  assert_non_null(json_object_get(x, "0x0000000102adc700"));
  /* dsos: the image, and [unknown] for the frames outside it */
  assert_int_equal(p->n_dsos, 2);
  assert_string_equal(p->dsos[0].build_id, "3242027925e234e68bc78a006a8f2425");
  assert_true(strstr(p->dsos[0].name, "TrendingMovies.app/TrendingMovies") != NULL);
  assert_true(p->dsos[0].has_mapping);
  assert_int_equal(p->dsos[0].map_start, 0x10258c000ULL);
  assert_int_equal(p->dsos[0].map_limit, 0x10258c000ULL + 1720320);
  assert_string_equal(json_string_value(json_object_get(p->dsos[0].extra, "x_sentry_type")), "macho");
  assert_string_equal(p->dsos[1].name, "[unknown]");
  /* frames: addresses with the pointer-authentication bits stripped, unresolved */
  f = frame_by_id(p, 0);
  assert_non_null(f);
  assert_int_equal(f->ip, 0xa722447ffffffffcULL & 0xFFFFFFFFFULL);
  assert_false(f->func_resolved);
  assert_string_equal(f->func, "0xffffffffc");
  assert_int_equal(f->dso, 1);
  assert_false(f->srcline_resolved);
  f = frame_by_id(p, 1);
  assert_int_equal(f->ip, 0x442e4b81f5031e58ULL & 0xFFFFFFFFFULL);
  /* threads: "1" used, "2" dropped */
  assert_int_equal(p->n_threads, 1);
  assert_int_equal(p->threads[0].tid, 1);
  assert_int_equal(json_integer_value(json_object_get(p->threads[0].extra, "x_sentry_priority")), 31);
  /* stacks: two, two samples each, exclusive on the leaf */
  assert_int_equal(p->n_stacks, 2);
  for (i = 0; i < 2; i++) {
    assert_string_equal(p->stacks[i].event, "wall");
    assert_int_equal(p->stacks[i].n_frames, 1);
    assert_string_equal(p->stacks[i].weights.v[0].metric, "samples");
    assert_int_equal(p->stacks[i].weights.v[0].value.i, 2);
    assert_true(p->stacks[i].has_exclusive);
    assert_int_equal(p->stacks[i].excl_frame, p->stacks[i].frames[0]);
    assert_true(strncmp(p->stacks[i].id, "0x", 2) == 0 && strlen(p->stacks[i].id) == 34);
  }
  /* samples: every one kept, in order, on thread 1, referencing the stacks */
  assert_int_equal(p->n_samples, 4);
  for (i = 0; i < 4; i++) {
    assert_int_equal(p->samples[i].timestamp.i, 1662025500010500500LL + (int64_t)i * 10000000);
    assert_int_equal(p->samples[i].tid, 1);
    assert_string_equal(json_string_value(json_object_get(p->samples[i].context,
                                                          "x_sentry_queue_address")),
                        "0x0000000102adc700");
  }
  assert_string_equal(p->samples[0].stack_id, p->samples[2].stack_id);
  assert_string_equal(p->samples[1].stack_id, p->samples[3].stack_id);
  assert_string_not_equal(p->samples[0].stack_id, p->samples[1].stack_id);
  assert_true(strcmp(p->samples[0].stack_id, p->stacks[0].id) == 0 ||
              strcmp(p->samples[0].stack_id, p->stacks[1].id) == 0);
  spaa_conv_list_free(&l);
  free(b);
}

/* ---- conformance: every shared fixture gets SOURCES.md's outcome ------------------------- */

struct conf_case {
  const char *file;
  const char *as;      /* "profile", "profile_chunk", "envelope" */
  const char *reason;  /* expected Relay reason without "profiling_", "" = accepted */
  size_t samples;      /* accepted: samples kept (0 = not checked) */
};

static const struct conf_case conf_cases[] = {
    {"relay_sample_v1_valid_cocoa.json", "profile", "", 4},
    {"relay_sample_v1_valid_cocoa.json", "profile_chunk", "platform_not_supported", 0},
    {"relay_sample_v2_valid_cocoa.json", "profile_chunk", "", 4},
    {"relay_sample_v2_valid_cocoa.json", "profile", "platform_not_supported", 0},
    {"relay_legacy_v1_no_transaction_oldschema.json", "profile", "invalid_json", 0},
    {"relay_legacy_pre_v1_python.json", "profile", "platform_not_supported", 0},
    {"sentry_fixture_js_v1_missing_device_os.json", "profile", "invalid_json", 0},
    {"sentry_java_profile_data_v2_fragment.json", "profile_chunk", "invalid_json", 0},
    {"vroom_node_v1.json", "profile", "", 44},
    {"vroom_cocoa_legacy_stored.json", "profile", "platform_not_supported", 0},
    {"vroomrs_sample_v1_cocoa.json", "profile", "invalid_profile_metadata", 0},
    {"vroomrs_sample_v1_python.json", "profile", "not_enough_samples", 0},
    {"vroomrs_sample_v2_cocoa.json", "profile_chunk", "", 4},
    {"vroomrs_sample_v2_python.json", "profile_chunk", "not_enough_samples", 0},
    {"vroomrs_sample_v2_android.json", "profile_chunk", "", 5},
    {"vroomrs_android_chunk.json", "profile_chunk", "platform_not_supported", 0},
    {"vroomrs_android_chunk_2.json", "profile_chunk", "platform_not_supported", 0},
    {"vroomrs_android_legacy_profile.json", "profile", "invalid_json", 0},
    {"constructed_envelope_transaction_profile_v1.envelope", "envelope", "", 4},
    {"constructed_envelope_profile_chunk_v2.envelope", "envelope", "", 4},
    {"constructed_envelope_profile_chunk_platform_mismatch_implicit_length.envelope", "envelope",
     "invalid_profile_type", 0},
};

static void diag_print(void *ctx, const struct spaa_diag *d)
{
  if (d->is_error)
    fprintf(stderr, "  %s line %zu: %s (%s)\n", (const char *)ctx, d->line, d->msg, d->rule);
}

/* The SPAA of an accepted profile: valid, and the same bytes on a second conversion. */
static void check_spaa(const char *name, const char *env, size_t len, const struct spaa_profile *p)
{
  struct spaa_buf a, b;
  struct spaa_err err;
  struct spaa_conv_list l2;
  spaa_buf_init(&a, 0);
  spaa_buf_init(&b, 0);
  assert_int_equal(spaa_write_buf(p, 0, &a, &err), 0);
  convert_env(env, len, &l2);
  assert_non_null(l2.v[0].profile);
  assert_int_equal(spaa_write_buf(l2.v[0].profile, 0, &b, &err), 0);
  if (a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
    fail_msg("%s: two conversions give different SPAA", name);
  {
    struct spaa_validate_stats st;
    memset(&st, 0, sizeof(st));
    if (spaa_validate_buf(a.p, a.len, diag_print, (void *)name, 20, &st) != 0)
      fail_msg("%s: the SPAA does not validate (%zu errors)", name, st.errors);
  }
  spaa_conv_list_free(&l2);
  spaa_buf_free(&a);
  spaa_buf_free(&b);
}

static void run_conf_case(const struct conf_case *c)
{
  size_t len, elen;
  uint8_t *b = spaa_test_fixture_in("sentry", c->file, &len);
  char *env;
  struct spaa_conv_list l;
  assert_non_null(b);
  if (strcmp(c->as, "envelope") == 0) {
    env = (char *)b;
    elen = len;
    b = NULL;
  } else {
    /* V1 profiles travel with a transaction item; chunks alone */
    int chunk = strcmp(c->as, "profile_chunk") == 0;
    env = wrap(c->as, NULL, !chunk, b, len, &elen);
  }
  convert_env(env, elen, &l);
  if (strcmp(l.v[0].reason, c->reason) != 0)
    fail_msg("%s as %s: reason '%s' (%s), want '%s'", c->file, c->as, l.v[0].reason,
             l.v[0].err.msg, c->reason);
  if (!c->reason[0]) {
    assert_non_null(l.v[0].profile);
    if (c->samples)
      assert_int_equal(l.v[0].profile->n_samples, c->samples);
    check_spaa(c->file, env, elen, l.v[0].profile);
  } else {
    assert_null(l.v[0].profile);
    assert_true(l.v[0].err.msg[0] != 0);
  }
  spaa_conv_list_free(&l);
  free(env);
  free(b);
}

static void test_conformance(void **state)
{
  size_t i;
  (void)state;
  if (!spaa_test_have_fixtures("sentry", NULL))
    skip();
  for (i = 0; i < sizeof(conf_cases) / sizeof(conf_cases[0]); i++)
    run_conf_case(&conf_cases[i]);
}

/* The Java fragment is a chunk's inner profile: wrapped in a chunk it passes. */
static void test_java_fragment_wrapped(void **state)
{
  size_t len, clen, elen;
  uint8_t *b;
  char *chunk, *env;
  struct spaa_conv_list l;
  (void)state;
  if (!spaa_test_have_fixtures("sentry", NULL))
    skip();
  b = spaa_test_fixture_in("sentry", "sentry_java_profile_data_v2_fragment.json", &len);
  assert_non_null(b);
  chunk = malloc(len + 512);
  clen = (size_t)sprintf(chunk,
                         "{\"version\":\"2\",\"chunk_id\":\"6a3d0c5e2b8f4c1d9e7a5b3c1d2e4f60\","
                         "\"profiler_id\":\"1b2c3d4e5f60718293a4b5c6d7e8f901\",\"platform\":\"java\","
                         "\"release\":\"1.0\",\"client_sdk\":{\"name\":\"sentry.java\","
                         "\"version\":\"8.0.0\"},\"profile\":");
  memcpy(chunk + clen, b, len);
  clen += len;
  chunk[clen++] = '}';
  env = wrap("profile_chunk", "java", 0, chunk, clen, &elen);
  convert_env(env, elen, &l);
  if (l.v[0].reason[0])
    fail_msg("wrapped fragment: %s (%s)", l.v[0].reason, l.v[0].err.msg);
  assert_int_equal(l.v[0].profile->n_samples, 2);
  assert_int_equal(l.v[0].profile->n_threads, 1);
  assert_int_equal(l.v[0].profile->threads[0].tid, 57);
  assert_string_equal(l.v[0].profile->threads[0].comm, "http-nio-8080-Acceptor");
  check_spaa("wrapped fragment", env, elen, l.v[0].profile);
  spaa_conv_list_free(&l);
  free(env);
  free(chunk);
  free(b);
}

/* A bare profile file converts like the same profile in an envelope (convert CLI path). */
static void test_bare_file(void **state)
{
  size_t len;
  uint8_t *b;
  struct spaa_conv_list l;
  struct spaa_err err;
  struct spaa_convert_opts o = {.service = "my-service"};
  (void)state;
  if (!spaa_test_have_fixtures("sentry", NULL))
    skip();
  b = spaa_test_fixture_in("sentry", "relay_sample_v2_valid_cocoa.json", &len);
  assert_non_null(b);
  memset(&l, 0, sizeof(l));
  assert_int_equal(spaa_convert_sentry(b, len, &o, &l, &err), 0);
  assert_int_equal(l.n, 1);
  assert_non_null(l.v[0].profile);
  assert_string_equal(l.v[0].service, "my-service");
  /* the cocoa queue thread id is hex: tid is its value, the original kept */
  assert_int_equal(l.v[0].profile->threads[0].tid, 0x102adc700LL);
  assert_string_equal(json_string_value(json_object_get(l.v[0].profile->threads[0].extra,
                                                        "x_sentry_thread_id")),
                      "0x0000000102adc700");
  spaa_conv_list_free(&l);
  free(b);
}

/* A frame with `lineno` but no `filename`/`abs_path` keeps its line as ":LINE", so two call
 * lines of one function are two frames and two stacks; lineno 0 without a file: no srcline,
 * srcline_resolved false; `abs_path` stands in for a missing filename. */
static void test_line_without_file(void **state)
{
  static const char prof[] =
      "{\"event_id\":\"11111111-2222-3333-4444-666666666666\",\"version\":\"1\","
      "\"platform\":\"node\",\"timestamp\":\"2024-01-01T00:00:00Z\","
      "\"device\":{\"architecture\":\"x86_64\"},\"os\":{\"name\":\"Linux\",\"version\":\"6.1\"},"
      "\"transaction\":{\"id\":\"30976f2ddbe04ac9b6bffe6e35d4710c\",\"name\":\"GET /\","
      "\"trace_id\":\"4b25bc58f14243d8b208d1e22a054164\",\"active_thread_id\":\"1\","
      "\"relative_start_ns\":\"0\",\"relative_end_ns\":\"100000000\"},"
      "\"profile\":{\"samples\":["
      "{\"stack_id\":0,\"thread_id\":1,\"elapsed_since_start_ns\":10},"
      "{\"stack_id\":1,\"thread_id\":1,\"elapsed_since_start_ns\":20},"
      "{\"stack_id\":2,\"thread_id\":1,\"elapsed_since_start_ns\":30},"
      "{\"stack_id\":0,\"thread_id\":1,\"elapsed_since_start_ns\":40},"
      "{\"stack_id\":1,\"thread_id\":1,\"elapsed_since_start_ns\":50},"
      "{\"stack_id\":0,\"thread_id\":1,\"elapsed_since_start_ns\":60}],"
      "\"stacks\":[[0,3],[1,3],[2,3]],"
      "\"frames\":[{\"function\":\"work\",\"lineno\":135},{\"function\":\"work\",\"lineno\":140},"
      "{\"function\":\"work\",\"lineno\":0},"
      "{\"function\":\"main\",\"abs_path\":\"/srv/m.js\",\"lineno\":1}]}}";
  struct spaa_conv_list l;
  size_t len, i;
  char *env = wrap("profile", NULL, 1, prof, strlen(prof), &len);
  const struct spaa_profile *p;
  const struct spaa_frame *f[3];
  (void)state;
  convert_env(env, len, &l);
  p = l.v[0].profile;
  if (!p)
    fail_msg("dropped: %s: %s", l.v[0].reason, l.v[0].err.msg);
  assert_int_equal(p->n_stacks, 3); /* by weight: 3, 2, 1 */
  for (i = 0; i < 3; i++) {
    assert_non_null(f[i] = frame_by_id(p, p->stacks[i].frames[0]));
    assert_string_equal(f[i]->func, "work");
    assert_string_equal(frame_by_id(p, p->stacks[i].frames[1])->srcline, "/srv/m.js:1");
  }
  assert_string_not_equal(p->stacks[0].id, p->stacks[1].id);
  assert_string_not_equal(p->stacks[1].id, p->stacks[2].id);
  assert_string_equal(f[0]->srcline, ":135");
  assert_true(f[0]->srcline_resolved);
  assert_string_equal(f[1]->srcline, ":140");
  assert_true(f[1]->srcline_resolved);
  assert_null(f[2]->srcline);
  assert_false(f[2]->srcline_resolved);
  spaa_conv_list_free(&l);
  free(env);
}

/* The ingest flow asks for compact samples: the same SPAA text from the envelope fixtures (a
 * V1 profile whose samples carry queue contexts, a V2 chunk), no sample record left. */
static void test_compact_samples(void **state)
{
  static const char *const files[] = {"constructed_envelope_transaction_profile_v1.envelope",
                                      "constructed_envelope_profile_chunk_v2.envelope"};
  size_t k, i;
  (void)state;
  if (!spaa_test_have_fixtures("sentry", NULL))
    skip();
  for (k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
    struct spaa_convert_opts o;
    struct spaa_conv_list la, lb;
    struct spaa_buf a, b;
    struct spaa_err err;
    const struct spaa_profile *pa;
    size_t len, with_ctx = 0;
    uint8_t *in = spaa_test_fixture_in("sentry", files[k], &len);
    assert_non_null(in);
    memset(&o, 0, sizeof(o));
    o.compact_samples = 1;
    memset(&la, 0, sizeof(la));
    memset(&lb, 0, sizeof(lb));
    assert_int_equal(spaa_convert_sentry(in, len, &o, &la, &err), 0);
    assert_int_equal(spaa_convert_sentry(in, len, NULL, &lb, &err), 0);
    pa = la.v[0].profile;
    assert_non_null(pa);
    assert_non_null(lb.v[0].profile);
    assert_int_equal(pa->n_samples, 0);
    assert_true(pa->n_csamples > 0);
    assert_int_equal(pa->n_csamples, lb.v[0].profile->n_samples);
    for (i = 0; i < pa->n_csamples; i++)
      with_ctx += pa->csamples[i].ctx < pa->cs.n_ctxs &&
                  pa->cs.ctxs[pa->csamples[i].ctx].context != NULL;
    if (k == 0)
      assert_true(with_ctx > 0); /* the queue's */
    spaa_buf_init(&a, 0);
    spaa_buf_init(&b, 0);
    assert_int_equal(spaa_write_buf(pa, 0, &a, &err), 0);
    assert_int_equal(spaa_write_buf(lb.v[0].profile, 0, &b, &err), 0);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.p, b.p, a.len);
    spaa_buf_free(&a);
    spaa_buf_free(&b);
    spaa_conv_list_free(&la);
    spaa_conv_list_free(&lb);
    free(in);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rejections),        cmocka_unit_test(test_not_json_and_two_profiles),
      cmocka_unit_test(test_v1_base_mapping),   cmocka_unit_test(test_v2_base_mapping),
      cmocka_unit_test(test_fixture_mapping),   cmocka_unit_test(test_conformance),
      cmocka_unit_test(test_java_fragment_wrapped), cmocka_unit_test(test_bare_file),
      cmocka_unit_test(test_line_without_file),  cmocka_unit_test(test_read_in_place),
      cmocka_unit_test(test_compact_samples),
      cmocka_unit_test(test_tables_metered),
  };
  spaa_test_have_fixtures("sentry", "the Sentry fixture tests");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
