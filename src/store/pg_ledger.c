/*
 * PostgreSQL backend of the store: the audit log and the usage ledger (the SQLite backend's
 * sqlite_audit.c and sqlite_usage.c). Both tables refuse what would rewrite history in
 * triggers (pg_schema.c, migrations 4 and 6).
 *
 * An audit read names only the filters it has, each value a bound parameter: the statement is
 * assembled from fixed pieces and parameter numbers.
 */
#include "store/pg_impl.h"

#include <stdio.h>
#include <string.h>

static const char *str(const char *v)
{
    return v ? v : "";
}

int gp__pg_audit_add(gp_store *s, gp_audit_rec *a, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, a->time_ms);
    gp_pg_str(&p, str(a->actor));
    gp_pg_str(&p, str(a->role));
    gp_pg_str(&p, str(a->tenant));
    gp_pg_str(&p, str(a->action));
    gp_pg_str(&p, str(a->object));
    gp_pg_str(&p, a->detail ? a->detail : "{}");
    PGresult *r;
    /* Every refusal is the store's failure (GP_EIO): the change cannot be made without its
     * record. */
    int rc = gp_pg_write(s,
                         "INSERT INTO audit(time_ms, actor, role, tenant, action, object, detail) "
                         "VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                         &p, &r, NULL, "audit add", d);
    if (rc == GP_EEXIST || rc == GP_ENOENT || rc == GP_EINVAL) {
        return gp_diag_set(d, GP_EIO, "store: audit add: refused");
    }
    if (rc == 0) {
        a->id = gp_pg_int(r, 0, 0);
        PQclear(r);
    }
    return rc;
}

/* Appends " AND <cond on col>" naming parameter p->n + 1 and binds v. */
static size_t add_cond(char *sql, size_t n, size_t cap, gp_pg_params *p, const char *col,
                       int prefix, const char *v)
{
    gp_pg_str(p, v);
    size_t left = n < cap ? cap - n : 0;
    if (prefix) {
        return n + (size_t)snprintf(sql + n, left, " AND starts_with(%s, $%d)", col, p->n);
    }
    return n + (size_t)snprintf(sql + n, left, " AND %s = $%d", col, p->n);
}

int gp__pg_audit_each(gp_store *s, const gp_audit_filter *f, gp_store_audit_fn fn, void *ctx,
                      gp_diag *d)
{
    static const gp_audit_filter all;
    f = f ? f : &all;
    static const char *const cols[] = {"actor", "tenant", "action", "object"};
    const char *values[4] = {f->actor, f->tenant, f->action, f->object};
    char sql[768], cut[4][256];
    gp_pg_params p = {0};
    gp_pg_i64(&p, f->after);
    size_t n = (size_t)snprintf(sql, sizeof(sql),
                                "SELECT id, time_ms, actor, role, tenant, action, object, detail "
                                "FROM audit WHERE id > $1");
    if (f->since_ms > 0) {
        gp_pg_i64(&p, f->since_ms);
        n += (size_t)snprintf(sql + n, sizeof(sql) - n, " AND time_ms >= $%d", p.n);
    }
    if (f->until_ms > 0) {
        gp_pg_i64(&p, f->until_ms);
        n += (size_t)snprintf(sql + n, sizeof(sql) - n, " AND time_ms < $%d", p.n);
    }
    for (int i = 0; i < 4; i++) {
        const char *v = values[i];
        size_t len = v ? strlen(v) : 0;
        if (!v) {
            continue;
        }
        if (len > 0 && v[len - 1] == '*') { /* a prefix; "*" alone matches everything */
            if (len > 1) {
                snprintf(cut[i], sizeof(cut[i]), "%.*s", (int)(len - 1), v);
                n = add_cond(sql, n, sizeof(sql), &p, cols[i], 1, cut[i]);
            }
        } else {
            n = add_cond(sql, n, sizeof(sql), &p, cols[i], 0, v);
        }
    }
    if (f->limit > 0) {
        gp_pg_i64(&p, f->limit);
    } else {
        gp_pg_str(&p, NULL);
    }
    snprintf(sql + n, n < sizeof(sql) ? sizeof(sql) - n : 0, " ORDER BY id LIMIT $%d", p.n);
    PGresult *r;
    int rc = gp_pg_query(s, sql, &p, &r, "audit list", d);
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        gp_audit_rec a = {
            .id = gp_pg_int(r, i, 0),
            .time_ms = gp_pg_int(r, i, 1),
            .actor = gp_pg_text(r, i, 2),
            .role = gp_pg_text(r, i, 3),
            .tenant = gp_pg_text(r, i, 4),
            .action = gp_pg_text(r, i, 5),
            .object = gp_pg_text(r, i, 6),
            .detail = gp_pg_text(r, i, 7),
        };
        rc = fn(ctx, &a);
    }
    PQclear(r);
    return rc;
}

