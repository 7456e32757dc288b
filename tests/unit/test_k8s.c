/*
 * The Kubernetes translator (src/cli/k8s.h): every manifest users bring (../shared/k8s-manifests)
 * and the fixtures of tests/fixtures/k8s translated, each gpupool object compared whole with the
 * one it must give, and every diagnostic checked by its path and exact message. The manifest
 * reader (apply_io.h) and the quantities too.
 */
#include "cli/apply_io.h"
#include "cli/k8s.h"
#include "gpupool/jobspec.h"
#include "net/yaml_json.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void translate(const char *dir, const char *file, const gp_k8s_ctx *ctx, gp_k8s_result *r)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    const char *paths[] = {path};
    json_t *docs = NULL, *files = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_apply_read(paths, 1, &docs, &files, &d);
    if (rc != 0) {
        fprintf(stderr, "%s\n", d.msg);
    }
    assert_int_equal(rc, 0);
    gp_k8s_translate(docs, ctx, r);
    assert_false(r->oom);
    json_decref(docs);
    json_decref(files);
    /* Every job spec it gives is one the controller's parser accepts as it is. */
    for (size_t i = 0; i < r->nobjects; i++) {
        if (r->objects[i].target != GP_K8S_JOB) {
            continue;
        }
        char *text = json_dumps(r->objects[i].doc, 0);
        gp_jobspec spec;
        rc = gp_jobspec_parse_json(text, strlen(text), &spec, &d);
        if (rc != 0) {
            fprintf(stderr, "%s: %s\n", r->objects[i].name, d.msg);
        }
        assert_int_equal(rc, 0);
        gp_jobspec_fini(&spec);
        free(text);
    }
}

static void print_diags(const gp_k8s_result *r)
{
    for (size_t i = 0; i < r->ndiags; i++) {
        fprintf(stderr, "  [%d] %s: %s: %s\n", r->diags[i].severity, r->diags[i].where,
                r->diags[i].path, r->diags[i].message);
    }
}

/* The object named name must be expected (JSON text), whole. */
static void expect_object(const gp_k8s_result *r, gp_k8s_target target, const char *name,
                          const char *expected)
{
    json_error_t e;
    json_t *want = json_loads(expected, 0, &e);
    if (!want) {
        fprintf(stderr, "bad expected JSON: %s\n", e.text);
    }
    assert_non_null(want);
    for (size_t i = 0; i < r->nobjects; i++) {
        if (r->objects[i].target == target && strcmp(r->objects[i].name, name) == 0) {
            if (!json_equal(want, r->objects[i].doc)) {
                char *got = json_dumps(r->objects[i].doc, JSON_SORT_KEYS);
                char *exp = json_dumps(want, JSON_SORT_KEYS);
                fprintf(stderr, "%s:\n  got      %s\n  expected %s\n", name, got, exp);
                free(got);
                free(exp);
                fail();
            }
            json_decref(want);
            return;
        }
    }
    fprintf(stderr, "no object %s\n", name);
    fail();
}

/* A diagnostic of severity s on where at path with exactly message. */
static void expect_diag(const gp_k8s_result *r, gp_k8s_severity s, const char *where,
                        const char *path, const char *message)
{
    for (size_t i = 0; i < r->ndiags; i++) {
        const gp_k8s_diag *d = &r->diags[i];
        if (d->severity == s && strcmp(d->where, where) == 0 && strcmp(d->path, path) == 0 &&
            strcmp(d->message, message) == 0) {
            return;
        }
    }
    fprintf(stderr, "missing diagnostic %s: %s: %s; have:\n", where, path, message);
    print_diags(r);
    fail();
}

static void expect_counts(const gp_k8s_result *r, size_t objects, size_t warnings, size_t errors)
{
    if (r->nobjects != objects || r->ndiags - gp_k8s_count(r, GP_K8S_ERROR) != warnings ||
        gp_k8s_count(r, GP_K8S_ERROR) != errors) {
        fprintf(stderr, "objects %zu (want %zu), diagnostics:\n", r->nobjects, objects);
        print_diags(r);
    }
    assert_int_equal(r->nobjects, objects);
    assert_int_equal(gp_k8s_count(r, GP_K8S_ERROR), errors);
    assert_int_equal(r->ndiags - errors, warnings);
}

#define SHARED GP_K8S_SHARED
#define REQ_MSG(a, b)                                                                              \
    a " differs from the limit " b ": gpupool reserves and enforces one amount, the limit"

