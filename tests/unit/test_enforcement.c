/*
 * How a replica's GPU request is enforced inside its processes (gp_jobspec_enforcement): every
 * shape of fraction gets libgpushare with its memory limit, compute cap and policy; whole GPUs,
 * MIG slices and CPU-only jobs get none. Also the job spec's compute_policy, what cores_percent
 * means beside gpu_milli, and gpupool-run's side: the desired replica's gpu_share is what makes
 * a fraction (not a GPU's milli), and its limits reach the job's environment.
 */
#include "agent/run_spec.h"
#include "gpupool/jobspec.h"
#include "gpupool/placement.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>

#define T4_MIB   15360 /* a 16 GB T4 as NVML reports it */
#define A100_MIB 81920

/* Parses "name: e\ncommand: [x]\n" + extra (YAML); fails the test when it is refused. */
static void parse(const char *extra, gp_jobspec *s)
{
    char y[512];
    snprintf(y, sizeof(y), "name: e\ncommand: [x]\n%s", extra);
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_jobspec_parse_yaml(y, strlen(y), s, &d) != 0) {
        fail_msg("%s: refused: %s", extra, d.msg);
    }
}

typedef struct shape {
    const char *spec;       /* YAML lines after name and command */
    int64_t gpu_memory_mib; /* the GPU the replica is placed on */
    bool fraction;
    int64_t memory_mib;
    int core_percent;
    gp_compute_policy policy;
    int reserved_milli; /* what the scheduler is asked for */
} shape;

static const shape shapes[] = {
    /* gpu_milli only: the cap is its share, no memory limit */
    {"resources: {gpu_milli: 250}\n", A100_MIB, true, 0, 25, GP_COMPUTE_SHARED, 250},
    {"resources: {gpu_milli: 333}\n", A100_MIB, true, 0, 34, GP_COMPUTE_SHARED, 333},
    {"resources: {gpu_milli: 1}\n", A100_MIB, true, 0, 1, GP_COMPUTE_SHARED, 1},
    /* gpu_memory_mib only: the memory's share of the GPU, rounded up */
    {"resources: {gpu_memory_mib: 4096}\n", T4_MIB, true, 4096, 27, GP_COMPUTE_SHARED, 0},
    {"resources: {gpu_memory_mib: 4096}\n", A100_MIB, true, 4096, 5, GP_COMPUTE_SHARED, 0},
    {"resources: {gpu_memory_mib: 10}\n", A100_MIB, true, 10, 1, GP_COMPUTE_SHARED, 0},
    {"resources: {gpu_memory_mib: 4096}\n", 0, true, 4096, 100, GP_COMPUTE_SHARED, 0},
    /* memory + cores (aliyun.com/gpu-mem + gpu-core): the cap, which is also reserved */
    {"resources: {gpu_memory_mib: 4096, cores_percent: 25}\n", T4_MIB, true, 4096, 25,
     GP_COMPUTE_SHARED, 250},
    /* cores alone: a fraction of that share, no memory limit */
    {"resources: {cores_percent: 40}\n", A100_MIB, true, 0, 40, GP_COMPUTE_SHARED, 400},
    /* gpu_milli + memory */
    {"resources: {gpu_milli: 500, gpu_memory_mib: 1024}\n", T4_MIB, true, 1024, 50,
     GP_COMPUTE_SHARED, 500},
    /* gpu_milli + cores: the cap below the reservation */
    {"resources: {gpu_milli: 500, cores_percent: 30}\n", A100_MIB, true, 0, 30, GP_COMPUTE_SHARED,
     500},
    /* all three, strict */
    {"resources: {gpu_milli: 250, gpu_memory_mib: 8192, cores_percent: 20, "
     "compute_policy: strict}\n",
     A100_MIB, true, 8192, 20, GP_COMPUTE_STRICT, 250},
    {"resources: {gpu_memory_mib: 4096, cores_percent: 25, compute_policy: strict}\n", T4_MIB, true,
     4096, 25, GP_COMPUTE_STRICT, 250},
    {"resources: {gpu_memory_mib: 2048, compute_policy: shared}\n", T4_MIB, true, 2048, 14,
     GP_COMPUTE_SHARED, 0},
    /* a whole GPU, a MIG slice, no GPU: the device isolates, nothing in-process */
    {"resources: {gpus: 2}\n", A100_MIB, false, 0, 0, GP_COMPUTE_SHARED, 0},
    {"resources: {mig_profile: 1g.10gb}\n", A100_MIB, false, 0, 0, GP_COMPUTE_SHARED, 0},
    {"resources: {cpu_milli: 1000}\n", 0, false, 0, 0, GP_COMPUTE_SHARED, 0},
};

