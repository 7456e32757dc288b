/*
 * SQLite backend of the store: the audit log (see store.h), table `audit` of migration 4.
 *
 * Records are only inserted; the table's triggers abort UPDATE and DELETE. A read names only
 * the filters it has, so that SQLite serves each from its index (migration 5) instead of reading
 * the whole table, as one statement with every filter optional ("?4 IS NULL OR actor = ?4")
 * would: its plan cannot depend on which are bound. Each shape of filter (which are set, exact
 * or prefix) is prepared on first use and cached like the fixed statements.
 */
#include "store/sqlite_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void bind_str(sqlite3_stmt *st, int col, const char *v)
{
    sqlite3_bind_text(st, col, v ? v : "", -1, SQLITE_STATIC);
}

int gp__sqlite_audit_add(gp_store *s, gp_audit_rec *r, gp_diag *d)
{
    sqlite3_stmt *st;
    int rc = gp_sqlite_get(s, GP_SQ_AUDIT_ADD, &st, "audit add", d);
    if (rc < 0) {
        return rc;
    }
    sqlite3_bind_int64(st, 1, r->time_ms);
    bind_str(st, 2, r->actor);
    bind_str(st, 3, r->role);
    bind_str(st, 4, r->tenant);
    bind_str(st, 5, r->action);
    bind_str(st, 6, r->object);
    sqlite3_bind_text(st, 7, r->detail ? r->detail : "{}", -1, SQLITE_STATIC);
    /* Every refusal is the store's failure (GP_EIO), a trigger's included: the change being
     * recorded cannot be made without its record. */
    if (gp_sqlite_exec(st) != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "audit add");
    }
    gp_sqlite_put(s, GP_SQ_AUDIT_ADD, st);
    if (rc == 0) {
        r->id = sqlite3_last_insert_rowid(SQ(s)->db);
    }
    return rc;
}

/* The string filters, in the order of a shape's digits and of their parameters. */
static const char *const match_cols[] = {"actor", "tenant", "action", "object"};
#define NMATCH 4

/* How a string filter matches: not at all (left out, or the prefix "*" that every value has),
 * exactly, or as a prefix ('*' at the end, which *len then leaves out). */
enum { MATCH_NONE, MATCH_EXACT, MATCH_PREFIX };

static int match_kind(const gp_audit_filter *f, int i, const char **v, size_t *len)
{
    const char *const values[NMATCH] = {f->actor, f->tenant, f->action, f->object};
    *v = values[i];
    if (!*v) {
        return MATCH_NONE;
    }
    *len = strlen(*v);
    if (*len > 0 && (*v)[*len - 1] == '*') {
        (*len)--;
        return *len > 0 ? MATCH_PREFIX : MATCH_NONE;
    }
    return MATCH_EXACT;
}

/* The SQL of the filter's shape into sql; returns the shape, its slot in gp_store.audit.
 * Parameters: ?1 after, ?2 since, ?3 until, ?(4 + 2i) string filter i, ?(5 + 2i) the upper
 * bound of its prefix, ?12 the limit. A prefix p is the range [p, upper) (see bind_upper)
 * rather than substr(col, 1, n) = p, which no index serves. */
static int audit_shape(const gp_audit_filter *f, char *sql, size_t cap)
{
    int shape = (f->since_ms > 0) * 2 + (f->until_ms > 0);
    int ranges = f->since_ms > 0 || f->until_ms > 0, exact = 0;
    for (int i = 0; i < NMATCH; i++) {
        const char *v;
        size_t len;
        int kind = match_kind(f, i, &v, &len);
        ranges |= kind == MATCH_PREFIX;
        exact |= kind == MATCH_EXACT;
    }
    /* Without statistics SQLite rates the cursor's range (id > ?1, often id > 0) as selective
     * as a prefix or a time window, and walks the table by id to skip the sort. With only such
     * ranges, the unary plus takes the cursor out of its choice so that the range's index
     * drives; an exact value's index (value, id) serves the cursor as well and needs no help. */
    size_t n = (size_t)snprintf(sql, cap, "%s%s",
                                "SELECT id, time_ms, actor, role, tenant, action, object, detail "
                                "FROM audit WHERE ",
                                ranges && !exact ? "+id > ?1" : "id > ?1");
    if (f->since_ms > 0) {
        n += (size_t)snprintf(sql + n, cap - n, " AND time_ms >= ?2");
    }
    if (f->until_ms > 0) {
        n += (size_t)snprintf(sql + n, cap - n, " AND time_ms < ?3");
    }
    for (int i = 0; i < NMATCH; i++) {
        const char *v;
        size_t len;
        int kind = match_kind(f, i, &v, &len);
        shape = shape * 3 + kind;
        int p = 4 + 2 * i;
        if (kind == MATCH_EXACT) {
            n += (size_t)snprintf(sql + n, cap - n, " AND %s = ?%d", match_cols[i], p);
        } else if (kind == MATCH_PREFIX) {
            n += (size_t)snprintf(sql + n, cap - n, " AND %s >= ?%d AND %s < ?%d", match_cols[i], p,
                                  match_cols[i], p + 1);
        }
    }
    snprintf(sql + n, cap - n, " ORDER BY id LIMIT ?12");
    return shape;
}