static void gpu_pod(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(SHARED, "01-gpu-pod.yaml", NULL, &r);
    expect_object(
        &r, GP_K8S_JOB, "gpu-pod",
        "{\"allow_unschedulable\": true, \"name\": \"gpu-pod\", \"labels\": {\"app\": "
        "\"ai-training\"},"
        " \"image\": \"nvidia/cuda:12.1.0-base-ubuntu22.04\","
        " \"command\": [\"/bin/bash\"], \"args\": [\"-c\", \"nvidia-smi && sleep infinity\"],"
        " \"resources\": {\"gpus\": 1, \"cpu_milli\": 4000, \"memory_mib\": 16384},"
        " \"env\": {\"NVIDIA_DRIVER_CAPABILITIES\": \"compute,utility,graphics,video\"},"
        " \"node_selector\": {\"accelerator\": \"nvidia-tesla-a100\"},"
        " \"tolerations\": [{\"key\": \"nvidia.com/gpu\", \"operator\": \"Exists\","
        "                    \"effect\": \"NoSchedule\"}],"
        " \"network\": \"private\", \"privileged\": true, \"restart_policy\": \"always\","
        " \"max_restarts\": 1000}");
    expect_counts(&r, 1, 4, 0);
    const char *w = "Pod/gpu-pod";
    expect_diag(&r, GP_K8S_WARN, w, "spec.containers[0].resources.requests.cpu", REQ_MSG("2", "4"));
    expect_diag(&r, GP_K8S_WARN, w, "spec.containers[0].resources.requests.memory",
                REQ_MSG("8Gi", "16Gi"));
    expect_diag(&r, GP_K8S_WARN, w, "spec.containers[0].env[0].name",
                "not honoured: gpupool sets NVIDIA_VISIBLE_DEVICES itself (from the GPUs and "
                "replicas it gives the job); the variable is left out");
    expect_diag(&r, GP_K8S_WARN, w, "spec.volumes[0].hostPath",
                "not honoured: no registered volume has path /usr/local/nvidia (an admin "
                "registers one: gpupool volume create NAME --path /usr/local/nvidia); not mounted");
    gp_k8s_result_fini(&r);

    /* With a volume registered at that path, the hostPath is that volume, read-only. */
    json_t *vols = json_loads("[{\"name\": \"nvidia\", \"path\": \"/usr/local/nvidia\"}]", 0, NULL);
    gp_k8s_ctx ctx = {.volumes = vols};
    translate(SHARED, "01-gpu-pod.yaml", &ctx, &r);
    expect_counts(&r, 1, 4, 0);
    json_t *ro = json_pack("[s]", "nvidia:ro");
    assert_true(json_equal(json_object_get(r.objects[0].doc, "volumes"), ro));
    json_decref(ro);
    expect_diag(&r, GP_K8S_WARN, w, "spec.containers[0].volumeMounts[0].mountPath",
                "not honoured: gpupool mounts volume nvidia at /data/nvidia "
                "(GPUPOOL_DATA_DIR/nvidia), not at /usr/local/nvidia");
    gp_k8s_result_fini(&r);
    json_decref(vols);
}

static void mig_and_vgpu_pods(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(SHARED, "02-mig-pod.yaml", NULL, &r);
    expect_object(
        &r, GP_K8S_JOB, "mig-pod",
        "{\"allow_unschedulable\": true, \"name\": \"mig-pod\", \"image\": "
        "\"nvidia/cuda:12.1.0-base\","
        " \"command\": [\"/bin/bash\"], \"args\": [\"-c\", \"nvidia-smi && sleep infinity\"],"
        " \"resources\": {\"mig_profile\": \"2g.10gb\"}, \"network\": \"private\","
        " \"privileged\": true, \"restart_policy\": \"always\", \"max_restarts\": 1000}");
    expect_counts(&r, 1, 0, 0);
    gp_k8s_result_fini(&r);

    translate(SHARED, "04-vgpu-pod.yaml", NULL, &r);
    expect_object(
        &r, GP_K8S_JOB, "vgpu-pod",
        "{\"allow_unschedulable\": true, \"name\": \"vgpu-pod\", \"annotations\": "
        "{\"nvidia.com/vgpu-profile\": "
        "\"vgpu-1q\", \"nvidia.com/vgpu-memory\": \"10Gi\"},"
        " \"image\": \"nvidia/cuda:12.1.0-base\","
        " \"command\": [\"/bin/bash\"], \"args\": [\"-c\", \"nvidia-smi && sleep infinity\"],"
        " \"resources\": {\"gpu_memory_mib\": 10240},"
        " \"node_selector\": {\"nvidia.com/vgpu.present\": \"true\"},"
        " \"network\": \"private\", \"privileged\": true, \"restart_policy\": \"always\","
        " \"max_restarts\": 1000}");
    expect_counts(&r, 1, 0, 0);
    gp_k8s_result_fini(&r);
}

