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

/* Sets the instances list[0..n) on out (out's model and mig already read), checked against the
 * GPU: none on a GPU not in MIG mode, and (for a model gpupool partitions) a layout its geometry
 * allows. Nothing changes on an error. */
static int mig_set(const gp_wire_mig *list, int n, const char *path, ctl_gpu_info *out, gp_diag *d)
{
    if (n > 0 && !out->mig) {
        return gp_diag_set(d, GP_EINVAL, "%s.mig_instances: the GPU is not in MIG mode", path);
    }
    ctl_gpu_info next = *out;
    next.nmig = n;
    for (int k = 0; k < n; k++) {
        ctl_mig_inst *m = &next.migs[k];
        snprintf(m->profile, sizeof(m->profile), "%s", list[k].profile);
        m->start = list[k].start;
        m->idle = list[k].idle;
        m->held = list[k].held;
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

int ctl_mig_read(json_t *g, const char *path, ctl_gpu_info *out, gp_diag *d)
{
    gp_wire_mig list[GP_MIG_MEMORY_SLICES];
    int n;
    bool given;
    int rc = gp_wire_mig_decode(g, path, list, &n, &given, d);
    return rc != 0 || !given ? rc : mig_set(list, n, path, out, d);
}

json_t *ctl_mig_doc(const ctl_gpu_info *g)
{
    gp_wire_mig list[GP_MIG_MEMORY_SLICES];
    for (int k = 0; k < g->nmig; k++) {
        const ctl_mig_inst *m = &g->migs[k];
        list[k] = (gp_wire_mig){.start = m->start, .idle = m->idle, .held = m->held};
        snprintf(list[k].profile, sizeof(list[k].profile), "%s", m->profile);
    }
    return gp_wire_mig_encode(list, g->nmig);
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

/* The instances of hb's GPUs set on next (a copy of n): 1 when some differ from n's, 0 when
 * none do, or GP_EINVAL naming the field. */
static int mig_next(const ctl_node *n, const gp_wire_heartbeat *hb, ctl_node *next, gp_diag *d)
{
    bool changed = false;
    for (size_t i = 0; i < hb->ngpus; i++) {
        const gp_wire_gpu *w = &hb->gpus[i];
        if (!w->has_mig) {
            continue;
        }
        if (w->index >= n->ngpus) { /* gp_wire_heartbeat_check_node refused it already */
            return gp_diag_set(d, GP_EINVAL, "gpus[%zu].index: no such GPU on node %s", i, n->name);
        }
        char path[32];
        snprintf(path, sizeof(path), "gpus[%zu]", i);
        int rc = mig_set(w->mig, w->nmig, path, &next->gpus[w->index], d);
        if (rc < 0) {
            return rc;
        }
        changed |= !same_instances(&next->gpus[w->index], &n->gpus[w->index]);
    }
    return changed;
}

bool ctl_mig_report_writes(const ctl_node *n, const gp_wire_heartbeat *hb)
{
    bool any = false;
    for (size_t i = 0; i < hb->ngpus && !any; i++) {
        any = hb->gpus[i].has_mig;
    }
    if (!any) {
        return false;
    }
    ctl_node next = *n;
    gp_diag d;
    gp_diag_clear(&d);
    return mig_next(n, hb, &next, &d) != 0; /* a change, or an error the committer reports */
}

int ctl_mig_report(gpupoold *g, ctl_node *n, const gp_wire_heartbeat *hb, gp_diag *d)
{
    ctl_node next = *n;
    int changed = mig_next(n, hb, &next, d);
    if (changed <= 0) {
        return changed;
    }
    int rc = ctl_node_commit(g, n, &next, d);
    return rc < 0 ? rc : 1;
}
