/*
 * Private to the store (src/store): the table of operations every backend fills in, like
 * SQLite's VFS. store.c dispatches each public gp_store_* function through it; a backend
 * (SQLite in sqlite_*.c, PostgreSQL in pg_*.c) or a wrapper (store_fault.c) fills it in.
 *
 * A backend's handle starts with a gp_store (its first member), so a gp_store * given to its
 * operations is its own handle. Every operation that can fail is one row of GP_STORE_OPS: the
 * row generates the table's member, the public function, the prototypes of the SQLite backend's
 * implementations and the fault wrapper's interposer, so no list is kept twice. Each row's
 * parameters start with `gp_store *s` and end with `gp_diag *d`; the row's class says what the
 * fault wrapper counts it as.
 */
#ifndef GP_STORE_STORE_OPS_H
#define GP_STORE_STORE_OPS_H

#include "store/store.h"

/* What an operation is, for the fault wrapper's counting (store_fault.h). */
typedef enum gp_store_op_class {
    GP_STORE_OP_READ,   /* reads only */
    GP_STORE_OP_WRITE,  /* changes rows, or opens a transaction or savepoint */
    GP_STORE_OP_COMMIT, /* makes a transaction durable */
} gp_store_op_class;

/* X(class, name, (parameters), (arguments)) */
#define GP_STORE_OPS(X)                                                                            \
    X(WRITE, begin, (gp_store * s, gp_diag * d), (s, d))                                           \
    X(COMMIT, commit, (gp_store * s, gp_diag * d), (s, d))                                         \
    X(WRITE, savepoint, (gp_store * s, gp_diag * d), (s, d))                                       \
    X(WRITE, savepoint_release, (gp_store * s, gp_diag * d), (s, d))                               \
    X(WRITE, obj_put,                                                                              \
      (gp_store * s, gp_obj_kind kind, int64_t * id, const char *name, const char *json,           \
       gp_diag *d),                                                                                \
      (s, kind, id, name, json, d))                                                                \
    X(WRITE, obj_delete, (gp_store * s, gp_obj_kind kind, int64_t id, gp_diag * d),                \
      (s, kind, id, d))                                                                            \
    X(READ, obj_each, (gp_store * s, gp_obj_kind kind, gp_store_obj_fn fn, void *ctx, gp_diag *d), \
      (s, kind, fn, ctx, d))                                                                       \
    X(WRITE, job_insert,                                                                           \
      (gp_store * s, gp_job_rec * rec, const char *spec_json, const char *status_json,             \
       int *created, gp_diag *d),                                                                  \
      (s, rec, spec_json, status_json, created, d))                                                \
    X(READ, job_find_key,                                                                          \
      (gp_store * s, int64_t tenant_id, const char *key, int64_t *id, gp_diag *d),                 \
      (s, tenant_id, key, id, d))                                                                  \
    X(WRITE, job_update,                                                                           \
      (gp_store * s, int64_t id, const char *state, const char *status_json, gp_diag *d),          \
      (s, id, state, status_json, d))                                                              \
    X(READ, job_get,                                                                               \
      (gp_store * s, int64_t id, gp_job_rec * out, char **spec_json, char **status_json,           \
       gp_diag *d),                                                                                \
      (s, id, out, spec_json, status_json, d))                                                     \
    X(READ, job_each, (gp_store * s, gp_store_job_fn fn, void *ctx, gp_diag *d), (s, fn, ctx, d))  \
    X(WRITE, event_add, (gp_store * s, gp_event_rec * ev, gp_diag * d), (s, ev, d))                \
    X(READ, event_each,                                                                            \
      (gp_store * s, int64_t job_id, int64_t after, int limit, gp_store_event_fn fn, void *ctx,    \
       gp_diag *d),                                                                                \
      (s, job_id, after, limit, fn, ctx, d))                                                       \
    X(WRITE, placement_put,                                                                        \
      (gp_store * s, const gp_placement_rec *p, const char *json, gp_diag *d), (s, p, json, d))    \
    X(WRITE, placement_clear, (gp_store * s, int64_t job_id, gp_diag * d), (s, job_id, d))         \
    X(READ, placement_each, (gp_store * s, gp_store_placement_fn fn, void *ctx, gp_diag *d),       \
      (s, fn, ctx, d))                                                                             \
    X(WRITE, next_epoch, (gp_store * s, int64_t * epoch, gp_diag * d), (s, epoch, d))              \
    X(WRITE, usage_open, (gp_store * s, gp_usage_rec * r, gp_diag * d), (s, r, d))                 \
    X(WRITE, usage_close,                                                                          \
      (gp_store * s, int64_t job_id, int replica, int64_t epoch, int64_t end_ms, int64_t used,     \
       gp_diag *d),                                                                                \
      (s, job_id, replica, epoch, end_ms, used, d))                                                \
    X(WRITE, usage_set_used,                                                                       \
      (gp_store * s, int64_t job_id, int replica, int64_t epoch, int64_t used, gp_diag *d),        \
      (s, job_id, replica, epoch, used, d))                                                        \
    X(READ, usage_each,                                                                            \
      (gp_store * s, const gp_usage_filter *f, gp_store_usage_fn fn, void *ctx, gp_diag *d),       \
      (s, f, fn, ctx, d))                                                                          \
    X(WRITE, token_insert, (gp_store * s, gp_token_rec * t, gp_diag * d), (s, t, d))               \
    X(WRITE, token_revoke, (gp_store * s, int64_t id, gp_diag * d), (s, id, d))                    \
    X(READ, token_each, (gp_store * s, gp_store_token_fn fn, void *ctx, gp_diag *d),               \
      (s, fn, ctx, d))                                                                             \
    X(WRITE, audit_add, (gp_store * s, gp_audit_rec * r, gp_diag * d), (s, r, d))                  \
    X(READ, audit_each,                                                                            \
      (gp_store * s, const gp_audit_filter *f, gp_store_audit_fn fn, void *ctx, gp_diag *d),       \
      (s, f, fn, ctx, d))                                                                          \
    X(WRITE, registry_cred_put, (gp_store * s, const gp_registry_cred_rec *r, gp_diag *d),         \
      (s, r, d))                                                                                   \
    X(WRITE, registry_cred_delete,                                                                 \
      (gp_store * s, int64_t tenant_id, const char *registry, gp_diag *d),                         \
      (s, tenant_id, registry, d))                                                                 \
    X(READ, registry_cred_each,                                                                    \
      (gp_store * s, gp_store_registry_cred_fn fn, void *ctx, gp_diag *d), (s, fn, ctx, d))        \
    X(WRITE, meta_set, (gp_store * s, const char *key, const char *value, gp_diag *d),             \
      (s, key, value, d))                                                                          \
    X(READ, meta_get, (gp_store * s, const char *key, char *buf, size_t cap, gp_diag *d),          \
      (s, key, buf, cap, d))                                                                       \
    GP_STORE_LEASE_OPS(X)