static void share_deployment(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(SHARED, "03-gpu-share-deployment.yaml", NULL, &r);
    const char *w = "Deployment/gpu-share-deployment";
    const char *c = "spec.template.spec.containers[0]";
    char p[256];
    expect_counts(&r, 0, 4, 1);
    snprintf(p, sizeof(p), "%s.command", c);
    expect_diag(&r, GP_K8S_ERROR, w, p,
                "required: gpupool does not run the image's ENTRYPOINT; give the command (args "
                "start with an option)");
    snprintf(p, sizeof(p), "%s.resources.requests.aliyun.com/gpu-mem", c);
    expect_diag(&r, GP_K8S_WARN, w, p, REQ_MSG("2048", "4096"));
    snprintf(p, sizeof(p), "%s.resources.requests.aliyun.com/gpu-core", c);
    expect_diag(&r, GP_K8S_WARN, w, p, REQ_MSG("10", "25"));
    snprintf(p, sizeof(p), "%s.ports[1]", c);
    expect_diag(&r, GP_K8S_WARN, w, p,
                "not routed: a service is reached on one port (the first, 8500); the others only "
                "inside its network namespace");
    snprintf(p, sizeof(p), "%s.volumeMounts[0].mountPath", c);
    expect_diag(&r, GP_K8S_WARN, w, p,
                "not honoured: gpupool mounts volume model-pvc at /data/model-pvc "
                "(GPUPOOL_DATA_DIR/model-pvc), not at /models");
    gp_k8s_result_fini(&r);
}

static void queues_and_classes(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(SHARED, "05-queues-and-classes.yaml", NULL, &r);
    expect_counts(&r, 8, 6, 0);
    expect_object(
        &r, GP_K8S_QUEUE, "gpu-high-priority",
        "{\"name\": \"gpu-high-priority\", \"weight\": 100.0, \"capability\": {\"gpus\": 20}}");
    expect_object(
        &r, GP_K8S_QUEUE, "gpu-medium-priority",
        "{\"name\": \"gpu-medium-priority\", \"weight\": 50.0, \"capability\": {\"gpus\": 40}}");
    expect_object(
        &r, GP_K8S_QUEUE, "gpu-low-priority",
        "{\"name\": \"gpu-low-priority\", \"weight\": 10.0, \"capability\": {\"gpus\": 20}}");
    /* Kubernetes' default preemption policy is PreemptLowerPriority: always explicit. */
    expect_object(&r, GP_K8S_PCLASS, "gpu-high",
                  "{\"name\": \"gpu-high\", \"value\": 1000000, \"preemption_policy\": "
                  "\"PreemptLowerPriority\", \"description\": \"high-priority GPU jobs\"}");
    expect_object(&r, GP_K8S_PCLASS, "gpu-medium",
                  "{\"name\": \"gpu-medium\", \"value\": 500000, \"preemption_policy\": "
                  "\"PreemptLowerPriority\", \"description\": \"medium-priority GPU jobs\"}");
    expect_object(&r, GP_K8S_PCLASS, "gpu-low",
                  "{\"name\": \"gpu-low\", \"value\": 100000, \"preemption_policy\": "
                  "\"PreemptLowerPriority\", \"description\": \"low-priority GPU jobs\"}");
    expect_object(&r, GP_K8S_PCLASS, "inference-service",
                  "{\"name\": \"inference-service\", \"value\": 900000, \"preemption_policy\": "
                  "\"Never\", \"description\": \"online inference: never preempted\"}");
    expect_object(&r, GP_K8S_PCLASS, "research-job",
                  "{\"name\": \"research-job\", \"value\": 800000, \"preemption_policy\": "
                  "\"PreemptLowerPriority\", \"description\": \"research jobs may preempt lower "
                  "priorities\"}");
    expect_diag(&r, GP_K8S_WARN, "Queue/gpu-low-priority", "spec.priorityClassName",
                "not honoured: a gpupool queue has no priority class; jobs name theirs "
                "(priorityClassName)");
    expect_diag(&r, GP_K8S_WARN, "Queue/gpu-high-priority", "spec.preemptionPolicy",
                "not honoured: preemption is the priority class's (PriorityClass "
                "preemptionPolicy)");
    gp_k8s_result_fini(&r);
}

static void quotas(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(SHARED, "06-quotas.yaml", NULL, &r);
    expect_counts(&r, 2, 3, 0);
    expect_object(&r, GP_K8S_TENANT, "ai-team",
                  "{\"name\": \"ai-team\", \"quota\": {\"gpus\": 10, \"gpu_memory_mib\": 204800,"
                  " \"models\": {\"a100\": 4}}}");
    expect_object(&r, GP_K8S_TENANT, "research",
                  "{\"name\": \"research\", \"quota\": {\"gpus\": 20}}");
    expect_diag(&r, GP_K8S_WARN, "ResourceQuota/gpu-quota", "spec.hard.limits.nvidia.com/gpumem",
                "not honoured: a gpupool job has one amount (request and limit alike), so a "
                "quota has one figure: requests.nvidia.com/gpumem is kept");
    gp_k8s_result_fini(&r);
}

