/*
 * The controller's node lookups by name and by id (ctl_node_by_name, ctl_node_by_id): exact
 * through appends, through a node removed from the middle of the array (a registration that
 * replaces a node) and across many nodes, so a registration costs a lookup, not a walk.
 */
#include "ctl/ctl.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
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
    for (int i = 0; i < st->nnodes; i++) {
        assert_ptr_equal(ctl_node_by_name(st, st->nodes[i].name), &st->nodes[i]);
        assert_ptr_equal(ctl_node_by_id(st, st->nodes[i].id), &st->nodes[i]);
    }
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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_nodes_and_a_replacement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
