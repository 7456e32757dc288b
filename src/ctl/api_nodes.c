/*
 * /v1/nodes: registration (answers the node's own new agent and control tokens; a join token
 * registers only a new name, see may_register), heartbeats
 * (replica states and GPU readings in, the node's desired replicas out; see desired.c),
 * reading, and cordon, drain and uncordon.
 *
 * Liveness is memory only: a heartbeat refreshes it, and a node silent for longer than
 * nodes.heartbeat_timeout is NotReady and gets no new work. After a controller restart every
 * node starts with a fresh grace period.
 *
 * Replica reports carry the allocation epoch of the placement they run; a report with another
 * epoch is from a superseded placement and is ignored.
 *
 * A heartbeat that changes nothing the store keeps (beat_needs_store) is applied on the request's
 * thread under the state lock and answered at once (ctl_run_memory); one that does goes through
 * the committer and is answered after its commit. Both apply it with the same beat_apply.
 */
#include "ctl/api.h"
#include "ctl/doc.h"
#include "net/wire.h"
#include "ctl/history.h"
#include "ctl/idle.h"
#include "ctl/meter.h"
#include "ctl/recovery.h"

#include "base/log.h"
#include "net/token.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- documents ---- */

/* A share of a GPU: what it takes, and for a MIG instance its profile and place (slices; shown to
 * every tenant, like the share itself: they tell nothing of the job). */
static json_t *holder_doc(ctl_state *st, const ctl_job *j, int replica, const gp_gpu_share *s,
                          int64_t scope)
{
    json_t *doc;
    if (scope && j->tenant_id != scope) {
        doc = json_pack("{s:i, s:I}", "milli", s->milli, "memory_mib", (json_int_t)s->mem_mib);
    } else {
        const ctl_tenant *t = ctl_tenant_by_id(st, j->tenant_id);
        doc = json_pack("{s:I, s:s, s:s, s:i, s:i, s:I}", "job", (json_int_t)j->id, "name", j->name,
                        "tenant", t ? t->lim.name : "?", "replica", replica, "milli", s->milli,
                        "memory_mib", (json_int_t)s->mem_mib);
    }
    if (doc && s->mig_start >= 0) {
        json_object_set_new(doc, "mig_profile", json_string(j->spec.mig_profile));
        json_object_set_new(doc, "mig_start", json_integer(s->mig_start));
        json_object_set_new(doc, "mig_memory_slices", json_integer(s->mig_memory_slices));
        json_object_set_new(doc, "mig_compute_slices", json_integer(s->mig_compute_slices));
    }
    return doc;
}

/* Adds the holder documents of replica r of j to all["node id/gpu"]. */
static void add_holders(ctl_state *st, json_t *all, const ctl_job *j, int r, int64_t scope)
{
    const ctl_replica *rep = &j->replicas[r];
    char key[32];
    for (int s = 0; s < rep->a.nshares; s++) {
        snprintf(key, sizeof(key), "%lld/%d", (long long)rep->node_id, rep->a.shares[s].gpu);
        json_t *list = json_object_get(all, key);
        if (!list) {
            list = json_array();
            json_object_set_new(all, key, list);
        }
        json_array_append_new(list, holder_doc(st, j, r, &rep->a.shares[s], scope));
    }
}

/* holders["node id/gpu"]: arrays of holder documents, from one pass over the jobs. */
static json_t *collect_holders(ctl_state *st, int64_t scope)
{
    json_t *all = json_object();
    for (int i = 0; i < st->njobs; i++) {
        const ctl_job *j = st->jobs[i];
        for (int r = 0; j->replicas && r < j->spec.replicas; r++) {
            add_holders(st, all, j, r, scope);
        }
    }
    return all;
}

/* The same for one node's replicas only (the index of held replicas); every job's when the
 * index cannot be built. */
static json_t *collect_node_holders(ctl_state *st, int64_t node_id, int64_t scope)
{
    const ctl_held *held;
    int nheld = ctl_state_held_on(st, node_id, &held);
    if (nheld < 0) {
        return collect_holders(st, scope);
    }
    json_t *all = json_object();
    for (int k = 0; k < nheld; k++) {
        add_holders(st, all, held[k].job, held[k].replica, scope);
    }
    return all;
}

static const char *node_state(const ctl_node *n)
{
    return n->ready ? "Ready" : "NotReady";
}