/* The DDP job's script, as the manifest's literal block gives it. */
static const char ddp_script[] =
    "export MASTER_ADDR=$(hostname)\n"
    "export MASTER_PORT=29500\n"
    "export WORLD_SIZE=$(( ${GPU_COUNT} * ${NODE_COUNT} ))\n"
    "export RANK=$NODE_RANK\n"
    "python -m torch.distributed.launch --nproc_per_node=${GPU_COUNT} --nnodes=${NODE_COUNT} "
    "--node_rank=$NODE_RANK --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT train.py "
    "--batch-size=256 --epochs=100 --lr=0.1\n";

static void ddp_job(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(SHARED, "07-pytorch-ddp-job.yaml", NULL, &r);
    expect_counts(&r, 1, 4, 0);
    json_t *args = json_pack("[s, s]", "-c", ddp_script);
    assert_true(json_equal(json_object_get(r.objects[0].doc, "args"), args));
    json_decref(args);
    json_object_del(r.objects[0].doc, "args");
    expect_object(&r, GP_K8S_JOB, "pytorch-ddp-training",
                  "{\"allow_unschedulable\": true, \"name\": \"pytorch-ddp-training\","
                  " \"labels\": {\"job-type\": \"distributed-training\"},"
                  " \"annotations\": {\"gpu-topology\": \"nvlink\"},"
                  " \"image\": \"pytorch/pytorch:2.0.0-cuda11.7-cudnn8-runtime\","
                  " \"command\": [\"/bin/bash\"],"
                  " \"resources\": {\"gpus\": 8, \"cpu_milli\": 32000, \"memory_mib\": 262144},"
                  " \"env\": {\"GPU_COUNT\": \"8\", \"NODE_COUNT\": \"4\", \"NODE_RANK\": \"\","
                  "           \"NCCL_DEBUG\": \"INFO\", \"OMP_NUM_THREADS\": \"8\"},"
                  " \"volumes\": [\"training-data-pvc\", \"checkpoint-pvc\"],"
                  " \"shm_size_mib\": 32768,"
                  " \"node_selector\": {\"gpu-type\": \"a100\", \"gpu-topology\": \"nvlink\"},"
                  " \"tolerations\": [{\"key\": \"nvidia.com/gpu\", \"operator\": \"Exists\","
                  "                    \"effect\": \"NoSchedule\"}],"
                  " \"network\": \"host\", \"replicas\": 1, \"restart_policy\": \"on-failure\","
                  " \"max_restarts\": 6}");
    const char *w = "Job/pytorch-ddp-training";
    expect_diag(&r, GP_K8S_WARN, w, "spec.template.spec.dnsPolicy",
                "not honoured: a job resolves names as its node does (no cluster DNS)");
    expect_diag(&r, GP_K8S_WARN, w,
                "spec.template.spec.containers[0].env[2].valueFrom.fieldRef.fieldPath",
                "the pod has no annotation node-rank: the value is empty, as in Kubernetes (a "
                "gang's replicas get their rank in GPUPOOL_NODE_RANK and RANK)");
    expect_diag(&r, GP_K8S_WARN, w, "spec.template.spec.containers[0].volumeMounts[1].mountPath",
                "not honoured: gpupool mounts volume checkpoint-pvc at /data/checkpoint-pvc "
                "(GPUPOOL_DATA_DIR/checkpoint-pvc), not at /checkpoints");
    gp_k8s_result_fini(&r);
}

static void triton(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(SHARED, "08-triton-inference.yaml", NULL, &r);
    expect_counts(&r, 1, 8, 0);
    expect_object(
        &r, GP_K8S_JOB, "triton-inference-server",
        "{\"allow_unschedulable\": true, \"name\": \"triton-inference-server\", \"kind\": "
        "\"service\","
        " \"labels\": {\"app\": \"triton-inference\"},"
        " \"annotations\": {\"prometheus.io/scrape\": \"true\", \"prometheus.io/port\": \"8002\"},"
        " \"image\": \"nvcr.io/nvidia/tritonserver:23.04-py3\","
        " \"command\": [\"tritonserver\", \"--model-repository=/models\","
        "   \"--http-port=8000\", \"--grpc-port=8001\", \"--metrics-port=8002\"],"
        " \"resources\": {\"gpu_memory_mib\": 8192, \"cpu_milli\": 4000, \"memory_mib\": 16384},"
        " \"port\": 8000,"
        " \"readiness_probe\": {\"http_get\": {\"path\": \"/v2/health/ready\", \"port\": 8000},"
        "   \"initial_delay\": \"30s\", \"period\": \"10s\"},"
        " \"liveness_probe\": {\"http_get\": {\"path\": \"/v2/health/live\", \"port\": 8000},"
        "   \"initial_delay\": \"30s\", \"period\": \"30s\"},"
        " \"volumes\": [\"model-repository-pvc\"],"
        " \"node_selector\": {\"gpu-type\": \"t4\"}, \"replicas\": 3,"
        " \"autoscale\": {\"min_replicas\": 2, \"max_replicas\": 10,"
        "   \"metric\": \"gpu_memory_utilization\", \"target\": 70}}");
    expect_diag(&r, GP_K8S_WARN, "HorizontalPodAutoscaler/triton-hpa", "spec.metrics[1]",
                "not honoured: a service scales on one metric (the first)");
    expect_diag(&r, GP_K8S_WARN, "Deployment/triton-inference-server",
                "spec.template.spec.containers[0].command",
                "not given: gpupool does not run the image's ENTRYPOINT; args are run as the "
                "command (tritonserver ...)");
    expect_diag(&r, GP_K8S_WARN, "Deployment/triton-inference-server",
                "spec.template.spec.containers[0].resources.requests.nvidia.com/gpu-memory",
                REQ_MSG("4Gi", "8Gi"));
    gp_k8s_result_fini(&r);
}

