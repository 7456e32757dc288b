/*
 * The pool a submit is judged against, kept in the node index (ctl_pool_view): the registered
 * nodes' cluster indexes and the GPU models they have, without a pass over the nodes. On a mixed
 * pool built by random registrations, replacements (a node registering again with another
 * inventory) and removals, the view equals a walk over the nodes, and every verdict of
 * gp_feasible_pool_models on it equals gp_feasible_pool's on the copied node list, refusals word
 * for word: a model whose last node went away is refused as not in the pool.
 */
#include "ctl/ctl.h"
#include "gpupool/feasible.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *const models[] = {"T4", "A100-80GB", "H100-80GB", "L4"};
static const int model_mib[] = {15360, 81920, 81920, 23034};
#define NMODELS 4

static uint64_t rnd_state;

static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* A node of ngpus GPUs of model m (the fourth model only on nodes with a name ending in 7). */
static void add(ctl_state *st, int64_t id, const char *name, int m, int ngpus)
{
    json_t *gpus = json_array();
    for (int g = 0; g < ngpus; g++) {
        json_array_append_new(gpus, json_pack("{s:s, s:s, s:i}", "uuid", "GPU-x", "model",
                                              models[m], "memory_mib", model_mib[m]));
    }
    json_t *doc = json_pack("{s:s, s:i, s:i, s:o}", "name", name, "cpu_milli",
                            8000 * (1 + (int)(rnd() % 8)), "memory_mib", 65536, "gpus", gpus);
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(ctl_state_add_node(st, id, name, doc, &d), 0);
    json_decref(doc);
}

/* Removes node i as a registration that replaces it does. */
static void remove_node(ctl_state *st, int i)
{
    gp_cluster_set_schedulable(st->cluster, st->nodes[i].cl, false);
    ctl_node_fini(&st->nodes[i]);
    st->nodes[i] = st->nodes[--st->nnodes];
    ctl_state_nodes_moved(st);
}

static void same_view(ctl_state *st)
{
    const int *view;
    uint64_t present;
    int n = ctl_pool_view(st, &view, &present);
    assert_int_equal(n, st->nnodes);
    uint64_t walked = 0;
    for (int i = 0; i < st->nnodes; i++) {
        assert_int_equal(view[i], st->nodes[i].cl);
        walked |= gp_cluster_node(st->cluster, st->nodes[i].cl)->models;
    }
    assert_true(present == walked);
}

/* One job's verdict both ways. */
static void same_verdict(ctl_state *st, const gp_feasible_job *j)
{
    int *nodes = malloc(sizeof(int) * (size_t)(st->nnodes + 1));
    assert_non_null(nodes);
    int n = ctl_pool_nodes(st, nodes);
    gp_diag d1, d2;
    gp_diag_clear(&d1);
    gp_diag_clear(&d2);
    int rc1 = gp_feasible_pool(st->cluster, nodes, n, j, &d1);
    const int *view;
    uint64_t present;
    int nv = ctl_pool_view(st, &view, &present);
    assert_int_equal(nv, n);
    int rc2 = gp_feasible_pool_models(st->cluster, view, nv, present, j, &d2);
    if (rc1 != rc2 || strcmp(d1.msg, d2.msg) != 0) {
        fail_msg("walk: %d \"%s\"; view: %d \"%s\"", rc1, d1.msg, rc2, d2.msg);
    }
    free(nodes);
}

/* A handful of jobs: by model name, any model, many GPUs, a gang, a large CPU ask. */
static void same_verdicts(ctl_state *st)
{
    char named[1][GP_NAME_MAX];
    for (int m = 0; m < NMODELS; m++) {
        for (int count = 1; count <= 8; count *= 2) {
            gp_request r = {
                .cpu_milli = 1000, .memory_mib = 1024, .kind = GP_REQ_WHOLE, .gpu_count = count};
            snprintf(named[0], sizeof(named[0]), "%s", models[m]);
            gp_feasible_job j = {.req = &r,
                                 .replicas = 1 + (int)(rnd() % 3),
                                 .models = (const char(*)[GP_NAME_MAX])named,
                                 .nmodels = 1};
            same_verdict(st, &j);
            j.models = NULL;
            j.nmodels = 0;
            r.cpu_milli = (int64_t)(rnd() % 80000);
            same_verdict(st, &j);
        }
    }
    gp_request none = {.cpu_milli = 500, .memory_mib = 100, .kind = GP_REQ_NONE};
    gp_feasible_job j = {.req = &none, .replicas = 1};
    same_verdict(st, &j);
}

static void test_view_and_verdicts(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        rnd_state = seed * 0x9e3779b97f4a7c15ull;
        print_message("seed %llu\n", (unsigned long long)seed);
        ctl_state st;
        memset(&st, 0, sizeof(st));
        st.cluster = gp_cluster_new();
        assert_non_null(st.cluster);
        int64_t id = 0;
        char name[64];
        for (int step = 0; step < 300; step++) {
            uint64_t what = rnd() % 10;
            if (what < 7 || st.nnodes == 0) {
                id++;
                snprintf(name, sizeof(name), "node-%lld", (long long)id);
                add(&st, id, name, (int)(rnd() % NMODELS), 1 + (int)(rnd() % 8));
            } else if (what < 9) { /* registered again with another inventory */
                int i = (int)(rnd() % (uint64_t)st.nnodes);
                int64_t old = st.nodes[i].id;
                snprintf(name, sizeof(name), "%s", st.nodes[i].name);
                remove_node(&st, i);
                add(&st, old, name, (int)(rnd() % NMODELS), 1 + (int)(rnd() % 8));
            } else {
                remove_node(&st, (int)(rnd() % (uint64_t)st.nnodes));
            }
            same_view(&st);
            if (step % 10 == 0) {
                same_verdicts(&st);
            }
        }
        ctl_state_clear(&st);
    }
}

/* The only node of a model replaced by one of another: the model leaves the view, and a job
 * naming it is refused as not in the pool. */
static void test_last_node_of_a_model(void **state)
{
    (void)state;
    rnd_state = 3;
    ctl_state st;
    memset(&st, 0, sizeof(st));
    st.cluster = gp_cluster_new();
    add(&st, 1, "t4", 0, 4);
    add(&st, 2, "a100", 1, 8);
    const int *view;
    uint64_t present, before;
    assert_int_equal(ctl_pool_view(&st, &view, &before), 2);
    remove_node(&st, 1);
    add(&st, 2, "a100", 0, 8); /* now T4s */
    assert_int_equal(ctl_pool_view(&st, &view, &present), 2);
    assert_true(present != before);
    gp_request r = {.cpu_milli = 1000, .memory_mib = 1024, .kind = GP_REQ_WHOLE, .gpu_count = 1};
    char named[1][GP_NAME_MAX] = {"A100-80GB"};
    gp_feasible_job j = {
        .req = &r, .replicas = 1, .models = (const char(*)[GP_NAME_MAX])named, .nmodels = 1};
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_feasible_pool_models(st.cluster, view, 2, present, &j, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "resources.gpu_models[0]"));
    same_verdict(&st, &j);
    ctl_state_clear(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_and_verdicts),
        cmocka_unit_test(test_last_node_of_a_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
