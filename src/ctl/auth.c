/*
 * The authentication table (auth.h): built from the state's tokens, then kept in step with it.
 */
#include "ctl/auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Entry e filled from token r. */
static void fill(ctl_state *st, const gp_token_rec *r, ctl_auth_entry *e)
{
    memset(e, 0, sizeof(*e));
    memcpy(e->hash, r->hash, sizeof(e->hash));
    e->hash[sizeof(e->hash) - 1] = '\0';
    e->expires_ms = r->expires_ms;
    e->revoked = r->revoked != 0;
    ctl_role_parse(r->role, &e->who.role);
    e->who.token_id = r->id;
    e->who.tenant_id = r->tenant_id;
    e->who.node_id = r->node_id;
    snprintf(e->who.name, sizeof(e->who.name), "%s", r->name);
    const ctl_tenant *tn = r->tenant_id ? ctl_tenant_by_id(st, r->tenant_id) : NULL;
    snprintf(e->who.tenant, sizeof(e->who.tenant), "%s", tn ? tn->lim.name : "");
    e->revoked |= r->tenant_id && !tn; /* a user of a deleted tenant */
}

/* The first position in t->order whose entry's hash is not below hash. */
static int lower_bound(const ctl_auth_table *t, const char *hash)
{
    int lo = 0, hi = t->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(t->e[t->order[mid]].hash, hash) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Room for n entries. */
static int reserve(ctl_auth_table *t, int n)
{
    if (n <= t->cap && t->e) {
        return 0;
    }
    int cap = t->cap ? t->cap : 16;
    while (cap < n) {
        cap *= 2;
    }
    ctl_auth_entry *e = realloc(t->e, sizeof(*e) * (size_t)cap);
    if (!e) {
        return GP_ENOMEM;
    }
    t->e = e;
    int *o = realloc(t->order, sizeof(*o) * (size_t)cap);
    if (!o) {
        return GP_ENOMEM; /* e grown, cap not: still consistent */
    }
    t->order = o;
    t->cap = cap;
    return 0;
}

/* Appends token t->n of st, its place in order found by binary search. */
static int append(ctl_auth_table *t, ctl_state *st)
{
    if (reserve(t, t->n + 1) < 0) {
        return GP_ENOMEM;
    }
    int i = t->n;
    fill(st, &st->tokens[i], &t->e[i]);
    int at = lower_bound(t, t->e[i].hash);
    memmove(t->order + at + 1, t->order + at, sizeof(*t->order) * (size_t)(t->n - at));
    t->order[at] = i;
    t->n++;
    return 0;
}

typedef struct keyed {
    const char *hash;
    int i;
} keyed;

static int by_hash(const void *a, const void *b)
{
    return strcmp(((const keyed *)a)->hash, ((const keyed *)b)->hash);
}

/* The table has caught up with st's auth_gen: the log starts anew. */
static void caught_up(ctl_auth_table *t, ctl_state *st)
{
    st->nauth_revoked = 0;
    st->auth_logged = 0;
    t->gen = st->auth_gen;
}

int ctl_auth_table_build(ctl_auth_table *out, ctl_state *st)
{
    ctl_auth_table t = {0};
    keyed *k = malloc(sizeof(*k) * (size_t)(st->ntokens + 1));
    if (!k || reserve(&t, st->ntokens) < 0) {
        free(k);
        ctl_auth_table_fini(&t);
        return GP_ENOMEM;
    }
    for (; t.n < st->ntokens; t.n++) {
        fill(st, &st->tokens[t.n], &t.e[t.n]);
        k[t.n] = (keyed){t.e[t.n].hash, t.n};
    }
    qsort(k, (size_t)t.n, sizeof(*k), by_hash);
    for (int i = 0; i < t.n; i++) {
        t.order[i] = k[i].i;
    }
    free(k);
    ctl_auth_table_fini(out);
    *out = t;
    caught_up(out, st);
    return 0;
}

int ctl_auth_table_follow(ctl_auth_table *t, ctl_state *st)
{
    /* every change since t->gen logged (appends and ctl_token_revoke), and nothing else */
    if (!t->e || st->ntokens < t->n || st->auth_gen - t->gen != st->auth_logged) {
        return 1;
    }
    for (int k = 0; k < st->nauth_revoked; k++) {
        int i = st->auth_revoked[k];
        if (i < t->n) { /* one appended since is filled as it is now */
            t->e[i].revoked = true;
        }
    }
    st->nauth_revoked = 0;
    while (t->n < st->ntokens) {
        if (append(t, st) < 0) {
            return GP_ENOMEM; /* t->gen unchanged: the rest are appended next time */
        }
    }
    caught_up(t, st);
    return 0;
}

const ctl_auth_entry *ctl_auth_table_find(const ctl_auth_table *t, const char *hash)
{
    int at = lower_bound(t, hash);
    return at < t->n && strcmp(t->e[t->order[at]].hash, hash) == 0 ? &t->e[t->order[at]] : NULL;
}

void ctl_auth_table_fini(ctl_auth_table *t)
{
    free(t->e);
    free(t->order);
    memset(t, 0, sizeof(*t));
}

void ctl_token_appended(ctl_state *st)
{
    st->auth_gen++;
    st->auth_logged++;
}

void ctl_token_revoke(ctl_state *st, int i)
{
    st->tokens[i].revoked = 1;
    st->auth_gen++; /* not logged when the log cannot grow: the table is then built anew */
    if (st->nauth_revoked == st->capauth_revoked) {
        int cap = st->capauth_revoked ? st->capauth_revoked * 2 : 16;
        int *p = realloc(st->auth_revoked, sizeof(*p) * (size_t)cap);
        if (!p) {
            return;
        }
        st->auth_revoked = p;
        st->capauth_revoked = cap;
    }
    st->auth_revoked[st->nauth_revoked++] = i;
    st->auth_logged++;
}