static void mixed_precision(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(SHARED, "09-mixed-precision-job.yaml", NULL, &r);
    expect_counts(&r, 1, 2, 0);
    expect_object(
        &r, GP_K8S_JOB, "mixed-precision-training",
        "{\"allow_unschedulable\": true, \"name\": \"mixed-precision-training\","
        " \"image\": \"nvcr.io/nvidia/pytorch:23.04-py3\", \"command\": [\"/bin/bash\"],"
        " \"args\": [\"-c\", \"python train.py --amp --use-cuda --batch-size=512 --lr=0.01\"],"
        " \"resources\": {\"gpus\": 4, \"cpu_milli\": 16000, \"memory_mib\": 131072},"
        " \"env\": {\"NVIDIA_TF32_OVERRIDE\": \"1\"},"
        " \"node_selector\": {\"gpu-architecture\": \"ampere\"},"
        " \"network\": \"private\", \"replicas\": 1,"
        " \"restart_policy\": \"on-failure\", \"max_restarts\": 6}");
    expect_diag(&r, GP_K8S_WARN, "Job/mixed-precision-training",
                "spec.template.spec.volumes[0].emptyDir",
                "not mounted: a job's scratch space is its own working directory "
                "(/gpupool/work); /tmp/cuda-cache is in the job's own file system");
    gp_k8s_result_fini(&r);
}

#define FIX GP_K8S_FIXTURES

static void hami_and_models(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(FIX, "hami-pods.yaml", NULL, &r);
    expect_counts(&r, 3, 1, 0);
    expect_object(
        &r, GP_K8S_JOB, "hami-share",
        "{\"allow_unschedulable\": true, \"name\": \"hami-share\", \"tenant\": \"team-a\","
        " \"image\": \"nvidia/cuda:12.1.0-base-ubuntu22.04\","
        " \"command\": [\"python3\", \"infer.py\"],"
        " \"resources\": {\"gpu_memory_mib\": 3000, \"cores_percent\": 30},"
        " \"network\": \"private\", \"restart_policy\": \"never\"}");
    expect_object(&r, GP_K8S_JOB, "hami-percent",
                  "{\"allow_unschedulable\": true, \"name\": \"hami-percent\", \"image\": "
                  "\"nvidia/cuda:12.1.0-base-ubuntu22.04\","
                  " \"command\": [\"python3\", \"infer.py\"], \"resources\": {\"gpu_milli\": 500},"
                  " \"network\": \"private\", \"restart_policy\": \"on-failure\","
                  " \"max_restarts\": 1000}");
    expect_diag(&r, GP_K8S_WARN, "Pod/hami-percent",
                "spec.containers[0].resources.limits.nvidia.com/gpumem-percentage",
                "not honoured as a memory limit: gpupool limits GPU memory in MiB; reserved as "
                "50% of the GPU (gpu_milli 500) with no memory limit");
    expect_object(
        &r, GP_K8S_JOB, "a100-pod",
        "{\"allow_unschedulable\": true, \"name\": \"a100-pod\", \"image\": "
        "\"nvidia/cuda:12.1.0-base-ubuntu22.04\","
        " \"command\": [\"nvidia-smi\"],"
        " \"resources\": {\"gpus\": 2, \"gpu_models\": [\"a100-80gb\"],"
        "   \"cpu_milli\": 500, \"memory_mib\": 1536},"
        " \"network\": \"private\", \"restart_policy\": \"always\", \"max_restarts\": 1000}");
    gp_k8s_result_fini(&r);
}

static void mig_profiles(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(FIX, "mig-pods.yaml", NULL, &r);
    expect_counts(&r, 2, 0, 0);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(r.objects[0].doc, "resources"), "mig_profile")),
                        "1g.5gb");
    /* A request alone (no limit) is taken as it is. */
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(r.objects[1].doc, "resources"), "mig_profile")),
                        "3g.40gb");
    gp_k8s_result_fini(&r);
}

