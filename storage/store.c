/* The storage interface's dispatcher: picks the backend named by the location's scheme and
 * forwards each call to it (storage/backend.h); also what every backend shares: freeing the
 * plain structs that list and meta return, and spaa_store_put on top of put_many. */
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "storage/backend.h"

/* The backends this build knows, by scheme. */
static const struct spaa_store_backend *const backends[] = {
  &storage__sqlite_backend, &storage__postgres_backend, &storage__postgresql_backend};

/* The backend for `path` and the location it gets (path without "SCHEME:"). A path with no
 * known scheme is a SQLite file (so "data/x.db" and "/abs/x.db" keep working). NULL with err
 * filled for a scheme this build does not have. */
static const struct spaa_store_backend *pick(const char *path, const char **loc,
                                             struct spaa_err *err)
{
  size_t i, n;
  const char *colon = strchr(path, ':');
  *loc = path;
  for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
    n = strlen(backends[i]->name);
    if (strncmp(path, backends[i]->name, n) == 0 && path[n] == ':') {
      *loc = path + n + 1;
      return backends[i];
    }
  }
  /* "postgres://…" and the like name an engine; "C:\x" or "./a:b" are files */
  if (colon && colon > path && strncmp(colon, "://", 3) == 0) {
    spaa_err_set(err, SPAA_E_STORE, 0, 0, "store '%.*s': no such backend in this build",
                 (int)(colon - path), path);
    return NULL;
  }
  return &storage__sqlite_backend;
}

int spaa_store_open(const struct spaa_store_opts *opts, struct spaa_store **out,
                    struct spaa_err *err)
{
  struct spaa_store_opts o;
  const struct spaa_store_backend *be;
  int rc;
  *out = NULL;
  if (!opts || !opts->path || !*opts->path)
    return spaa_err_set(err, SPAA_E_STORE, 0, 0, "no store location given");
  o = *opts;
  if (!(be = pick(opts->path, &o.path, err)))
    return SPAA_E_STORE;
  if (!*o.path)
    return spaa_err_set(err, SPAA_E_STORE, 0, 0, "store '%.*s': empty location",
                        (int)(o.path - opts->path), opts->path);
  if ((rc = be->open(&o, out, err)) && err) {
    /* every open failure names the location, its password hidden */
    char where[SPAA_STORE_MAX_LOCATION], msg[sizeof(err->msg)];
    spaa_store_redact(opts->path, where, sizeof(where));
    memcpy(msg, err->msg, sizeof(msg));
    spaa_err_set(err, rc, err->line, err->offset, "store '%.100s': %s", where, msg);
  }
  return rc;
}

void spaa_store_close(struct spaa_store *s)
{
  if (s)
    s->be->close(s);
}

int spaa_store_ready(struct spaa_store *s)
{
  return s ? s->be->ready(s, NULL) : 0;
}

int spaa_store_ready_why(struct spaa_store *s, struct spaa_err *why)
{
  if (!s)
    return spaa_err_set(why, SPAA_E_SHUTDOWN, 0, 0, "no store is open"), 0;
  return s->be->ready(s, why);
}

int spaa_store_put_many(struct spaa_store *s, size_t n, const struct spaa_profile *const *p,
                        const struct spaa_meta *meta, int *rcs, struct spaa_err *errs)
{
  if (!s || !p || !meta || !rcs || !errs)
    return SPAA_E_INTERNAL;
  return s->be->put_many(s, n, p, meta, rcs, errs);
}

int spaa_store_put(struct spaa_store *s, const struct spaa_profile *p,
                   const struct spaa_meta *meta, struct spaa_err *err)
{
  struct spaa_err e;
  int rc = 0;
  if (!s || !p || !meta)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store or no profile");
  spaa_store_put_many(s, 1, &p, meta, &rc, &e);
  if (rc < 0 && err)
    *err = e;
  return rc;
}

