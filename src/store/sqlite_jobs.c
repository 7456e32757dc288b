/*
 * SQLite backend of the store: jobs, their events and their placements. These are the hot
 * paths of gpupoold (every submit, state change and placement writes here), so every statement
 * comes from the per-store cache (sqlite_impl.h) and binds its strings SQLITE_STATIC: they
 * only need to live until the statement is reset, before the function returns.
 *
 * The idempotency key is enforced by one INSERT ... ON CONFLICT DO NOTHING on the unique index
 * (tenant_id, idempotency_key): a new job costs one statement, and a retry finds its job by the
 * key. SQLite checks the conflict target before the other unique indexes, so a retry whose job
 * is still active under the same name is recognised as a retry, not as a name clash.
 */
#include "store/sqlite_impl.h"

#include <stdio.h>
#include <stdlib.h>

/* ---- jobs ---- */

int gp__sqlite_job_find_key(gp_store *s, int64_t tenant_id, const char *key, int64_t *id,
                            gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_JOB_BY_KEY, &st, "idempotency lookup", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, tenant_id);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
    } else if (step == SQLITE_DONE) {
        rc = GP_ENOENT;
    } else {
        rc = gp_sqlite_error(s, d, GP_EIO, "idempotency lookup");
    }
    gp_sqlite_put(s, GP_SQ_JOB_BY_KEY, st);
    return rc;
}

/* The id of the tenant's job with rec's idempotency key, in rec->id. */
static int job_by_key(gp_store *s, gp_job_rec *rec, gp_diag *d)
{
    int rc = gp__sqlite_job_find_key(s, rec->tenant_id, rec->idempotency_key, &rec->id, d);
    return rc == GP_ENOENT ? gp_sqlite_error(s, d, GP_EIO, "idempotency lookup") : rc;
}

int gp__sqlite_job_insert(gp_store *s, gp_job_rec *rec, const char *spec_json,
                          const char *status_json, int *created, gp_diag *d)
{
    *created = 0;
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_JOB_INSERT, &st, "job insert", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, rec->tenant_id);
    sqlite3_bind_text(st, 2, rec->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, rec->state[0] ? rec->state : "Pending", -1, SQLITE_STATIC);
    if (rec->idempotency_key[0]) {
        sqlite3_bind_text(st, 4, rec->idempotency_key, -1, SQLITE_STATIC);
    }
    sqlite3_bind_int64(st, 5, rec->submit_time_ms);
    sqlite3_bind_text(st, 6, spec_json ? spec_json : "{}", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, status_json ? status_json : "{}", -1, SQLITE_STATIC);
    rc = gp_sqlite_write(s, st, "job insert", d);
    int inserted = rc == 0 && sqlite3_changes(SQ(s)->db) > 0;
    gp_sqlite_put(s, GP_SQ_JOB_INSERT, st);
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, rc, "name: a job named %s is already active", rec->name);
    }
    if (rc == GP_ENOENT) {
        return gp_diag_set(d, rc, "tenant %lld: not found", (long long)rec->tenant_id);
    }
    if (rc < 0) {
        return rc;
    }
    if (!inserted) {
        return job_by_key(s, rec, d); /* the key was stored: a retry */
    }
    rec->id = sqlite3_last_insert_rowid(SQ(s)->db);
    *created = 1;
    return 0;
}

int gp__sqlite_job_update(gp_store *s, int64_t id, const char *state, const char *status_json,
                          gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_JOB_UPDATE, &st, "job update", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, status_json ? status_json : "{}", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, id);
    rc = gp_sqlite_write(s, st, "job update", d);
    int changed = rc == 0 && sqlite3_changes(SQ(s)->db) > 0;
    gp_sqlite_put(s, GP_SQ_JOB_UPDATE, st);
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, rc, "job %lld: another active job of the tenant has its name",
                           (long long)id);
    }
    if (rc == 0 && !changed) {
        return gp_diag_set(d, GP_ENOENT, "job %lld: not found", (long long)id);
    }
    return rc;
}

/* The job in the current row of a JOB_GET or JOB_EACH statement. */
static void job_row(sqlite3_stmt *st, gp_job_rec *out)
{
    out->id = sqlite3_column_int64(st, 0);
    out->tenant_id = sqlite3_column_int64(st, 1);
    gp_sqlite_copy(out->name, sizeof(out->name), st, 2);
    gp_sqlite_copy(out->state, sizeof(out->state), st, 3);
    gp_sqlite_copy(out->idempotency_key, sizeof(out->idempotency_key), st, 4);
    out->submit_time_ms = sqlite3_column_int64(st, 5);
}