static void volcano(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(FIX, "volcano.yaml", NULL, &r);
    expect_counts(&r, 2, 1, 0);
    expect_object(&r, GP_K8S_QUEUE, "research",
                  "{\"name\": \"research\", \"weight\": 4.0, \"reclaimable\": false,"
                  " \"capability\": {\"gpus\": 16, \"cpu_milli\": 64000, \"memory_mib\": 262144},"
                  " \"guarantee\": {\"gpus\": 4}}");
    expect_object(&r, GP_K8S_JOB, "mpi-train",
                  "{\"allow_unschedulable\": true, \"name\": \"mpi-train\", \"tenant\": "
                  "\"research\", \"queue\": \"research\","
                  " \"image\": \"registry.local/mpi:1\","
                  " \"command\": [\"mpirun\", \"python3\", \"train.py\"],"
                  " \"resources\": {\"gpus\": 4},"
                  " \"spread\": [{\"topology_key\": \"zone\", \"max_skew\": 1}],"
                  " \"anti_affinity\": true, \"network\": \"host\", \"replicas\": 2,"
                  " \"restart_policy\": \"on-failure\", \"max_restarts\": 2}");
    expect_diag(&r, GP_K8S_WARN, "Job/mpi-train", "spec.plugins",
                "not needed: gpupool gives a gang's replicas their rank, master address and "
                "hostfile (GPUPOOL_NODE_RANK, MASTER_ADDR, GPUPOOL_HOSTFILE)");
    gp_k8s_result_fini(&r);
}

static void gang_job(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(FIX, "gang-job.yaml", NULL, &r);
    expect_counts(&r, 2, 2, 0);
    expect_object(
        &r, GP_K8S_JOB, "two-workers",
        "{\"allow_unschedulable\": true, \"name\": \"two-workers\","
        " \"image\": \"registry.local/train:1\", \"command\": [\"torchrun\", \"train.py\"],"
        " \"env\": {\"EPOCHS\": \"3\"}, \"resources\": {\"gpus\": 1},"
        " \"network\": \"host\", \"replicas\": 2, \"restart_policy\": \"on-failure\","
        " \"max_restarts\": 1}");
    expect_diag(&r, GP_K8S_WARN, "Job/two-workers", "spec.template.spec.hostNetwork",
                "not given: a gang's replicas run on the nodes' network, where they reach each "
                "other (as pods do over the pod network)");
    expect_diag(&r, GP_K8S_WARN, "Job/two-workers", "spec.template.spec.containers[0].env[0].name",
                "not honoured: gpupool sets RANK itself (from the GPUs and replicas it gives the "
                "job); the variable is left out");
    expect_object(
        &r, GP_K8S_JOB, "one-worker",
        "{\"allow_unschedulable\": true, \"name\": \"one-worker\","
        " \"image\": \"registry.local/train:1\", \"command\": [\"python3\", \"train.py\"],"
        " \"env\": {\"RANK\": \"0\"}, \"resources\": {}, \"network\": \"private\","
        " \"restart_policy\": \"never\"}");
    gp_k8s_result_fini(&r);
}

static void json_list(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(FIX, "list.json", NULL, &r);
    expect_counts(&r, 2, 3, 0); /* metadata.uid named once, not per pass */
    expect_diag(&r, GP_K8S_WARN, "ResourceQuota/q", "metadata.uid",
                "not supported by gpupool; left out");
    expect_object(&r, GP_K8S_PCLASS, "batch-low",
                  "{\"name\": \"batch-low\", \"value\": 10, \"preemption_policy\": "
                  "\"PreemptLowerPriority\"}");
    /* The quota folded into the Namespace's tenant. */
    expect_object(&r, GP_K8S_TENANT, "team-b", "{\"name\": \"team-b\", \"quota\": {\"gpus\": 4}}");
    expect_diag(&r, GP_K8S_WARN, "PriorityClass/batch-low", "globalDefault",
                "not honoured: the default class is the controller's setting "
                "jobs.default_priority_class");
    expect_diag(&r, GP_K8S_WARN, "ResourceQuota/q", "spec.hard.requests.cpu",
                "not honoured: a tenant's quota limits GPUs, GPU memory and GPUs per model");
    gp_k8s_result_fini(&r);
}

