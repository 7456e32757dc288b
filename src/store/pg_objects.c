/*
 * PostgreSQL backend of the store: named objects (tenants, queues, priority classes, nodes,
 * volumes), API tokens and tenants' registry credentials (the SQLite backend's
 * sqlite_objects.c and sqlite_registry.c). The object kinds share one implementation over
 * tables of one shape; only the table's name, from the fixed table below, is put into the SQL.
 */
#include "store/pg_impl.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *noun, *table, *users;
} kinds[] = {
    [GP_OBJ_TENANT] = {"tenant", "tenants", "jobs"},
    [GP_OBJ_QUEUE] = {"queue", "queues", "other records"},
    [GP_OBJ_PRIORITY_CLASS] = {"priority class", "priority_classes", "other records"},
    [GP_OBJ_NODE] = {"node", "nodes", "placements"},
    [GP_OBJ_VOLUME] = {"volume", "volumes", "other records"},
};
#define NKINDS ((unsigned)(sizeof(kinds) / sizeof(kinds[0])))

static int check_kind(gp_obj_kind kind, gp_diag *d)
{
    return (unsigned)kind < NKINDS
               ? 0
               : gp_diag_set(d, GP_EINVAL, "store: unknown object kind %d", (int)kind);
}

int gp__pg_obj_put(gp_store *s, gp_obj_kind kind, int64_t *id, const char *name, const char *json,
                   gp_diag *d)
{
    int rc = check_kind(kind, d);
    if (rc < 0) {
        return rc;
    }
    char sql[160];
    gp_pg_params p = {0};
    gp_pg_str(&p, name);
    gp_pg_str(&p, json ? json : "{}");
    if (*id == 0) {
        snprintf(sql, sizeof(sql), "INSERT INTO %s(name, spec) VALUES ($1, $2) RETURNING id",
                 kinds[kind].table);
    } else {
        gp_pg_i64(&p, *id);
        snprintf(sql, sizeof(sql), "UPDATE %s SET name = $1, spec = $2 WHERE id = $3 RETURNING id",
                 kinds[kind].table);
    }
    PGresult *r;
    rc = gp_pg_write(s, sql, &p, &r, NULL, kinds[kind].noun, d);
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, rc, "%s %s: already exists", kinds[kind].noun, name);
    }
    if (rc < 0) {
        return rc;
    }
    int changed = PQntuples(r) == 1;
    if (changed) {
        *id = gp_pg_int(r, 0, 0);
    }
    PQclear(r);
    return changed
               ? 0
               : gp_diag_set(d, GP_ENOENT, "%s %lld: not found", kinds[kind].noun, (long long)*id);
}

int gp__pg_obj_delete(gp_store *s, gp_obj_kind kind, int64_t id, gp_diag *d)
{
    int rc = check_kind(kind, d);
    if (rc < 0) {
        return rc;
    }
    char sql[96];
    snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE id = $1", kinds[kind].table);
    gp_pg_params p = {0};
    gp_pg_i64(&p, id);
    PGresult *r;
    rc = gp_pg_write(s, sql, &p, &r, NULL, kinds[kind].noun, d);
    if (rc == GP_ENOENT) { /* a foreign key: something still refers to the object */
        return gp_diag_set(d, GP_ESTATE, "%s %lld: in use by %s", kinds[kind].noun, (long long)id,
                           kinds[kind].users);
    }
    if (rc < 0) {
        return rc;
    }
    int changed = gp_pg_changes(r) > 0;
    PQclear(r);
    return changed
               ? 0
               : gp_diag_set(d, GP_ENOENT, "%s %lld: not found", kinds[kind].noun, (long long)id);
}

int gp__pg_obj_each(gp_store *s, gp_obj_kind kind, gp_store_obj_fn fn, void *ctx, gp_diag *d)
{
    int rc = check_kind(kind, d);
    if (rc < 0) {
        return rc;
    }
    char sql[96];
    snprintf(sql, sizeof(sql), "SELECT id, name, spec FROM %s ORDER BY id", kinds[kind].table);
    PGresult *r;
    rc = gp_pg_query(s, sql, NULL, &r, kinds[kind].noun, d);
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        rc = fn(ctx, gp_pg_int(r, i, 0), gp_pg_text(r, i, 1), gp_pg_text(r, i, 2));
    }
    PQclear(r);
    return rc;
}

/* ---- tokens ---- */

