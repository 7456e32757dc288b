/*
 * Placement constraints in the scheduler (gpupool/constraint.h): node selectors, each taint
 * effect with and without a toleration, spread over a topology label, anti-affinity, counting
 * over a group of jobs, and the pending reason that names what keeps a job off the nodes.
 */
#include "gpupool/constraint.h"
#include "gpupool/sched.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1024

typedef struct world {
    gp_cluster *c;
    gp_scheduler *s;
    gp_sched_config cfg;
    gp_sched_queue q;
    gp_sched_tenant t;
    gp_sched_job pend[16];
    int npend;
    gp_sched_result r;
} world;

/* n nodes n0.. of 8 GPUs; node i has label zone = zones[i] when zones is given. */
static void w_init(world *w, int n, const char *const *zones)
{
    memset(w, 0, sizeof(*w));
    w->c = gp_cluster_new();
    int m = gp_cluster_model(w->c, "A100-80GB", 80 * GIB);
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "n%d", i);
        fx_node(w->c, name, 64000, 512 * GIB, 8, m);
        if (zones) {
            assert_int_equal(gp_cluster_set_label(w->c, i, "zone", zones[i]), 0);
        }
    }
    gp_sched_config_default(&w->cfg);
    snprintf(w->q.name, sizeof(w->q.name), "default");
    w->q.weight = 1;
    w->q.guarantee = (gp_res){-1, -1, -1, -1};
    w->q.capability = (gp_res){-1, -1, -1, -1};
    snprintf(w->t.name, sizeof(w->t.name), "t");
    w->t.quota_gpu_milli = -1;
    w->t.quota_gpu_mem_mib = -1;
    for (int i = 0; i < GP_MAX_MODELS; i++) {
        w->t.quota_model_milli[i] = -1;
    }
    assert_int_equal(gp_sched_new(w->c, &w->cfg, &w->s, NULL), 0);
}

static void submit(world *w, int64_t id, int replicas, const gp_constraints *k, int64_t group)
{
    gp_sched_job *j = &w->pend[w->npend++];
    memset(j, 0, sizeof(*j));
    j->id = id;
    j->replicas = replicas;
    j->req = fx_whole(1000, 1);
    j->req.place = k;
    j->gpu_policy = GP_GPU_DEFAULT;
    j->submit_ms = id;
    j->group = group;
}

static void run_cycle(world *w)
{
    gp_sched_input in = {.queues = &w->q,
                         .nqueues = 1,
                         .tenants = &w->t,
                         .ntenants = 1,
                         .pending = w->pend,
                         .npending = w->npend,
                         .seed = 7};
    gp_diag d;
    assert_int_equal(gp_sched_cycle(w->s, &in, &w->r, &d), 0);
}

static void w_fini(world *w)
{
    gp_sched_result_fini(&w->r);
    gp_sched_free(w->s);
    gp_cluster_free(w->c);
}

static const gp_sched_placement *placed(const world *w, int64_t id)
{
    for (int i = 0; i < w->r.nplaced; i++) {
        if (w->r.placed[i].job_id == id) {
            return &w->r.placed[i];
        }
    }
    return NULL;
}

static const char *reason(const world *w, int64_t id)
{
    for (int i = 0; i < w->r.nwaiting; i++) {
        if (w->r.waiting[i].job_id == id) {
            return w->r.waiting[i].reason;
        }
    }
    return NULL;
}

static void taint(world *w, int node, const char *key, const char *value, int effect)
{
    gp_taint t;
    memset(&t, 0, sizeof(t));
    snprintf(t.key, sizeof(t.key), "%s", key);
    snprintf(t.value, sizeof(t.value), "%s", value);
    t.effect = effect;
    assert_int_equal(gp_cluster_set_taints(w->c, node, &t, 1), 0);
}

static void test_selector(void **state)
{
    (void)state;
    static const char *const zones[] = {"a", "b", "b"};
    world w;
    w_init(&w, 3, zones);
    gp_kv sel[] = {{"zone", "a"}};
    gp_constraints k = {.selector = sel, .nselector = 1};
    submit(&w, 1, 2, &k, 0); /* 2 replicas of 1 GPU: both on n0 */
    gp_kv host[] = {{GP_LABEL_HOSTNAME, "n2"}};
    gp_constraints kh = {.selector = host, .nselector = 1};
    submit(&w, 2, 1, &kh, 0); /* the implicit hostname label */
    gp_kv none[] = {{"zone", "c"}};
    gp_constraints kn = {.selector = none, .nselector = 1};
    submit(&w, 3, 1, &kn, 0);
    run_cycle(&w);
    const gp_sched_placement *p = placed(&w, 1);
    assert_non_null(p);
    assert_int_equal(p->replicas[0].node, 0);
    assert_int_equal(p->replicas[1].node, 0);
    assert_non_null(placed(&w, 2));
    assert_int_equal(placed(&w, 2)->replicas[0].node, 2);
    assert_null(placed(&w, 3));
    assert_string_equal(reason(&w, 3), "0/3 nodes match: 3 lack zone=c");
    w_fini(&w);
}