static void bad_manifests(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(FIX, "bad.yaml", NULL, &r);
    expect_counts(&r, 0, 1, 11);
    expect_diag(&r, GP_K8S_ERROR, "ConfigMap/settings", "kind",
                "v1 ConfigMap: not supported (gpupool applies Pod, batch/v1 Job, Volcano Job, "
                "Deployment, HorizontalPodAutoscaler, PriorityClass, Namespace, ResourceQuota "
                "and Queue)");
    expect_diag(&r, GP_K8S_ERROR, "Pod/Bad.Name", "metadata.name",
                "Bad.Name: a gpupool name is 1 to 63 of [a-z0-9-], starting and ending with a "
                "letter or digit");
    expect_diag(&r, GP_K8S_ERROR, "Pod/bad-resources", "spec.containers[0].resources.limits.cpu",
                "not a CPU quantity (e.g. 500m, 2, 0.5)");
    expect_diag(&r, GP_K8S_ERROR, "Pod/bad-resources",
                "spec.containers[0].resources.limits.example.com/fpga",
                "unknown resource example.com/fpga: gpupool cannot give it");
    expect_diag(&r, GP_K8S_ERROR, "Pod/bad-env", "spec.containers[1]",
                "not supported: a job runs one container (run helpers in its command)");
    expect_diag(&r, GP_K8S_ERROR, "Pod/bad-env", "spec.containers[0].env[0].valueFrom",
                "not supported: gpupool has no secrets or config maps to read from; give the "
                "value (a secret: gpupool submit --secret-env)");
    expect_diag(&r, GP_K8S_ERROR, "Deployment/no-command",
                "spec.template.spec.containers[0].command",
                "required: gpupool does not run the image's ENTRYPOINT; give the command (args "
                "start with an option)");
    expect_diag(&r, GP_K8S_ERROR, "Deployment/no-command", "spec.template.spec.hostNetwork",
                "a service runs in a network namespace of its own: hostNetwork is refused");
    expect_diag(&r, GP_K8S_ERROR, "Pod/bad-share", "spec.containers[0].resources.limits",
                "a MIG instance together with other GPU resources: ask for one");
    expect_diag(&r, GP_K8S_ERROR, "Pod/bad-mig", "spec.containers[0].resources.limits",
                "nvidia.com/mig-1g.5gb: 2 instances: a replica gets one MIG instance");
    expect_diag(&r, GP_K8S_ERROR, "HorizontalPodAutoscaler/orphan", "spec.scaleTargetRef.name",
                "no Deployment elsewhere among these manifests (or it was refused): apply the "
                "HPA with its Deployment");
    gp_k8s_result_fini(&r);
}

/* A container's privileged is the job's (its path kept for the server's refusal); false is
 * any job; allowPrivilegeEscalation and capabilities.add stay refused with warnings. */
static void privileged(void **state)
{
    (void)state;
    gp_k8s_result r;
    translate(FIX, "privileged.yaml", NULL, &r);
    expect_counts(&r, 2, 2, 1);
    const char *w = "Deployment/dev-tools",
               *sc = "spec.template.spec.containers[0].securityContext";
    char path[128];
    snprintf(path, sizeof(path), "%s.allowPrivilegeEscalation", sc);
    expect_diag(&r, GP_K8S_WARN, w, path,
                "refused: left out; only a container's securityContext.privileged asks for more "
                "privileges (a privileged job)");
    snprintf(path, sizeof(path), "%s.capabilities", sc);
    expect_diag(&r, GP_K8S_WARN, w, path, "refused: jobs get no added capabilities; left out");
    expect_diag(&r, GP_K8S_ERROR, "Pod/bad-privileged",
                "spec.containers[0].securityContext.privileged", "must be true or false");
    for (size_t i = 0; i < r.nobjects; i++) {
        const gp_k8s_object *o = &r.objects[i];
        json_t *p = json_object_get(o->doc, "privileged");
        if (strcmp(o->name, "dev-tools") == 0) {
            assert_true(json_is_true(p));
            snprintf(path, sizeof(path), "%s.privileged", sc);
            assert_string_equal(o->privileged_at, path);
        } else {
            assert_string_equal(o->name, "plain");
            assert_null(p);
            assert_string_equal(o->privileged_at, "");
        }
    }
    gp_k8s_result_fini(&r);
}

/* A share of more than one GPU, and the reader's syntax errors naming file and line. */
static void share_of_two_and_syntax(void **state)
{
    (void)state;
    json_t *docs = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    const char *y = "apiVersion: v1\nkind: Pod\nmetadata: {name: two}\nspec:\n  containers:\n"
                    "  - {name: a, command: [x], resources: {limits: {nvidia.com/gpu: 2, "
                    "nvidia.com/gpumem: 1000}}}\n---\n";
    assert_int_equal(gp_yaml_to_json_all(y, strlen(y), &docs, &d), 0);
    assert_int_equal(json_array_size(docs), 1); /* the empty document after --- left out */
    gp_k8s_result r;
    gp_k8s_translate(docs, NULL, &r);
    expect_counts(&r, 0, 0, 1);
    expect_diag(&r, GP_K8S_ERROR, "Pod/two", "spec.containers[0].resources.limits.nvidia.com/gpu",
                "2 GPUs with a share of GPU memory or compute: gpupool shares one GPU per "
                "replica (use replicas for more)");
    gp_k8s_result_fini(&r);
    json_decref(docs);
    const char *bad = "a: 1\n---\nb: [1, 2\n";
    assert_int_equal(gp_yaml_to_json_all(bad, strlen(bad), &docs, &d), GP_EPARSE);
    assert_null(docs);
    assert_non_null(strstr(d.msg, "line 4"));
}

