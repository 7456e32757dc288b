/*
 * The store: gpupoold's durable state behind one interface, with two backends: SQLite (the
 * embedded default) and PostgreSQL. Each backend fills in a table of operations
 * (store_ops.h); the functions below dispatch through it, so callers never know which one runs.
 *
 * Opening a store creates or migrates its schema to the newest version, one transaction per
 * migration, so a crash mid-migration leaves the previous version intact. SQLite runs in WAL
 * mode with synchronous=FULL: when gp_store_commit returns 0 the transaction is on disk (a 2xx
 * answer may be sent).
 *
 * Jobs carry an optional idempotency key, unique per tenant: inserting a job whose key is
 * already stored returns the stored job's id and changes nothing, so a retried submit never
 * creates a second job.
 *
 * Ownership: gp_store_open and gp_store_open_url give the caller the store; gp_store_close frees it
 * (accepts NULL). One gp_store is used by one thread at a time; open a second one on the same file
 * for concurrent readers (WAL lets them read while the writer writes).
 */
#ifndef GP_STORE_STORE_H
#define GP_STORE_STORE_H

#include "gpupool/error.h"

#include <stddef.h>
#include <stdint.h>

typedef struct gp_store gp_store;

/* Schema version this build migrates to. */
int gp_store_schema_version(void);

/* Opens (creating when missing) the SQLite database at path and migrates it. GP_EIO with d
 * saying why (cannot open, newer schema than this build knows, I/O error). */
int gp_store_open(const char *path, gp_store **out, gp_diag *d);
/* Opens the store a URL names: "sqlite:PATH" or a bare PATH (no "://", no "="): the SQLite
 * database at PATH; "postgresql://..." or "postgres://..." (libpq's URI form): a PostgreSQL
 * database. GP_EINVAL naming store.url for any other URL; otherwise as the backend's open. */
int gp_store_open_url(const char *url, gp_store **out, gp_diag *d);
void gp_store_close(gp_store *s);
/* The backend's name: "sqlite", "postgresql" (or "fault" for the wrapper of store_fault.h). */
const char *gp_store_backend(const gp_store *s);
/* The schema version of the open database. */
int gp_store_version(gp_store *s);

/* ---- transactions ----
 * gpupoold writes through one connection from one thread (its committer), grouping many API
 * changes into one transaction: begin, then per change a savepoint that is released or rolled
 * back, then commit (one fsync for the whole group). Functions below that write must run inside
 * a transaction begun with gp_store_begin; reads may run anywhere. */
int gp_store_begin(gp_store *s, gp_diag *d);
/* On failure the transaction is rolled back: nothing of it is stored. */
int gp_store_commit(gp_store *s, gp_diag *d);
/* Rolls back the open transaction (no-op without one). */
void gp_store_rollback(gp_store *s);
int gp_store_savepoint(gp_store *s, gp_diag *d);
int gp_store_savepoint_release(gp_store *s, gp_diag *d);
/* Undoes everything since the last savepoint and drops it. */
void gp_store_savepoint_rollback(gp_store *s);

/* ---- named objects: tenants, queues, priority classes, nodes, volumes ----
 * Each is an id, a unique name and a JSON document the controller defines (quotas, weights,
 * inventory, ...); the store keeps the document as given. */
typedef enum gp_obj_kind {
    GP_OBJ_TENANT = 0,
    GP_OBJ_QUEUE = 1,
    GP_OBJ_PRIORITY_CLASS = 2,
    GP_OBJ_NODE = 3,
    GP_OBJ_VOLUME = 4,
} gp_obj_kind;

/* Inserts (*id == 0; the new id in *id) or replaces (*id > 0) an object. GP_EEXIST when another
 * object of the kind has the name; GP_ENOENT when *id > 0 is not stored. */
int gp_store_obj_put(gp_store *s, gp_obj_kind kind, int64_t *id, const char *name, const char *json,
                     gp_diag *d);
/* GP_ENOENT when not stored; GP_ESTATE while jobs refer to the tenant or placements to the node. */
int gp_store_obj_delete(gp_store *s, gp_obj_kind kind, int64_t id, gp_diag *d);
/* Calls fn for every object of the kind in id order; fn's non-zero return stops the walk and is
 * returned. Strings are valid during the call only. */
typedef int (*gp_store_obj_fn)(void *ctx, int64_t id, const char *name, const char *json);
int gp_store_obj_each(gp_store *s, gp_obj_kind kind, gp_store_obj_fn fn, void *ctx, gp_diag *d);

