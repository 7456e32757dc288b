/*
 * What the translator's files share (k8s.c, k8s_pod.c, k8s_res.c, k8s_quantity.c): the state
 * of one manifest's translation and the diagnostics it adds. Not for use outside them.
 */
#ifndef GP_CLI_K8S_IMPL_H
#define GP_CLI_K8S_IMPL_H

#include "cli/k8s.h"

#define K8S_PATH_MAX 512

/* One manifest being translated. */
typedef struct k8s_tr {
    gp_k8s_result *res;
    const gp_k8s_ctx *ctx;
    int source;
    char where[160];                  /* "Pod/gpu-pod" */
    const char *name;                 /* metadata.name (borrowed) */
    const json_t *doc;                /* the manifest (borrowed) */
    int errors;                       /* errors added for this manifest */
    char privileged_at[K8S_PATH_MAX]; /* the path of its securityContext.privileged: true, or "" */
} k8s_tr;

void k8s_diag(k8s_tr *t, gp_k8s_severity s, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define k8s_warn(t, path, ...)  k8s_diag((t), GP_K8S_WARN, (path), __VA_ARGS__)
#define k8s_error(t, path, ...) k8s_diag((t), GP_K8S_ERROR, (path), __VA_ARGS__)

/* A known key of an object and, when it is not honoured, why (NULL: handled by the caller). */
typedef struct k8s_key {
    const char *name;
    const char *ignored; /* a warning's reason when present, or NULL */
} k8s_key;

/* Warns for every key of obj (at path) not in keys (ends with a NULL name): "not supported by
 * gpupool"; for keys with a reason, warns with that reason. */
void k8s_check_keys(k8s_tr *t, const json_t *obj, const char *path, const k8s_key *keys);

/* path + "." + key into buf (path "" gives key). */
const char *k8s_join(char *buf, const char *path, const char *key);
/* path + "[i]" into buf. */
const char *k8s_index(char *buf, const char *path, size_t i);

/* Sets key of o to v (stolen); notes out of memory in the result. */
void k8s_set(k8s_tr *t, json_t *o, const char *key, json_t *v);

/* An object member, or NULL when absent or not an object (a warning or error names it then). */
const json_t *k8s_obj(k8s_tr *t, const json_t *o, const char *path, const char *key);
/* The same for arrays and strings. */
const json_t *k8s_arr(k8s_tr *t, const json_t *o, const char *path, const char *key);
const char *k8s_str(k8s_tr *t, const json_t *o, const char *path, const char *key);

/* The pod template (a PodSpec at path, with its metadata tmeta, may be NULL) as a job spec
 * (a new object) for a job of job_kind "batch" or "service" whose replicas are a gang when
 * gang is set (launch variables are gpupool's; the nodes' network); NULL after an error. */
json_t *k8s_pod_job(k8s_tr *t, const json_t *meta, const json_t *tmeta, const json_t *spec,
                    const char *path, const char *job_kind, int gang);

/* The resources of the container at path into the job spec's "resources" (res) and env
 * resolution (limits, the values as written, for fieldRefs). 0, or -1 after an error. */
int k8s_resources(k8s_tr *t, const json_t *container, const char *path, json_t *res,
                  json_t *limits);

/* The resource map of a Queue or ResourceQuota (name -> quantity) into a queue's capability or
 * guarantee (gpus, gpu_memory_mib, cpu_milli, memory_mib). */
void k8s_queue_resources(k8s_tr *t, const json_t *map, const char *path, json_t *out);
/* The same for one {name, value} pair (the v1alpha1 capabilities list). */
void k8s_queue_resource(k8s_tr *t, const char *name, const json_t *value, const char *path,
                        json_t *out);

/* A probe (httpGet, tcpSocket, exec and the timings) as gpupool's; ports resolves named ports
 * (the container's ports). NULL after an error. */
json_t *k8s_probe(k8s_tr *t, const json_t *probe, const char *path, const json_t *ports);

#endif