/* The leader lease (store.h); each call is a transaction of its own. */
#define GP_STORE_LEASE_OPS(X)                                                                      \
    X(WRITE, lease_acquire,                                                                        \
      (gp_store * s, const char *holder, int64_t ttl_ms, int64_t *token, gp_diag *d),              \
      (s, holder, ttl_ms, token, d))                                                               \
    X(WRITE, lease_renew, (gp_store * s, int64_t ttl_ms, gp_diag * d), (s, ttl_ms, d))             \
    X(WRITE, lease_release, (gp_store * s, gp_diag * d), (s, d))                                   \
    X(READ, lease_get, (gp_store * s, gp_store_lease * out, gp_diag * d), (s, out, d))

typedef struct gp_store_ops {
    const char *name; /* "sqlite", "postgresql", "fault" */
#define GP_STORE_OP_MEMBER(cls, name, params, args) int(*name) params;
    GP_STORE_OPS(GP_STORE_OP_MEMBER)
#undef GP_STORE_OP_MEMBER
    /* The operations that cannot fail (see store.h). */
    int (*version)(gp_store *s);
    void (*rollback)(gp_store *s);
    void (*savepoint_rollback)(gp_store *s);
    void (*close)(gp_store *s);
} gp_store_ops;

/* The head of every backend's handle. */
struct gp_store {
    const gp_store_ops *ops;
    /* The leader lease this store holds (the lease calls of store.c): every transaction a
     * backend begins checks that the token is still its own. 0: none held. */
    int64_t lease_token;
    char lease_holder[128];
};

/* The lease row as a backend read it, locked, with the database's clock. */
typedef struct gp__lease_row {
    char holder[128];
    int64_t token, expires_ms, now_ms;
} gp__lease_row;

/* What acquiring the lease for holder does to row (store.c, shared by the backends): 0 with the
 * row changed to the new holder, token and expiry; GP_ESTATE with d naming the holder while
 * another holds it; GP_EINVAL for a bad holder or ttl_ms. */
int gp__lease_acquire_row(gp__lease_row *row, const char *holder, int64_t ttl_ms, gp_diag *d);
/* Whether the store holding token as holder may still write: 0, or GP_ESTATE with d saying
 * who holds the lease now ("lease lost: held by X with token N"). */
int gp__lease_check_row(const gp__lease_row *row, const char *holder, int64_t token, gp_diag *d);

/* What a backend gives the lease calls below: tx runs change on the row, locked, in a
 * transaction of its own (no lease check) and commits it, the row as written in *out; read reads
 * the row without a lock. */
typedef int (*gp__lease_change_fn)(gp__lease_row *row, const void *arg, gp_diag *d);
typedef struct gp__lease_io {
    int (*tx)(gp_store *s, gp__lease_change_fn change, const void *arg, gp__lease_row *out,
              gp_diag *d);
    int (*read)(gp_store *s, gp__lease_row *out, gp_diag *d);
} gp__lease_io;

/* The lease calls of store.h, the same for every backend (store.c). */
int gp__lease_acquire(gp_store *s, const gp__lease_io *io, const char *holder, int64_t ttl_ms,
                      int64_t *token, gp_diag *d);
int gp__lease_renew(gp_store *s, const gp__lease_io *io, int64_t ttl_ms, gp_diag *d);
int gp__lease_release(gp_store *s, const gp__lease_io *io, gp_diag *d);
int gp__lease_get(gp_store *s, const gp__lease_io *io, gp_store_lease *out, gp_diag *d);
/* A backend's check at begin: 0 when s holds no lease or still holds it (read: the row under
 * the lock that makes a takeover wait for this transaction). */
int gp__lease_check(gp_store *s, int (*read)(gp_store *s, gp__lease_row *out, gp_diag *d),
                    gp_diag *d);

/* The backends' openers. */
int gp__sqlite_open(const char *path, gp_store **out, gp_diag *d);
int gp__pg_open(const char *url, gp_store **out, gp_diag *d);

#endif