static void test_every_shape(void **state)
{
    (void)state;
    gp_cluster *c = gp_cluster_new();
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        const shape *w = &shapes[i];
        gp_jobspec s;
        parse(w->spec, &s);
        gp_share_enforcement e;
        memset(&e, 0x5a, sizeof(e));
        gp_jobspec_enforcement(&s, w->gpu_memory_mib, &e);
        gp_request r;
        gp_jobspec_request(&s, c, &r);
        if (e.fraction != w->fraction || e.memory_mib != w->memory_mib ||
            e.core_percent != w->core_percent || e.policy != w->policy ||
            (w->fraction && r.gpu_milli != w->reserved_milli)) {
            fail_msg("%s on a GPU of %lld MiB: fraction %d memory %lld cap %d policy %d "
                     "reserved %d; expected %d %lld %d %d %d",
                     w->spec, (long long)w->gpu_memory_mib, e.fraction, (long long)e.memory_mib,
                     e.core_percent, e.policy, r.gpu_milli, w->fraction, (long long)w->memory_mib,
                     w->core_percent, w->policy, w->reserved_milli);
        }
        assert_int_equal(s.kind == GP_REQ_FRACTION, w->fraction);
        if (w->fraction) {
            assert_int_equal(gp_request_check(&r, NULL), 0);
        }
        gp_jobspec_fini(&s);
    }
    gp_cluster_free(c);
}

/* A job stored before compute_policy existed (or a spec parsed without the operator's default)
 * is shared. */
static void test_policy_not_given(void **state)
{
    (void)state;
    gp_jobspec s;
    parse("resources: {gpu_memory_mib: 4096, cores_percent: 25}\n", &s);
    assert_int_equal(s.compute_policy, GP_COMPUTE_DEFAULT);
    gp_share_enforcement e;
    gp_jobspec_enforcement(&s, T4_MIB, &e);
    assert_int_equal(e.policy, GP_COMPUTE_SHARED);
    gp_jobspec_fini(&s);
    assert_string_equal(gp_compute_policy_name(GP_COMPUTE_SHARED), "shared");
    assert_string_equal(gp_compute_policy_name(GP_COMPUTE_STRICT), "strict");
    assert_null(gp_compute_policy_name(GP_COMPUTE_DEFAULT));
}

/* compute_policy is the same in JSON and YAML. */
static void test_policy_json(void **state)
{
    (void)state;
    const char *j = "{\"name\": \"e\", \"command\": [\"x\"], \"resources\": "
                    "{\"gpu_milli\": 300, \"compute_policy\": \"strict\"}}";
    gp_jobspec s;
    gp_diag d;
    assert_int_equal(gp_jobspec_parse_json(j, strlen(j), &s, &d), 0);
    assert_int_equal(s.compute_policy, GP_COMPUTE_STRICT);
    gp_jobspec_fini(&s);
    j = "{\"name\": \"e\", \"command\": [\"x\"], \"resources\": "
        "{\"gpu_milli\": 300, \"compute_policy\": null}}";
    assert_int_equal(gp_jobspec_parse_json(j, strlen(j), &s, &d), 0);
    assert_int_equal(s.compute_policy, GP_COMPUTE_DEFAULT);
    gp_jobspec_fini(&s);
}

