/*
 * The authentication table: what authenticating a request needs of each token, copied out of
 * the state (ctl.h) so that requests are authenticated without the state lock, which a group
 * holds through its fsync.
 *
 * Entry i is token i of the state (tokens are only appended); order lists the entries sorted by
 * hash, so a lookup is a binary search however many (revoked) tokens accumulate. The table
 * follows the state in steps: tokens appended since it last caught up are inserted into order
 * by binary search, and tokens revoked in place (ctl_token_revoke) are marked revoked in place.
 * Only where the state was reloaded, or a change named no token (a tenant deleted:
 * ctl_state_auth_rebuild), is the table built anew. A table caught up step by step equals one
 * built anew from the same state.
 *
 * Locking: the functions here do not lock; the caller serialises writers and keeps readers out
 * while the table changes (the controller: its auth_lock).
 */
#ifndef GP_CTL_AUTH_H
#define GP_CTL_AUTH_H

#include "ctl/ctl.h"

typedef struct ctl_auth_entry {
    char hash[65];
    int64_t expires_ms;
    bool revoked;
    ctl_principal who;
} ctl_auth_entry;

typedef struct ctl_auth_table {
    ctl_auth_entry *e; /* e[i]: token i of the state */
    int *order;        /* indexes of e, sorted by hash */
    int n, cap;
    uint64_t gen; /* the state's auth_gen the table has caught up with */
} ctl_auth_table;

/* Builds *out anew from every token of st (a zeroed or finished table; out->e is never NULL on
 * success, however few tokens). GP_ENOMEM leaves *out as it was. */
int ctl_auth_table_build(ctl_auth_table *out, ctl_state *st);

/* Catches t up with st: the tokens appended since (t->n up to st->ntokens) inserted, those in
 * st's revocation log marked, the log emptied. Returns 1 when t cannot follow in steps (a change
 * since t->gen was not logged, or st has fewer tokens than t): the caller builds a new table.
 * GP_ENOMEM leaves t valid, missing some appended tokens (the next call adds them). */
int ctl_auth_table_follow(ctl_auth_table *t, ctl_state *st);

/* The entry of hash, or NULL. */
const ctl_auth_entry *ctl_auth_table_find(const ctl_auth_table *t, const char *hash);

/* Frees t's arrays and zeroes it. */
void ctl_auth_table_fini(ctl_auth_table *t);

/* Says a token was appended to st's tokens (auth_gen bumped, the change logged). */
void ctl_token_appended(ctl_state *st);

/* Marks token i of st revoked (tokens[i].revoked set, auth_gen bumped, the index logged for the
 * table to follow). */
void ctl_token_revoke(ctl_state *st, int i);

#endif
