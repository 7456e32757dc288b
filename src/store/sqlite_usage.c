/*
 * SQLite backend of the store: the usage ledger (see store.h), table `usage` of migration 6.
 *
 * A placement is named by (job, replica, epoch), unique in the table: epochs never repeat, so a
 * row can be found again without its id, and a second row for one placement is refused. Closing
 * and raising the used figure touch only open rows; a trigger makes closed rows final and
 * another refuses deletes, so what was billed stays as it was billed.
 */
#include "store/sqlite_impl.h"

#include <stdio.h>
#include <string.h>

static void bind_str(sqlite3_stmt *st, int col, const char *v)
{
    sqlite3_bind_text(st, col, v ? v : "", -1, SQLITE_STATIC);
}

int gp__sqlite_usage_open(gp_store *s, gp_usage_rec *r, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_USAGE_OPEN, &st, "usage open", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, r->job_id);
    sqlite3_bind_int(st, 2, r->replica);
    sqlite3_bind_int64(st, 3, r->epoch);
    sqlite3_bind_int64(st, 4, r->tenant_id);
    bind_str(st, 5, r->tenant);
    bind_str(st, 6, r->queue);
    sqlite3_bind_int64(st, 7, r->node_id);
    bind_str(st, 8, r->node);
    bind_str(st, 9, r->model);
    bind_str(st, 10, r->kind);
    sqlite3_bind_int(st, 11, r->gpus);
    sqlite3_bind_int(st, 12, r->milli);
    bind_str(st, 13, r->mig_profile);
    sqlite3_bind_int64(st, 14, r->cpu_milli);
    sqlite3_bind_int64(st, 15, r->memory_mib);
    sqlite3_bind_int64(st, 16, r->start_ms);
    if (r->end_ms) {
        sqlite3_bind_int64(st, 17, r->end_ms);
    } else {
        sqlite3_bind_null(st, 17);
    }
    sqlite3_bind_int64(st, 18, r->used_gpu_milli_ms);
    rc = gp_sqlite_write(s, st, "usage open", d);
    gp_sqlite_put(s, GP_SQ_USAGE_OPEN, st);
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, rc, "usage of job %lld replica %d epoch %lld: already recorded",
                           (long long)r->job_id, r->replica, (long long)r->epoch);
    }
    if (rc == 0) {
        r->id = sqlite3_last_insert_rowid(SQ(s)->db);
    }
    return rc;
}

/* Runs USAGE_CLOSE or USAGE_USED; GP_ENOENT when no open row changed. */
static int update(gp_store *s, gp_sqlite_stmt_id id, int64_t job_id, int replica, int64_t epoch,
                  int64_t end_ms, int64_t used, const char *what, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, id, &st, what, d);
    if (rc < 0) {
        return rc;
    }
    int p = 1;
    if (id == GP_SQ_USAGE_CLOSE) {
        sqlite3_bind_int64(st, p++, end_ms);
    }
    sqlite3_bind_int64(st, p++, used);
    sqlite3_bind_int64(st, p++, job_id);
    sqlite3_bind_int(st, p++, replica);
    sqlite3_bind_int64(st, p, epoch);
    rc = gp_sqlite_write(s, st, what, d);
    gp_sqlite_put(s, id, st);
    if (rc == 0 && sqlite3_changes(SQ(s)->db) == 0) {
        rc = gp_diag_set(d, GP_ENOENT, "usage of job %lld replica %d epoch %lld: no open record",
                         (long long)job_id, replica, (long long)epoch);
    }
    return rc;
}

int gp__sqlite_usage_close(gp_store *s, int64_t job_id, int replica, int64_t epoch, int64_t end_ms,
                           int64_t used, gp_diag *d)
{
    return update(s, GP_SQ_USAGE_CLOSE, job_id, replica, epoch, end_ms, used, "usage close", d);
}

int gp__sqlite_usage_set_used(gp_store *s, int64_t job_id, int replica, int64_t epoch, int64_t used,
                              gp_diag *d)
{
    int rc = update(s, GP_SQ_USAGE_USED, job_id, replica, epoch, 0, used, "usage used", d);
    if (rc == GP_ENOENT) {
        gp_diag_clear(d); /* closed already, or no change: nothing to raise */
        return 0;
    }
    return rc;
}

int gp__sqlite_usage_each(gp_store *s, const gp_usage_filter *f, gp_store_usage_fn fn, void *ctx,
                          gp_diag *d)
{
    gp_sqlite_stmt_id id = f->open_only ? GP_SQ_USAGE_OPEN_EACH : GP_SQ_USAGE_EACH;
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, id, &st, "usage list", d);
    if (rc < 0) {
        return rc;
    }
    if (!f->open_only) {
        sqlite3_bind_int64(st, 1, f->from_ms);
        sqlite3_bind_int64(st, 2, f->to_ms);
        sqlite3_bind_int64(st, 3, f->tenant_id);
    }
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        gp_usage_rec r;
        memset(&r, 0, sizeof(r));
        r.id = sqlite3_column_int64(st, 0);
        r.job_id = sqlite3_column_int64(st, 1);
        r.replica = sqlite3_column_int(st, 2);
        r.epoch = sqlite3_column_int64(st, 3);
        r.tenant_id = sqlite3_column_int64(st, 4);
        gp_sqlite_copy(r.tenant, sizeof(r.tenant), st, 5);
        gp_sqlite_copy(r.queue, sizeof(r.queue), st, 6);
        r.node_id = sqlite3_column_int64(st, 7);
        gp_sqlite_copy(r.node, sizeof(r.node), st, 8);
        gp_sqlite_copy(r.model, sizeof(r.model), st, 9);
        gp_sqlite_copy(r.kind, sizeof(r.kind), st, 10);
        r.gpus = sqlite3_column_int(st, 11);
        r.milli = sqlite3_column_int(st, 12);
        gp_sqlite_copy(r.mig_profile, sizeof(r.mig_profile), st, 13);
        r.cpu_milli = sqlite3_column_int64(st, 14);
        r.memory_mib = sqlite3_column_int64(st, 15);
        r.start_ms = sqlite3_column_int64(st, 16);
        r.end_ms = sqlite3_column_type(st, 17) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 17);
        r.used_gpu_milli_ms = sqlite3_column_int64(st, 18);
        rc = fn(ctx, &r);
    }
    if (rc == 0 && step != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "usage list");
    }
    gp_sqlite_put(s, id, st);
    return rc;
}
