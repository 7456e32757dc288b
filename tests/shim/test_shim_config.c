/*
 * The environment contract of libgpushare.so (src/shim/config.c): sizes in HAMi-core's format,
 * precedence, the on-error policy, the compute limit, CUDA_VISIBLE_DEVICES matching, and that
 * docs/gpushare.md documents every variable the library reads.
 */
#include "shim/config.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1ULL << 20)

/* An environment as a NULL-terminated list of "NAME=VALUE". */
static const char *lookup(void *ctx, const char *name)
{
    const char *const *env = ctx;
    size_t n = strlen(name);
    for (; *env; env++) {
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=') {
            return *env + n + 1;
        }
    }
    return NULL;
}

static gp_shim_config *load(const char *const *env)
{
    static gp_shim_config cfg;
    gp_shim_config_load(&cfg, lookup, (void *)env);
    return &cfg;
}

static void test_parse_size(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int ok;
        uint64_t v;
    } cases[] = {
        {"1024", 1, 1024},
        {"3000m", 1, 3000 * MIB},
        {"3000M", 1, 3000 * MIB},
        {"2g", 1, 2048 * MIB},
        {"2G", 1, 2048 * MIB},
        {"64k", 1, 65536},
        {"0", 1, 0},
        {"18446744073709551615", 1, UINT64_MAX},
        {"18446744073709551616", 0, 0},
        {"17179869184g", 0, 0},
        {"", 0, 0},
        {"m", 0, 0},
        {"12x", 0, 0},
        {"12mb", 0, 0},
        {"-1", 0, 0},
        {" 12", 0, 0},
        {"0x10", 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t v = 0;
        int rc = gp_shim_parse_size(cases[i].s, &v);
        if ((rc == 0) != cases[i].ok || (rc == 0 && v != cases[i].v)) {
            fail_msg("\"%s\": rc %d value %llu", cases[i].s, rc, (unsigned long long)v);
        }
    }
    uint64_t v;
    assert_int_equal(gp_shim_parse_mib("8", &v), 0);
    assert_true(v == 8 * MIB);
    assert_int_not_equal(gp_shim_parse_mib("8m", &v), 0);
    assert_int_not_equal(gp_shim_parse_mib("17592186044416", &v), 0);
    assert_int_not_equal(gp_shim_parse_size(NULL, &v), 0);
}

static void test_defaults(void **state)
{
    (void)state;
    const char *env[] = {NULL};
    gp_shim_config *c = load(env);
    assert_string_equal(c->region_path, "");
    assert_int_equal(c->on_error, GP_SHARE_FAIL_OPEN);
    assert_int_equal(c->env_error, 0);
    assert_int_equal(c->env_limits.ndevices, GP_SHARE_MAX_DEVICES);
    for (int i = 0; i < GP_SHARE_MAX_DEVICES; i++) {
        assert_true(c->env_limits.mem_bytes[i] == GP_SHARE_UNLIMITED);
    }
    assert_int_equal(c->env_limits.core_percent, 0);
    assert_int_equal(c->visible_set, 0);
}

static void test_precedence(void **state)
{
    (void)state;
    const char *env[] = {"GPUPOOL_GPU_MEMORY_LIMIT_MIB=100",
                         "CUDA_DEVICE_MEMORY_LIMIT=3000m",
                         "CUDA_DEVICE_MEMORY_LIMIT_1=2g",
                         "GPUPOOL_GPU_MEMORY_LIMIT_MIB_2=50",
                         "CUDA_DEVICE_MEMORY_LIMIT_2=1g",
                         "GPUPOOL_GPU_MEMORY_LIMIT_MIB_3=0",
                         "GPUPOOL_SHARE_REGION=/run/gpupool/r1/share",
                         "CUDA_VISIBLE_DEVICES=GPU-abc",
                         NULL};
    gp_shim_config *c = load(env);
    assert_true(c->env_limits.mem_bytes[0] == 100 * MIB);  /* GPUPOOL_ beats the alias */
    assert_true(c->env_limits.mem_bytes[1] == 2048 * MIB); /* per device beats all devices */
    assert_true(c->env_limits.mem_bytes[2] == 50 * MIB);
    assert_true(c->env_limits.mem_bytes[3] == GP_SHARE_UNLIMITED); /* 0: no limit */
    assert_true(c->env_limits.mem_bytes[15] == 100 * MIB);
    assert_string_equal(c->region_path, "/run/gpupool/r1/share");
    assert_int_equal(c->visible_set, 1);
    assert_string_equal(c->visible_devices, "GPU-abc");
    const char *alias[] = {"CUDA_DEVICE_MEMORY_LIMIT=3000m", NULL};
    c = load(alias);
    assert_true(c->env_limits.mem_bytes[0] == 3000 * MIB);
    assert_int_equal(c->env_error, 0);
}