/* staff: the caller may see every tenant's (the image cache's references). */
static json_t *node_doc(ctl_state *st, const ctl_node *n, json_t *holders, bool staff)
{
    json_t *doc = ctl_node_doc(n);
    json_object_del(doc, "control_token"); /* a secret between the controller and the agent */
    if (!json_object_get(doc, "taints")) {
        json_object_set_new(doc, "taints", json_array()); /* always there for clients */
    }
    json_t *gpus = json_object_get(doc, "gpus");
    int64_t alloc_milli = 0;
    for (int i = 0; i < n->ngpus; i++) {
        const gp_gpu *g = gp_cluster_gpu(st->cluster, n->cl, i);
        json_t *gd = json_array_get(gpus, (size_t)i);
        int64_t used =
            g->mode == GP_GPU_MIG ? (int64_t)g->mig_compute_used * 1000 / 7 : 1000 - g->milli_free;
        alloc_milli += used;
        char key[32];
        snprintf(key, sizeof(key), "%lld/%d", (long long)n->id, i);
        json_t *h = json_object_get(holders, key);
        json_object_set_new(gd, "allocated_milli", json_integer(used));
        json_object_set_new(gd, "allocated_memory_mib",
                            json_integer(g->mode == GP_GPU_MIG ? 0 : g->mem_mib - g->mem_free_mib));
        json_object_set_new(gd, "mig_mode", json_boolean(g->mode == GP_GPU_MIG));
        json_object_set_new(gd, "utilization",
                            n->gpus[i].util < 0 ? json_null() : json_real(n->gpus[i].util));
        json_object_set_new(gd, "holders", h ? json_incref(h) : json_array());
        json_object_set_new(gd, "readings",
                            n->gpus[i].readings ? json_incref(n->gpus[i].readings) : json_object());
        json_object_set_new(gd, "xid_errors", json_integer(n->gpus[i].xids));
        json_object_set_new(gd, "last_xid", json_integer(n->gpus[i].last_xid));
        json_object_set_new(gd, "spare", json_boolean(n->gpus[i].spare));
    }
    const gp_node *cn = gp_cluster_node(st->cluster, n->cl);
    json_object_set_new(doc, "state", json_string(node_state(n)));
    json_object_set_new(doc, "schedulable", json_boolean(cn->schedulable));
    json_object_set_new(doc, "heartbeat_ms", json_integer(n->heartbeat_ms));
    json_object_set_new(doc, "fenced", json_boolean(n->fenced));
    json_object_set_new(doc, "unhealthy",
                        n->unhealthy[0] ? json_string(n->unhealthy) : json_null());
    json_object_set_new(doc, "health", n->health ? json_incref(n->health) : json_null());
    json_object_set_new(doc, "allocated",
                        json_pack("{s:o, s:I, s:I}", "gpus", doc_gpus_value(alloc_milli),
                                  "cpu_milli", (json_int_t)(cn->cpu_milli - cn->cpu_free),
                                  "memory_mib", (json_int_t)(cn->memory_mib - cn->mem_free)));
    ctl_images_show(n, staff, doc);
    return doc;
}

json_t *api_node_doc(ctl_state *st, const ctl_node *n, int64_t scope)
{
    json_t *holders = collect_node_holders(st, n->id, scope);
    json_t *doc = node_doc(st, n, holders, scope == 0);
    json_decref(holders);
    return doc;
}

void api_nodes_list(api_req *rq)
{
    ctl_read_lock(rq->g);
    ctl_state *st = &rq->g->st;
    json_t *holders = collect_holders(st, api_scope(rq));
    json_t *items = json_array();
    for (int i = 0; i < st->nnodes; i++) {
        json_array_append_new(items, node_doc(st, &st->nodes[i], holders, api_scope(rq) == 0));
    }
    ctl_read_unlock(rq->g);
    json_decref(holders);
    api_reply(rq, 200, json_pack("{s:o}", "items", items));
}

void api_nodes_get(api_req *rq)
{
    ctl_read_lock(rq->g);
    ctl_node *n = ctl_node_by_name(&rq->g->st, rq->params[0]);
    json_t *doc = n ? api_node_doc(&rq->g->st, n, api_scope(rq)) : NULL;
    ctl_read_unlock(rq->g);
    if (!doc) {
        api_error(rq, GP_ENOENT, "node %s: not found", rq->params[0]);
        return;
    }
    api_reply(rq, 200, doc);
}

/* ---- registration ---- */

typedef struct register_arg {
    json_t *doc;
    char name[GP_NAME_MAX];
    char token[128];
    ctl_role role;        /* the caller's: join, agent or admin */
    int64_t caller_node;  /* an agent's own node */
    int64_t caller_token; /* an agent's token (kept until the new one is used) */
    int64_t new_token;    /* the token this registration made */
} register_arg;

int ctl_node_store(gpupoold *g, ctl_node *n, gp_diag *d)
{
    json_t *doc = ctl_node_doc(n);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    int rc = text ? gp_store_obj_put(g->store, GP_OBJ_NODE, &n->id, n->name, text, d)
                  : gp_diag_set(d, GP_ENOMEM, "out of memory");
    free(text);
    return rc;
}

static bool holds_on(ctl_state *st, int64_t node_id)
{
    const ctl_held *h;
    return ctl_state_held_on(st, node_id, &h) != 0; /* out of memory counts as holding */
}

/* Whether the inventory (CPU, memory, GPUs) of doc equals the stored one of n. */
static bool same_inventory(const ctl_node *n, json_t *doc)
{
    json_t *mine = ctl_node_doc(n), *theirs = json_deep_copy(json_object_get(doc, "gpus"));
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(mine, "gpus"), i, v)
    {
        json_object_del(v, "drained"); /* kept by the controller, not inventory */
        json_object_del(v, "faults");
        json_object_del(v, "mig_instances"); /* what the agent reports as it changes */
    }
    json_array_foreach(theirs, i, v)
    {
        json_object_del(v, "mig_instances");
    }
    bool same = json_equal(json_object_get(mine, "gpus"), theirs) &&
                json_equal(json_object_get(mine, "cpu_milli"), json_object_get(doc, "cpu_milli")) &&
                json_equal(json_object_get(mine, "memory_mib"), json_object_get(doc, "memory_mib"));
    json_decref(mine);
    json_decref(theirs);
    return same;
}