int spaa_store_get(struct spaa_store *s, const char *id, struct spaa_profile **out,
                   struct spaa_err *err)
{
  return spaa_store_get_metered(s, id, NULL, out, err);
}

/* A profile is looked up under its id as given, then, when that finds none and the id is 32
 * hex digits or a dashed UUID, under the other ways of writing it (spaa_hex_id_forms): the
 * stores keep ids as they were given (a push client's dashed UUID, in whatever case), and
 * people paste them in another. Each lookup is one by primary key; no SQL is made of the id. */
int spaa_store_get_metered(struct spaa_store *s, const char *id, struct spaa_meter *meter,
                           struct spaa_profile **out, struct spaa_err *err)
{
  struct spaa_err again;
  char forms[SPAA_HEX_ID_FORMS][37];
  int rc, rc2, n, k;
  *out = NULL;
  if (!s || !id)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store or no id");
  rc = s->be->get(s, id, meter, out, err);
  if (rc != SPAA_E_NOT_FOUND)
    return rc;
  n = spaa_hex_id_forms(id, forms);
  for (k = 0; k < n; k++) {
    spaa_err_clear(&again);
    if ((rc2 = s->be->get(s, forms[k], meter, out, &again)) != SPAA_E_NOT_FOUND) {
      if (err)
        *err = again;
      return rc2;
    }
  }
  return rc;
}

int spaa_store_meta(struct spaa_store *s, const char *id, struct spaa_store_profile_info *out,
                    struct spaa_err *err)
{
  struct spaa_err again;
  char forms[SPAA_HEX_ID_FORMS][37];
  int rc, rc2, n, k;
  memset(out, 0, sizeof(*out));
  if (!s || !id)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store or no id");
  rc = s->be->meta(s, id, out, err);
  if (rc != SPAA_E_NOT_FOUND)
    return rc;
  n = spaa_hex_id_forms(id, forms);
  for (k = 0; k < n; k++) {
    spaa_err_clear(&again);
    spaa_store_profile_info_free(out);
    if ((rc2 = s->be->meta(s, forms[k], out, &again)) != SPAA_E_NOT_FOUND) {
      if (err)
        *err = again;
      return rc2;
    }
  }
  return rc;
}

int spaa_store_list(struct spaa_store *s, const struct spaa_list_query *q,
                    struct spaa_store_page *out, struct spaa_err *err)
{
  memset(out, 0, sizeof(*out));
  if (!s || !q)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store or no query");
  return s->be->list(s, q, out, err);
}

int spaa_store_scan(struct spaa_store *s, const struct spaa_list_query *sel,
                    spaa_store_scan_cb cb, void *ctx, struct spaa_err *err)
{
  return spaa_store_scan_metered(s, sel, NULL, cb, ctx, err);
}

int spaa_store_scan_metered(struct spaa_store *s, const struct spaa_list_query *sel,
                            struct spaa_meter *meter, spaa_store_scan_cb cb, void *ctx,
                            struct spaa_err *err)
{
  if (!s || !sel || !cb)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store, selection or callback");
  return s->be->scan(s, sel, meter, cb, ctx, err);
}

int spaa_store_delete(struct spaa_store *s, const struct spaa_list_query *sel,
                      struct spaa_store_deleted *out, struct spaa_err *err)
{
  memset(out, 0, sizeof(*out));
  if (!s || !sel)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store or no selection");
  if (sel->after)
    return spaa_err_set(err, SPAA_E_BAD_REQUEST, 0, 0, "a delete takes no cursor");
  return s->be->remove(s, sel, out, err);
}

/* An operation this engine lacks. */
static int lacking(struct spaa_store *s, const char *what, struct spaa_err *err)
{
  return spaa_err_set(err, SPAA_E_STORE, 0, 0, "the %s store cannot list %s yet", s->be->name,
                      what);
}

int spaa_store_stacks(struct spaa_store *s, const int64_t *numbers, size_t n,
                      spaa_store_stack_cb cb, void *ctx, struct spaa_err *err)
{
  if (!s || (n && !numbers) || !cb)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store, numbers or callback");
  return s->be->stacks ? s->be->stacks(s, numbers, n, cb, ctx, err) : lacking(s, "stacks", err);
}