static void expect_refused(const char *extra, const char *needle)
{
    char y[512];
    snprintf(y, sizeof(y), "name: e\ncommand: [x]\n%s", extra);
    gp_jobspec s;
    memset(&s, 0x5a, sizeof(s));
    gp_jobspec before = s;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_jobspec_parse_yaml(y, strlen(y), &s, &d);
    if (rc != GP_EINVAL || !strstr(d.msg, needle)) {
        fail_msg("%s: %s \"%s\", expected GP_EINVAL naming \"%s\"", extra, gp_strerror_name(rc),
                 d.msg, needle);
    }
    assert_memory_equal(&s, &before, sizeof(s));
}

static void test_policy_refused(void **state)
{
    (void)state;
    expect_refused("resources: {gpu_milli: 300, compute_policy: hard}\n",
                   "resources.compute_policy: must be one of shared, strict");
    expect_refused("resources: {gpu_milli: 300, compute_policy: 1}\n",
                   "resources.compute_policy: must be one of");
    expect_refused("resources: {gpus: 1, compute_policy: strict}\n",
                   "resources.compute_policy: only with a GPU fraction");
    expect_refused("resources: {mig_profile: 1g.10gb, compute_policy: strict}\n",
                   "resources.compute_policy: only with a GPU fraction");
    expect_refused("resources: {compute_policy: strict}\n",
                   "resources.compute_policy: only with a GPU fraction");
    expect_refused("resources: {mig_profile: 1g.10gb, cores_percent: 20}\n",
                   "resources.cores_percent: only with a GPU fraction");
    expect_refused("resources: {gpus: 1, gpu_memory_mib: 1024}\n", "resources: ask for one of");
}

/* A cap above what gpu_milli reserves is refused at submission (gp_jobspec_cap_check); at or
 * below it, or alone, it passes. */
static void test_cap_check(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        int rc;
    } cases[] = {
        {"resources: {gpu_milli: 250, cores_percent: 30}\n", GP_EINVAL},
        {"resources: {gpu_milli: 250, cores_percent: 25}\n", 0},
        {"resources: {gpu_milli: 241, cores_percent: 25}\n", 0}, /* 24.1% rounds up */
        {"resources: {gpu_milli: 240, cores_percent: 25}\n", GP_EINVAL},
        {"resources: {gpu_memory_mib: 4096, cores_percent: 25}\n", 0},
        {"resources: {gpu_memory_mib: 4096}\n", 0},
        {"resources: {gpus: 1}\n", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gp_jobspec s;
        parse(cases[i].spec, &s);
        gp_diag d;
        gp_diag_clear(&d);
        int rc = gp_jobspec_cap_check(&s, &d);
        if (rc != cases[i].rc ||
            (rc != 0 && !strstr(d.msg, "resources.cores_percent: at most 2"))) {
            fail_msg("%s: %s \"%s\"", cases[i].spec, gp_strerror_name(rc), d.msg);
        }
        gp_jobspec_fini(&s);
    }
}

/* ---- gpupool-run: gpu_share ---- */

static gp_run_spec *run_spec(const char *gpus_and_share)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"job\": 1, \"replica\": 0, \"epoch\": 1, %s \"spec\": {\"command\": [\"x\"]}}",
             gpus_and_share);
    gp_run_spec *s = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_run_spec_parse(text, &s, &d) != 0) {
        fail_msg("%s: %s", text, d.msg);
    }
    return s;
}