static void test_invalid(void **state)
{
    (void)state;
    const char *env[] = {"GPUPOOL_GPU_MEMORY_LIMIT_MIB=8x", NULL};
    gp_shim_config *c = load(env);
    assert_int_equal(c->env_error, 1);
    assert_string_equal(c->bad_var, "GPUPOOL_GPU_MEMORY_LIMIT_MIB");
    const char *dev[] = {"CUDA_DEVICE_MEMORY_LIMIT_4=lots", NULL};
    c = load(dev);
    assert_int_equal(c->env_error, 1);
    assert_string_equal(c->bad_var, "CUDA_DEVICE_MEMORY_LIMIT_4");
    const char *closed[] = {"GPUPOOL_SHARE_ON_ERROR=closed", NULL};
    assert_int_equal(load(closed)->on_error, GP_SHARE_FAIL_CLOSED);
    const char *open[] = {"GPUPOOL_SHARE_ON_ERROR=open", NULL};
    assert_int_equal(load(open)->on_error, GP_SHARE_FAIL_OPEN);
    /* An unknown policy is taken as the safer one. */
    const char *junk[] = {"GPUPOOL_SHARE_ON_ERROR=maybe", NULL};
    c = load(junk);
    assert_int_equal(c->on_error, GP_SHARE_FAIL_CLOSED);
    assert_int_equal(c->env_error, 1);
}

static void test_core(void **state)
{
    (void)state;
    const char *env[] = {"GPUPOOL_GPU_CORE_LIMIT=30", "CUDA_DEVICE_SM_LIMIT=40",
                         "GPUPOOL_GPU_CORE_POLICY=strict", NULL};
    gp_shim_config *c = load(env);
    assert_int_equal(c->env_limits.core_percent, 30);
    assert_int_equal(c->env_limits.core_policy, GP_SHARE_CORE_STRICT);
    const char *alias[] = {"CUDA_DEVICE_SM_LIMIT=40", NULL};
    c = load(alias);
    assert_int_equal(c->env_limits.core_percent, 40);
    assert_int_equal(c->env_limits.core_policy, GP_SHARE_CORE_DEFAULT);
    /* "shared", the job spec's name of the default policy (what gpupool-run writes) */
    const char *shared[] = {"GPUPOOL_GPU_CORE_LIMIT=25", "GPUPOOL_GPU_CORE_POLICY=shared", NULL};
    c = load(shared);
    assert_int_equal(c->env_error, 0);
    assert_int_equal(c->env_limits.core_policy, GP_SHARE_CORE_DEFAULT);
    const char *bad[] = {"GPUPOOL_GPU_CORE_LIMIT=101", "GPUPOOL_GPU_CORE_POLICY=disable", NULL};
    c = load(bad);
    assert_int_equal(c->env_error, 1);
    assert_int_equal(c->env_limits.core_percent, 0);
}

static void test_visible(void **state)
{
    (void)state;
    const char *u0 = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6";
    const char *u1 = "GPU-1111aaaa-d72c-4106-c12f-20bd9faed9f6";
    char list[256];
    snprintf(list, sizeof(list), "%s,%s", u1, u0);
    assert_int_equal(gp_shim_visible_position(list, u0, 0), 1);
    assert_int_equal(gp_shim_visible_position(list, u1, 7), 0);
    assert_int_equal(gp_shim_visible_position("GPU-8932f937", u0, 0), 0);
    assert_int_equal(gp_shim_visible_position("3,1", u0, 1), 1);
    assert_int_equal(gp_shim_visible_position("3, 1", NULL, 1), 1);
    assert_int_equal(gp_shim_visible_position("3,1", u0, 2), -1);
    assert_int_equal(gp_shim_visible_position("", u0, 0), -1);
    assert_int_equal(gp_shim_visible_position("none", u0, 0), -1);
    assert_int_equal(gp_shim_visible_position("GPU-", u0, 0), -1);
    assert_int_equal(gp_shim_visible_position("MIG-8932f937", u0, 0), -1);
    assert_int_equal(gp_shim_visible_position("10", NULL, 1), -1);
}

/* docs/gpushare.md names every variable of the table. */
static void test_documented(void **state)
{
    (void)state;
    FILE *f = fopen(GP_SHIM_DOC, "r");
    assert_non_null(f);
    static char doc[65536];
    size_t n = fread(doc, 1, sizeof(doc) - 1, f);
    fclose(f);
    doc[n] = '\0';
#define GP_DOC_CHECK(name, help)                                                                   \
    if (!strstr(doc, name)) {                                                                      \
        fail_msg("%s is not documented in docs/gpushare.md", name);                                \
    }
    GP_SHIM_ENV_TABLE(GP_DOC_CHECK)
#undef GP_DOC_CHECK
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_size), cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_precedence), cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_core),       cmocka_unit_test(test_visible),
        cmocka_unit_test(test_documented),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
