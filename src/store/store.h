/*
 * The store: gpupoold's durable state behind one interface (SQLite now, PostgreSQL later).
 *
 * Opening a store creates or migrates its schema to the newest version, one transaction per
 * migration, so a crash mid-migration leaves the previous version intact. SQLite runs in WAL
 * mode with synchronous=FULL: when a write function returns 0 the change is on disk (a 2xx
 * answer may be sent).
 *
 * Jobs carry an optional idempotency key, unique per tenant: inserting a job whose key is
 * already stored returns the stored job's id and changes nothing, so a retried submit never
 * creates a second job.
 *
 * Ownership: gp_store_open gives the caller the store; gp_store_close frees it (accepts NULL).
 * One gp_store is used by one thread at a time.
 */
#ifndef GP_STORE_STORE_H
#define GP_STORE_STORE_H

#include "gpupool/error.h"

#include <stdint.h>

typedef struct gp_store gp_store;

/* Schema version this build migrates to. */
int gp_store_schema_version(void);

/* Opens (creating when missing) the SQLite database at path and migrates it. GP_EIO with d
 * saying why (cannot open, newer schema than this build knows, I/O error). */
int gp_store_open(const char *path, gp_store **out, gp_diag *d);
void gp_store_close(gp_store *s);
/* The schema version of the open database. */
int gp_store_version(gp_store *s);

typedef struct gp_tenant_rec {
    int64_t id;
    char name[64];
    int64_t quota_gpus; /* -1 = unlimited */
    int64_t quota_gpu_memory_mib;
} gp_tenant_rec;

/* Creates a tenant; its id in rec->id. GP_EEXIST when the name is taken. */
int gp_store_tenant_create(gp_store *s, gp_tenant_rec *rec, gp_diag *d);
/* GP_ENOENT when there is no tenant of that name. */
int gp_store_tenant_get(gp_store *s, const char *name, gp_tenant_rec *out, gp_diag *d);

typedef struct gp_job_rec {
    int64_t id;
    int64_t tenant_id;
    char name[64];
    char state[16];            /* "Pending", ... */
    char idempotency_key[128]; /* "" = none */
    int64_t submit_time_ms;
} gp_job_rec;

/*
 * Inserts a job with its spec (JSON text, stored as given). With an idempotency key already
 * stored for the tenant, *created is 0 and rec->id is the existing job's; otherwise *created is
 * 1. GP_EEXIST when an active job of the tenant has the same name.
 */
int gp_store_job_insert(gp_store *s, gp_job_rec *rec, const char *spec_json, int *created,
                        gp_diag *d);
/* The job and (when spec_json is not NULL) a malloc'd copy of its spec. GP_ENOENT. */
int gp_store_job_get(gp_store *s, int64_t id, gp_job_rec *out, char **spec_json, gp_diag *d);

#endif
