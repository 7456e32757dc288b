/*
 * The controller's node lookups by name and by id (ctl_node_by_name, ctl_node_by_id): exact
 * through appends, through a node removed from the middle of the array (a registration that
 * replaces a node) and across many nodes, with the pool's cluster indexes (ctl_pool_nodes) in
 * step; and its token lookups by name and by node
 * (ctl_token_by_name, ctl_tokens_of_node) as tokens are appended. A registration costs lookups,
 * not walks over every node and token.
 */
#include "ctl/ctl.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void add(ctl_state *st, int64_t id, const char *name)
{
    json_t *doc =
        json_pack("{s:s, s:i, s:i, s:[{s:s, s:s, s:i}]}", "name", name, "cpu_milli", 8000,
                  "memory_mib", 65536, "gpus", "uuid", "GPU-x", "model", "T4", "memory_mib", 16384);
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(ctl_state_add_node(st, id, name, doc, &d), 0);
    json_decref(doc);
}

static void check_all(ctl_state *st)
{
    int *pool = malloc(sizeof(int) * (size_t)(st->nnodes + 1));
    assert_non_null(pool);
    assert_int_equal(ctl_pool_nodes(st, pool), st->nnodes);
    for (int i = 0; i < st->nnodes; i++) {
        assert_ptr_equal(ctl_node_by_name(st, st->nodes[i].name), &st->nodes[i]);
        assert_ptr_equal(ctl_node_by_id(st, st->nodes[i].id), &st->nodes[i]);
        assert_int_equal(pool[i], st->nodes[i].cl);
    }
    free(pool);
}

static void test_many_nodes_and_a_replacement(void **state)
{
    (void)state;
    ctl_state st;
    memset(&st, 0, sizeof(st));
    st.cluster = gp_cluster_new();
    assert_non_null(st.cluster);
    assert_null(ctl_node_by_name(&st, "node-0"));
    char name[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof(name), "node-%d", i);
        add(&st, 100 + i, name);
        if (i % 997 == 0) {
            check_all(&st);
        }
    }
    check_all(&st);
    assert_null(ctl_node_by_name(&st, "node-3000"));
    assert_null(ctl_node_by_name(&st, "node"));
    assert_null(ctl_node_by_id(&st, 99));
    /* node-17 replaced as a registration with a new inventory does: the last node takes its
     * slot, then the new one is appended with the old id */
    ctl_node *old = ctl_node_by_name(&st, "node-17");
    assert_non_null(old);
    int64_t id = old->id;
    ctl_node_fini(old);
    *old = st.nodes[--st.nnodes];
    ctl_state_nodes_moved(&st);
    assert_null(ctl_node_by_name(&st, "node-17"));
    assert_string_equal(ctl_node_by_name(&st, "node-2999")->name, "node-2999");
    assert_ptr_equal(ctl_node_by_name(&st, "node-2999"), &st.nodes[17]);
    add(&st, id, "node-17");
    assert_ptr_equal(ctl_node_by_name(&st, "node-17"), &st.nodes[st.nnodes - 1]);
    assert_ptr_equal(ctl_node_by_id(&st, id), &st.nodes[st.nnodes - 1]);
    check_all(&st);
    ctl_state_clear(&st);
    assert_null(ctl_node_by_name(&st, "node-1"));
    assert_null(ctl_node_by_id(&st, 101));
    ctl_state_clear(&st); /* the lookups after the first clear built an index again */
}

static void append_token(ctl_state *st, const char *name, int64_t node_id)
{
    if (st->ntokens == st->captokens) {
        st->captokens = st->captokens ? st->captokens * 2 : 4;
        st->tokens = realloc(st->tokens, sizeof(*st->tokens) * (size_t)st->captokens);
        assert_non_null(st->tokens);
    }
    gp_token_rec t;
    memset(&t, 0, sizeof(t));
    t.id = st->ntokens + 1;
    t.node_id = node_id;
    snprintf(t.name, sizeof(t.name), "%s", name);
    st->tokens[st->ntokens++] = t;
}

static void test_tokens_by_name_and_node(void **state)
{
    (void)state;
    ctl_state st;
    memset(&st, 0, sizeof(st));
    int *mine;
    assert_null(ctl_token_by_name(&st, "admin"));
    assert_int_equal(ctl_tokens_of_node(&st, 5, &mine), 0);
    assert_null(mine);
    append_token(&st, "admin", 0);
    char name[64];
    for (int i = 0; i < 2000; i++) { /* three tokens per node, interleaved with other nodes' */
        snprintf(name, sizeof(name), "agent-node-%d-%d", i % 700, i);
        append_token(&st, name, 1 + i % 700);
        if (i % 333 == 0) {
            assert_ptr_equal(ctl_token_by_name(&st, name), &st.tokens[st.ntokens - 1]);
        }
    }
    for (int i = 0; i < st.ntokens; i++) {
        assert_ptr_equal(ctl_token_by_name(&st, st.tokens[i].name), &st.tokens[i]);
    }
    assert_null(ctl_token_by_name(&st, "agent-node-1-2"));
    int n = ctl_tokens_of_node(&st, 1 + 42, &mine);
    assert_int_equal(n, 3); /* i = 42, 742, 1442: ascending */
    assert_string_equal(st.tokens[mine[0]].name, "agent-node-42-42");
    assert_string_equal(st.tokens[mine[1]].name, "agent-node-42-742");
    assert_string_equal(st.tokens[mine[2]].name, "agent-node-42-1442");
    free(mine);
    assert_int_equal(ctl_tokens_of_node(&st, 701, &mine), 0);
    free(mine);
    st.cluster = gp_cluster_new();
    ctl_state_clear(&st);
    assert_null(ctl_token_by_name(&st, "admin"));
    ctl_state_clear(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_nodes_and_a_replacement),
        cmocka_unit_test(test_tokens_by_name_and_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
