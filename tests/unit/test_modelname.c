/*
 * The GPU model name resolver (gpupool/modelname.h): the short names users write against the
 * names NVML reports (those of the inventories in deploy/inventories and of real drivers), the
 * sets a short name names, the rank that makes the most specific name win, and the job spec's
 * request resolving its gpu_models through it.
 */
#include "gpupool/jobspec.h"
#include "gpupool/modelname.h"
#include "tests/unit/harness.h"

#include <string.h>

#define GIB 1024

typedef struct known {
    const char *name; /* as NVML reports it */
    int64_t mem_mib;
} known;

static const known models[] = {
    {"NVIDIA A100-SXM4-80GB", 81920},   /* 0 */
    {"NVIDIA A100 80GB PCIe", 81920},   /* 1 */
    {"NVIDIA A100-SXM4-40GB", 40960},   /* 2 */
    {"NVIDIA A100-PCIE-40GB", 40960},   /* 3 */
    {"NVIDIA H100 80GB HBM3", 81559},   /* 4 */
    {"NVIDIA H100 PCIe", 81559},        /* 5 */
    {"NVIDIA H100 NVL", 95830},         /* 6 */
    {"Tesla T4", 15360},                /* 7 */
    {"Tesla V100-SXM2-32GB", 32768},    /* 8 */
    {"Tesla V100-SXM2-16GB", 16384},    /* 9 */
    {"Tesla V100-PCIE-16GB", 16384},    /* 10 */
    {"Tesla V100S-PCIE-32GB", 32768},   /* 11 */
    {"NVIDIA A10", 23028},              /* 12 */
    {"NVIDIA GeForce RTX 4090", 24564}, /* 13 */
};
#define NMODELS ((int)(sizeof(models) / sizeof(models[0])))

/* The models of the table name names, as a bit mask. */
static unsigned named(const char *name)
{
    unsigned set = 0;
    for (int i = 0; i < NMODELS; i++) {
        if (gp_model_name_match(name, models[i].name, models[i].mem_mib) > 0) {
            set |= 1u << i;
        }
    }
    return set;
}

#define B(i) (1u << (i))

static void expect(const char *name, unsigned want)
{
    unsigned got = named(name);
    if (got != want) {
        fail_msg("\"%s\" names 0x%x, expected 0x%x", name, got, want);
    }
}

static void test_short_names(void **state)
{
    (void)state;
    expect("A100-80GB", B(0) | B(1));
    expect("A100-40GB", B(2) | B(3));
    expect("A100", B(0) | B(1) | B(2) | B(3));
    expect("a100-80gb", B(0) | B(1)); /* case does not matter */
    expect("A100 80GB", B(0) | B(1));
    expect("80GB-A100", B(0) | B(1)); /* the family is the first word that is not a size */
    expect("A100-80G", B(0) | B(1));
    expect("A100-SXM4", B(0) | B(2));
    expect("A100-SXM4-80GB", B(0));
    expect("H100", B(4) | B(5) | B(6));
    expect("H100-80GB", B(4) | B(5)); /* PCIe by its memory; NVL has 94 GB */
    expect("H100-NVL", B(6));
    expect("T4", B(7));
    expect("T4-16GB", B(7)); /* 15360 MiB is within 10% of 16 GB */
    expect("V100", B(8) | B(9) | B(10));
    expect("V100-32GB", B(8));
    expect("V100-16GB", B(9) | B(10));
    expect("V100S", B(11));
    expect("A10", B(12)); /* not A100 */
    expect("RTX-4090", B(13));
    expect("4090", B(13));
    /* What names nothing. */
    expect("A100-96GB", 0);
    expect("SXM4", 0); /* a form factor is not a family */
    expect("80GB", 0);
    expect("NVIDIA", 0);
    expect("B200", 0);
    expect("", 0);
}

static void test_full_names(void **state)
{
    (void)state;
    for (int i = 0; i < NMODELS; i++) {
        assert_int_equal(gp_model_name_match(models[i].name, models[i].name, models[i].mem_mib),
                         GP_MODEL_MATCH_EXACT);
        /* NVML's name names its model alone here (V100's PCIe-16GB and SXM2-16GB differ). */
        expect(models[i].name, B(i));
    }
    assert_int_equal(gp_model_name_match("tesla t4", "Tesla T4", 0), GP_MODEL_MATCH_EXACT);
    /* Without "NVIDIA" the full name is a short name of the same model. */
    assert_true(gp_model_name_match("A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", 81920) > 0);
}

static void test_rank(void **state)
{
    (void)state;
    const char *m = "NVIDIA A100-SXM4-80GB";
    int exact = gp_model_name_match(m, m, 81920);
    int three = gp_model_name_match("A100-SXM4-80GB", m, 81920);
    int two = gp_model_name_match("A100-80GB", m, 81920);
    int one = gp_model_name_match("A100", m, 81920);
    assert_true(exact > three && three > two && two > one && one > 0);
    assert_int_equal(one, 1);
    assert_int_equal(two, 2);
}