/* Two manifests that would make one object: the second is an error (another tenant's is not). */
static void duplicates(void **state)
{
    (void)state;
    const char *y = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
                    "spec: {containers: [{name: x, command: [y]}]}\n---\n"
                    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec: {template: "
                    "{spec: {restartPolicy: Never, containers: [{name: x, command: [y]}]}}}\n"
                    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: other}\n"
                    "spec: {containers: [{name: x, command: [y]}]}\n";
    json_t *docs = NULL;
    gp_diag d;
    assert_int_equal(gp_yaml_to_json_all(y, strlen(y), &docs, &d), 0);
    gp_k8s_result r;
    gp_k8s_translate(docs, NULL, &r);
    expect_counts(&r, 2, 0, 1);
    expect_diag(&r, GP_K8S_ERROR, "Job/a", "metadata.name",
                "a: Pod/a comes earlier with this name");
    gp_k8s_result_fini(&r);
    json_decref(docs);
}

static void quantities(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        long long milli, mib, gpu_mib;
    } cases[] = {
        {"500m", 500, 1, 1},
        {"2", 2000, 1, 2},
        {"0.5", 500, 1, 1},
        {"16Gi", 17179869184000LL, 16384, 16384},
        {"8G", 8000000000000LL, 7630, 7630},
        {"1e3", 1000000, 1, 1000},
        {"512Mi", 536870912000LL, 512, 512},
        {"10Gi", 10737418240000LL, 10240, 10240},
        {"1.5Gi", 1610612736000LL, 1536, 1536},
        {"100k", 100000000, 1, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *v = json_string(cases[i].text);
        long long m;
        assert_int_equal(gp_k8s_cpu_milli(v, &m), 0);
        assert_int_equal(m, cases[i].milli);
        assert_int_equal(gp_k8s_mib(v, &m), 0);
        assert_int_equal(m, cases[i].mib);
        assert_int_equal(gp_k8s_gpu_mib(v, &m), 0);
        assert_int_equal(m, cases[i].gpu_mib);
        json_decref(v);
    }
    static const char *const bad[] = {"", "two", "1x", "-1", "1Gii", "Gi", ".", "1e", "9E"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *v = json_string(bad[i]);
        long long m;
        assert_int_equal(gp_k8s_mib(v, &m), -1);
        json_decref(v);
    }
    json_t *n = json_integer(4);
    long long c;
    assert_int_equal(gp_k8s_count_value(n, &c), 0);
    assert_int_equal(c, 4);
    json_decref(n);
    json_t *half = json_string("0.5");
    assert_int_equal(gp_k8s_count_value(half, &c), -1);
    json_decref(half);
}

/* A directory: its manifests in name order, the non-manifests left out. */
static void directory(void **state)
{
    (void)state;
    const char *paths[] = {FIX};
    json_t *docs = NULL, *files = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_apply_read(paths, 1, &docs, &files, &d), 0);
    assert_int_equal(json_array_size(docs), json_array_size(files));
    assert_true(json_array_size(docs) > 10);
    assert_non_null(strstr(json_string_value(json_array_get(files, 0)), "/bad.yaml"));
    assert_non_null(strstr(json_string_value(json_array_get(files, json_array_size(files) - 1)),
                           "/volcano.yaml"));
    json_decref(docs);
    json_decref(files);
    const char *missing[] = {FIX "/missing.yaml"};
    assert_int_equal(gp_apply_read(missing, 1, &docs, &files, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "missing.yaml: No such file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_pod),          cmocka_unit_test(mig_and_vgpu_pods),
        cmocka_unit_test(share_deployment), cmocka_unit_test(queues_and_classes),
        cmocka_unit_test(quotas),           cmocka_unit_test(ddp_job),
        cmocka_unit_test(triton),           cmocka_unit_test(mixed_precision),
        cmocka_unit_test(hami_and_models),  cmocka_unit_test(mig_profiles),
        cmocka_unit_test(volcano),          cmocka_unit_test(gang_job),
        cmocka_unit_test(json_list),        cmocka_unit_test(bad_manifests),
        cmocka_unit_test(privileged),       cmocka_unit_test(share_of_two_and_syntax),
        cmocka_unit_test(duplicates),       cmocka_unit_test(quantities),
        cmocka_unit_test(directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
