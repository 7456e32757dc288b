/*
 * Nodes: the registration document and its node in the cluster model.
 *
 *   {"name": "gpu-01", "address": "10.0.0.1:7071", "cpu_milli": 128000, "memory_mib": 1048576,
 *    "labels": {"zone": "a"},
 *    "gpus": [{"uuid": "GPU-…", "model": "A100-80GB", "memory_mib": 81920, "numa": 0,
 *              "nvlink": [1, 2, 3], "mig": false}, …],
 *    (a GPU in MIG mode also has "mig_instances": its GPU instances, node_mig.c)
 *    "runtime": {"engine": "podman", "version": "4.3.1", "oci_runtime": "runc",
 *                "cgroups": "hybrid"}   (absent or null: no container runtime; node_images.c)
 *    "cordoned": false, "draining": false, "registered_ms": …,
 *    "taints": [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]  (node_taints.c)}
 *
 * and, kept by the controller (a registration cannot set them): per GPU "drained" ({"reason",
 * "since_ms", "auto", "retired", "check_seq"}: out of service) and "faults" (recurring faults
 * seen lately, faults.h); per node "drain_deadline_ms" (a scheduled maintenance drain) and
 * "check_seq" (the latest health check asked of the agent).
 *
 * A GPU's index is its position in "gpus". The cluster model cannot remove a node, so a node
 * that registers again with a different inventory gets a new node in the model and the old one
 * is made unschedulable; jobs placed on the old one keep their hold until they end.
 */
#include "ctl/ctl.h"
#include "ctl/doc.h"
#include "ctl/faults.h"

#include <stdlib.h>
#include <string.h>

static int read_gpu(json_t *g, int i, ctl_gpu_info *out, gp_diag *d)
{
    static const char *const fields[] = {"index",  "uuid",          "model", "memory_mib",
                                         "numa",   "nvlink",        "mig",   "drained",
                                         "faults", "mig_instances", NULL};
    char path[32];
    snprintf(path, sizeof(path), "gpus[%d]", i);
    ctl_gpu_info info;
    memset(&info, 0, sizeof(info));
    int64_t numa = -1, index = i;
    info.util = -1;
    int rc = doc_check_fields(g, path, fields, d);
    if (rc == 0) {
        rc = doc_int(g, path, "index", i, i, &index, d);
    }
    if (rc == 0) {
        rc = doc_str(g, path, "uuid", info.uuid, sizeof(info.uuid), d);
    }
    if (rc == 0) {
        rc = doc_str(g, path, "model", info.model, sizeof(info.model), d);
    }
    if (rc == 0 && (!info.uuid[0] || !info.model[0])) {
        rc = gp_diag_set(d, GP_EINVAL, "%s: uuid and model are required", path);
    }
    if (rc == 0) {
        rc = doc_int(g, path, "memory_mib", 1, INT64_C(1) << 40, &info.mem_mib, d);
    }
    if (rc == 0 && info.mem_mib == 0) {
        rc = gp_diag_set(d, GP_EINVAL, "%s.memory_mib: required", path);
    }
    if (rc == 0) {
        rc = doc_int(g, path, "numa", -1, 1024, &numa, d);
    }
    if (rc == 0) {
        rc = doc_bool(g, path, "mig", &info.mig, d);
    }
    if (rc == 0) {
        rc = ctl_mig_read(g, path, &info, d);
    }
    json_t *links = json_object_get(g, "nvlink");
    if (rc == 0 && links && !json_is_null(links)) {
        size_t k;
        json_t *v;
        if (!json_is_array(links)) {
            rc = gp_diag_set(d, GP_EINVAL, "%s.nvlink: must be a list of GPU indexes", path);
        }
        json_array_foreach(links, k, v)
        {
            if (rc == 0 &&
                (!json_is_integer(v) || json_integer_value(v) < 0 ||
                 json_integer_value(v) >= GP_MAX_GPUS_PER_NODE || json_integer_value(v) == i)) {
                rc = gp_diag_set(d, GP_EINVAL, "%s.nvlink[%zu]: must be another GPU's index", path,
                                 k);
            }
            if (rc == 0) {
                info.nvlink |= 1u << json_integer_value(v);
            }
        }
    }
    json_t *drained = json_object_get(g, "drained");
    if (rc == 0 && drained && !json_is_null(drained)) {
        const char *reason = "";
        int automatic = 0, retired = 0;
        json_int_t since = 0, seq = 0;
        if (json_unpack(drained, "{s:s, s:I, s:b, s:b, s:I}", "reason", &reason, "since_ms", &since,
                        "auto", &automatic, "retired", &retired, "check_seq", &seq) != 0) {
            rc = gp_diag_set(d, GP_EINVAL,
                             "%s.drained: needs reason, since_ms, auto, retired and check_seq",
                             path);
        }
        info.drained = true;
        info.drain_auto = automatic;
        info.retired = retired;
        info.drained_ms = since;
        info.check_seq = seq;
        snprintf(info.drain_reason, sizeof(info.drain_reason), "%s", reason);
    }
    ctl_gpu_faults_read(json_object_get(g, "faults"), &info.faults);
    if (rc < 0) {
        return rc;
    }
    info.numa = (int)numa;
    *out = info;
    return 0;
}

