/*
 * PostgreSQL backend of the store: jobs, their events and their placements (the SQLite
 * backend's sqlite_jobs.c, statement for statement).
 *
 * The idempotency key: INSERT ... ON CONFLICT (tenant_id, idempotency_key) DO NOTHING on the
 * partial unique index. PostgreSQL checks the arbiter index before inserting, so a retry whose
 * job is still active under the same name is a retry (nothing inserted), not a name clash.
 */
#include "store/pg_impl.h"

#include <stdlib.h>
#include <string.h>

#define JOB_COLS "id, tenant_id, name, state, idempotency_key, submit_time_ms, spec, status"

int gp__pg_job_find_key(gp_store *s, int64_t tenant_id, const char *key, int64_t *id, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, tenant_id);
    gp_pg_str(&p, key);
    PGresult *r;
    int rc = gp_pg_query(s, "SELECT id FROM jobs WHERE tenant_id = $1 AND idempotency_key = $2", &p,
                         &r, "idempotency lookup", d);
    if (rc < 0) {
        return rc;
    }
    if (PQntuples(r) == 1) {
        *id = gp_pg_int(r, 0, 0);
    } else {
        rc = GP_ENOENT;
    }
    PQclear(r);
    return rc;
}

int gp__pg_job_insert(gp_store *s, gp_job_rec *rec, const char *spec_json, const char *status_json,
                      int *created, gp_diag *d)
{
    *created = 0;
    gp_pg_params p = {0};
    gp_pg_i64(&p, rec->tenant_id);
    gp_pg_str(&p, rec->name);
    gp_pg_str(&p, rec->state[0] ? rec->state : "Pending");
    gp_pg_str(&p, rec->idempotency_key[0] ? rec->idempotency_key : NULL);
    gp_pg_i64(&p, rec->submit_time_ms);
    gp_pg_str(&p, spec_json ? spec_json : "{}");
    gp_pg_str(&p, status_json ? status_json : "{}");
    PGresult *r;
    int rc = gp_pg_write(s,
                         "INSERT INTO jobs(tenant_id, name, state, idempotency_key, "
                         "submit_time_ms, spec, status) VALUES ($1, $2, $3, $4, $5, $6, $7) "
                         "ON CONFLICT (tenant_id, idempotency_key) "
                         "WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id",
                         &p, &r, NULL, "job insert", d);
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, rc, "name: a job named %s is already active", rec->name);
    }
    if (rc == GP_ENOENT) {
        return gp_diag_set(d, rc, "tenant %lld: not found", (long long)rec->tenant_id);
    }
    if (rc < 0) {
        return rc;
    }
    int inserted = PQntuples(r) == 1;
    if (inserted) {
        rec->id = gp_pg_int(r, 0, 0);
        *created = 1;
    }
    PQclear(r);
    if (!inserted) { /* the key was stored: a retry */
        rc = gp__pg_job_find_key(s, rec->tenant_id, rec->idempotency_key, &rec->id, d);
        if (rc == GP_ENOENT) {
            return gp_diag_set(d, GP_EIO, "store: idempotency lookup: the key vanished");
        }
    }
    return rc;
}

int gp__pg_job_update(gp_store *s, int64_t id, const char *state, const char *status_json,
                      gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_str(&p, state);
    gp_pg_str(&p, status_json ? status_json : "{}");
    gp_pg_i64(&p, id);
    PGresult *r;
    int rc = gp_pg_write(s, "UPDATE jobs SET state = $1, status = $2 WHERE id = $3", &p, &r, NULL,
                         "job update", d);
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, rc, "job %lld: another active job of the tenant has its name",
                           (long long)id);
    }
    if (rc < 0) {
        return rc;
    }
    int changed = gp_pg_changes(r) > 0;
    PQclear(r);
    return changed ? 0 : gp_diag_set(d, GP_ENOENT, "job %lld: not found", (long long)id);
}

static void job_row(PGresult *r, int i, gp_job_rec *out)
{
    out->id = gp_pg_int(r, i, 0);
    out->tenant_id = gp_pg_int(r, i, 1);
    gp_pg_copy(out->name, sizeof(out->name), r, i, 2);
    gp_pg_copy(out->state, sizeof(out->state), r, i, 3);
    gp_pg_copy(out->idempotency_key, sizeof(out->idempotency_key), r, i, 4);
    out->submit_time_ms = gp_pg_int(r, i, 5);
}

static int dup_col(PGresult *r, int col, char **out, gp_diag *d)
{
    *out = strdup(gp_pg_text(r, 0, col));
    return *out ? 0 : gp_diag_set(d, GP_ENOMEM, "store: out of memory");
}

int gp__pg_job_get(gp_store *s, int64_t id, gp_job_rec *out, char **spec_json, char **status_json,
                   gp_diag *d)
{
    char *spec = NULL, *status = NULL;
    gp_pg_params p = {0};
    gp_pg_i64(&p, id);
    PGresult *r;
    int rc = gp_pg_query(s, "SELECT " JOB_COLS " FROM jobs WHERE id = $1", &p, &r, "job get", d);
    if (rc == 0 && PQntuples(r) == 1) {
        job_row(r, 0, out);
        if (spec_json) {
            rc = dup_col(r, 6, &spec, d);
        }
        if (rc == 0 && status_json) {
            rc = dup_col(r, 7, &status, d);
        }
    } else if (rc == 0) {
        rc = gp_diag_set(d, GP_ENOENT, "job %lld: not found", (long long)id);
    }
    PQclear(r);
    if (rc < 0) {
        free(spec);
        free(status);
        spec = status = NULL;
    }
    if (spec_json) {
        *spec_json = spec;
    }
    if (status_json) {
        *status_json = status;
    }
    return rc;
}

