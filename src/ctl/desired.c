/*
 * What a node must run: its desired document (the replicas placed on it, with everything each
 * needs to start: GPUs, gang peers, volumes), answered by the heartbeat and by the long-poll
 * GET /v1/nodes/{node}/desired, and the waiters of that long-poll.
 */
#include "ctl/api.h"
#include "ctl/secrets.h"
#include "base/clock.h"
#include "net/wire_desired.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- documents ---- */

/* The processes one replica of j starts under a launcher (torchrun's nproc_per_node, the slots
 * of its host in the hostfile): one per whole GPU, else one. */
static int gang_nproc(const ctl_job *j)
{
    return j->spec.kind == GP_REQ_WHOLE && j->spec.gpus > 1 ? j->spec.gpus : 1;
}

/* What a gang's replica needs to find the others: its rank, the processes per replica, the
 * master (replica 0's host and a port derived from the job id) and the hostfile: one line per
 * host, in the order of the replicas, with slots = the processes of the job's replicas there.
 * Nodes that share a host (several agents on one machine) share its line: OpenMPI refuses a
 * host listed twice. Linear in the replicas times the hosts. r->hosts is malloc'd (the caller
 * frees it). Returns false when out of memory. */
static bool gang_doc(ctl_state *st, const ctl_job *j, int r, gp_wire_desired_replica *out)
{
    gp_wire_host *hosts = calloc((size_t)j->spec.replicas, sizeof(*hosts));
    if (!hosts) {
        return false;
    }
    int nhosts = 0, at = 0, nproc = gang_nproc(j);
    for (int k = 0; k < j->spec.replicas; k++) {
        if (k == 0 || j->replicas[k].node_id != j->replicas[k - 1].node_id) {
            char name[128] = "";
            const ctl_node *n = ctl_node_by_id(st, j->replicas[k].node_id);
            if (n) {
                ctl_node_host(n, name, sizeof(name));
            }
            for (at = 0; at < nhosts && strcmp(hosts[at].name, name) != 0; at++) {
            }
            if (at == nhosts) {
                snprintf(hosts[nhosts++].name, sizeof(hosts[0].name), "%s", name);
            }
        }
        hosts[at].slots += nproc;
    }
    out->rank = r;
    out->nproc_per_node = nproc;
    out->master_addr = hosts[0].name;
    out->master_port = 29500 + (int)(j->id % 10000);
    out->hosts = hosts;
    out->nhosts = (size_t)nhosts;
    return true;
}

/* A fraction's limits inside the job's processes (gp_jobspec_enforcement), which gpupool-run
 * hands to libgpushare: gpu_share, absent for whole GPUs and MIG slices. */
static void share_doc(const ctl_job *j, const ctl_replica *rep, const ctl_node *n,
                      gp_wire_desired_replica *out)
{
    if (rep->a.nshares != 1) {
        return; /* a fraction is one share of one GPU */
    }
    int g = rep->a.shares[0].gpu;
    gp_share_enforcement e;
    gp_jobspec_enforcement(&j->spec, g < n->ngpus ? n->gpus[g].mem_mib : 0, &e);
    if (e.fraction) {
        out->share = (gp_wire_gpu_share){.given = true,
                                         .memory_mib = e.memory_mib,
                                         .core_percent = e.core_percent,
                                         .policy = e.policy};
    }
}

/* Where the replica's processes run: its image (with the pull policy and, for the node's own
 * agent only, the tenant's credentials for the image's registry) or the host's root filesystem
 * (no "image"), and its network. The strings are borrowed from the state. */
static void sandbox_doc(ctl_state *st, const ctl_job *j, bool secrets, gp_wire_desired_replica *out)
{
    if (j->spec.network != GP_NETWORK_HOST) {
        out->network = (int)j->spec.network;
    }
    if (j->spec.job_kind != GP_JOB_BATCH) { /* borrowed like the rest */
        out->kind = (int)j->spec.job_kind;
        out->port = j->spec.port;
        out->readiness = j->spec.readiness;
        out->liveness = j->spec.liveness;
    }
    if (!j->spec.image) {
        return;
    }
    out->image = j->spec.image;
    out->pull_policy = j->spec.image_pull_policy;
    const ctl_registry_cred *c =
        secrets ? ctl_registry_for_image(st, j->tenant_id, j->spec.image) : NULL;
    if (c) {
        out->auth_registry = (char *)c->registry;
        out->auth_username = (char *)c->username;
        out->auth_password = (char *)c->password;
    }
}