/* Reads the document into n (everything but id and cl). */
static int read_node(const char *name, json_t *doc, ctl_node *n, gp_diag *d)
{
    static const char *const fields[] = {"name",
                                         "address",
                                         "cpu_milli",
                                         "memory_mib",
                                         "labels",
                                         "gpus",
                                         "cordoned",
                                         "draining",
                                         "registered_ms",
                                         "control_token",
                                         "drain_deadline_ms",
                                         "check_seq",
                                         "runtime",
                                         "taints",
                                         NULL};
    memset(n, 0, sizeof(*n));
    snprintf(n->name, sizeof(n->name), "%s", name);
    int rc = doc_check_fields(doc, "", fields, d);
    if (rc == 0) {
        rc = doc_str(doc, "", "address", n->address, sizeof(n->address), d);
    }
    if (rc == 0) {
        rc = doc_int(doc, "", "cpu_milli", 1, INT64_C(1) << 40, &n->cpu_milli, d);
    }
    if (rc == 0) {
        rc = doc_int(doc, "", "memory_mib", 1, INT64_C(1) << 40, &n->memory_mib, d);
    }
    if (rc == 0 && (n->cpu_milli == 0 || n->memory_mib == 0)) {
        rc = gp_diag_set(d, GP_EINVAL, "%s: required", n->cpu_milli ? "memory_mib" : "cpu_milli");
    }
    if (rc == 0) {
        rc = doc_bool(doc, "", "cordoned", &n->cordoned, d);
    }
    if (rc == 0) {
        rc = doc_bool(doc, "", "draining", &n->draining, d);
    }
    if (rc == 0) {
        rc = doc_int(doc, "", "registered_ms", 0, INT64_MAX, &n->registered_ms, d);
    }
    if (rc == 0) {
        rc = doc_str(doc, "", "control_token", n->control_token, sizeof(n->control_token), d);
    }
    if (rc == 0) {
        rc = doc_int(doc, "", "drain_deadline_ms", 0, INT64_MAX, &n->drain_deadline_ms, d);
    }
    if (rc == 0) {
        rc = doc_int(doc, "", "check_seq", 0, INT64_MAX, &n->check_seq, d);
    }
    json_t *labels = json_object_get(doc, "labels");
    if (rc == 0 && labels && !json_is_null(labels)) {
        const char *k;
        json_t *v;
        if (!json_is_object(labels)) {
            rc = gp_diag_set(d, GP_EINVAL, "labels: must be an object of strings");
        }
        json_object_foreach(labels, k, v)
        {
            if (rc == 0 && (!json_is_string(v) || strlen(k) >= GP_NAME_MAX ||
                            json_string_length(v) >= GP_NAME_MAX)) {
                rc = gp_diag_set(d, GP_EINVAL, "labels.%s: must be a string under %d bytes", k,
                                 GP_NAME_MAX);
            }
        }
    }
    json_t *gpus = json_object_get(doc, "gpus");
    if (rc == 0 && gpus && !json_is_array(gpus)) {
        rc = gp_diag_set(d, GP_EINVAL, "gpus: must be a list");
    }
    if (rc == 0 && json_array_size(gpus) > GP_MAX_GPUS_PER_NODE) {
        rc = gp_diag_set(d, GP_EINVAL, "gpus: at most %d per node", GP_MAX_GPUS_PER_NODE);
    }
    for (size_t i = 0; rc == 0 && i < json_array_size(gpus); i++) {
        rc = read_gpu(json_array_get(gpus, i), (int)i, &n->gpus[i], d);
    }
    n->ngpus = (int)json_array_size(gpus);
    for (int i = 0; rc == 0 && i < n->ngpus; i++) {
        if (n->gpus[i].nvlink >> n->ngpus) {
            rc = gp_diag_set(d, GP_EINVAL, "gpus[%d].nvlink: names a GPU the node lacks", i);
        }
    }
    if (rc == 0) {
        rc = ctl_runtime_read(doc, &n->runtime, d);
    }
    if (rc == 0) {
        rc = ctl_taints_read(json_object_get(doc, "taints"), "taints", &n->taints, &n->ntaints, d);
    }
    if (rc == 0) {
        n->labels = labels && json_is_object(labels) ? json_deep_copy(labels) : json_object();
    }
    return rc;
}