/* ---- usage ---- */

int gp__pg_usage_open(gp_store *s, gp_usage_rec *u, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, u->job_id);
    gp_pg_i64(&p, u->replica);
    gp_pg_i64(&p, u->epoch);
    gp_pg_i64(&p, u->tenant_id);
    gp_pg_str(&p, u->tenant);
    gp_pg_str(&p, u->queue);
    gp_pg_i64(&p, u->node_id);
    gp_pg_str(&p, u->node);
    gp_pg_str(&p, u->model);
    gp_pg_str(&p, u->kind);
    gp_pg_i64(&p, u->gpus);
    gp_pg_i64(&p, u->milli);
    gp_pg_str(&p, u->mig_profile);
    gp_pg_i64(&p, u->cpu_milli);
    gp_pg_i64(&p, u->memory_mib);
    gp_pg_i64(&p, u->start_ms);
    if (u->end_ms) {
        gp_pg_i64(&p, u->end_ms);
    } else {
        gp_pg_str(&p, NULL);
    }
    gp_pg_i64(&p, u->used_gpu_milli_ms);
    PGresult *r;
    int rc = gp_pg_write(s,
                         "INSERT INTO usage(job_id, replica, epoch, tenant_id, tenant, queue, "
                         "node_id, node, model, kind, gpus, milli, mig_profile, cpu_milli, "
                         "memory_mib, start_ms, end_ms, used_gpu_milli_ms) VALUES ($1, $2, $3, "
                         "$4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) "
                         "RETURNING id",
                         &p, &r, NULL, "usage open", d);
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, rc, "usage of job %lld replica %d epoch %lld: already recorded",
                           (long long)u->job_id, u->replica, (long long)u->epoch);
    }
    if (rc == 0) {
        u->id = gp_pg_int(r, 0, 0);
        PQclear(r);
    }
    return rc;
}

/* Runs a close or a raise of an open row; GP_ENOENT when none changed. */
static int update(gp_store *s, const char *sql, gp_pg_params *p, int64_t job_id, int replica,
                  int64_t epoch, const char *what, gp_diag *d)
{
    gp_pg_i64(p, job_id);
    gp_pg_i64(p, replica);
    gp_pg_i64(p, epoch);
    PGresult *r;
    int rc = gp_pg_write(s, sql, p, &r, NULL, what, d);
    if (rc < 0) {
        return rc;
    }
    int changed = gp_pg_changes(r) > 0;
    PQclear(r);
    return changed ? 0
                   : gp_diag_set(d, GP_ENOENT,
                                 "usage of job %lld replica %d epoch %lld: no open record",
                                 (long long)job_id, replica, (long long)epoch);
}