static void test_taints(void **state)
{
    (void)state;
    world w;
    w_init(&w, 3, NULL);
    taint(&w, 0, "dedicated", "ml", GP_TAINT_NO_SCHEDULE);
    taint(&w, 1, "gpu", "", GP_TAINT_NO_EXECUTE);
    taint(&w, 2, "spot", "", GP_TAINT_PREFER_NO_SCHEDULE);
    /* no toleration: only n2 (PreferNoSchedule, no better node) */
    submit(&w, 1, 1, NULL, 0);
    /* tolerates dedicated=ml: n0 preferred over n2's PreferNoSchedule */
    gp_toleration tol[] = {{"dedicated", true, "ml", GP_TAINT_NO_SCHEDULE}};
    gp_constraints k = {.tolerations = tol, .ntolerations = 1};
    submit(&w, 2, 1, &k, 0);
    /* the wrong value does not tolerate */
    gp_toleration bad[] = {{"dedicated", true, "web", GP_TAINT_ANY}};
    gp_constraints kb = {.tolerations = bad, .ntolerations = 1};
    submit(&w, 3, 1, &kb, 0);
    /* Exists without a key tolerates all */
    gp_toleration all[] = {{NULL, false, NULL, GP_TAINT_ANY}};
    gp_constraints ka = {.tolerations = all, .ntolerations = 1};
    submit(&w, 4, 1, &ka, 0);
    run_cycle(&w);
    assert_int_equal(placed(&w, 1)->replicas[0].node, 2);
    assert_int_equal(placed(&w, 2)->replicas[0].node, 0);
    assert_int_equal(placed(&w, 3)->replicas[0].node, 2);
    assert_non_null(placed(&w, 4));
    w_fini(&w);

    w_init(&w, 3, NULL);
    taint(&w, 0, "dedicated", "ml", GP_TAINT_NO_SCHEDULE);
    taint(&w, 1, "dedicated", "ml", GP_TAINT_NO_SCHEDULE);
    gp_kv sel[] = {{GP_LABEL_HOSTNAME, "n0"}};
    gp_constraints ks = {.selector = sel, .nselector = 1};
    submit(&w, 5, 1, &ks, 0);
    submit(&w, 6, 2, NULL, 0); /* a gang of 2: only n2 is open, and it has room for both */
    run_cycle(&w);
    assert_string_equal(reason(&w, 5),
                        "0/3 nodes match: 2 lack kubernetes.io/hostname=n0, 1 has taint "
                        "dedicated=ml:NoSchedule");
    assert_int_equal(placed(&w, 6)->replicas[0].node, 2);
    assert_int_equal(placed(&w, 6)->replicas[1].node, 2);
    w_fini(&w);

    /* one node tainted, the other full: a matter of room, said as such (and the job may hold
     * the backfill reservation) */
    w_init(&w, 2, NULL);
    taint(&w, 0, "dedicated", "ml", GP_TAINT_NO_SCHEDULE);
    submit(&w, 8, 8, NULL, 0); /* 8 replicas of 1 GPU fill n1 */
    submit(&w, 9, 1, NULL, 0);
    run_cycle(&w);
    assert_non_null(placed(&w, 8));
    assert_non_null(strstr(reason(&w, 9), "capacity"));
    assert_null(strstr(reason(&w, 9), "nodes match"));
    w_fini(&w);

    /* a node with only untolerated NoSchedule taints: the job waits and says why */
    w_init(&w, 1, NULL);
    taint(&w, 0, "dedicated", "ml", GP_TAINT_NO_SCHEDULE);
    submit(&w, 7, 1, NULL, 0);
    run_cycle(&w);
    assert_string_equal(reason(&w, 7), "0/1 nodes match: 1 has taint dedicated=ml:NoSchedule");
    w_fini(&w);
}

static void count_nodes(const world *w, int64_t id, int *per_node)
{
    const gp_sched_placement *p = placed(w, id);
    assert_non_null(p);
    for (int i = 0; i < p->nreplicas; i++) {
        per_node[p->replicas[i].node]++;
    }
}