/* n's document, and those of every node sharing a job with n, may have changed. */
static void desired_moved_with(ctl_state *st, ctl_node *n)
{
    ctl_node_desired_changed(st, n);
    const ctl_held *held;
    int nheld = ctl_state_held_on(st, n->id, &held);
    if (nheld < 0) { /* out of memory: the index is unknown, so every node */
        for (int i = 0; i < st->nnodes; i++) {
            ctl_node_desired_changed(st, &st->nodes[i]);
        }
        return;
    }
    for (int k = 0; k < nheld; k++) {
        if (held[k].job->spec.replicas > 1) {
            ctl_job_desired_changed(st, held[k].job);
        }
    }
}

/* What the controller keeps about a node and its GPUs (drains, fault history, a scheduled drain,
 * the health-check sequence) carried from old into normal, the document a registration that
 * leaves the inventory as it was stores: registering again must not put a drained GPU back in
 * service at the next start. */
static void keep_controller_fields(const ctl_node *old, json_t *normal)
{
    static const char *const node_keys[] = {"drain_deadline_ms", "check_seq"};
    static const char *const gpu_keys[] = {"drained", "faults"};
    json_t *mine = ctl_node_doc(old);
    for (size_t k = 0; k < sizeof(node_keys) / sizeof(node_keys[0]); k++) {
        json_t *v = json_object_get(mine, node_keys[k]);
        if (v) {
            json_object_set(normal, node_keys[k], v);
        }
    }
    json_t *gpus = json_object_get(normal, "gpus");
    size_t i;
    json_t *gd;
    json_array_foreach(json_object_get(mine, "gpus"), i, gd)
    {
        for (size_t k = 0; k < sizeof(gpu_keys) / sizeof(gpu_keys[0]); k++) {
            json_t *v = json_object_get(gd, gpu_keys[k]);
            if (v && json_array_get(gpus, i)) {
                json_object_set(json_array_get(gpus, i), gpu_keys[k], v);
            }
        }
    }
    json_decref(mine);
}

/* Who may register the node name: a join token only a name not yet known (it proves nothing
 * about a node, so a known one is re-admitted only by an admin or by the node's own agent
 * token); an agent token only its own node; an admin any. */
static int may_register(const gpupoold *g, const register_arg *a, const ctl_node *old, gp_diag *d)
{
    if (a->role == CTL_ROLE_JOIN && old) {
        return gp_diag_set(d, GP_EEXIST,
                           "node %s: already registered; re-admitting a known node needs an admin "
                           "token or the node's own agent token",
                           a->name);
    }
    if (a->role == CTL_ROLE_AGENT && (!old || old->id != a->caller_node)) {
        const ctl_node *own = ctl_node_by_id((ctl_state *)&g->st, a->caller_node);
        return gp_diag_set(d, GP_EPERM,
                           "node %s: an agent token registers only its own node (this one is "
                           "node %s's)",
                           a->name, own ? own->name : "?");
    }
    return 0;
}