/* ---- jobs ---- */
typedef struct gp_job_rec {
    int64_t id;
    int64_t tenant_id;
    char name[64];
    char state[16];            /* "Pending", "Scheduled", "Running", "Succeeded", "Failed",
                                  "Cancelled", "Preempted" */
    char idempotency_key[128]; /* "" = none */
    int64_t submit_time_ms;
} gp_job_rec;

/*
 * Inserts a job with its spec (JSON text, stored as given) and status (JSON text the controller
 * defines: reason, times, restarts; may be NULL = "{}"). With an idempotency key already stored
 * for the tenant, *created is 0 and rec->id is the existing job's; otherwise *created is 1.
 * GP_EEXIST when an active job of the tenant has the same name; GP_ENOENT when the tenant is not
 * stored. Must run in a transaction.
 */
int gp_store_job_insert(gp_store *s, gp_job_rec *rec, const char *spec_json,
                        const char *status_json, int *created, gp_diag *d);
/* The id of the tenant's job with idempotency key key. GP_ENOENT when none. */
int gp_store_job_find_key(gp_store *s, int64_t tenant_id, const char *key, int64_t *id, gp_diag *d);
/* Sets a job's state and status document. GP_ENOENT. Must run in a transaction. */
int gp_store_job_update(gp_store *s, int64_t id, const char *state, const char *status_json,
                        gp_diag *d);
/* The job and (when not NULL) malloc'd copies of its spec and status. GP_ENOENT. */
int gp_store_job_get(gp_store *s, int64_t id, gp_job_rec *out, char **spec_json, char **status_json,
                     gp_diag *d);
/* Calls fn for every job in id order (strings valid during the call only). */
typedef int (*gp_store_job_fn)(void *ctx, const gp_job_rec *rec, const char *spec_json,
                               const char *status_json);
int gp_store_job_each(gp_store *s, gp_store_job_fn fn, void *ctx, gp_diag *d);

/* ---- job events: the history of a job, append-only ---- */
typedef struct gp_event_rec {
    int64_t id;
    int64_t job_id;
    int64_t time_ms;
    char type[32]; /* "Submitted", "Scheduled", "Preempted", ... */
    char message[512];
} gp_event_rec;

/* Appends an event (id assigned). GP_ENOENT when the job is not stored. Must run in a
 * transaction. */
int gp_store_event_add(gp_store *s, gp_event_rec *ev, gp_diag *d);
/* Events of a job in order, at most limit (0 = all) with id > after. */
typedef int (*gp_store_event_fn)(void *ctx, const gp_event_rec *ev);
int gp_store_event_each(gp_store *s, int64_t job_id, int64_t after, int limit, gp_store_event_fn fn,
                        void *ctx, gp_diag *d);

/* ---- placements: where each replica of a Scheduled or Running job runs ----
 * An allocation epoch increases with every placement the controller makes (gp_store_next_epoch),
 * so an agent holding an older epoch for a replica is stale and is fenced off. */
typedef struct gp_placement_rec {
    int64_t job_id;
    int replica;
    int64_t node_id;
    int64_t epoch;
} gp_placement_rec;

/* Stores (or replaces) the placement of one replica with its assignment document (NULL = "{}").
 * GP_ENOENT when the job or the node is not stored. */
int gp_store_placement_put(gp_store *s, const gp_placement_rec *p, const char *json, gp_diag *d);
/* Removes every placement of a job (none stored is not an error). */
int gp_store_placement_clear(gp_store *s, int64_t job_id, gp_diag *d);
typedef int (*gp_store_placement_fn)(void *ctx, const gp_placement_rec *p, const char *json);
int gp_store_placement_each(gp_store *s, gp_store_placement_fn fn, void *ctx, gp_diag *d);
/* Reserves the next allocation epoch (persisted; never reused, even after a crash). */
int gp_store_next_epoch(gp_store *s, int64_t *epoch, gp_diag *d);

/* ---- usage: the metering ledger, one row per replica placement ----
 * A row opens in the transaction that commits its placement and closes in the one that ends it
 * (gpupoold does both, beside the placement's audit records), so every live placement has
 * exactly one open row and a crash cannot split the two. Rows keep what billing needs as it was
 * when the placement was made (names, not only ids: a renamed or deleted node still bills under
 * its name). Rows are never deleted, and a closed row never changes (triggers refuse both). */