/* The job's volumes as the node mounts them; r->volumes is malloc'd, its strings borrowed.
 * False when out of memory. */
static bool volumes_doc(ctl_state *st, const gp_jobspec *spec, gp_wire_desired_replica *out)
{
    if (spec->nvolumes <= 0) {
        return true;
    }
    out->volumes = calloc((size_t)spec->nvolumes, sizeof(*out->volumes));
    if (!out->volumes) {
        return false;
    }
    for (int i = 0; i < spec->nvolumes; i++) {
        const gp_volume_ref *r = &spec->volumes[i];
        const ctl_volume *v = ctl_volume_by_name(st, r->name);
        if (v) { /* deleting a volume that active jobs use is refused */
            gp_wire_volume *x = &out->volumes[out->nvolumes++];
            snprintf(x->name, sizeof(x->name), "%s", v->name);
            x->path = (char *)v->path;
            x->read_only =
                r->mode == GP_VOLUME_RO || (r->mode == GP_VOLUME_DEFAULT && v->read_only);
        }
    }
    return true;
}

/* A desired replica: what the agent must run, typed (net/wire_desired.h) and encoded. */
static json_t *desired_doc(ctl_state *st, const ctl_job *j, int r, const ctl_node *n, bool secrets)
{
    const ctl_replica *rep = &j->replicas[r];
    gp_wire_desired_gpu gpus[GP_MAX_GPUS_PER_NODE];
    gp_wire_desired_replica out;
    gp_wire_desired_replica_init(&out);
    out.job = j->id;
    out.replica = r;
    out.epoch = rep->epoch;
    snprintf(out.name, sizeof(out.name), "%s", j->name);
    out.world_size = j->spec.replicas;
    out.restart_count = j->restarts;
    if (j->in_array) {
        out.array_index = j->array_index;
        out.array_job = j->owner;
    }
    if (j->spec.shm_size_mib > 0) {
        out.shm_size_mib = j->spec.shm_size_mib;
    }
    out.privileged = j->spec.privileged;
    out.cpu_milli = rep->a.cpu_milli;
    out.memory_mib = rep->a.memory_mib;
    for (int s = 0; s < rep->a.nshares && s < GP_MAX_GPUS_PER_NODE; s++) {
        const gp_gpu_share *sh = &rep->a.shares[s];
        gpus[s] = (gp_wire_desired_gpu){.index = sh->gpu,
                                        .milli = sh->milli,
                                        .memory_mib = sh->mem_mib,
                                        .mig_start = sh->mig_start};
        snprintf(gpus[s].uuid, sizeof(gpus[s].uuid), "%s", n->gpus[sh->gpu].uuid);
        out.ngpus++;
    }
    out.gpus = gpus;
    /* secret env values: opened for the node's own agent only */
    out.spec = ctl_job_spec_doc(st, j, secrets);
    /* the job's tenant and queue: the agent labels the job's metrics with them */
    const ctl_tenant *t = ctl_tenant_by_id(st, j->tenant_id);
    if (t) {
        snprintf(out.tenant, sizeof(out.tenant), "%s", t->lim.name);
    }
    /* its id: the agent runs the tenant's jobs under host ids of its own (agent/idmap.h) */
    out.tenant_id = j->tenant_id;
    snprintf(out.queue, sizeof(out.queue), "%s", j->spec.queue);
    share_doc(j, rep, n, &out);
    sandbox_doc(st, j, secrets, &out);
    char ckpt[GP_WIRE_MAX_PATH_LEN];
    if (st->checkpoint_root && st->checkpoint_root[0]) {
        snprintf(ckpt, sizeof(ckpt), "%s/%s/%lld", st->checkpoint_root, t ? t->lim.name : "-",
                 (long long)j->id);
        out.checkpoint_dir = ckpt;
    }
    bool ok = out.spec && volumes_doc(st, &j->spec, &out) &&
              (j->spec.replicas <= 1 || gang_doc(st, j, r, &out));
    json_t *doc = ok ? gp_wire_desired_replica_encode(&out) : NULL;
    json_decref(out.spec);
    free(out.volumes);
    free(out.hosts);
    return doc;
}

