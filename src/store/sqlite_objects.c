/*
 * SQLite backend of the store: named objects (tenants, queues, priority classes, nodes, volumes)
 * and API tokens.
 *
 * The object kinds share one implementation: each kind is a table of the same shape
 * (id, name UNIQUE, spec JSON), named in kinds[], and its statements are built from that name
 * and cached per store like the fixed ones.
 */
#include "store/sqlite_impl.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *noun;  /* in messages: "queue research: already exists" */
    const char *table; /* see migrations 2 and 3 (tenants: migration 1) */
    const char *users; /* what may refer to an object of the kind, blocking its deletion */
} kinds[GP_SQ_OBJ_KINDS] = {
    [GP_OBJ_TENANT] = {"tenant", "tenants", "jobs"},
    [GP_OBJ_QUEUE] = {"queue", "queues", "other records"},
    [GP_OBJ_PRIORITY_CLASS] = {"priority class", "priority_classes", "other records"},
    [GP_OBJ_NODE] = {"node", "nodes", "placements"},
    [GP_OBJ_VOLUME] = {"volume", "volumes", "other records"},
};

/* Each statement is head, the kind's table, tail. */
static const struct {
    const char *head, *tail;
} obj_sql[GP_SQ_OBJ_OPS] = {
    [GP_SQ_OBJ_INSERT] = {"INSERT INTO ", "(name, spec) VALUES (?, ?)"},
    [GP_SQ_OBJ_UPDATE] = {"UPDATE ", " SET name = ?, spec = ? WHERE id = ?"},
    [GP_SQ_OBJ_DELETE] = {"DELETE FROM ", " WHERE id = ?"},
    [GP_SQ_OBJ_EACH] = {"SELECT id, name, spec FROM ", " ORDER BY id"},
};

/* The statement op of kind (see gp_sqlite_prepare); GP_EINVAL for an unknown kind. */
static int obj_stmt(gp_store *s, gp_obj_kind kind, int op, sqlite3_stmt **st, gp_diag *d)
{
    *st = NULL;
    if ((unsigned)kind >= GP_SQ_OBJ_KINDS) {
        return gp_diag_set(d, GP_EINVAL, "store: unknown object kind %d", (int)kind);
    }
    char sql[128], what[64];
    snprintf(sql, sizeof(sql), "%s%s%s", obj_sql[op].head, kinds[kind].table, obj_sql[op].tail);
    snprintf(what, sizeof(what), "%s statement", kinds[kind].noun);
    return gp_sqlite_prepare(s, &SQ(s)->obj[kind][op], sql, st, what, d);
}

static void obj_put_stmt(gp_store *s, gp_obj_kind kind, int op, sqlite3_stmt *st)
{
    gp_sqlite_put_slot(&SQ(s)->obj[kind][op], st);
}

int gp__sqlite_obj_put(gp_store *s, gp_obj_kind kind, int64_t *id, const char *name,
                       const char *json, gp_diag *d)
{
    int op = *id == 0 ? GP_SQ_OBJ_INSERT : GP_SQ_OBJ_UPDATE;
    sqlite3_stmt *st;
    int rc = obj_stmt(s, kind, op, &st, d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, json ? json : "{}", -1, SQLITE_STATIC);
    if (op == GP_SQ_OBJ_UPDATE) {
        sqlite3_bind_int64(st, 3, *id);
    }
    rc = gp_sqlite_write(s, st, kinds[kind].noun, d);
    int changed = rc == 0 && sqlite3_changes(SQ(s)->db) > 0;
    obj_put_stmt(s, kind, op, st);
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, rc, "%s %s: already exists", kinds[kind].noun, name);
    }
    if (rc < 0) {
        return rc;
    }
    if (!changed) {
        return gp_diag_set(d, GP_ENOENT, "%s %lld: not found", kinds[kind].noun, (long long)*id);
    }
    if (op == GP_SQ_OBJ_INSERT) {
        *id = sqlite3_last_insert_rowid(SQ(s)->db);
    }
    return 0;
}