int gp__pg_usage_close(gp_store *s, int64_t job_id, int replica, int64_t epoch, int64_t end_ms,
                       int64_t used, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, end_ms);
    gp_pg_i64(&p, used);
    return update(s,
                  "UPDATE usage SET end_ms = GREATEST(start_ms, $1::bigint), "
                  "used_gpu_milli_ms = GREATEST(used_gpu_milli_ms, $2::bigint) "
                  "WHERE job_id = $3 AND replica = $4 AND epoch = $5 AND end_ms IS NULL",
                  &p, job_id, replica, epoch, "usage close", d);
}

int gp__pg_usage_set_used(gp_store *s, int64_t job_id, int replica, int64_t epoch, int64_t used,
                          gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, used);
    int rc = update(s,
                    "UPDATE usage SET used_gpu_milli_ms = GREATEST(used_gpu_milli_ms, $1::bigint) "
                    "WHERE job_id = $2 AND replica = $3 AND epoch = $4 AND end_ms IS NULL",
                    &p, job_id, replica, epoch, "usage used", d);
    if (rc == GP_ENOENT) {
        gp_diag_clear(d); /* closed already: nothing to raise */
        return 0;
    }
    return rc;
}

typedef struct usage_walk {
    gp_store_usage_fn fn;
    void *ctx;
} usage_walk;

static int usage_walk_row(void *ctx, PGresult *r, int i)
{
    const usage_walk *w = ctx;
    gp_usage_rec u;
    memset(&u, 0, sizeof(u));
    u.id = gp_pg_int(r, i, 0);
    u.job_id = gp_pg_int(r, i, 1);
    u.replica = (int)gp_pg_int(r, i, 2);
    u.epoch = gp_pg_int(r, i, 3);
    u.tenant_id = gp_pg_int(r, i, 4);
    gp_pg_copy(u.tenant, sizeof(u.tenant), r, i, 5);
    gp_pg_copy(u.queue, sizeof(u.queue), r, i, 6);
    u.node_id = gp_pg_int(r, i, 7);
    gp_pg_copy(u.node, sizeof(u.node), r, i, 8);
    gp_pg_copy(u.model, sizeof(u.model), r, i, 9);
    gp_pg_copy(u.kind, sizeof(u.kind), r, i, 10);
    u.gpus = (int)gp_pg_int(r, i, 11);
    u.milli = (int)gp_pg_int(r, i, 12);
    gp_pg_copy(u.mig_profile, sizeof(u.mig_profile), r, i, 13);
    u.cpu_milli = gp_pg_int(r, i, 14);
    u.memory_mib = gp_pg_int(r, i, 15);
    u.start_ms = gp_pg_int(r, i, 16);
    u.end_ms = gp_pg_isnull(r, i, 17) ? 0 : gp_pg_int(r, i, 17);
    u.used_gpu_milli_ms = gp_pg_int(r, i, 18);
    return w->fn(w->ctx, &u);
}

int gp__pg_usage_each(gp_store *s, const gp_usage_filter *f, gp_store_usage_fn fn, void *ctx,
                      gp_diag *d)
{
#define USAGE_COLS                                                                                 \
    "SELECT id, job_id, replica, epoch, tenant_id, tenant, queue, node_id, node, model, kind, "    \
    "gpus, milli, mig_profile, cpu_milli, memory_mib, start_ms, end_ms, used_gpu_milli_ms "        \
    "FROM usage "
    gp_pg_params p = {0};
    const char *sql = USAGE_COLS "WHERE end_ms IS NULL ORDER BY id";
    if (!f->open_only) {
        gp_pg_i64(&p, f->from_ms);
        gp_pg_i64(&p, f->to_ms);
        gp_pg_i64(&p, f->tenant_id);
        sql = USAGE_COLS "WHERE start_ms < $2::bigint AND (end_ms IS NULL OR end_ms > $1::bigint) "
                         "AND ($3::bigint = 0 OR tenant_id = $3::bigint) ORDER BY id";
    }
#undef USAGE_COLS
    usage_walk w = {fn, ctx};
    return gp_pg_walk(s, sql, &p, usage_walk_row, &w, "usage list", d);
}
