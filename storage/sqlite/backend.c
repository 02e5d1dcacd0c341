/* The SQLite engine behind storage/backend.h: each operation takes the interface's store
 * and hands the SQLite store it heads to the function that does the work. */
#include "storage/sqlite/sqlite_int.h"

#define SQ(b) ((struct storage__sqlite *)(b)) /* `base` is the first member */

static int be_open(const struct spaa_store_opts *opts, struct spaa_store **out,
                   struct spaa_err *err)
{
  struct storage__sqlite *s = NULL;
  int rc = storage__sq_open(opts, &s, err);
  *out = s ? &s->base : NULL;
  return rc;
}

static void be_close(struct spaa_store *b)
{
  storage__sq_close(SQ(b));
}

static int be_ready(struct spaa_store *b, struct spaa_err *why)
{
  return storage__sq_ready(SQ(b), why);
}

static int be_put_many(struct spaa_store *b, size_t n, const struct spaa_profile *const *p,
                       const struct spaa_meta *meta, int *rcs, struct spaa_err *errs)
{
  return storage__sq_put_many(SQ(b), n, p, meta, rcs, errs);
}

static int be_get(struct spaa_store *b, const char *id, struct spaa_meter *meter,
                  struct spaa_profile **out, struct spaa_err *err)
{
  return storage__sq_get(SQ(b), id, meter, out, err);
}

static int be_meta(struct spaa_store *b, const char *id, struct spaa_store_profile_info *out,
                   struct spaa_err *err)
{
  return storage__sq_meta(SQ(b), id, out, err);
}

static int be_list(struct spaa_store *b, const struct spaa_list_query *q,
                   struct spaa_store_page *out, struct spaa_err *err)
{
  return storage__sq_list(SQ(b), q, out, err);
}

static int be_scan(struct spaa_store *b, const struct spaa_list_query *sel,
                   struct spaa_meter *meter, spaa_store_scan_cb cb, void *ctx,
                   struct spaa_err *err)
{
  return storage__sq_scan(SQ(b), sel, meter, cb, ctx, err);
}

static int be_remove(struct spaa_store *b, const struct spaa_list_query *sel,
                     struct spaa_store_deleted *out, struct spaa_err *err)
{
  return storage__sq_delete(SQ(b), sel, out, err);
}

static int be_stacks(struct spaa_store *b, const int64_t *numbers, size_t n,
                     spaa_store_stack_cb cb, void *ctx, struct spaa_err *err)
{
  return storage__sq_stacks(SQ(b), numbers, n, cb, ctx, err);
}

static int be_stack_by_id(struct spaa_store *b, const char *id, spaa_store_stack_cb cb,
                          void *ctx, struct spaa_err *err)
{
  return storage__sq_stack_by_id(SQ(b), id, cb, ctx, err);
}

static int be_services(struct spaa_store *b, struct spaa_store_name_count **out, size_t *n,
                       struct spaa_err *err)
{
  return storage__sq_services(SQ(b), out, n, err);
}

static int be_label_keys(struct spaa_store *b, struct spaa_store_name_count **out, size_t *n,
                         struct spaa_err *err)
{
  return storage__sq_label_keys(SQ(b), out, n, err);
}

static int be_label_values(struct spaa_store *b, const char *key,
                           struct spaa_store_name_count **out, size_t *n, struct spaa_err *err)
{
  return storage__sq_label_values(SQ(b), key, out, n, err);
}

static int be_counts(struct spaa_store *b, struct spaa_store_counts *out, struct spaa_err *err)
{
  return storage__sq_counts(SQ(b), out, err);
}

static void be_stats(struct spaa_store *b, struct spaa_store_stats *out)
{
  storage__sq_stats(SQ(b), out);
}

static void be_pause(struct spaa_store *b, int on)
{
  storage__sq_pause(SQ(b), on);
}

static void be_sweep_hook(struct spaa_store *b, void (*fn)(void *ctx), void *ctx)
{
  SQ(b)->sweep_hook = fn;
  SQ(b)->sweep_hook_ctx = ctx;
}

const struct spaa_store_backend storage__sqlite_backend = {
    .name = "sqlite",
    .open = be_open,
    .close = be_close,
    .ready = be_ready,
    .put_many = be_put_many,
    .get = be_get,
    .meta = be_meta,
    .list = be_list,
    .scan = be_scan,
    .remove = be_remove,
    .stacks = be_stacks,
    .stack_by_id = be_stack_by_id,
    .services = be_services,
    .label_keys = be_label_keys,
    .label_values = be_label_values,
    .counts = be_counts,
    .stats = be_stats,
    .pause = be_pause,
    .sweep_hook = be_sweep_hook,
};
