/* OTLP profiles requests: detect JSON or protobuf and the version, decode, list the profiles
 * to convert, summarize rejections; and the `otlp` converter entry point. */
#include "otlp/otlp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/blocks.h"
#include "base/limits.h"
#include "otlp/otlp_int.h"

static int v1dev_units(struct otlp_request *r)
{
  const OT_Request *req = (const OT_Request *)r->msg;
  const OT_Dict *d = req->dictionary ? req->dictionary : &r->empty_dict;
  size_t ri, si, pi, total = 0;
  for (ri = 0; ri < req->n_resource_profiles; ri++)
    for (si = 0; si < req->resource_profiles[ri]->n_scope_profiles; si++)
      total += req->resource_profiles[ri]->scope_profiles[si]->n_profiles;
  if (total && !(r->units = calloc(total, sizeof(*r->units))))
    return SPAA_E_NOMEM;
  for (ri = 0; ri < req->n_resource_profiles; ri++) {
    const OT_ResourceProfiles *rp = req->resource_profiles[ri];
    for (si = 0; si < rp->n_scope_profiles; si++) {
      const OT_ScopeProfiles *sp = rp->scope_profiles[si];
      for (pi = 0; pi < sp->n_profiles; pi++) {
        struct otlp_unit *u = &r->units[r->n_units++];
        const OT_Profile *p = sp->profiles[pi];
        u->dict = d;
        u->cdict = &r->cdict;
        u->shared_dict = 1;
        u->resource = rp->resource;
        u->resource_schema = rp->schema_url ? rp->schema_url : "";
        u->scope = sp->scope;
        u->scope_schema = sp->schema_url ? sp->schema_url : "";
        u->profile = p;
        u->origin.resource = ri;
        u->origin.scope = si;
        u->origin.profile = pi;
        u->origin.payload = p->original_payload.len ? p->original_payload.data : NULL;
        u->origin.payload_len = p->original_payload.len;
        u->origin.payload_format = p->original_payload_format ? p->original_payload_format : "";
      }
    }
  }
  return 0;
}

/* ---- the unpacked request's memory -----------------------------------------------------
 * A request unpacks to some 300 k small messages, strings and arrays, all freed together:
 * they are carved from blocks instead of malloc'ed one by one, which saves malloc's header
 * and rounding on each (a fifth of a dictionary's size) and the time of as many frees. */

#define OTLP_BLOCK ((size_t)256 << 10) /* above the mmap threshold: freed back whole */

static void *block_alloc(void *arg, size_t size)
{
  return spaa_blocks_take(arg, size, 8, OTLP_BLOCK, NULL); /* nothing wider in the structs */
}

/* protobuf-c frees only its scratch (the table of fields it scans a message's bytes into,
 * 32 bytes a field: 8 MB for a dictionary of 200 k entries) before returning, and what it
 * had made when unpacking fails. Scratch over a quarter block had a block of its own and
 * goes back now; the rest goes with the request. */
static void block_release(void *arg, void *p)
{
  if (p)
    spaa_blocks_give(arg, p, NULL);
}

/* protobuf_c_message_unpack into r's blocks */
static ProtobufCMessage *unpack(struct otlp_request *r, const ProtobufCMessageDescriptor *desc,
                                size_t len, const uint8_t *buf)
{
  ProtobufCAllocator a = {block_alloc, block_release, &r->blocks};
  return protobuf_c_message_unpack(desc, &a, len, buf);
}

/* A v1development protobuf request unpacked without its samples, which stay in buf, and
 * without its dictionary's location and stack tables, read into r->cdict. */
static int unpack_without_samples(struct otlp_request *r, const uint8_t *buf, size_t len,
                                  struct spaa_err *err)
{
  struct spaa_buf rest;
  int rc;
  spaa_buf_init(&rest, 0);
  if ((rc = otlp__strip_samples(buf, len, &rest, &r->wire, &r->n_wire, &r->cdict, err)))
    return rc;
  r->body = buf;
  r->body_len = len;
  if (r->refetch) /* read once to find the samples; they come back from the file when read */
    spaa_mem_discard(buf, len);
  r->msg = unpack(r, &OT_REQUEST_DESC, rest.len, (const uint8_t *)(rest.p ? rest.p : ""));
  spaa_buf_free(&rest);
  if (!r->msg)
    return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0,
                        "cannot decode ExportProfilesServiceRequest (v1development): "
                        "malformed protobuf");
  return 0;
}

