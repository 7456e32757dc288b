/*
 * The authentication table (src/ctl/auth.h) kept in step with the state: on random sequences of
 * tokens appended, tokens revoked and tenants deleted, the table caught up step by step equals
 * one built anew from the same state, entry by entry and in the same order, and finds every
 * token by its hash. Appends and revocations are followed in steps, not by building anew; a
 * change the table cannot follow (a tenant deleted, a reload) has it built anew.
 */
#include "ctl/auth.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static uint64_t rnd_state;

static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static void add_tenant(ctl_state *st, int64_t id)
{
    st->tenants = realloc(st->tenants, sizeof(*st->tenants) * (size_t)(st->ntenants + 1));
    assert_non_null(st->tenants);
    ctl_tenant *t = &st->tenants[st->ntenants++];
    memset(t, 0, sizeof(*t));
    t->id = id;
    snprintf(t->lim.name, sizeof(t->lim.name), "tenant-%lld", (long long)id);
}

/* Appends a token as the controller does (a user of tenant, or an agent when tenant is 0). */
static void add_token(ctl_state *st, int64_t tenant)
{
    if (st->ntokens == st->captokens) {
        st->captokens = st->captokens ? st->captokens * 2 : 16;
        st->tokens = realloc(st->tokens, sizeof(*st->tokens) * (size_t)st->captokens);
        assert_non_null(st->tokens);
    }
    gp_token_rec *r = &st->tokens[st->ntokens];
    memset(r, 0, sizeof(*r));
    r->id = st->ntokens + 1;
    snprintf(r->name, sizeof(r->name), "token-%d", st->ntokens);
    snprintf(r->hash, sizeof(r->hash), "%016llx%016llx%016llx%016llx", (unsigned long long)rnd(),
             (unsigned long long)rnd(), (unsigned long long)rnd(), (unsigned long long)rnd());
    snprintf(r->role, sizeof(r->role), "%s", tenant ? "user" : "agent");
    r->tenant_id = tenant;
    r->node_id = tenant ? 0 : (int64_t)(rnd() % 1000) + 1;
    r->expires_ms = rnd() % 3 == 0 ? (int64_t)(rnd() % 100000) : 0;
    st->ntokens++;
    ctl_token_appended(st);
}

static void same_tables(const ctl_auth_table *a, const ctl_auth_table *b)
{
    assert_int_equal(a->n, b->n);
    assert_true(a->gen == b->gen);
    for (int i = 0; i < a->n; i++) {
        assert_int_equal(a->order[i], b->order[i]);
        assert_memory_equal(&a->e[i], &b->e[i], sizeof(a->e[i]));
    }
}

static void finds_all(const ctl_auth_table *t, const ctl_state *st)
{
    for (int i = 0; i < st->ntokens; i++) {
        const ctl_auth_entry *e = ctl_auth_table_find(t, st->tokens[i].hash);
        assert_non_null(e);
        assert_int_equal(e->who.token_id, st->tokens[i].id);
        assert_int_equal(e->revoked,
                         st->tokens[i].revoked != 0 ||
                             (st->tokens[i].tenant_id &&
                              !ctl_tenant_by_id((ctl_state *)st, st->tokens[i].tenant_id)));
    }
    assert_null(ctl_auth_table_find(t, "not-a-hash"));
    assert_null(ctl_auth_table_find(t, ""));
}

/* One random sequence: steps of a few changes each, the table following after each step. */
static void run_sequence(uint64_t seed, int steps)
{
    rnd_state = seed;
    ctl_state st;
    memset(&st, 0, sizeof(st));
    for (int id = 1; id <= 4; id++) {
        add_tenant(&st, id);
    }
    ctl_auth_table t = {0};
    assert_int_equal(ctl_auth_table_build(&t, &st), 0);
    assert_non_null(t.e);
    int rebuilt = 0, followed = 0;
    for (int s = 0; s < steps; s++) {
        bool unlogged = false;
        for (int k = (int)(rnd() % 4); k >= 0; k--) {
            uint64_t what = rnd() % 100;
            if (what < 60 || st.ntokens == 0) {
                add_token(&st, (int64_t)(rnd() % 6)); /* 5: a tenant that never existed */
            } else if (what < 97) {
                ctl_token_revoke(&st, (int)(rnd() % (uint64_t)st.ntokens));
            } else if (st.ntenants > 1) { /* a tenant deleted: auth_gen bumped, not logged */
                int i = (int)(rnd() % (uint64_t)st.ntenants);
                st.tenants[i] = st.tenants[--st.ntenants];
                st.auth_gen++;
                unlogged = true;
            }
        }
        int rc = ctl_auth_table_follow(&t, &st);
        assert_true(rc == 0 || rc == 1);
        assert_int_equal(rc, unlogged ? 1 : 0);
        if (rc == 1) {
            assert_int_equal(ctl_auth_table_build(&t, &st), 0);
            rebuilt++;
        } else {
            followed++;
        }
        assert_true(t.gen == st.auth_gen);
        ctl_auth_table fresh = {0};
        assert_int_equal(ctl_auth_table_build(&fresh, &st), 0);
        same_tables(&t, &fresh);
        ctl_auth_table_fini(&fresh);
        if (s % 50 == 0) {
            finds_all(&t, &st);
        }
    }
    finds_all(&t, &st);
    assert_true(followed > rebuilt);
    ctl_auth_table_fini(&t);
    free(st.tenants);
    st.tenants = NULL;
    st.ntenants = 0;
    ctl_state_clear(&st);
}

static void test_follow_equals_rebuild(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        print_message("seed %llu\n", (unsigned long long)seed);
        run_sequence(seed * 0x9e3779b97f4a7c15ull, 400);
    }
}

/* A reload (ctl_state_clear) is a change the table cannot follow. */
static void test_reload_rebuilds(void **state)
{
    (void)state;
    rnd_state = 7;
    ctl_state st;
    memset(&st, 0, sizeof(st));
    add_tenant(&st, 1);
    for (int i = 0; i < 10; i++) {
        add_token(&st, 1);
    }
    ctl_auth_table t = {0};
    assert_int_equal(ctl_auth_table_build(&t, &st), 0);
    assert_int_equal(ctl_auth_table_follow(&t, &st), 0);
    free(st.tenants);
    st.tenants = NULL;
    st.ntenants = 0;
    ctl_state_clear(&st);
    assert_int_equal(ctl_auth_table_follow(&t, &st), 1);
    assert_int_equal(ctl_auth_table_build(&t, &st), 0);
    assert_int_equal(t.n, 0);
    assert_null(ctl_auth_table_find(&t, "x"));
    ctl_auth_table_fini(&t);
    ctl_state_clear(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follow_equals_rebuild),
        cmocka_unit_test(test_reload_rebuilds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
