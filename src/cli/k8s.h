/*
 * Kubernetes manifests to gpupool objects: the translator behind `gpupool apply -f`. Pure: a
 * parsed manifest set in, gpupool documents and diagnostics out; no I/O, no clock, no globals.
 *
 * What maps to what (docs/kubernetes.md has the full table and the reasons):
 *
 *   v1 Pod                         a batch job, 1 replica (restartPolicy: Always -> always,
 *                                  OnFailure -> on-failure, Never -> never)
 *   batch/v1 Job                   a batch job: parallelism replicas started together (a gang);
 *                                  restartPolicy OnFailure or Never -> on-failure with
 *                                  max_restarts = backoffLimit (default 6), as Kubernetes
 *                                  retries a failed pod either way
 *   batch.volcano.sh/v1alpha1 Job  a gang: the replicas of its one task; queue, minAvailable
 *   apps/v1 Deployment             a service: replicas, the first containerPort as port, probes
 *   autoscaling/v2 HPA             the autoscale of the service it targets (min, max, one metric)
 *   scheduling.k8s.io/v1
 *     PriorityClass                a priority class (value, preemption_policy, description)
 *   v1 Namespace                   a tenant
 *   v1 ResourceQuota               its namespace's tenant quota (gpus, gpu_memory_mib, models)
 *   scheduling.volcano.sh/v1beta1 and scheduling.sigs.k8s.io/v1alpha1 Queue
 *                                  a queue (weight, capability, guarantee, reclaimable)
 *
 * Every field that has no counterpart, or is not honoured as Kubernetes would, gives a
 * diagnostic naming its path within its document ("spec.containers[0].securityContext.
 * privileged") and why. A warning loses something the job can do without: the default applies
 * the rest, --strict refuses. An error loses something required (an unknown kind, a bad
 * quantity, a GPU request gpupool cannot express): the document is never applied.
 */
#ifndef GP_CLI_K8S_H
#define GP_CLI_K8S_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The gpupool kinds a manifest becomes. */
typedef enum gp_k8s_target {
    GP_K8S_JOB = 0, /* POST /v1/jobs (doc: a job spec; kind batch or service) */
    GP_K8S_TENANT,  /* /v1/tenants */
    GP_K8S_QUEUE,   /* /v1/queues */
    GP_K8S_PCLASS,  /* /v1/priorityclasses */
} gp_k8s_target;

typedef struct gp_k8s_object {
    gp_k8s_target target;
    char name[64];
    json_t *doc;           /* owned: the gpupool document */
    int source;            /* index of the manifest it came from */
    char source_kind[160]; /* "Deployment/triton-inference-server", for messages */
    /* where the manifest asks for privileged ("spec.containers[0].securityContext.privileged"),
     * named when the server refuses it; "" when it does not */
    char privileged_at[512];
} gp_k8s_object;

typedef enum gp_k8s_severity {
    GP_K8S_WARN = 0,  /* not honoured; the rest applies (refused under --strict) */
    GP_K8S_ERROR = 1, /* something required is lost: the manifest is refused */
} gp_k8s_severity;

typedef struct gp_k8s_diag {
    gp_k8s_severity severity;
    int source;    /* index of the manifest */
    char *where;   /* owned: "Pod/gpu-pod" (or "document 3" when it has no kind and name) */
    char *path;    /* owned: the field's path in the manifest, "" for the whole document */
    char *message; /* owned: "refused: jobs get no added capabilities" */
} gp_k8s_diag;

typedef struct gp_k8s_result {
    gp_k8s_object *objects;
    size_t nobjects;
    gp_k8s_diag *diags;
    size_t ndiags;
    bool oom; /* out of memory: the result is incomplete */
} gp_k8s_result;

/* What the translator must know of the pool: the registered volumes, as GET /v1/volumes lists
 * them ([{"name", "path", ...}]), to map a hostPath to the volume of that path (NULL: none);
 * and the namespace of manifests without one. A namespace other than "default" is the job's
 * tenant; "default" (or none) leaves the tenant to the submitter's token. */
typedef struct gp_k8s_ctx {
    const json_t *volumes;
    const char *ns; /* the namespace of manifests that name none (kubectl's -n); NULL: none */
} gp_k8s_ctx;

/* Translates the manifests in docs (a JSON array of parsed documents; a `kind: List` document
 * stands for its items) into *out (zeroed first; free with gp_k8s_result_fini). Objects come in
 * the documents' order, an HPA folded into its Deployment's service and a ResourceQuota into
 * its namespace's tenant. A manifest with an error gives no object. */
void gp_k8s_translate(const json_t *docs, const gp_k8s_ctx *ctx, gp_k8s_result *out);
void gp_k8s_result_fini(gp_k8s_result *r);

/* The number of diagnostics of at least severity s. */
size_t gp_k8s_count(const gp_k8s_result *r, gp_k8s_severity s);

/* Kubernetes quantities ("500m", "2", "16Gi", "8G", "1e3", "0.5"), as a JSON number or
 * string. Each returns 0, or -1 for a malformed, negative or too large value. */
/* CPU in thousandths of a core, rounded up. */
int gp_k8s_cpu_milli(const json_t *v, long long *milli);
/* Bytes to MiB, rounded up. */
int gp_k8s_mib(const json_t *v, long long *mib);
/* A GPU memory figure: a plain number is MiB (HAMi's and gpushare's unit), one with a suffix a
 * byte quantity ("10Gi"), rounded up to MiB. */
int gp_k8s_gpu_mib(const json_t *v, long long *mib);
/* A whole count ("4", 4, "1k"). */
int gp_k8s_count_value(const json_t *v, long long *n);

#endif