static int register_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    register_arg *a = op->arg;
    ctl_state *st = &g->st;
    ctl_node *old = ctl_node_by_name(st, a->name);
    int allowed = may_register(g, a, old, d);
    if (allowed < 0) {
        return allowed;
    }
    int64_t now = ctl_now_ms();
    json_object_set_new(a->doc, "registered_ms", json_integer(now));
    char control[64];
    if (gp_token_generate("gpc", control, sizeof(control)) < 0) {
        return gp_diag_set(d, GP_EIO, "cannot generate the node's control token");
    }
    json_object_set_new(a->doc, "control_token", json_string(control));
    /* What the controller keeps about a node is not the registration's to set. */
    json_object_del(a->doc, "drain_deadline_ms");
    json_object_del(a->doc, "check_seq");
    json_object_del(a->doc, "taints"); /* an operator's (node_taints.c): kept */
    if (old && old->ntaints > 0) {
        json_object_set_new(a->doc, "taints", ctl_taints_doc(old->taints, old->ntaints));
    }
    size_t gi;
    json_t *gv;
    json_array_foreach(json_object_get(a->doc, "gpus"), gi, gv)
    {
        json_object_del(gv, "drained");
        json_object_del(gv, "faults");
    }
    if (old) {
        json_object_set_new(a->doc, "cordoned", json_boolean(old->cordoned));
        json_object_set_new(a->doc, "draining", json_boolean(old->draining));
    }
    /* Validate by building the node on a scratch state sharing nothing; its document is the
     * normal form, so equal inventories compare equal. */
    ctl_state scratch;
    memset(&scratch, 0, sizeof(scratch));
    scratch.cluster = gp_cluster_new();
    int rc = scratch.cluster ? ctl_state_add_node(&scratch, 0, a->name, a->doc, d)
                             : gp_diag_set(d, GP_ENOMEM, "out of memory");
    json_t *normal = rc == 0 ? ctl_node_doc(&scratch.nodes[0]) : NULL;
    ctl_state_clear(&scratch);
    if (rc < 0) {
        return rc;
    }
    bool changed = old && !same_inventory(old, normal);
    if (changed && holds_on(st, old->id)) {
        json_decref(normal);
        return gp_diag_set(d, GP_ESTATE,
                           "node %s: its GPUs changed while jobs hold them; drain it first",
                           a->name);
    }
    if (old && !changed) {
        keep_controller_fields(old, normal);
    }
    int64_t id = old ? old->id : 0;
    char *text = json_dumps(normal, JSON_COMPACT);
    rc = text ? gp_store_obj_put(g->store, GP_OBJ_NODE, &id, a->name, text, d)
              : gp_diag_set(d, GP_ENOMEM, "out of memory");
    free(text);
    if (rc == 0) {
        char secret[128];
        rc = ctl_token_create(g, a->name, CTL_ROLE_AGENT, 0, id, 0, secret, sizeof(secret), d);
        snprintf(a->token, sizeof(a->token), "%s", secret);
        op->dirty = true; /* the new token is in memory: a later failure reloads */
    }
    if (rc == 0) {
        /* Every older credential dies now, but the one the node's own agent registered with: it
         * stays until the agent uses the new one (beat_run), so an agent that dies before saving
         * its new token comes back with the old one instead of being locked out. */
        a->new_token = g->st.tokens[g->st.ntokens - 1].id;
        rc = ctl_tokens_retire_agent(g, id, a->caller_token, a->new_token, d);
    }
    if (rc == 0 && (!old || changed)) {
        if (old) {
            gp_cluster_set_schedulable(st->cluster, old->cl, false);
            ctl_node_fini(old);
            *old = st->nodes[--st->nnodes];
            ctl_state_nodes_moved(st);
        }
        rc = ctl_state_add_node(st, id, a->name, normal, d);
    } else if (rc == 0) {
        snprintf(old->address, sizeof(old->address), "%s",
                 json_string_value(json_object_get(normal, "address")));
        snprintf(old->control_token, sizeof(old->control_token), "%s", control);
        old->registered_ms = now; /* as stored */
        json_decref(old->labels);
        old->labels = json_deep_copy(json_object_get(normal, "labels"));
        ctl_node_set_runtime(st, old, json_object_get(normal, "runtime"));
        const char *k;
        json_t *v;
        json_object_foreach(old->labels, k, v)
        {
            gp_cluster_set_label(st->cluster, old->cl, k, json_string_value(v));
        }
        json_t *gpus = json_object_get(normal, "gpus");
        for (int i = 0; rc == 0 && i < old->ngpus; i++) {
            char path[32];
            snprintf(path, sizeof(path), "gpus[%d]", i);
            rc = ctl_mig_read(json_array_get(gpus, (size_t)i), path, &old->gpus[i], d);
        }
        ctl_node_update_gpus(st, old); /* checked on the scratch state: cannot fail */
    }
    json_decref(normal);
    ctl_node *n = rc == 0 ? ctl_node_by_name(st, a->name) : NULL;
    if (n) {
        /* A new address changes the gang documents naming this node, here and on the nodes
         * sharing its jobs; a replaced node starts with a new version anyway. */
        desired_moved_with(st, n);
        n->ready = true;
        n->heartbeat_ms = now;
        n->agent_token_id = a->new_token;
        n->older_agent_tokens = a->caller_token != 0;
        ctl_node_update_schedulable(st, n);
        op->status = old ? 200 : 201;
        op->kick = op->node_kick = true; /* a node's own report (ctl_cycle_due_ms) */
        op->result = json_pack("{s:o, s:s, s:s}", "node", api_node_doc(st, n, 0), "token", a->token,
                               "control_token", control);
    }
    return rc;
}

void api_nodes_register(api_req *rq)
{
    register_arg a;
    memset(&a, 0, sizeof(a));
    a.role = rq->who.role;
    a.caller_node = rq->who.role == CTL_ROLE_AGENT ? rq->who.node_id : 0;
    a.caller_token = rq->who.role == CTL_ROLE_AGENT ? rq->who.token_id : 0;
    a.doc = api_body(rq);
    if (!a.doc) {
        return;
    }
    gp_diag d;
    gp_diag_clear(&d);
    if (doc_name(a.doc, "", "name", a.name, sizeof(a.name), &d) < 0 || !a.name[0]) {
        if (!d.code) {
            gp_diag_set(&d, GP_EINVAL, "name: required");
        }
        api_diag(rq, &d);
        json_decref(a.doc);
        return;
    }
    ctl_op op = {.run = register_run, .arg = &a};
    api_run(rq, &op);
    json_decref(a.doc);
}

/* ---- heartbeat ---- */

typedef struct beat_arg {
    const char *node;
    int64_t caller_node;  /* 0 = admin */
    int64_t caller_token; /* the agent's token */
    gp_wire_heartbeat hb; /* the heartbeat, decoded and validated (net/wire.h) */
    json_t *images;       /* the image cache in normal form (ctl_images_read); NULL: not reported */
    int64_t images_bytes;
    char node_buf[sizeof(((api_req *)0)->param_buf[0])]; /* node points here */
} beat_arg;

static void beat_arg_free(void *arg)
{
    beat_arg *a = arg;
    json_decref(a->images);
    gp_wire_heartbeat_fini(&a->hb);
    free(a);
}

/* A replica reported Failed: the job fails, or restarts by its restart policy. With a reason,
 * the node stopped the replica for a reason of its own (its GPU memory watch), or could not pull
 * its image: the job fails with it, and is not restarted (it would only do the same again). */