/* Adds n's node to the cluster model; n->cl receives its index. */
static int add_to_cluster(gp_cluster *c, ctl_node *n, gp_diag *d)
{
    gp_gpu_spec specs[GP_MAX_GPUS_PER_NODE];
    for (int i = 0; i < n->ngpus; i++) {
        int m = gp_cluster_model(c, n->gpus[i].model, n->gpus[i].mem_mib);
        if (m < 0) {
            return gp_diag_set(d, GP_ERANGE, "gpus[%d].model: too many GPU models in the pool", i);
        }
        specs[i] = (gp_gpu_spec){.model = m,
                                 .numa = n->gpus[i].numa,
                                 .nvlink = n->gpus[i].nvlink,
                                 .mem_mib = n->gpus[i].mem_mib};
    }
    int idx = gp_cluster_add_node(c, n->name, n->cpu_milli, n->memory_mib, n->ngpus, specs);
    if (idx < 0) {
        return gp_diag_set(d, idx, "node %s: %s", n->name, gp_strerror(idx));
    }
    const char *k;
    json_t *v;
    json_object_foreach(n->labels, k, v)
    {
        gp_cluster_set_label(c, idx, k, json_string_value(v));
    }
    for (int i = 0; i < n->ngpus; i++) {
        if (n->gpus[i].mig) {
            gp_cluster_enable_mig(c, idx, i);
        }
    }
    if (n->ntaints > 0 && gp_cluster_set_taints(c, idx, n->taints, n->ntaints) < 0) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    n->cl = idx;
    return 0;
}

int ctl_state_add_node(ctl_state *st, int64_t id, const char *name, json_t *doc, gp_diag *d)
{
    ctl_node n;
    int rc = read_node(name, doc, &n, d);
    if (rc < 0) {
        return rc;
    }
    n.id = id;
    rc = add_to_cluster(st->cluster, &n, d);
    if (rc == 0 && st->nnodes == st->capnodes) {
        int ncap = st->capnodes ? st->capnodes * 2 : 64;
        ctl_node *p = realloc(st->nodes, sizeof(*p) * (size_t)ncap);
        if (!p) {
            rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
        } else {
            st->nodes = p;
            st->capnodes = ncap;
        }
    }
    if (rc < 0) {
        ctl_node_fini(&n);
        return rc;
    }
    gp_cluster_set_caps(st->cluster, n.cl, n.runtime ? GP_CAP_IMAGES : 0);
    st->nodes[st->nnodes++] = n;
    ctl_state_node_appended(st);
    ctl_node_update_schedulable(st, &st->nodes[st->nnodes - 1]);
    ctl_node_update_gpus(st, &st->nodes[st->nnodes - 1]);
    st->gen++; /* a new GPU model changes how requests resolve */
    return 0;
}