int spaa_store_stack_by_id(struct spaa_store *s, const char *id, spaa_store_stack_cb cb,
                           void *ctx, struct spaa_err *err)
{
  if (!s || !id || !cb)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store, id or callback");
  return s->be->stack_by_id ? s->be->stack_by_id(s, id, cb, ctx, err)
                            : lacking(s, "stacks", err);
}

int spaa_store_services(struct spaa_store *s, struct spaa_store_name_count **out, size_t *n,
                        struct spaa_err *err)
{
  *out = NULL;
  *n = 0;
  if (!s)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store");
  return s->be->services ? s->be->services(s, out, n, err) : lacking(s, "services", err);
}

int spaa_store_label_keys(struct spaa_store *s, struct spaa_store_name_count **out, size_t *n,
                          struct spaa_err *err)
{
  *out = NULL;
  *n = 0;
  if (!s)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store");
  return s->be->label_keys ? s->be->label_keys(s, out, n, err) : lacking(s, "labels", err);
}

int spaa_store_label_values(struct spaa_store *s, const char *key,
                            struct spaa_store_name_count **out, size_t *n, struct spaa_err *err)
{
  *out = NULL;
  *n = 0;
  if (!s || !key)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store or no key");
  return s->be->label_values ? s->be->label_values(s, key, out, n, err)
                             : lacking(s, "label values", err);
}

int spaa_store_counts(struct spaa_store *s, struct spaa_store_counts *out, struct spaa_err *err)
{
  memset(out, 0, sizeof(*out));
  if (!s)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store");
  return s->be->counts(s, out, err);
}

void spaa_store_stats(struct spaa_store *s, struct spaa_store_stats *out)
{
  memset(out, 0, sizeof(*out));
  if (s)
    s->be->stats(s, out);
}

int spaa_store_lead(struct spaa_store *s, struct spaa_err *err)
{
  if (!s)
    return spaa_err_set(err, SPAA_E_INTERNAL, 0, 0, "no store");
  return s->be->lead ? s->be->lead(s, err) : 1;
}

void spaa_store__pause(struct spaa_store *s, int on)
{
  if (s && s->be->pause)
    s->be->pause(s, on);
}

void spaa_store__sweep_hook(struct spaa_store *s, void (*fn)(void *ctx), void *ctx)
{
  if (s && s->be->sweep_hook)
    s->be->sweep_hook(s, fn, ctx);
}

/* ---- freeing ------------------------------------------------------------------------------ */

static void event_free(struct spaa_store_event *e)
{
  size_t i;
  for (i = 0; i < e->n_totals; i++)
    free(e->totals[i].metric);
  free(e->totals);
  free(e->name);
}

void spaa_store_profile_info_free(struct spaa_store_profile_info *pi)
{
  size_t i;
  if (!pi)
    return;
  for (i = 0; i < pi->n_events; i++)
    event_free(&pi->events[i]);
  for (i = 0; i < pi->n_labels; i++) {
    free(pi->labels[i].key);
    free(pi->labels[i].value);
  }
  free(pi->events);
  free(pi->labels);
  free(pi->attrs_json);
  free(pi->id);
  free(pi->service);
  free(pi->source);
  memset(pi, 0, sizeof(*pi));
}

void spaa_store_page_free(struct spaa_store_page *pg)
{
  size_t i;
  if (!pg)
    return;
  for (i = 0; i < pg->n; i++)
    spaa_store_profile_info_free(&pg->profiles[i]);
  free(pg->profiles);
  memset(pg, 0, sizeof(*pg));
}


void spaa_store_names_free(struct spaa_store_name_count *v, size_t n)
{
  size_t i;
  for (i = 0; v && i < n; i++) {
    free(v[i].name);
    free(v[i].sources);
    free(v[i].events_json);
  }
  free(v);
}