static int replica_failed(gpupoold *g, ctl_job *j, int replica, int exit_code, const char *reason,
                          gp_diag *d)
{
    if (!reason || !reason[0]) {
        return ctl_job_finish(g, j, false, replica, exit_code, NULL, d);
    }
    char why[240];
    if (strncmp(reason, CTL_LIVENESS_PREFIX, strlen(CTL_LIVENESS_PREFIX)) == 0) {
        /* its liveness probe failed: restarted by its restart policy (services.h, agent) */
        snprintf(why, sizeof(why), "replica %d: %.200s", replica, reason);
        int rc = ctl_job_event(g, j->id, "ReplicaUnhealthy", why, d);
        if (rc == 0 && j->owner) {
            char msg[300];
            snprintf(msg, sizeof(msg), "%.63s: %.230s", j->name, why);
            rc = ctl_job_event(g, j->owner, "ReplicaUnhealthy", msg, d);
        }
        return rc < 0 ? rc : ctl_job_fail(g, j, why, d);
    }
    if (ctl_pull_failed(exit_code, reason)) {
        ctl_pull_failed_reason(j, replica, reason, why, sizeof(why));
    } else {
        snprintf(why, sizeof(why), "replica %d: %.200s", replica, reason);
    }
    return ctl_job_finish(g, j, false, replica, exit_code, why, d);
}

/* The replica report w is about (its job in *jp), or NULL when w is stale: a superseded
 * placement, or a replica of another node. */
static ctl_replica *report_target(ctl_state *st, const ctl_node *n, const gp_wire_replica *w,
                                  ctl_job **jp)
{
    ctl_job *j = ctl_job_by_id(st, w->job);
    if (!j || !j->replicas || w->replica < 0 || w->replica >= j->spec.replicas ||
        j->replicas[w->replica].epoch != w->epoch || j->replicas[w->replica].node_id != n->id) {
        return NULL;
    }
    *jp = j;
    return &j->replicas[w->replica];
}

/* Whether report w would change something the store keeps (report_one at now): a pull's event,
 * a hung or idle replica acted on, a new state. Changes nothing. */
static bool report_writes(gpupoold *g, const ctl_node *n, const gp_wire_replica *w, int64_t now)
{
    ctl_job *j = NULL;
    const ctl_replica *r = report_target(&g->st, n, w, &j);
    if (!r) {
        return false; /* stale: counted for the fence only */
    }
    bool running = w->state == GP_WIRE_RUNNING, ok = w->state == GP_WIRE_SUCCEEDED;
    bool pull_failed = !running && !ok && ctl_pull_failed(w->exit_code, w->reason);
    if (ctl_pull_report_writes(j, w->replica, w, pull_failed, now)) {
        return true;
    }
    if (running && w->pulling) {
        return false; /* not started: nothing else of the report is read */
    }
    if (running && w->idle_ms >= 0 && ctl_recovery_idle_writes(j, w->replica, w->idle_ms)) {
        return true;
    }
    if (running && ctl_idle_report_writes(g, j, w->replica, w->util, now)) {
        return true;
    }
    return strcmp(r->state, gp_wire_state_name(w->state)) != 0;
}

/* One replica report, decoded (w), at now. */
static int report_one(gpupoold *g, ctl_node *n, const gp_wire_replica *w, int64_t now,
                      bool *changed, int *stale_running, gp_diag *d)
{
    int64_t idle_ms = w->idle_ms;
    int replica = w->replica, exit_code = w->exit_code, util = w->util;
    const char *state = gp_wire_state_name(w->state);
    const char *reason = w->reason[0] ? w->reason : NULL;
    bool running = w->state == GP_WIRE_RUNNING, ok = w->state == GP_WIRE_SUCCEEDED;
    ctl_job *j = NULL;
    ctl_replica *r = report_target(&g->st, n, w, &j);
    if (!r) {
        *stale_running += running; /* stale: a superseded placement */
        return 0;
    }
    bool pull_failed = !running && !ok && ctl_pull_failed(exit_code, reason);
    int pull = ctl_pull_report(g, j, replica, w, pull_failed, now, d);
    if (pull != 0) {
        return pull < 0 ? pull : 0; /* pulling its image: not started, not idle, not in use */
    }
    if (running) { /* memory only: a service's readiness and metric (service.h) */
        r->ready = w->ready == 1;
        r->has_metric = w->has_metric;
        r->metric = w->metric;
    }
    if (running && idle_ms >= 0) {
        int rc = ctl_recovery_idle(g, j, replica, idle_ms, d);
        if (rc < 0 || !j->replicas) {
            *changed |= !j->replicas;
            return rc; /* restarted as hung */
        }
    }
    if (running) {
        ctl_meter_report(g, j, replica, util, now);
        ctl_history_replica(g, j, replica, n, w, now);
        int rc = ctl_idle_report(g, j, replica, util, now, d);
        if (rc < 0 || !j->replicas) {
            *changed |= !j->replicas;
            return rc; /* stopped for being idle */
        }
    }
    if (strcmp(r->state, state) == 0) {
        return 0;
    }
    *changed = true;
    if (!running && !ok) {
        return replica_failed(g, j, replica, exit_code, reason, d);
    }
    bool all_done = ok;
    for (int i = 0; all_done && i < j->spec.replicas; i++) {
        all_done = i == replica || strcmp(j->replicas[i].state, "Succeeded") == 0;
    }
    if (all_done) {
        return ctl_job_finish(g, j, true, replica, 0, NULL, d);
    }
    /* Store first; memory changes only once the store has taken it. */
    ctl_replica saved = *r;
    snprintf(r->state, sizeof(r->state), "%s", state);
    r->exit_code = exit_code;
    ctl_job_state to = j->state == CTL_SCHEDULED ? CTL_RUNNING : j->state;
    int rc = ctl_job_store(g, j, to, d);
    if (rc == 0 && to != j->state) {
        rc = ctl_job_event(g, j->id, "Running", "replica started", d);
    }
    if (rc < 0) {
        *r = saved;
        return rc;
    }
    ctl_job_set_state(&g->st, j, to);
    return 0;
}