int gp__sqlite_obj_delete(gp_store *s, gp_obj_kind kind, int64_t id, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = obj_stmt(s, kind, GP_SQ_OBJ_DELETE, &st, d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, id);
    rc = gp_sqlite_write(s, st, kinds[kind].noun, d);
    int changed = rc == 0 && sqlite3_changes(SQ(s)->db) > 0;
    obj_put_stmt(s, kind, GP_SQ_OBJ_DELETE, st);
    if (rc == GP_ENOENT) { /* a foreign key: something still refers to the object */
        return gp_diag_set(d, GP_ESTATE, "%s %lld: in use by %s", kinds[kind].noun, (long long)id,
                           kinds[kind].users);
    }
    if (rc == 0 && !changed) {
        return gp_diag_set(d, GP_ENOENT, "%s %lld: not found", kinds[kind].noun, (long long)id);
    }
    return rc;
}

int gp__sqlite_obj_each(gp_store *s, gp_obj_kind kind, gp_store_obj_fn fn, void *ctx, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = obj_stmt(s, kind, GP_SQ_OBJ_EACH, &st, d);
    if (rc < 0) {
        return rc;
    }
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        rc = fn(ctx, sqlite3_column_int64(st, 0), gp_sqlite_text(st, 1), gp_sqlite_text(st, 2));
    }
    if (rc == 0 && step != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, kinds[kind].noun);
    }
    obj_put_stmt(s, kind, GP_SQ_OBJ_EACH, st);
    return rc;
}

/* ---- tokens ---- */

int gp__sqlite_token_insert(gp_store *s, gp_token_rec *t, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_TOKEN_INSERT, &st, "token insert", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, t->hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, t->role, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, t->tenant_id);
    sqlite3_bind_int64(st, 5, t->node_id);
    sqlite3_bind_int64(st, 6, t->created_ms);
    sqlite3_bind_int64(st, 7, t->expires_ms);
    sqlite3_bind_int(st, 8, t->revoked != 0);
    rc = gp_sqlite_write(s, st, "token insert", d);
    /* SQLite names the column in "UNIQUE constraint failed: tokens.hash". */
    int hash_taken = rc == GP_EEXIST && strstr(sqlite3_errmsg(SQ(s)->db), "tokens.hash") != NULL;
    gp_sqlite_put(s, GP_SQ_TOKEN_INSERT, st);
    if (hash_taken) {
        return gp_diag_set(d, GP_EEXIST, "token %s: its hash is already stored", t->name);
    }
    if (rc == GP_EEXIST) {
        return gp_diag_set(d, rc, "token %s: already exists", t->name);
    }
    if (rc == 0) {
        t->id = sqlite3_last_insert_rowid(SQ(s)->db);
    }
    return rc;
}

int gp__sqlite_token_revoke(gp_store *s, int64_t id, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_TOKEN_REVOKE, &st, "token revoke", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, id);
    rc = gp_sqlite_write(s, st, "token revoke", d);
    int changed = rc == 0 && sqlite3_changes(SQ(s)->db) > 0;
    gp_sqlite_put(s, GP_SQ_TOKEN_REVOKE, st);
    if (rc == 0 && !changed) {
        return gp_diag_set(d, GP_ENOENT, "token %lld: not found", (long long)id);
    }
    return rc;
}

int gp__sqlite_token_each(gp_store *s, gp_store_token_fn fn, void *ctx, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_TOKEN_EACH, &st, "token list", d);
    if (rc < 0) {
        return rc;
    }
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        gp_token_rec t;
        t.id = sqlite3_column_int64(st, 0);
        gp_sqlite_copy(t.name, sizeof(t.name), st, 1);
        gp_sqlite_copy(t.hash, sizeof(t.hash), st, 2);
        gp_sqlite_copy(t.role, sizeof(t.role), st, 3);
        t.tenant_id = sqlite3_column_int64(st, 4);
        t.node_id = sqlite3_column_int64(st, 5);
        t.created_ms = sqlite3_column_int64(st, 6);
        t.expires_ms = sqlite3_column_int64(st, 7);
        t.revoked = sqlite3_column_int(st, 8);
        rc = fn(ctx, &t);
    }
    if (rc == 0 && step != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "token list");
    }
    gp_sqlite_put(s, GP_SQ_TOKEN_EACH, st);
    return rc;
}