json_t *ctl_node_doc(const ctl_node *n)
{
    json_t *gpus = json_array();
    for (int i = 0; i < n->ngpus; i++) {
        const ctl_gpu_info *g = &n->gpus[i];
        json_t *links = json_array();
        for (int j = 0; j < GP_MAX_GPUS_PER_NODE; j++) {
            if (g->nvlink & (1u << j)) {
                json_array_append_new(links, json_integer(j));
            }
        }
        json_t *gd = json_pack("{s:i, s:s, s:s, s:I, s:i, s:o, s:b}", "index", i, "uuid", g->uuid,
                               "model", g->model, "memory_mib", (json_int_t)g->mem_mib, "numa",
                               g->numa, "nvlink", links, "mig", g->mig);
        if (g->drained) {
            json_object_set_new(gd, "drained",
                                json_pack("{s:s, s:I, s:b, s:b, s:I}", "reason", g->drain_reason,
                                          "since_ms", (json_int_t)g->drained_ms, "auto",
                                          g->drain_auto, "retired", g->retired, "check_seq",
                                          (json_int_t)g->check_seq));
        }
        if (g->mig) {
            json_object_set_new(gd, "mig_instances", ctl_mig_doc(g));
        }
        json_t *faults = ctl_gpu_faults_doc(&g->faults);
        if (faults) {
            json_object_set_new(gd, "faults", faults);
        }
        json_array_append_new(gpus, gd);
    }
    json_t *doc = json_pack("{s:s, s:s, s:I, s:I, s:O, s:o, s:b, s:b, s:I, s:s}", "name", n->name,
                            "address", n->address, "cpu_milli", (json_int_t)n->cpu_milli,
                            "memory_mib", (json_int_t)n->memory_mib, "labels", n->labels, "gpus",
                            gpus, "cordoned", n->cordoned, "draining", n->draining, "registered_ms",
                            (json_int_t)n->registered_ms, "control_token", n->control_token);
    if (n->drain_deadline_ms) {
        json_object_set_new(doc, "drain_deadline_ms", json_integer(n->drain_deadline_ms));
    }
    if (n->check_seq) {
        json_object_set_new(doc, "check_seq", json_integer(n->check_seq));
    }
    if (n->runtime) {
        json_object_set(doc, "runtime", n->runtime);
    }
    if (n->ntaints > 0) {
        json_object_set_new(doc, "taints", ctl_taints_doc(n->taints, n->ntaints));
    }
    return doc;
}

void ctl_node_fini(ctl_node *n)
{
    json_decref(n->labels);
    json_decref(n->health);
    json_decref(n->runtime);
    json_decref(n->images);
    for (int g = 0; g < n->ngpus; g++) {
        json_decref(n->gpus[g].readings);
    }
    n->labels = n->health = n->runtime = n->images = NULL;
    free(n->taints);
    n->taints = NULL;
    n->ntaints = 0;
    for (int g = 0; g < n->ngpus; g++) {
        n->gpus[g].readings = NULL;
    }
}

void ctl_node_update_schedulable(ctl_state *st, ctl_node *n)
{
    gp_cluster_set_schedulable(st->cluster, n->cl,
                               n->ready && !n->cordoned && !n->draining && !n->fenced &&
                                   !n->unhealthy[0]);
}

void ctl_nodes_grace(ctl_state *st, int64_t now)
{
    for (int i = 0; i < st->nnodes; i++) {
        st->nodes[i].ready = true;
        st->nodes[i].heartbeat_ms = now;
        ctl_node_update_schedulable(st, &st->nodes[i]);
    }
}

void ctl_node_update_gpus(ctl_state *st, ctl_node *n)
{
    for (int i = 0; i < n->ngpus; i++) {
        const ctl_gpu_info *g = &n->gpus[i];
        gp_cluster_set_gpu_avail(st->cluster, n->cl, i,
                                 g->drained ? GP_GPU_OUT
                                 : g->spare ? GP_GPU_SPARE
                                            : GP_GPU_IN_SERVICE);
        ctl_mig_apply(st, n, i);
    }
}

bool ctl_node_host(const ctl_node *n, char *buf, size_t cap)
{
    const char *colon = strrchr(n->address, ':');
    bool reachable = colon && colon > n->address && atoi(colon + 1) > 0;
    if (reachable) {
        snprintf(buf, cap, "%.*s", (int)(colon - n->address), n->address);
    } else {
        snprintf(buf, cap, "%s", n->name);
    }
    return reachable;
}