/* The agent's GPU readings (indices checked by check_beat): utilisation feeds the scheduler;
 * the rest is shown with the node. */
static void read_gpus(ctl_node *n, const gp_wire_heartbeat *hb)
{
    for (size_t i = 0; i < hb->ngpus; i++) {
        gp_wire_gpu g = hb->gpus[i];
        g.has_mig = false; /* node_mig.c */
        json_t *readings = gp_wire_gpu_encode(&g);
        if (!readings) {
            continue;
        }
        json_object_del(readings, "index");
        n->gpus[g.index].util = g.utilization;
        json_decref(n->gpus[g.index].readings);
        n->gpus[g.index].readings = readings;
    }
}

/* What only the registered node can judge: GPU indices and memory. Runs before anything of the
 * heartbeat is applied, so a refused one changes nothing. */
static int check_beat(const ctl_node *n, const gp_wire_heartbeat *hb, gp_diag *d)
{
    int64_t mem[GP_MAX_GPUS_PER_NODE];
    for (int i = 0; i < n->ngpus; i++) {
        mem[i] = n->gpus[i].mem_mib;
    }
    gp_wire_node_gpus node = {.ngpus = n->ngpus, .memory_mib = mem};
    return gp_wire_heartbeat_check_node(hb, &node, d);
}

/* The node heartbeat a is from, when its caller may send it (an agent only its own node's) and
 * it fits the node (check_beat); else NULL with d set. Changes nothing. */
static ctl_node *beat_node(ctl_state *st, const beat_arg *a, gp_diag *d)
{
    ctl_node *n = ctl_node_by_name(st, a->node);
    if (!n || (a->caller_node && n->id != a->caller_node)) {
        gp_diag_set(d, GP_ENOENT, "node %s: not found", a->node);
        return NULL;
    }
    return check_beat(n, &a->hb, d) < 0 ? NULL : n;
}

/* Whether heartbeat a of node n (beat_node's) at now changes something the store keeps, so that
 * it must go through the committer: the agent's older token to retire, GPU instances, XIDs (all
 * of them, though most are only counted: they are rare), a health check's drain or return, or a
 * replica report that writes (report_writes). Otherwise beat_apply changes memory only: replica
 * readiness, metering, history and idle clocks, GPU readings, the image cache, liveness, the
 * fence and the node-wide health verdict. Changes nothing. */
static bool beat_needs_store(gpupoold *g, const ctl_node *n, const beat_arg *a, int64_t now)
{
    if ((n->older_agent_tokens && a->caller_token == n->agent_token_id) || a->hb.nevents > 0 ||
        ctl_mig_report_writes(n, &a->hb) ||
        ctl_recovery_health_writes(n, a->hb.has_health ? &a->hb.health : NULL)) {
        return true;
    }
    for (size_t i = 0; i < a->hb.nreplicas; i++) {
        if (report_writes(g, n, &a->hb.replicas[i], now)) {
            return true;
        }
    }
    return false;
}

/* Applies heartbeat a to n (beat_node's) at now; *kick: what may be placed changed (a cycle is
 * due); *replicas: a replica's state changed (a job ended, failed or restarts: a cycle that may
 * not wait, ctl_cycle_due_ms). In the committer's transaction; or under the state lock alone when
 * beat_needs_store is false, where it changes memory only. */
static int beat_apply(gpupoold *g, ctl_node *n, const beat_arg *a, int64_t now, bool *kick,
                      bool *replicas, gp_diag *d)
{
    if (n->older_agent_tokens && a->caller_token == n->agent_token_id) {
        /* the agent holds its newest credential: the one it re-registered with dies */
        int rc = ctl_tokens_retire_agent(g, n->id, n->agent_token_id, 0, d);
        if (rc < 0) {
            return rc;
        }
        n->older_agent_tokens = false;
    }
    int migs = ctl_mig_report(g, n, &a->hb, d);
    if (migs < 0) {
        return migs;
    }
    bool changed = false;
    int stale_running = 0;
    for (size_t i = 0; i < a->hb.nreplicas; i++) {
        int rc = report_one(g, n, &a->hb.replicas[i], now, &changed, &stale_running, d);
        if (rc < 0) {
            return rc;
        }
    }
    read_gpus(n, &a->hb);
    if (a->images) {
        json_decref(n->images);
        n->images = json_incref(a->images);
        n->images_bytes = a->images_bytes;
    }
    int xids = ctl_recovery_xids(g, n, a->hb.events, a->hb.nevents, d);
    int health =
        xids < 0 ? xids : ctl_recovery_health(g, n, a->hb.has_health ? &a->hb.health : NULL, d);
    if (health < 0) {
        return health;
    }
    if (!n->ready) {
        GP_LOG(GP_LOG_INFO, "nodes", "node=%s state=Ready", n->name);
        *kick = true;
    }
    n->ready = true;
    n->heartbeat_ms = now;
    bool unfenced = ctl_recovery_fence(g, n, stale_running);
    ctl_node_update_schedulable(&g->st, n);
    *kick |= migs > 0 || changed || xids || health || unfenced;
    *replicas = changed;
    return 0;
}