/* Point each unit at its Profile's bytes (the units and the Profiles on the wire come in the
 * same order) and read every sample once: a malformed one fails the whole request, as it
 * would have failed its unpacking. */
static int wire_samples(struct otlp_request *r, struct spaa_err *err)
{
  size_t k;
  if (r->n_wire != r->n_units)
    return spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0,
                        "cannot decode ExportProfilesServiceRequest (v1development): %zu "
                        "profiles on the wire, %zu decoded", r->n_wire, r->n_units);
  for (k = 0; k < r->n_units; k++) {
    struct otlp_samples it;
    const OT_Sample *s;
    int rc;
    r->units[k].wire = r->wire[k].wire;
    r->units[k].wire_len = r->wire[k].len;
    r->units[k].refetch = r->refetch;
    otlp__samples_open(&it, &r->units[k]);
    while ((rc = otlp__samples_next(&it, &s)) == 1)
      ;
    if (rc)
      spaa_err_set(err, rc, 0, 0, "cannot decode ExportProfilesServiceRequest (v1development): "
                   "malformed protobuf in sample %zu of profile %zu of scope %zu of resource %zu",
                   it.i, r->units[k].origin.profile, r->units[k].origin.scope,
                   r->units[k].origin.resource);
    otlp__samples_close(&it);
    if (rc)
      return rc;
  }
  return 0;
}

static int is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int otlp_decode(const uint8_t *buf, size_t len, struct otlp_request **out, struct spaa_err *err)
{
  return otlp_decode_ex(buf, len, 0, out, err);
}

int otlp_decode_ex(const uint8_t *buf, size_t len, unsigned flags, struct otlp_request **out,
                   struct spaa_err *err)
{
  struct otlp_request *r;
  size_t i = 0;
  int rc, version = 0;
  *out = NULL;
  if (!(r = calloc(1, sizeof(*r))))
    return spaa_err_set(err, SPAA_E_NOMEM, 0, 0, NULL);
  r->refetch = (flags & OTLP_DECODE_REFETCH) != 0;
  opentelemetry__proto__profiles__v1development__profiles_dictionary__init(&r->empty_dict);
  while (i < len && is_space(buf[i]))
    i++;
  if (i < len && buf[i] == '{') {
    struct spaa_err jerr;
    spaa_err_clear(&jerr);
    rc = otlp__json_decode(buf, len, &r->msg, &version, &jerr);
    if (rc == SPAA_E_BAD_JSON && buf[0] != '{') {
      /* "\n{" may also open a protobuf body: field 1, 123 bytes long */
      struct spaa_err perr;
      int v = otlp__sniff_wire(buf, len, &perr);
      if (v > 0) {
        version = v;
        rc = 0;
      }
    } else if (!rc) {
      r->is_json = 1;
    }
    if (rc) {
      *err = jerr;
      goto fail;
    }
  } else if (i < len && buf[i] == '[') { /* no protobuf request begins so (a group, field 11) */
    rc = spaa_err_set(err, SPAA_E_BAD_JSON, 0, 0, "an ExportProfilesServiceRequest in JSON is "
                      "an object ({\"resourceProfiles\": [...]}), not an array");
    goto fail;
  } else if ((version = otlp__sniff_wire(buf, len, err)) < 0) {
    rc = version;
    goto fail;
  }
  if (!r->msg && version == OTLP_V1DEVELOPMENT) {
    if ((rc = unpack_without_samples(r, buf, len, err)))
      goto fail;
  } else if (!r->msg) {
    r->msg = unpack(r, &OX_REQUEST_DESC, len, buf);
    if (!r->msg) {
      rc = spaa_err_set(err, SPAA_E_BAD_PROTOBUF, 0, 0,
                        "cannot decode ExportProfilesServiceRequest (%s): malformed protobuf",
                        version == OTLP_V1EXPERIMENTAL ? "v1experimental" : "v1development");
      goto fail;
    }
  }
  r->version = (enum otlp_version)version;
  if (r->is_json && version == OTLP_V1DEVELOPMENT) {
    const OT_Request *req = (const OT_Request *)r->msg;
    if ((rc = otlp__cdict_msgs(&r->cdict, req->dictionary ? req->dictionary : &r->empty_dict))) {
      rc = spaa_err_set(err, rc, 0, 0, NULL);
      goto fail;
    }
  }
  rc = version == OTLP_V1EXPERIMENTAL ? otlp__v1exp_units(r) : v1dev_units(r);
  if (rc) {
    rc = spaa_err_set(err, rc, 0, 0, NULL);
    goto fail;
  }
  if (r->wire && (rc = wire_samples(r, err)))
    goto fail;
  *out = r;
  return 0;
fail:
  otlp_request_free(r);
  return rc;
}

