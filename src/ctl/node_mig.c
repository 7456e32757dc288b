/*
 * The GPU instances of a node's GPUs in MIG mode: read from the agent's registration and
 * heartbeats, stored with the node, and given to the cluster model as each GPU's layout, which
 * a MIG request reads to reuse an idle instance of its profile before destroying anything (see
 * gp_gpu_share_for).
 *
 *   "mig_instances": [{"profile": "1g.10gb", "start": 6, "idle": true, "held": false}, ...]
 *
 * profile is the driver's name of the instance's profile, start its first memory slice; held:
 * a replica the agent runs has its MIG slice there; idle: none does and no process runs there.
 * On the model an instance is blocked (neither reused nor destroyed) when something outside
 * gpupool runs on it (neither idle nor held), or when its profile is a variant gpupool does not
 * make ("1g.10gb+me": the driver's name has a suffix); a held one is not, since the controller
 * knows whether it still places a replica there. A GPU of a model gpupool cannot partition keeps
 * its list (it is shown) but gives the model no layout.
 */
#include "ctl/changes.h"
#include "ctl/doc.h"
#include "ctl/recovery.h"

#include <string.h>

/* The layout of g for the model, into in[] (g->nmig entries). */
static void to_layout(const ctl_gpu_info *g, gp_mig_instance *in)
{
    for (int k = 0; k < g->nmig; k++) {
        const ctl_mig_inst *m = &g->migs[k];
        size_t base = strcspn(m->profile, "+");
        memset(&in[k], 0, sizeof(in[k]));
        snprintf(in[k].profile, sizeof(in[k].profile), "%.*s",
                 (int)(base < sizeof(in[k].profile) ? base : sizeof(in[k].profile) - 1),
                 m->profile);
        in[k].start = m->start;
        in[k].blocked = m->profile[base] == '+' || (!m->idle && !m->held);
    }
}

static int read_one(json_t *v, const char *path, ctl_mig_inst *out, gp_diag *d)
{
    static const char *const fields[] = {"profile", "start", "idle", "held", NULL};
    ctl_mig_inst m = {.start = -1, .idle = true};
    int64_t start = -1;
    int rc = doc_check_fields(v, path, fields, d);
    rc = rc < 0 ? rc : doc_str(v, path, "profile", m.profile, sizeof(m.profile), d);
    rc = rc < 0 ? rc : doc_int(v, path, "start", 0, GP_MIG_MEMORY_SLICES - 1, &start, d);
    rc = rc < 0 ? rc : doc_bool(v, path, "idle", &m.idle, d);
    rc = rc < 0 ? rc : doc_bool(v, path, "held", &m.held, d);
    if (rc == 0 && (!m.profile[0] || start < 0)) {
        rc = gp_diag_set(d, GP_EINVAL, "%s: profile and start are required", path);
    }
    m.start = (int)start;
    if (rc == 0) {
        *out = m;
    }
    return rc;
}

int ctl_mig_read(json_t *g, const char *path, ctl_gpu_info *out, gp_diag *d)
{
    json_t *list = json_object_get(g, "mig_instances");
    if (!list || json_is_null(list)) {
        return 0;
    }
    if (!json_is_array(list) || json_array_size(list) > GP_MIG_MEMORY_SLICES) {
        return gp_diag_set(d, GP_EINVAL, "%s.mig_instances: must be a list of at most %d instances",
                           path, GP_MIG_MEMORY_SLICES);
    }
    if (json_array_size(list) > 0 && !out->mig) {
        return gp_diag_set(d, GP_EINVAL, "%s.mig_instances: the GPU is not in MIG mode", path);
    }
    ctl_gpu_info next = *out;
    next.nmig = 0;
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        char p[64];
        snprintf(p, sizeof(p), "%s.mig_instances[%zu]", path, i);
        int rc = read_one(v, p, &next.migs[next.nmig], d);
        if (rc < 0) {
            return rc;
        }
        next.nmig++;
    }
    gp_mig_geometry geo = gp_mig_geometry_of_model(next.model);
    gp_mig_instance in[GP_MIG_MEMORY_SLICES];
    to_layout(&next, in);
    gp_diag why;
    gp_diag_clear(&why);
    if (geo != GP_MIG_NONE && gp_mig_layout_encode(geo, in, next.nmig, NULL, &why) < 0) {
        return gp_diag_set(d, GP_EINVAL, "%s.mig_instances%s", path, why.msg);
    }
    memcpy(out->migs, next.migs, sizeof(out->migs));
    out->nmig = next.nmig;
    return 0;
}

json_t *ctl_mig_doc(const ctl_gpu_info *g)
{
    json_t *list = json_array();
    for (int k = 0; k < g->nmig; k++) {
        const ctl_mig_inst *m = &g->migs[k];
        json_array_append_new(list, json_pack("{s:s, s:i, s:b, s:b}", "profile", m->profile,
                                              "start", m->start, "idle", m->idle, "held", m->held));
    }
    return list;
}

void ctl_mig_apply(ctl_state *st, const ctl_node *n, int gpu)
{
    const gp_gpu *u = gp_cluster_gpu(st->cluster, n->cl, gpu);
    if (u->mode != GP_GPU_MIG || u->mig_dynamic) {
        return; /* not partitioned by an operator on the model (a model without MIG) */
    }
    gp_mig_instance in[GP_MIG_MEMORY_SLICES];
    to_layout(&n->gpus[gpu], in);
    gp_cluster_set_mig_layout(st->cluster, n->cl, gpu, in, n->gpus[gpu].nmig, NULL);
}

static bool same_instances(const ctl_gpu_info *a, const ctl_gpu_info *b)
{
    if (a->nmig != b->nmig) {
        return false;
    }
    for (int k = 0; k < a->nmig; k++) {
        const ctl_mig_inst *x = &a->migs[k], *y = &b->migs[k];
        if (strcmp(x->profile, y->profile) != 0 || x->start != y->start || x->idle != y->idle ||
            x->held != y->held) {
            return false;
        }
    }
    return true;
}

int ctl_mig_report(gpupoold *g, ctl_node *n, json_t *gpus, gp_diag *d)
{
    ctl_node next = *n;
    bool changed = false;
    size_t i;
    json_t *v;
    json_array_foreach(gpus, i, v)
    {
        json_t *index = json_object_get(v, "index");
        if (!json_object_get(v, "mig_instances")) {
            continue;
        }
        json_int_t k = json_is_integer(index) ? json_integer_value(index) : -1;
        if (k < 0 || k >= n->ngpus) {
            return gp_diag_set(d, GP_EINVAL, "gpus[%zu].index: no such GPU on node %s", i, n->name);
        }
        char path[32];
        snprintf(path, sizeof(path), "gpus[%zu]", i);
        int rc = ctl_mig_read(v, path, &next.gpus[k], d);
        if (rc < 0) {
            return rc;
        }
        changed |= !same_instances(&next.gpus[k], &n->gpus[k]);
    }
    if (!changed) {
        return 0;
    }
    int rc = ctl_node_commit(g, n, &next, d);
    return rc < 0 ? rc : 1;
}