int gp__pg_token_insert(gp_store *s, gp_token_rec *t, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_str(&p, t->name);
    gp_pg_str(&p, t->hash);
    gp_pg_str(&p, t->role);
    gp_pg_i64(&p, t->tenant_id);
    gp_pg_i64(&p, t->node_id);
    gp_pg_i64(&p, t->created_ms);
    gp_pg_i64(&p, t->expires_ms);
    gp_pg_i64(&p, t->revoked != 0);
    PGresult *r;
    char constraint[64];
    int rc = gp_pg_write(s,
                         "INSERT INTO tokens(name, hash, role, tenant_id, node_id, created_ms, "
                         "expires_ms, revoked) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
                         "RETURNING id",
                         &p, &r, constraint, "token insert", d);
    if (rc == GP_EEXIST && strcmp(constraint, "tokens_hash_key") == 0) {
        return gp_diag_set(d, GP_EEXIST, "token %s: its hash is already stored", t->name);
    }
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, rc, "token %s: already exists", t->name);
    }
    if (rc == 0) {
        t->id = gp_pg_int(r, 0, 0);
        PQclear(r);
    }
    return rc;
}

int gp__pg_token_revoke(gp_store *s, int64_t id, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, id);
    PGresult *r;
    int rc =
        gp_pg_query(s, "UPDATE tokens SET revoked = 1 WHERE id = $1", &p, &r, "token revoke", d);
    if (rc < 0) {
        return rc;
    }
    int changed = gp_pg_changes(r) > 0;
    PQclear(r);
    return changed ? 0 : gp_diag_set(d, GP_ENOENT, "token %lld: not found", (long long)id);
}

int gp__pg_token_each(gp_store *s, gp_store_token_fn fn, void *ctx, gp_diag *d)
{
    PGresult *r;
    int rc = gp_pg_query(s,
                         "SELECT id, name, hash, role, tenant_id, node_id, created_ms, "
                         "expires_ms, revoked FROM tokens ORDER BY id",
                         NULL, &r, "token list", d);
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        gp_token_rec t;
        t.id = gp_pg_int(r, i, 0);
        gp_pg_copy(t.name, sizeof(t.name), r, i, 1);
        gp_pg_copy(t.hash, sizeof(t.hash), r, i, 2);
        gp_pg_copy(t.role, sizeof(t.role), r, i, 3);
        t.tenant_id = gp_pg_int(r, i, 4);
        t.node_id = gp_pg_int(r, i, 5);
        t.created_ms = gp_pg_int(r, i, 6);
        t.expires_ms = gp_pg_int(r, i, 7);
        t.revoked = (int)gp_pg_int(r, i, 8);
        rc = fn(ctx, &t);
    }
    PQclear(r);
    return rc;
}

/* ---- registry credentials ---- */

int gp__pg_registry_cred_put(gp_store *s, const gp_registry_cred_rec *c, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, c->tenant_id);
    gp_pg_str(&p, c->registry);
    gp_pg_str(&p, c->username);
    gp_pg_str(&p, c->password);
    gp_pg_i64(&p, c->updated_ms);
    int rc = gp_pg_write(s,
                         "INSERT INTO registry_credentials(tenant_id, registry, username, "
                         "password, updated_ms) VALUES ($1, $2, $3, $4, $5) "
                         "ON CONFLICT (tenant_id, registry) DO UPDATE SET "
                         "username = excluded.username, password = excluded.password, "
                         "updated_ms = excluded.updated_ms",
                         &p, NULL, NULL, "registry credentials", d);
    if (rc == GP_ENOENT) {
        return gp_diag_set(d, rc, "tenant %lld: not found", (long long)c->tenant_id);
    }
    return rc;
}

int gp__pg_registry_cred_delete(gp_store *s, int64_t tenant_id, const char *registry, gp_diag *d)
{
    gp_pg_params p = {0};
    gp_pg_i64(&p, tenant_id);
    gp_pg_str(&p, registry);
    PGresult *r;
    int rc =
        gp_pg_query(s, "DELETE FROM registry_credentials WHERE tenant_id = $1 AND registry = $2",
                    &p, &r, "registry credentials", d);
    if (rc < 0) {
        return rc;
    }
    int changed = gp_pg_changes(r) > 0;
    PQclear(r);
    return changed ? 0 : gp_diag_set(d, GP_ENOENT, "registry %s: no credentials stored", registry);
}

int gp__pg_registry_cred_each(gp_store *s, gp_store_registry_cred_fn fn, void *ctx, gp_diag *d)
{
    PGresult *r;
    int rc = gp_pg_query(s,
                         "SELECT tenant_id, registry, username, password, updated_ms "
                         "FROM registry_credentials ORDER BY tenant_id, registry",
                         NULL, &r, "registry credentials", d);
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        gp_registry_cred_rec c = {
            .tenant_id = gp_pg_int(r, i, 0),
            .registry = gp_pg_text(r, i, 1),
            .username = gp_pg_text(r, i, 2),
            .password = gp_pg_text(r, i, 3),
            .updated_ms = gp_pg_int(r, i, 4),
        };
        rc = fn(ctx, &c);
    }
    PQclear(r);
    return rc;
}