/* The answer to a heartbeat of n: its desired document. Secrets (registry credentials) go to the
 * node's own agent only. */
static int beat_answer(ctl_state *st, ctl_node *n, const beat_arg *a, json_t **out, gp_diag *d)
{
    int rc = api_desired_answer(st, n, a->caller_node != 0, out);
    return rc < 0 ? gp_diag_set(d, rc, "out of memory") : 0;
}

static int beat_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    beat_arg *a = op->arg;
    ctl_node *n = beat_node(&g->st, a, d);
    if (!n) {
        return d->code < 0 ? d->code : GP_EINTERNAL;
    }
    bool replicas = false;
    int rc = beat_apply(g, n, a, ctl_now_ms(), &op->kick, &replicas, d);
    op->node_kick = !replicas; /* the node's own news only: it may wait (ctl_cycle_due_ms) */
    return rc < 0 ? rc : beat_answer(&g->st, n, a, &op->result, d);
}

/* A heartbeat applied without the committer (ctl_run_memory): the answer, or the error. */
typedef struct beat_mem {
    beat_arg *a;
    json_t *answer;
    int rc;
    gp_diag d;
} beat_mem;

/* Applies the heartbeat when it changes memory only; -1 (nothing changed) when it must go
 * through the committer, as must one beat_node refuses (its error is the committer's). */
static int beat_memory(gpupoold *g, void *arg)
{
    beat_mem *m = arg;
    int64_t now = ctl_now_ms();
    ctl_node *n = beat_node(&g->st, m->a, &m->d);
    if (!n || beat_needs_store(g, n, m->a, now)) {
        return -1;
    }
    bool kick = false, replicas = false; /* no replica changes here: beat_needs_store */
    m->rc = beat_apply(g, n, m->a, now, &kick, &replicas, &m->d);
    m->rc = m->rc < 0 ? m->rc : beat_answer(&g->st, n, m->a, &m->answer, &m->d);
    return kick;
}

void api_nodes_heartbeat(api_req *rq)
{
    beat_arg *a = calloc(1, sizeof(*a));
    if (!a) {
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    snprintf(a->node_buf, sizeof(a->node_buf), "%s", rq->params[0]);
    a->node = a->node_buf;
    a->caller_node = rq->who.role == CTL_ROLE_AGENT ? rq->who.node_id : 0;
    a->caller_token = rq->who.role == CTL_ROLE_AGENT ? rq->who.token_id : 0;
    json_t *doc = api_body(rq);
    if (!doc) {
        free(a);
        return;
    }
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_wire_heartbeat_decode(doc, &a->hb, &d);
    json_decref(doc); /* only the decoded values are used from here on */
    if (rc == 0 && a->hb.has_images) {
        rc = ctl_images_read(a->hb.images, a->hb.nimages, &a->images, &a->images_bytes, &d);
    }
    if (rc < 0) {
        api_diag(rq, &d);
        beat_arg_free(a);
        return;
    }
    /* Most heartbeats change nothing the store keeps: applied here, answered at once. */
    beat_mem m = {.a = a};
    gp_diag_clear(&m.d);
    if (ctl_run_memory(rq->g, beat_memory, &m)) {
        atomic_fetch_add(&rq->g->metrics.heartbeats_memory, 1);
        beat_arg_free(a);
        if (m.rc < 0) {
            json_decref(m.answer);
            api_diag(rq, &m.d);
        } else {
            api_reply(rq, 200, m.answer);
        }
        return;
    }
    atomic_fetch_add(&rq->g->metrics.heartbeats_store, 1);
    /* the agent's thread is not held while the heartbeat waits for its commit */
    ctl_op op = {.run = beat_run};
    api_run_async(rq, &op, a, beat_arg_free);
}

/* ---- cordon, drain, uncordon ---- */

typedef struct cordon_arg {
    const char *node;
    bool cordon, drain;
    int64_t deadline_ms; /* drain: a maintenance deadline in the future; 0 = now */
    const char *who;
} cordon_arg;

static int cordon_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    cordon_arg *a = op->arg;
    ctl_node *n = ctl_node_by_name(&g->st, a->node);
    if (!n) {
        return gp_diag_set(d, GP_ENOENT, "node %s: not found", a->node);
    }
    bool later = a->drain && a->deadline_ms > ctl_now_ms();
    ctl_node next = *n;
    next.cordoned = a->cordon && !later;
    next.draining = a->drain && !later;
    next.drain_deadline_ms = later ? a->deadline_ms : 0;
    int rc = 0;
    if (a->drain && !later) {
        char cause[200];
        snprintf(cause, sizeof(cause), "requeued: node %s drained by %s", n->name, a->who);
        rc = ctl_node_end_jobs(g, n, -1, false, CTL_ACT_REQUEUE, cause, d);
    }
    rc = rc < 0 ? rc : ctl_node_commit(g, n, &next, d);
    if (rc < 0) {
        return rc;
    }
    gp_cluster_set_window(g->st.cluster, n->cl, -1); /* the next cycle sets it anew */
    GP_LOG(GP_LOG_INFO, "nodes", "node=%s cordoned=%d draining=%d deadline_ms=%lld by=%s", n->name,
           n->cordoned, n->draining, (long long)n->drain_deadline_ms, a->who);
    op->kick = true;
    op->result = api_node_doc(&g->st, n, 0);
    return 0;
}