int api_desired_answer(ctl_state *st, ctl_node *n, bool secrets, json_t **out)
{
    *out = NULL;
    const ctl_held *held;
    int nheld = ctl_state_held_on(st, n->id, &held);
    if (nheld < 0) {
        return nheld;
    }
    json_t *desired = json_array();
    for (int k = 0; k < nheld; k++) {
        json_t *doc = desired_doc(st, held[k].job, held[k].replica, n, secrets);
        if (!doc) {
            json_decref(desired);
            return GP_ENOMEM;
        }
        json_array_append_new(desired, doc);
    }
    gp_wire_desired head = {.version = ctl_node_desired_version(st, n),
                            .cordoned = n->cordoned,
                            .check_seq = n->check_seq};
    snprintf(head.node, sizeof(head.node), "%s", n->name);
    *out = gp_wire_desired_encode(&head, desired);
    return *out ? 0 : GP_ENOMEM;
}

/* ---- the long-poll of the desired document ----
 *
 * GET /v1/nodes/{node}/desired?version=V&wait=MS answers at once unless the caller already has
 * the current version; then the request is deferred (it holds no HTTP thread) and a waiter is
 * registered here. One thread, the waiters' thread, answers them: when ctl_desired_publish
 * reports that versions moved (after the committer's commit), it answers every waiter whose
 * node's version differs from the caller's, and it answers the waits that end, at most
 * WAITERS_TICK_MS late. It builds the answers under the state lock and finishes the deferred
 * requests after releasing it.
 *
 * Locks: the state lock, then the waiters' lock; never the other way round.
 */

#define DESIRED_WAIT_MAX_MS 60000
/* Passes over the waiters are at least this far apart (each costs one look at every waiter). */
#define WAITERS_TICK_MS 10

typedef struct waiter {
    int64_t node_id;
    int idx;          /* the node's index in st->nodes when it came: a hint */
    int64_t version;  /* what the caller has */
    int64_t deadline; /* monotonic ms */
    bool secrets;     /* the node's own agent waits: its answer may carry credentials */
    gp_http_deferred *dr;
    gp_http_response resp; /* the answer, built by the waiters' thread */
    struct waiter *next;
} waiter;

struct ctl_desired_waiters {
    ctl_state *st;
    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t cond;  /* on CLOCK_MONOTONIC */
    waiter *head;
    int n;
    bool recheck; /* versions moved: compare every waiter's */
    bool stop;
    int64_t wake_at; /* the thread's next pass (monotonic ms); INT64_MAX: none due */
    pthread_t thread;
};

static ctl_node *waiter_node(ctl_state *st, waiter *w)
{
    if (w->idx >= 0 && w->idx < st->nnodes && st->nodes[w->idx].id == w->node_id) {
        return &st->nodes[w->idx];
    }
    ctl_node *n = ctl_node_by_id(st, w->node_id);
    w->idx = n ? (int)(n - st->nodes) : -1;
    return n;
}

/* Builds w's answer: the node's document now. Under the state lock. */
static void waiter_answer(ctl_state *st, waiter *w)
{
    w->resp = (gp_http_response){.content_type = "application/json"};
    ctl_node *n = waiter_node(st, w);
    json_t *doc = NULL;
    if (!n) {
        gp_http_respond_error(&w->resp, GP_ENOENT, "node: not found");
        return;
    }
    char *text =
        api_desired_answer(st, n, w->secrets, &doc) == 0 ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text) {
        gp_http_respond_error(&w->resp, GP_ENOMEM, "out of memory");
        return;
    }
    gp_http_response_set_body(&w->resp, 200, NULL, text, strlen(text));
}

/* Sends the answers of a list of waiters and frees them. No lock held. */
static void waiters_finish(waiter *list)
{
    while (list) {
        waiter *w = list;
        list = w->next;
        gp_http_deferred_finish(w->dr, &w->resp);
        free(w);
    }
}