int gp__sqlite_job_get(gp_store *s, int64_t id, gp_job_rec *out, char **spec_json,
                       char **status_json, gp_diag *d)
{
    char *spec = NULL, *status = NULL;
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_JOB_GET, &st, "job get", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, id);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        job_row(st, out);
        if (spec_json) {
            rc = gp_sqlite_dup(st, 6, &spec, d);
        }
        if (rc == 0 && status_json) {
            rc = gp_sqlite_dup(st, 7, &status, d);
        }
    } else if (step == SQLITE_DONE) {
        rc = gp_diag_set(d, GP_ENOENT, "job %lld: not found", (long long)id);
    } else {
        rc = gp_sqlite_error(s, d, GP_EIO, "job get");
    }
    gp_sqlite_put(s, GP_SQ_JOB_GET, st);
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

int gp__sqlite_job_each(gp_store *s, gp_store_job_fn fn, void *ctx, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_JOB_EACH, &st, "job list", d);
    if (rc < 0) {
        return rc;
    }
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        gp_job_rec rec;
        job_row(st, &rec);
        rc = fn(ctx, &rec, gp_sqlite_text(st, 6), gp_sqlite_text(st, 7));
    }
    if (rc == 0 && step != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "job list");
    }
    gp_sqlite_put(s, GP_SQ_JOB_EACH, st);
    return rc;
}

/* ---- events ---- */

int gp__sqlite_event_add(gp_store *s, gp_event_rec *ev, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_EVENT_ADD, &st, "event add", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, ev->job_id);
    sqlite3_bind_int64(st, 2, ev->time_ms);
    sqlite3_bind_text(st, 3, ev->type, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, ev->message, -1, SQLITE_STATIC);
    rc = gp_sqlite_write(s, st, "event add", d);
    gp_sqlite_put(s, GP_SQ_EVENT_ADD, st);
    if (rc == GP_ENOENT) {
        return gp_diag_set(d, rc, "job %lld: not found", (long long)ev->job_id);
    }
    if (rc == 0) {
        ev->id = sqlite3_last_insert_rowid(SQ(s)->db);
    }
    return rc;
}

int gp__sqlite_event_each(gp_store *s, int64_t job_id, int64_t after, int limit,
                          gp_store_event_fn fn, void *ctx, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_EVENT_EACH, &st, "event list", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, job_id);
    sqlite3_bind_int64(st, 2, after);
    sqlite3_bind_int(st, 3, limit > 0 ? limit : -1); /* SQLite: a negative LIMIT is none */
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        gp_event_rec ev;
        ev.id = sqlite3_column_int64(st, 0);
        ev.job_id = sqlite3_column_int64(st, 1);
        ev.time_ms = sqlite3_column_int64(st, 2);
        gp_sqlite_copy(ev.type, sizeof(ev.type), st, 3);
        gp_sqlite_copy(ev.message, sizeof(ev.message), st, 4);
        rc = fn(ctx, &ev);
    }
    if (rc == 0 && step != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "event list");
    }
    gp_sqlite_put(s, GP_SQ_EVENT_EACH, st);
    return rc;
}

/* ---- placements ---- */

int gp__sqlite_placement_put(gp_store *s, const gp_placement_rec *p, const char *json, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_PLACEMENT_PUT, &st, "placement put", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, p->job_id);
    sqlite3_bind_int(st, 2, p->replica);
    sqlite3_bind_int64(st, 3, p->node_id);
    sqlite3_bind_int64(st, 4, p->epoch);
    sqlite3_bind_text(st, 5, json ? json : "{}", -1, SQLITE_STATIC);
    rc = gp_sqlite_write(s, st, "placement put", d);
    gp_sqlite_put(s, GP_SQ_PLACEMENT_PUT, st);
    if (rc == GP_ENOENT) {
        return gp_diag_set(d, rc, "placement of job %lld replica %d: job or node %lld not found",
                           (long long)p->job_id, p->replica, (long long)p->node_id);
    }
    return rc;
}

int gp__sqlite_placement_clear(gp_store *s, int64_t job_id, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_PLACEMENT_CLEAR, &st, "placement clear", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, job_id);
    rc = gp_sqlite_write(s, st, "placement clear", d);
    gp_sqlite_put(s, GP_SQ_PLACEMENT_CLEAR, st);
    return rc;
}

int gp__sqlite_placement_each(gp_store *s, gp_store_placement_fn fn, void *ctx, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_PLACEMENT_EACH, &st, "placement list", d);
    if (rc < 0) {
        return rc;
    }
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        gp_placement_rec p = {
            .job_id = sqlite3_column_int64(st, 0),
            .replica = sqlite3_column_int(st, 1),
            .node_id = sqlite3_column_int64(st, 2),
            .epoch = sqlite3_column_int64(st, 3),
        };
        rc = fn(ctx, &p, gp_sqlite_text(st, 4));
    }
    if (rc == 0 && step != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "placement list");
    }
    gp_sqlite_put(s, GP_SQ_PLACEMENT_EACH, st);
    return rc;
}