void otlp_request_free(struct otlp_request *r)
{
  size_t i;
  if (!r)
    return;
  for (i = 0; i < r->n_owned; i++)
    protobuf_c_message_free_unpacked(r->owned[i], NULL);
  free(r->owned);
  for (i = 0; i < r->n_xcdicts; i++) {
    otlp__cdict_free(r->xcdicts[i]);
    free(r->xcdicts[i]);
  }
  free(r->xcdicts);
  otlp__cdict_free(&r->cdict);
  free(r->units);
  free(r->wire);
  if (r->msg && !r->blocks) /* OTLP/JSON's, malloc'ed */
    protobuf_c_message_free_unpacked(r->msg, NULL);
  spaa_blocks_free(&r->blocks, NULL);
  free(r);
}

enum otlp_version otlp_request_version(const struct otlp_request *r) { return r->version; }
int otlp_request_is_json(const struct otlp_request *r) { return r->is_json; }
size_t otlp_request_count(const struct otlp_request *r) { return r->n_units; }

int otlp_request_origin(const struct otlp_request *r, size_t k, struct otlp_origin *o)
{
  if (k >= r->n_units)
    return SPAA_E_USAGE;
  *o = r->units[k].origin;
  return 0;
}

size_t otlp_summarize(const struct spaa_conv_list *l, size_t first, size_t n, char *msg,
                      size_t cap)
{
  size_t i, rejected = 0, named = 0, used = 0;
  if (cap)
    msg[0] = 0;
  for (i = first; i < first + n && i < l->n; i++) {
    const struct spaa_converted *e = &l->v[i];
    if (spaa_converted_ok(e))
      continue;
    if (named < OTLP_MAX_REPORTED && used + 1 < cap) {
      int k = snprintf(msg + used, cap - used, "%s%s", named ? "; " : "", e->err.msg);
      used = k < 0 ? used : (used + (size_t)k >= cap ? cap - 1 : used + (size_t)k);
      named++;
    }
    rejected++;
  }
  if (rejected > named && used + 1 < cap)
    snprintf(msg + used, cap - used, "; and %zu more", rejected - named);
  if (rejected)
    return rejected;
  for (i = first; i < first + n && i < l->n; i++) {
    const json_t *w = json_object_get(l->v[i].attrs, "warnings");
    const json_t *a = l->v[i].attrs;
    if (json_array_size(w) && used + 1 < cap) {
      int k = snprintf(msg + used, cap - used, "%sprofile %lld of scope %lld of resource %lld: %s",
                       used ? "; " : "",
                       (long long)json_integer_value(json_object_get(a, "profile_index")),
                       (long long)json_integer_value(json_object_get(a, "scope_index")),
                       (long long)json_integer_value(json_object_get(a, "resource_index")),
                       json_string_value(json_array_get(w, 0)));
      used = k < 0 ? used : (used + (size_t)k >= cap ? cap - 1 : used + (size_t)k);
    }
  }
  return 0;
}

int spaa_convert_otlp(const uint8_t *buf, size_t len, const struct spaa_convert_opts *o,
                      struct spaa_conv_list *out, struct spaa_err *err)
{
  struct otlp_request *r;
  int rc;
  if (o && o->otlp_req)
    return otlp_convert(o->otlp_req, o, out, err);
  if ((rc = otlp_decode_ex(buf, len, o && o->input_refetch ? OTLP_DECODE_REFETCH : 0, &r, err)))
    return rc;
  rc = otlp_convert(r, o, out, err);
  otlp_request_free(r);
  return rc;
}