/* One pass: takes out the waiters that are woken (their version moved, or their node is gone)
 * or whose wait ended, answers them, and sets when the next pass is due. The state lock is
 * taken only to compare versions (after a publish) and to build answers. */
static void waiters_pass(ctl_desired_waiters *ws)
{
    ctl_state *st = ws->st;
    pthread_mutex_lock(&ws->lock);
    bool recheck = ws->recheck;
    pthread_mutex_unlock(&ws->lock);
    if (recheck) {
        ctl_state_lock(st);
    }
    pthread_mutex_lock(&ws->lock);
    if (recheck) {
        ws->recheck = false; /* a publish since the first look leaves it set: one more pass */
    }
    int64_t now = gp_mono_ms(), next = INT64_MAX;
    waiter *due = NULL;
    for (waiter **pp = &ws->head; *pp;) {
        waiter *w = *pp;
        ctl_node *n = recheck ? waiter_node(st, w) : NULL;
        bool moved = recheck && (!n || ctl_node_desired_version(st, n) != w->version);
        if (moved || w->deadline <= now) {
            *pp = w->next;
            ws->n--;
            w->next = due;
            due = w;
        } else {
            next = w->deadline < next ? w->deadline : next;
            pp = &w->next;
        }
    }
    ws->wake_at = next == INT64_MAX || next > now + WAITERS_TICK_MS ? next : now + WAITERS_TICK_MS;
    pthread_mutex_unlock(&ws->lock);
    if (due && !recheck) {
        ctl_state_lock(st);
    }
    for (waiter *w = due; w; w = w->next) {
        waiter_answer(st, w);
    }
    if (due || recheck) {
        ctl_state_unlock(st);
    }
    waiters_finish(due);
}

static void *waiters_main(void *arg)
{
    ctl_desired_waiters *ws = arg;
    pthread_mutex_lock(&ws->lock);
    while (!ws->stop) {
        int64_t now = gp_mono_ms();
        if (!ws->recheck && now < ws->wake_at) {
            if (ws->wake_at == INT64_MAX) {
                pthread_cond_wait(&ws->cond, &ws->lock);
            } else {
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                int64_t ns = ts.tv_nsec + (ws->wake_at - now) % 1000 * 1000000;
                ts.tv_sec += (time_t)((ws->wake_at - now) / 1000 + ns / 1000000000);
                ts.tv_nsec = (long)(ns % 1000000000);
                pthread_cond_timedwait(&ws->cond, &ws->lock, &ts);
            }
            continue;
        }
        pthread_mutex_unlock(&ws->lock);
        waiters_pass(ws);
        pthread_mutex_lock(&ws->lock);
    }
    pthread_mutex_unlock(&ws->lock);
    return NULL;
}

int ctl_desired_waiters_start(ctl_state *st, gp_diag *d)
{
    ctl_desired_waiters *ws = calloc(1, sizeof(*ws));
    if (!ws) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    ws->st = st;
    ws->wake_at = INT64_MAX;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&ws->cond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&ws->lock, NULL);
    if (pthread_create(&ws->thread, NULL, waiters_main, ws) != 0) {
        pthread_cond_destroy(&ws->cond);
        pthread_mutex_destroy(&ws->lock);
        free(ws);
        return gp_diag_set(d, GP_EIO, "cannot start the long-poll thread");
    }
    ctl_state_lock(st);
    st->waiters = ws;
    ctl_state_unlock(st);
    return 0;
}

void ctl_desired_waiters_stop(ctl_state *st)
{
    ctl_state_lock(st);
    ctl_desired_waiters *ws = st->waiters;
    st->waiters = NULL; /* no waiter comes after this */
    ctl_state_unlock(st);
    if (!ws) {
        return;
    }
    pthread_mutex_lock(&ws->lock);
    ws->stop = true;
    pthread_cond_signal(&ws->cond);
    pthread_mutex_unlock(&ws->lock);
    pthread_join(ws->thread, NULL);
    for (waiter *w = ws->head; w; w = w->next) {
        w->resp = (gp_http_response){.content_type = "application/json"};
        gp_http_respond_error(&w->resp, GP_EUNAVAIL, "the controller is stopping");
    }
    waiters_finish(ws->head);
    pthread_cond_destroy(&ws->cond);
    pthread_mutex_destroy(&ws->lock);
    free(ws);
}

