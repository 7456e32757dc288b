/*
 * libFuzzer target for the job spec parsers: any bytes, as JSON and as YAML, must give a spec or
 * one clear error, never a crash, a leak or undefined behaviour. A spec that parses is then
 * resolved against a small pool (its gpu_models through the model name resolver) and judged by
 * gp_feasible_pool and gp_feasible_limits, which must answer 0 or GP_EINVAL.
 */
#include "gpupool/feasible.h"
#include "gpupool/jobspec.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gp_cluster *pool(void)
{
    gp_cluster *c = gp_cluster_new();
    int a100 = gp_cluster_model(c, "NVIDIA A100-SXM4-80GB", 81920);
    int t4 = gp_cluster_model(c, "Tesla T4", 15360);
    gp_gpu_spec s[8];
    for (int i = 0; i < 8; i++) {
        s[i] = (gp_gpu_spec){.model = i < 4 ? t4 : a100, .numa = -1, .nvlink = i < 4 ? 0 : 0xf0};
        s[i].nvlink &= ~(1u << i);
    }
    gp_cluster_add_node(c, "n0", 64000, 524288, 8, s);
    gp_cluster_add_node(c, "n1", 8000, 65536, 4, s);
    return c;
}

static void judge(const gp_jobspec *s)
{
    gp_cluster *c = pool();
    gp_request r;
    gp_jobspec_request(s, c, &r);
    gp_feasible_job j = {.req = &r,
                         .replicas = s->replicas,
                         .topology = s->topology,
                         .preemptible = s->preemptible,
                         .models = s->gpu_models,
                         .nmodels = s->ngpu_models};
    gp_sched_tenant t = {.name = "t", .quota_gpu_milli = 4000, .quota_gpu_mem_mib = 200000};
    for (int m = 0; m < GP_MAX_MODELS; m++) {
        t.quota_model_milli[m] = m == 1 ? 2000 : -1;
    }
    gp_sched_queue q = {
        .name = "q", .weight = 1, .guarantee = {4000, 0, 0, 0}, .capability = {-1, -1, 32000, -1}};
    gp_diag d;
    int a = gp_feasible_pool(c, NULL, 0, &j, &d);
    int b = gp_feasible_limits(c, &j, &t, &q, &d);
    if ((a != 0 && a != GP_EINVAL) || (b != 0 && b != GP_EINVAL)) {
        abort();
    }
    gp_feasible_why(d.msg);
    gp_cluster_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_jobspec s;
    gp_diag d;
    if (gp_jobspec_parse_json((const char *)data, size, &s, &d) == 0) {
        judge(&s);
        gp_jobspec_fini(&s);
    }
    if (gp_jobspec_parse_yaml((const char *)data, size, &s, &d) == 0) {
        judge(&s);
        gp_jobspec_fini(&s);
    }
    return 0;
}