typedef struct gp_usage_rec {
    int64_t id;
    int64_t job_id;
    int replica;
    int64_t epoch;
    int64_t tenant_id;
    char tenant[64];
    char queue[64];
    int64_t node_id;
    char node[64];
    char model[64]; /* the GPUs' model; "" for none */
    char kind[16];  /* "whole", "fraction", "mig" */
    int gpus;       /* GPUs (MIG: instances) */
    int milli;      /* per GPU: 1000 whole; the share; MIG: compute slices x 1000 / 7 */
    char mig_profile[32];
    int64_t cpu_milli, memory_mib;
    int64_t start_ms;
    int64_t end_ms;            /* 0 while open */
    int64_t used_gpu_milli_ms; /* GPU-milli x ms in use, as far as reported */
} gp_usage_rec;

/* Opens a row (id assigned; end_ms 0 stores an open row, else a closed one). GP_EEXIST when the
 * placement (job, replica, epoch) has a row already. Must run in a transaction. */
int gp_store_usage_open(gp_store *s, gp_usage_rec *r, gp_diag *d);
/* Closes the open row of a placement at end_ms (never before its start), raising its used
 * figure to used when that is more. GP_ENOENT when the placement has no open row. Must run in a
 * transaction. */
int gp_store_usage_close(gp_store *s, int64_t job_id, int replica, int64_t epoch, int64_t end_ms,
                         int64_t used, gp_diag *d);
/* Raises the used figure of an open row to used (a lower value, or a closed row, is left
 * alone). Must run in a transaction. */
int gp_store_usage_set_used(gp_store *s, int64_t job_id, int replica, int64_t epoch, int64_t used,
                            gp_diag *d);
/* Which rows gp_store_usage_each walks: those overlapping [from_ms, to_ms) (open rows reach to
 * the end of time) of tenant_id (0: every tenant); open_only: every open row, whatever the
 * range. */
typedef struct gp_usage_filter {
    int64_t from_ms, to_ms;
    int64_t tenant_id;
    int open_only;
} gp_usage_filter;
/* Calls fn for the rows f selects in id order (strings valid during the call only); fn's
 * non-zero return stops the walk and is returned. */
typedef int (*gp_store_usage_fn)(void *ctx, const gp_usage_rec *r);
int gp_store_usage_each(gp_store *s, const gp_usage_filter *f, gp_store_usage_fn fn, void *ctx,
                        gp_diag *d);

/* ---- API tokens, stored hashed ---- */
typedef struct gp_token_rec {
    int64_t id;
    char name[64];
    char hash[65];     /* SHA-256, hex */
    char role[16];     /* "admin", "operator", "user", "join", "agent" */
    int64_t tenant_id; /* users: their tenant; 0 otherwise */
    int64_t node_id;   /* agents: their node; 0 otherwise */
    int64_t created_ms;
    int64_t expires_ms; /* 0 = never */
    int revoked;
} gp_token_rec;

/* Inserts a token (id assigned). GP_EEXIST when the hash or name is taken. */
int gp_store_token_insert(gp_store *s, gp_token_rec *t, gp_diag *d);
/* Marks a token revoked. GP_ENOENT. */
int gp_store_token_revoke(gp_store *s, int64_t id, gp_diag *d);
typedef int (*gp_store_token_fn)(void *ctx, const gp_token_rec *t);
int gp_store_token_each(gp_store *s, gp_store_token_fn fn, void *ctx, gp_diag *d);

/* ---- the audit log: one record per change, append-only ----
 * Who changed what and when: every change made through the API and every placement made or
 * ended. The table refuses UPDATE and DELETE (triggers abort them, whoever opens the database),
 * so a committed record stays as written; records are only ever added, in the transaction of
 * the change they describe. Ids grow with every record and are never reused. */
typedef struct gp_audit_rec {
    int64_t id;
    int64_t time_ms;
    const char *actor;  /* a token's name, or "scheduler" / "controller" */
    const char *role;   /* the token's role; "" for the controller itself */
    const char *tenant; /* the actor's tenant (users), else the object's; "" for none */
    const char *action; /* "job.submit", "placement.free", ... */
    const char *object; /* "job/42", "node/gpu-01" */
    const char *detail; /* a JSON object as text (NULL: "{}") */
} gp_audit_rec;

/* Appends a record (id assigned; NULL strings are stored as ""). GP_EIO with d saying why when
 * the store refuses it, whatever the reason (a full disk, a trigger): the change it records must
 * then fail too. Must run in a transaction. */
int gp_store_audit_add(gp_store *s, gp_audit_rec *r, gp_diag *d);

/* Which records gp_store_audit_each walks: those with id > after and since_ms <= time_ms <
 * until_ms (0: no bound), whose actor, tenant, action and object equal the filter's (NULL: any;
 * a value ending in '*' matches as a prefix, as "placement.*" does every placement). */