static void test_run_share(void **state)
{
    (void)state;
    /* A memory-only fraction's GPU has milli 0: gpu_share alone decides. */
    gp_run_spec *s =
        run_spec("\"gpus\": [{\"uuid\": \"GPU-a\", \"milli\": 0, \"memory_mib\": 4096, "
                 "\"mig_start\": -1}], \"gpu_share\": {\"memory_mib\": 4096, "
                 "\"core_percent\": 25, \"core_policy\": \"strict\"},");
    assert_int_equal(s->fractional, 1);
    assert_int_equal(s->share_mem_mib, 4096);
    assert_int_equal(s->share_core_percent, 25);
    assert_int_equal(s->share_core_strict, 1);
    gp_run_paths paths = {.share_library = "/lib/libgpushare.so",
                          .share_region = "/r/share.region"};
    char **env = NULL;
    assert_int_equal(gp_run_env_build(s, NULL, &paths, &env), 0);
    assert_string_equal(gp_run_env_get(env, "LD_PRELOAD"), "/lib/libgpushare.so");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_SHARE_REGION"), "/r/share.region");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_GPU_MEMORY_LIMIT_MIB"), "4096");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_GPU_CORE_LIMIT"), "25");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_GPU_CORE_POLICY"), "strict");
    gp_run_env_free(env);
    gp_run_spec_free(s);
    /* Defaults: no memory limit, no cap, shared. */
    s = run_spec("\"gpus\": [{\"uuid\": \"GPU-a\", \"milli\": 500}], \"gpu_share\": {},");
    assert_int_equal(s->fractional, 1);
    assert_int_equal(s->share_mem_mib, 0);
    assert_int_equal(s->share_core_percent, 100);
    assert_int_equal(s->share_core_strict, 0);
    assert_int_equal(gp_run_env_build(s, NULL, NULL, &env), 0);
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_GPU_CORE_POLICY"), "shared");
    gp_run_env_free(env);
    gp_run_spec_free(s);
    /* No gpu_share: not a fraction, whatever the GPU's milli; nothing of libgpushare. */
    s = run_spec("\"gpus\": [{\"uuid\": \"GPU-a\", \"milli\": 250, \"memory_mib\": 1024}],");
    assert_int_equal(s->fractional, 0);
    assert_int_equal(gp_run_env_build(s, NULL, NULL, &env), 0);
    assert_null(gp_run_env_get(env, "GPUPOOL_GPU_CORE_LIMIT"));
    assert_null(gp_run_env_get(env, "GPUPOOL_GPU_MEMORY_LIMIT_MIB"));
    gp_run_env_free(env);
    gp_run_spec_free(s);
}

static void expect_run_refused(const char *gpus_and_share, const char *needle)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "{\"job\": 1, \"replica\": 0, \"epoch\": 1, %s \"spec\": {\"command\": [\"x\"]}}",
             gpus_and_share);
    gp_run_spec *s = (gp_run_spec *)1;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_run_spec_parse(text, &s, &d);
    if (rc != GP_EINVAL || s || !strstr(d.msg, needle)) {
        fail_msg("%s: %s \"%s\", expected GP_EINVAL naming \"%s\"", text, gp_strerror_name(rc),
                 d.msg, needle);
    }
}

static void test_run_share_refused(void **state)
{
    (void)state;
    const char *gpu = "\"gpus\": [{\"uuid\": \"GPU-a\"}], ";
    char t[256];
    snprintf(t, sizeof(t), "%s\"gpu_share\": {\"core_policy\": \"hard\"},", gpu);
    expect_run_refused(t, "gpu_share.core_policy: must be shared or strict");
    snprintf(t, sizeof(t), "%s\"gpu_share\": {\"core_percent\": 0},", gpu);
    expect_run_refused(t, "gpu_share.core_percent");
    snprintf(t, sizeof(t), "%s\"gpu_share\": {\"memory_mib\": -1},", gpu);
    expect_run_refused(t, "gpu_share.memory_mib");
    snprintf(t, sizeof(t), "%s\"gpu_share\": 7,", gpu);
    expect_run_refused(t, "gpu_share: must be an object");
    expect_run_refused("\"gpu_share\": {},", "gpu_share: the replica has no GPU");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_shape),       cmocka_unit_test(test_policy_not_given),
        cmocka_unit_test(test_policy_json),       cmocka_unit_test(test_policy_refused),
        cmocka_unit_test(test_cap_check),         cmocka_unit_test(test_run_share),
        cmocka_unit_test(test_run_share_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