/* Binds to col the least value above every text that starts with v[0..len): v with its last
 * byte below 0xff raised by one and the rest cut off; when every byte is 0xff, an empty blob,
 * which SQLite orders after all text. */
static int bind_upper(sqlite3_stmt *st, int col, const char *v, size_t len)
{
    while (len > 0 && (unsigned char)v[len - 1] == 0xff) {
        len--;
    }
    if (len == 0) {
        return sqlite3_bind_zeroblob(st, col, 0);
    }
    char *hi = sqlite3_malloc64(len);
    if (!hi) {
        return SQLITE_NOMEM;
    }
    memcpy(hi, v, len);
    hi[len - 1] = (char)((unsigned char)hi[len - 1] + 1);
    return sqlite3_bind_text(st, col, hi, (int)len, sqlite3_free);
}

int gp__sqlite_audit_each(gp_store *s, const gp_audit_filter *f, gp_store_audit_fn fn, void *ctx,
                          gp_diag *d)
{
    static const gp_audit_filter all;
    f = f ? f : &all;
    char sql[512];
    int shape = audit_shape(f, sql, sizeof(sql));
    sqlite3_stmt *st;
    int rc = gp_sqlite_prepare(s, &SQ(s)->audit[shape], sql, &st, "audit list", d);
    if (rc < 0) {
        return rc;
    }
    int bound = SQLITE_OK;
    sqlite3_bind_int64(st, 1, f->after);
    if (f->since_ms > 0) {
        sqlite3_bind_int64(st, 2, f->since_ms);
    }
    if (f->until_ms > 0) {
        sqlite3_bind_int64(st, 3, f->until_ms);
    }
    for (int i = 0; i < NMATCH && bound == SQLITE_OK; i++) {
        const char *v;
        size_t len;
        int kind = match_kind(f, i, &v, &len);
        if (kind != MATCH_NONE) {
            bound = sqlite3_bind_text(st, 4 + 2 * i, v, (int)len, SQLITE_STATIC);
        }
        if (kind == MATCH_PREFIX && bound == SQLITE_OK) {
            bound = bind_upper(st, 5 + 2 * i, v, len);
        }
    }
    sqlite3_bind_int(st, 12, f->limit > 0 ? f->limit : -1); /* SQLite: a negative LIMIT is none */
    if (bound != SQLITE_OK) {
        rc = gp_diag_set(d, GP_ENOMEM, "store: audit list: out of memory");
    }
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        gp_audit_rec r = {
            .id = sqlite3_column_int64(st, 0),
            .time_ms = sqlite3_column_int64(st, 1),
            .actor = gp_sqlite_text(st, 2),
            .role = gp_sqlite_text(st, 3),
            .tenant = gp_sqlite_text(st, 4),
            .action = gp_sqlite_text(st, 5),
            .object = gp_sqlite_text(st, 6),
            .detail = gp_sqlite_text(st, 7),
        };
        rc = fn(ctx, &r);
    }
    if (rc == 0 && step != SQLITE_DONE) {
        rc = gp_sqlite_error(s, d, GP_EIO, "audit list");
    }
    gp_sqlite_put_slot(&SQ(s)->audit[shape], st);
    return rc;
}