typedef struct job_walk {
    gp_store_job_fn fn;
    void *ctx;
} job_walk;

static int job_walk_row(void *ctx, PGresult *r, int i)
{
    const job_walk *w = ctx;
    gp_job_rec rec;
    job_row(r, i, &rec);
    return w->fn(w->ctx, &rec, gp_pg_text(r, i, 6), gp_pg_text(r, i, 7));
}

int gp__pg_job_each(gp_store *s, gp_store_job_fn fn, void *ctx, gp_diag *d)
{
    job_walk w = {fn, ctx};
    return gp_pg_walk(s, "SELECT " JOB_COLS " FROM jobs ORDER BY id", NULL, job_walk_row, &w,
                      "job list", d);
}

/* ---- events ---- */

int gp__pg_event_add(gp_store *s, gp_event_rec *ev, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, ev->job_id);
    gp_pg_i64(&p, ev->time_ms);
    gp_pg_str(&p, ev->type);
    gp_pg_str(&p, ev->message);
    PGresult *r;
    int rc = gp_pg_write(s,
                         "INSERT INTO job_events(job_id, time_ms, type, message) "
                         "VALUES ($1, $2, $3, $4) RETURNING id",
                         &p, &r, NULL, "event add", d);
    if (rc == GP_ENOENT) {
        return gp_diag_set(d, rc, "job %lld: not found", (long long)ev->job_id);
    }
    if (rc == 0) {
        ev->id = gp_pg_int(r, 0, 0);
        PQclear(r);
    }
    return rc;
}

int gp__pg_event_each(gp_store *s, int64_t job_id, int64_t after, int limit, gp_store_event_fn fn,
                      void *ctx, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, job_id);
    gp_pg_i64(&p, after);
    if (limit > 0) {
        gp_pg_i64(&p, limit);
    } else {
        gp_pg_str(&p, NULL); /* LIMIT NULL: none */
    }
    PGresult *r;
    int rc = gp_pg_query(s,
                         "SELECT id, job_id, time_ms, type, message FROM job_events "
                         "WHERE job_id = $1 AND id > $2 ORDER BY id LIMIT $3",
                         &p, &r, "event list", d);
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        gp_event_rec ev;
        ev.id = gp_pg_int(r, i, 0);
        ev.job_id = gp_pg_int(r, i, 1);
        ev.time_ms = gp_pg_int(r, i, 2);
        gp_pg_copy(ev.type, sizeof(ev.type), r, i, 3);
        gp_pg_copy(ev.message, sizeof(ev.message), r, i, 4);
        rc = fn(ctx, &ev);
    }
    PQclear(r);
    return rc;
}

/* ---- placements ---- */

int gp__pg_placement_put(gp_store *s, const gp_placement_rec *pl, const char *json, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, pl->job_id);
    gp_pg_i64(&p, pl->replica);
    gp_pg_i64(&p, pl->node_id);
    gp_pg_i64(&p, pl->epoch);
    gp_pg_str(&p, json ? json : "{}");
    int rc = gp_pg_write(s,
                         "INSERT INTO placements(job_id, replica, node_id, epoch, assignment) "
                         "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (job_id, replica) DO UPDATE "
                         "SET node_id = excluded.node_id, epoch = excluded.epoch, "
                         "assignment = excluded.assignment",
                         &p, NULL, NULL, "placement put", d);
    if (rc == GP_ENOENT) {
        return gp_diag_set(d, rc, "placement of job %lld replica %d: job or node %lld not found",
                           (long long)pl->job_id, pl->replica, (long long)pl->node_id);
    }
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, GP_EIO, "store: placement put: refused as a duplicate");
    }
    return rc;
}

int gp__pg_placement_clear(gp_store *s, int64_t job_id, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, job_id);
    return gp_pg_query(s, "DELETE FROM placements WHERE job_id = $1", &p, NULL, "placement clear",
                       d);
}

typedef struct placement_walk {
    gp_store_placement_fn fn;
    void *ctx;
} placement_walk;

static int placement_walk_row(void *ctx, PGresult *r, int i)
{
    const placement_walk *w = ctx;
    gp_placement_rec pl = {
        .job_id = gp_pg_int(r, i, 0),
        .replica = (int)gp_pg_int(r, i, 1),
        .node_id = gp_pg_int(r, i, 2),
        .epoch = gp_pg_int(r, i, 3),
    };
    return w->fn(w->ctx, &pl, gp_pg_text(r, i, 4));
}

int gp__pg_placement_each(gp_store *s, gp_store_placement_fn fn, void *ctx, gp_diag *d)
{
    placement_walk w = {fn, ctx};
    return gp_pg_walk(s,
                      "SELECT job_id, replica, node_id, epoch, assignment FROM placements "
                      "ORDER BY job_id, replica",
                      NULL, placement_walk_row, &w, "placement list", d);
}