typedef struct gp_audit_filter {
    int64_t after;
    int64_t since_ms, until_ms;
    const char *actor, *tenant, *action, *object;
    int limit; /* at most this many (0: all) */
} gp_audit_filter;

/* Calls fn for the records f selects (NULL: all) in id order; strings are valid during the
 * call only. fn's non-zero return stops the walk and is returned. */
typedef int (*gp_store_audit_fn)(void *ctx, const gp_audit_rec *r);
int gp_store_audit_each(gp_store *s, const gp_audit_filter *f, gp_store_audit_fn fn, void *ctx,
                        gp_diag *d);

/* ---- tenants' credentials for image registries ----
 * A tenant's user name and password for one registry (HOST[:PORT], in the normal form of
 * gpupool/imageref.h), which gpupoold hands only to the node that pulls the tenant's image.
 * Deleting the tenant deletes them. The password is stored as given, like the data directory's
 * other secrets: the directory must be readable by gpupoold alone. */
typedef struct gp_registry_cred_rec {
    int64_t tenant_id;
    const char *registry;
    const char *username;
    const char *password;
    int64_t updated_ms;
} gp_registry_cred_rec;

/* Stores r, replacing the tenant's credentials for the registry. GP_ENOENT when the tenant is
 * not stored. Must run in a transaction. */
int gp_store_registry_cred_put(gp_store *s, const gp_registry_cred_rec *r, gp_diag *d);
/* GP_ENOENT when the tenant has none for the registry. Must run in a transaction. */
int gp_store_registry_cred_delete(gp_store *s, int64_t tenant_id, const char *registry, gp_diag *d);
/* Calls fn for every stored credential, by tenant then registry (strings valid during the call
 * only); fn's non-zero return stops the walk and is returned. */
typedef int (*gp_store_registry_cred_fn)(void *ctx, const gp_registry_cred_rec *r);
int gp_store_registry_cred_each(gp_store *s, gp_store_registry_cred_fn fn, void *ctx, gp_diag *d);

/* ---- the leader lease, with a fencing token ----
 * Several gpupoold may share one database; one of them, the leader, writes. The lease is one row
 * in the database: its holder, a token and when it expires, by the database's clock (so the
 * holders' clocks need not agree). Acquiring a lease that is free, expired or held by another
 * whose time ran out gives a new token, strictly larger than every token before it (kept in the
 * database, never reused); acquiring one already ours extends it and keeps its token.
 *
 * Once a store holds the lease, every transaction it begins is conditional on it: gp_store_begin
 * locks the lease row for share and checks that the token is still this store's and unexpired,
 * else fails with GP_ESTATE ("lease lost: held by X with token N"). A takeover locks the row for
 * update, so it waits for a running transaction of the old holder to end, and the old holder's
 * next begin fails: a deposed leader can never commit. A store that never acquired the lease
 * (a reader, a single gpupoold) runs its transactions unconditionally.
 *
 * Each call is a transaction of its own: GP_ESTATE inside one. */
typedef struct gp_store_lease {
    char holder[128];     /* "" when free */
    int64_t token;        /* the last token handed out (0: never) */
    int64_t remaining_ms; /* until it expires; 0 when expired or free */
    int ours;             /* this store holds it with that token */
} gp_store_lease;

/* Takes the lease for holder (a name unique to the process, e.g. "host:pid") for ttl_ms (> 0),
 * its token in *token. GP_ESTATE naming the holder, its token and its time left while another
 * holds it; GP_EINVAL for an empty holder or a ttl_ms <= 0. */
int gp_store_lease_acquire(gp_store *s, const char *holder, int64_t ttl_ms, int64_t *token,
                           gp_diag *d);
/* Extends the lease this store holds to ttl_ms from now. GP_ESTATE when it holds none or lost
 * it (another took it over); the store then holds none. */
int gp_store_lease_renew(gp_store *s, int64_t ttl_ms, gp_diag *d);
/* Gives the lease up (free at once for another; the token is kept, so the next is larger).
 * Holding none is not an error. */
int gp_store_lease_release(gp_store *s, gp_diag *d);
/* The lease as the database has it. */
int gp_store_lease_get(gp_store *s, gp_store_lease *out, gp_diag *d);

/* ---- settings of the controller itself (e.g. whether the admin token was made) ---- */
/* Sets key to value. Must run in a transaction. */
int gp_store_meta_set(gp_store *s, const char *key, const char *value, gp_diag *d);
/* Copies the value of key into buf (truncated to cap). GP_ENOENT when unset. */
int gp_store_meta_get(gp_store *s, const char *key, char *buf, size_t cap, gp_diag *d);

#endif