static void test_spread(void **state)
{
    (void)state;
    /* zones a: n0, n1; b: n2; c: n3 (no label on n4: refused) */
    static const char *const zones[] = {"a", "a", "b", "c", "x"};
    world w;
    w_init(&w, 5, zones);
    gp_cluster_set_label(w.c, 4, "other", "y");
    gp_spread sp[] = {{"zone", 1}};
    gp_kv sel[] = {{"zone", "a"}};
    (void)sel;
    gp_constraints k = {.spread = sp, .nspread = 1};
    submit(&w, 1, 6, &k, 0);
    run_cycle(&w);
    int per[5] = {0};
    count_nodes(&w, 1, per);
    int za = per[0] + per[1], zb = per[2], zc = per[3], zx = per[4];
    /* four domains (a, b, c, x): 6 replicas with max skew 1 -> 2,2,1,1 in some order */
    int most = za > zb ? za : zb;
    most = most > zc ? most : zc;
    most = most > zx ? most : zx;
    int least = za < zb ? za : zb;
    least = least < zc ? least : zc;
    least = least < zx ? least : zx;
    assert_true(most - least <= 1);
    assert_int_equal(za + zb + zc + zx, 6);
    w_fini(&w);
}

static void test_anti_affinity_group(void **state)
{
    (void)state;
    world w;
    w_init(&w, 3, NULL);
    gp_constraints k = {.anti_affinity = true};
    submit(&w, 1, 3, &k, 0);                     /* one per node */
    submit(&w, 2, 4, &k, 0);                     /* four replicas, three nodes: waits */
    gp_constraints k2 = {.anti_affinity = true}; /* the same constraints elsewhere: */
    submit(&w, 5, 4, &k2, 0);                    /* the cached failure, the same reason */
    /* two jobs of one group (a service's replica jobs): on different nodes */
    submit(&w, 3, 1, &k, 99);
    submit(&w, 4, 1, &k, 99);
    run_cycle(&w);
    int per[3] = {0};
    count_nodes(&w, 1, per);
    assert_int_equal(per[0], 1);
    assert_int_equal(per[1], 1);
    assert_int_equal(per[2], 1);
    assert_null(placed(&w, 2));
    assert_string_equal(reason(&w, 2), "0/3 nodes match: 3 excluded by spread or anti_affinity");
    assert_string_equal(reason(&w, 5), reason(&w, 2));
    assert_int_not_equal(placed(&w, 3)->replicas[0].node, placed(&w, 4)->replicas[0].node);
    w_fini(&w);
}

/* Taints belong to the cluster: counted, copied by a clone, replaced and cleared. */
static void test_cluster_taints(void **state)
{
    (void)state;
    world w;
    w_init(&w, 3, NULL);
    assert_int_equal(gp_cluster_tainted_nodes(w.c), 0);
    taint(&w, 1, "a", "x", GP_TAINT_NO_EXECUTE);
    taint(&w, 1, "b", "", GP_TAINT_NO_SCHEDULE); /* replaces */
    taint(&w, 2, "c", "", GP_TAINT_PREFER_NO_SCHEDULE);
    assert_int_equal(gp_cluster_tainted_nodes(w.c), 2);
    gp_cluster *copy = gp_cluster_clone(w.c);
    assert_non_null(copy);
    const gp_node *n = gp_cluster_node(copy, 1);
    assert_int_equal(n->ntaints, 1);
    assert_string_equal(n->taints[0].key, "b");
    assert_true(n->taints != gp_cluster_node(w.c, 1)->taints);
    assert_int_equal(gp_cluster_tainted_nodes(copy), 2);
    gp_cluster_free(copy);
    assert_int_equal(gp_cluster_set_taints(w.c, 1, NULL, 0), 0);
    assert_int_equal(gp_cluster_tainted_nodes(w.c), 1);
    assert_int_equal(gp_cluster_set_taints(w.c, 7, NULL, 0), GP_EINVAL);
    int which;
    gp_toleration prefer[] = {{"c", false, NULL, GP_TAINT_PREFER_NO_SCHEDULE}};
    gp_constraints k = {.tolerations = prefer, .ntolerations = 1};
    assert_int_equal(gp_node_taint_check(w.c, 2, NULL, &which), 1);
    assert_int_equal(which, 0);
    assert_int_equal(gp_node_taint_check(w.c, 2, &k, &which), 0);
    w_fini(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selector),       cmocka_unit_test(test_taints),
        cmocka_unit_test(test_spread),         cmocka_unit_test(test_anti_affinity_group),
        cmocka_unit_test(test_cluster_taints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