void ctl_desired_publish(ctl_state *st)
{
    ctl_desired_waiters *ws = st->waiters;
    if (!st->desired_moved || !ws) {
        return;
    }
    st->desired_moved = false;
    pthread_mutex_lock(&ws->lock);
    if (ws->n > 0) {
        ws->recheck = true;
        pthread_cond_signal(&ws->cond);
    }
    pthread_mutex_unlock(&ws->lock);
}

/* Registers a waiter for n, the caller having version; the request is deferred. Under the state
 * lock. Returns false when the request cannot be deferred (rq's answer is then set). */
static bool wait_for(api_req *rq, ctl_desired_waiters *ws, ctl_node *n, int64_t version,
                     int64_t wait_ms)
{
    waiter *w = calloc(1, sizeof(*w));
    if (!w) {
        api_error(rq, GP_ENOMEM, "out of memory");
        return false;
    }
    w->dr = gp_http_defer(rq->http, rq->resp);
    if (!w->dr) {
        free(w);
        return false;
    }
    w->node_id = n->id;
    w->idx = (int)(n - ws->st->nodes);
    w->version = version;
    w->deadline = gp_mono_ms() + wait_ms;
    w->secrets = rq->who.role == CTL_ROLE_AGENT;
    pthread_mutex_lock(&ws->lock);
    w->next = ws->head;
    ws->head = w;
    ws->n++;
    if (w->deadline < ws->wake_at) {
        ws->wake_at = w->deadline;
        pthread_cond_signal(&ws->cond);
    }
    pthread_mutex_unlock(&ws->lock);
    return true;
}

/* A query parameter as a whole number in 0..max: 1 with *out, 0 when absent, -1 when bad. */
static int query_number(api_req *rq, const char *name, int64_t max, int64_t *out)
{
    const char *s = gp_http_request_query(rq->http, name);
    if (!s) {
        return 0;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !*s || *end || v < 0 || v > max) {
        return -1;
    }
    *out = v;
    return 1;
}

void api_nodes_desired(api_req *rq)
{
    int64_t version = 0, wait_ms = 0;
    int has_version = query_number(rq, "version", INT64_MAX, &version);
    if (has_version < 0) {
        api_error(rq, GP_EINVAL, "version: must be a whole number (the version of an answer)");
        return;
    }
    if (query_number(rq, "wait", INT64_MAX, &wait_ms) < 0) {
        api_error(rq, GP_EINVAL, "wait: must be a whole number of milliseconds");
        return;
    }
    if (wait_ms > DESIRED_WAIT_MAX_MS) {
        wait_ms = DESIRED_WAIT_MAX_MS;
    }
    ctl_state *st = &rq->g->st;
    int64_t caller = rq->who.role == CTL_ROLE_AGENT ? rq->who.node_id : 0;
    ctl_read_lock(rq->g);
    ctl_node *n = ctl_node_by_name(st, rq->params[0]);
    if (!n || (caller && n->id != caller)) {
        ctl_read_unlock(rq->g);
        api_error(rq, GP_ENOENT, "node %s: not found", rq->params[0]);
        return;
    }
    /* Registered under the state lock, so no change can slip between the comparison and the
     * registration: the committer publishes under this lock too. */
    if (has_version && wait_ms > 0 && st->waiters && ctl_node_desired_version(st, n) == version) {
        wait_for(rq, st->waiters, n, version, wait_ms);
        ctl_read_unlock(rq->g);
        return;
    }
    json_t *doc = NULL;
    /* Secrets (registry credentials) go to the node's own agent only, never to a person. */
    int rc = api_desired_answer(st, n, caller != 0, &doc);
    ctl_read_unlock(rq->g);
    if (rc < 0) {
        api_error(rq, rc, "out of memory");
        return;
    }
    api_reply(rq, 200, doc);
}