static void cordon(api_req *rq, bool c, bool drain)
{
    cordon_arg a = {rq->params[0], c, drain, 0, rq->who.name};
    ctl_op op = {.run = cordon_run, .arg = &a};
    api_run(rq, &op);
}

void api_nodes_cordon(api_req *rq)
{
    cordon(rq, true, false);
}

/* An optional body: {"deadline_ms": T} (milliseconds since the epoch) or {"in_s": S}: drain at
 * that time (maintenance), taking until then only jobs whose max runtime ends before it. */
void api_nodes_drain(api_req *rq)
{
    static const char *const fields[] = {"deadline_ms", "in_s", NULL};
    cordon_arg a = {rq->params[0], true, true, 0, rq->who.name};
    if (rq->http->body_len > 0) {
        json_t *doc = api_body(rq);
        if (!doc) {
            return;
        }
        gp_diag d;
        gp_diag_clear(&d);
        int64_t in_s = 0;
        int rc = doc_check_fields(doc, "", fields, &d);
        rc = rc < 0 ? rc : doc_int(doc, "", "deadline_ms", 0, INT64_MAX / 2, &a.deadline_ms, &d);
        rc = rc < 0 ? rc : doc_int(doc, "", "in_s", 0, INT64_C(366) * 86400, &in_s, &d);
        if (rc == 0 && a.deadline_ms && in_s) {
            rc = gp_diag_set(&d, GP_EINVAL, "deadline_ms, in_s: give one of them");
        }
        json_decref(doc);
        if (rc < 0) {
            api_diag(rq, &d);
            return;
        }
        a.deadline_ms = in_s ? ctl_now_ms() + in_s * 1000 : a.deadline_ms;
    }
    ctl_op op = {.run = cordon_run, .arg = &a};
    api_run(rq, &op);
}

void api_nodes_uncordon(api_req *rq)
{
    cordon(rq, false, false);
}

/* ---- one GPU in and out of service; health checks ---- */

typedef enum gpu_verb { GPU_DRAIN, GPU_UNDRAIN, NODE_CHECK } gpu_verb;

typedef struct gpu_arg {
    const char *node;
    const char *gpu; /* NULL for NODE_CHECK */
    gpu_verb verb;
    const char *who;
    char reason[160];
} gpu_arg;

static int gpu_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    gpu_arg *a = op->arg;
    ctl_node *n = ctl_node_by_name(&g->st, a->node);
    if (!n) {
        return gp_diag_set(d, GP_ENOENT, "node %s: not found", a->node);
    }
    int gpu = -1;
    if (a->gpu) {
        char *end;
        long v = strtol(a->gpu, &end, 10);
        if (end == a->gpu || *end || v < 0 || v >= n->ngpus) {
            return gp_diag_set(d, GP_ENOENT, "node %s: no GPU %s (it has %d)", n->name, a->gpu,
                               n->ngpus);
        }
        gpu = (int)v;
    }
    int rc;
    if (a->verb == GPU_DRAIN) {
        char reason[200];
        snprintf(reason, sizeof(reason), "drained by %s%s%s", a->who, a->reason[0] ? ": " : "",
                 a->reason);
        rc = ctl_gpu_drain(g, n, gpu, reason, false, false, false, d);
    } else if (a->verb == GPU_UNDRAIN) {
        rc = n->gpus[gpu].drained ? ctl_gpu_undrain(g, n, gpu, a->who, d) : 0;
    } else {
        rc = ctl_node_check(g, n, d);
    }
    if (rc == 0) {
        op->kick = true;
        op->result = api_node_doc(&g->st, n, 0);
    }
    return rc;
}

static void gpu_op(api_req *rq, gpu_verb verb)
{
    gpu_arg a = {rq->params[0], verb == NODE_CHECK ? NULL : rq->params[1], verb, rq->who.name, ""};
    if (verb == GPU_DRAIN && rq->http->body_len > 0) {
        static const char *const fields[] = {"reason", NULL};
        json_t *doc = api_body(rq);
        if (!doc) {
            return;
        }
        gp_diag d;
        gp_diag_clear(&d);
        int rc = doc_check_fields(doc, "", fields, &d);
        rc = rc < 0 ? rc : doc_str(doc, "", "reason", a.reason, sizeof(a.reason), &d);
        json_decref(doc);
        if (rc < 0) {
            api_diag(rq, &d);
            return;
        }
    }
    ctl_op op = {.run = gpu_run, .arg = &a};
    api_run(rq, &op);
}

void api_nodes_gpu_drain(api_req *rq)
{
    gpu_op(rq, GPU_DRAIN);
}

void api_nodes_gpu_undrain(api_req *rq)
{
    gpu_op(rq, GPU_UNDRAIN);
}

void api_nodes_check(api_req *rq)
{
    gpu_op(rq, NODE_CHECK);
}
