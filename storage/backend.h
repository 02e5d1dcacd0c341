/* The backend interface: what one storage engine implements so that storage.h's functions
 * can run on it. storage/store.c picks a backend from the location given to
 * spaa_store_open and forwards every call; each backend's store begins with a
 * `struct spaa_store` naming its operations. A second engine (PostgreSQL) adds a folder
 * beside storage/sqlite/ and one entry in store.c: server/ and codecs/ do not change.
 * Every operation has the contract of the storage.h function of the same name; the
 * dispatcher has already checked the arguments storage.h says must not be NULL. */
#ifndef SPAA_STORAGE_BACKEND_H
#define SPAA_STORAGE_BACKEND_H

#include "storage/storage.h"

struct spaa_store_backend {
  const char *name; /* "sqlite", as in the location's scheme */
  /* opts->path is the location without its scheme */
  int (*open)(const struct spaa_store_opts *opts, struct spaa_store **out, struct spaa_err *err);
  void (*close)(struct spaa_store *s);
  int (*ready)(struct spaa_store *s, struct spaa_err *why); /* why: NULL, or filled when 0 */
  int (*put_many)(struct spaa_store *s, size_t n, const struct spaa_profile *const *p,
                  const struct spaa_meta *meta, int *rcs, struct spaa_err *errs);
  int (*get)(struct spaa_store *s, const char *id, struct spaa_meter *meter,
             struct spaa_profile **out, struct spaa_err *err);
  int (*meta)(struct spaa_store *s, const char *id, struct spaa_store_profile_info *out,
              struct spaa_err *err);
  int (*list)(struct spaa_store *s, const struct spaa_list_query *q,
              struct spaa_store_page *out, struct spaa_err *err);
  int (*scan)(struct spaa_store *s, const struct spaa_list_query *sel, struct spaa_meter *meter,
              spaa_store_scan_cb cb, void *ctx, struct spaa_err *err);
  int (*remove)(struct spaa_store *s, const struct spaa_list_query *sel,
                struct spaa_store_deleted *out, struct spaa_err *err);
  /* discovery: an engine may leave these NULL (the call then fails with a message) */
  int (*stacks)(struct spaa_store *s, const int64_t *numbers, size_t n, spaa_store_stack_cb cb,
                void *ctx, struct spaa_err *err);
  int (*stack_by_id)(struct spaa_store *s, const char *id, spaa_store_stack_cb cb, void *ctx,
                     struct spaa_err *err);
  int (*services)(struct spaa_store *s, struct spaa_store_name_count **out, size_t *n,
                  struct spaa_err *err);
  int (*label_keys)(struct spaa_store *s, struct spaa_store_name_count **out, size_t *n,
                    struct spaa_err *err);
  int (*label_values)(struct spaa_store *s, const char *key, struct spaa_store_name_count **out,
                      size_t *n, struct spaa_err *err);
  int (*counts)(struct spaa_store *s, struct spaa_store_counts *out, struct spaa_err *err);
  void (*stats)(struct spaa_store *s, struct spaa_store_stats *out);
  void (*pause)(struct spaa_store *s, int on); /* the test hook */
  /* the test hook spaa_store__sweep_hook (NULL: the engine has none) */
  void (*sweep_hook)(struct spaa_store *s, void (*fn)(void *ctx), void *ctx);
  /* retention leadership, as spaa_store_lead; NULL: this process always leads (an engine
   * only one process writes to) */
  int (*lead)(struct spaa_store *s, struct spaa_err *err);
};

/* The head of every backend's store. */
struct spaa_store {
  const struct spaa_store_backend *be;
};

extern const struct spaa_store_backend storage__sqlite_backend;
/* PostgreSQL (storage/postgres/), under both URI schemes libpq knows */
extern const struct spaa_store_backend storage__postgres_backend;
extern const struct spaa_store_backend storage__postgresql_backend;

#endif