static void test_memory_evidence(void **state)
{
    (void)state;
    /* A model whose name gives no size is matched by its memory, never without it. */
    assert_true(gp_model_name_match("H100-80GB", "NVIDIA H100 PCIe", 81559) > 0);
    assert_int_equal(gp_model_name_match("H100-80GB", "NVIDIA H100 PCIe", 0), 0);
    assert_int_equal(gp_model_name_match("H100-80GB", "NVIDIA H100 PCIe", 95830), 0);
    /* A name that gives a size is judged by it, whatever the memory says. */
    assert_int_equal(gp_model_name_match("A100-80GB", "NVIDIA A100-SXM4-40GB", 81920), 0);
    /* The family alone needs no size. */
    assert_true(gp_model_name_match("T4", "Tesla T4", 0) > 0);
}

static void test_odd_input(void **state)
{
    (void)state;
    char longname[300];
    memset(longname, 'A', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(gp_model_name_match(longname, "Tesla T4", 15360), 0);
    assert_int_equal(gp_model_name_match("T4", longname, 15360), 0);
    assert_int_equal(gp_model_name_match(longname, longname, 0), GP_MODEL_MATCH_EXACT);
    assert_int_equal(gp_model_name_match(NULL, "Tesla T4", 0), 0);
    assert_int_equal(gp_model_name_match("T4", NULL, 0), 0);
    assert_int_equal(gp_model_name_match("---", "Tesla T4", 0), 0);
    assert_int_equal(gp_model_name_match("99999999999999999999GB-T4", "Tesla T4", 15360), 0);
    /* Seventeen words: more than a name may have. */
    assert_int_equal(gp_model_name_match("T4 a b c d e f g h i j k l m n o p", "Tesla T4", 0), 0);
}

static void test_cluster_sets(void **state)
{
    (void)state;
    gp_cluster *c = gp_cluster_new();
    for (int i = 0; i < NMODELS; i++) {
        assert_int_equal(gp_cluster_model(c, models[i].name, models[i].mem_mib), i);
    }
    assert_int_equal(gp_cluster_models_named(c, "V100"), (uint64_t)(B(8) | B(9) | B(10)));
    assert_int_equal(gp_cluster_models_named(c, "Tesla T4"), (uint64_t)B(7));
    assert_int_equal(gp_cluster_models_named(c, "A100-96GB"), 0);
    gp_cluster_free(c);
}

/* The job spec's request: gpu_models resolved by the same names; allow_unschedulable parsed. */
static void test_jobspec_request(void **state)
{
    (void)state;
    gp_cluster *c = gp_cluster_new();
    int a100 = gp_cluster_model(c, "NVIDIA A100-SXM4-80GB", 80 * GIB);
    int t4 = gp_cluster_model(c, "Tesla T4", 15 * GIB);
    int a40 = gp_cluster_model(c, "NVIDIA A100-PCIE-40GB", 40 * GIB);
    gp_jobspec s;
    gp_diag d;
    const char *y = "name: j\ncommand: [x]\nallow_unschedulable: true\n"
                    "resources: {gpus: 1, gpu_models: [A100-80GB, t4]}\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_true(s.allow_unschedulable);
    gp_request r;
    gp_jobspec_request(&s, c, &r);
    assert_int_equal(r.allowed_models, (1ull << a100) | (1ull << t4));
    gp_jobspec_fini(&s);
    y = "name: j\ncommand: [x]\nresources: {gpus: 1, gpu_models: [A100]}\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    assert_false(s.allow_unschedulable);
    gp_jobspec_request(&s, c, &r);
    assert_int_equal(r.allowed_models, (1ull << a100) | (1ull << a40));
    gp_jobspec_fini(&s);
    /* A name no model has: the request can go nowhere (not "any model"). */
    y = "name: j\ncommand: [x]\nresources: {gpus: 1, gpu_models: [H100]}\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), 0);
    gp_jobspec_request(&s, c, &r);
    assert_true(r.allowed_models != 0);
    assert_int_equal(r.allowed_models & ((1ull << a100) | (1ull << t4) | (1ull << a40)), 0);
    gp_jobspec_fini(&s);
    y = "name: j\ncommand: [x]\nallow_unschedulable: yes-please\n";
    assert_int_equal(gp_jobspec_parse_yaml(y, strlen(y), &s, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "allow_unschedulable: must be true or false"));
    gp_cluster_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_names),
        cmocka_unit_test(test_full_names),
        cmocka_unit_test(test_rank),
        cmocka_unit_test(test_memory_evidence),
        cmocka_unit_test(test_odd_input),
        cmocka_unit_test(test_cluster_sets),
        cmocka_unit_test(test_jobspec_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
