/*
 * The in-memory state of gpupoold (see ctl.h): lookups, nodes, jobs and their hold on the
 * cluster model. Loading from the store is in load.c.
 */
#include "ctl/ctl.h"
#include "ctl/doc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const role_names[] = {"none", "admin", "operator", "user",
                                         "join", "agent", "metrics"};

const char *ctl_role_name(ctl_role r)
{
    return (unsigned)r < sizeof(role_names) / sizeof(role_names[0]) ? role_names[r] : "none";
}

int ctl_role_parse(const char *s, ctl_role *out)
{
    for (int i = 1; i < (int)(sizeof(role_names) / sizeof(role_names[0])); i++) {
        if (strcmp(s, role_names[i]) == 0) {
            *out = (ctl_role)i;
            return 0;
        }
    }
    return GP_EINVAL;
}

static const char *const state_names[CTL_NSTATES] = {
    "Pending", "Scheduled", "Running", "Succeeded", "Failed", "Cancelled", "Preempted", "Suspended",
};

const char *ctl_job_state_name(ctl_job_state s)
{
    return (unsigned)s < CTL_NSTATES ? state_names[s] : "Unknown";
}

int ctl_job_state_parse(const char *s, ctl_job_state *out)
{
    for (int i = 0; i < CTL_NSTATES; i++) {
        if (strcmp(s, state_names[i]) == 0) {
            *out = (ctl_job_state)i;
            return 0;
        }
    }
    return GP_EINVAL;
}

bool ctl_job_is_service(const ctl_job *j)
{
    return j->revision > 0 && j->owner == 0;
}

bool ctl_job_state_holds(ctl_job_state s)
{
    return s == CTL_SCHEDULED || s == CTL_RUNNING;
}

bool ctl_job_state_final(ctl_job_state s)
{
    return s == CTL_SUCCEEDED || s == CTL_FAILED || s == CTL_CANCELLED;
}

void ctl_job_free(ctl_job *j)
{
    if (j) {
        gp_jobspec_fini(&j->spec);
        free(j->after_ids);
        free(j->replicas);
        free(j->ran_on);
        free(j);
    }
}

void ctl_state_clear(ctl_state *st)
{
    int64_t desired_max = st->desired_max; /* kept, so versions never repeat */
    for (int i = 0; i < st->nnodes; i++) {
        if (st->nodes[i].desired_version > desired_max) {
            desired_max = st->nodes[i].desired_version;
        }
    }
    for (int i = 0; i < st->njobs; i++) {
        ctl_job_free(st->jobs[i]);
    }
    for (int i = 0; i < st->ntenants; i++) {
        ctl_tenant_fini(&st->tenants[i]);
    }
    for (int i = 0; i < st->nnodes; i++) {
        ctl_node_fini(&st->nodes[i]);
    }
    ctl_registry_clear(st);
    free(st->jobs);
    ctl_jobs_index_fini(st);
    free(st->tenants);
    free(st->queues);
    free(st->pclasses);
    free(st->volumes);
    free(st->nodes);
    free(st->node_name_slots);
    free(st->node_id_slots);
    free(st->node_cls);
    free(st->tokens);
    free(st->token_name_slots);
    free(st->token_node_slots);
    free(st->auth_revoked);
    free(st->held);
    gp_cluster_free(st->cluster);
    pthread_mutex_t lock = st->lock;
    uint64_t gen = st->gen, auth_gen = st->auth_gen, held_gen = st->held_gen;
    ctl_desired_waiters *waiters = st->waiters;
    const char *checkpoint_root = st->checkpoint_root;
    const unsigned char *secret_key = st->secret_key;
    memset(st, 0, sizeof(*st));
    st->checkpoint_root = checkpoint_root;
    st->secret_key = secret_key;
    st->lock = lock;
    st->gen = gen + 1; /* cached views of the old state are stale */
    st->auth_gen = auth_gen + 1;
    st->held_gen = held_gen + 1;
    st->desired_max = desired_max;
    st->desired_moved = true; /* every node's version is new: wake every waiter */
    st->waiters = waiters;
}

ctl_tenant *ctl_tenant_by_name(ctl_state *st, const char *name)
{
    for (int i = 0; i < st->ntenants; i++) {
        if (strcmp(st->tenants[i].lim.name, name) == 0) {
            return &st->tenants[i];
        }
    }
    return NULL;
}

ctl_tenant *ctl_tenant_by_id(ctl_state *st, int64_t id)
{
    for (int i = 0; i < st->ntenants; i++) {
        if (st->tenants[i].id == id) {
            return &st->tenants[i];
        }
    }
    return NULL;
}

ctl_queue *ctl_queue_by_name(ctl_state *st, const char *name)
{
    for (int i = 0; i < st->nqueues; i++) {
        if (strcmp(st->queues[i].q.name, name) == 0) {
            return &st->queues[i];
        }
    }
    return NULL;
}

ctl_volume *ctl_volume_by_name(ctl_state *st, const char *name)
{
    for (int i = 0; i < st->nvolumes; i++) {
        if (strcmp(st->volumes[i].name, name) == 0) {
            return &st->volumes[i];
        }
    }
    return NULL;
}

ctl_pclass *ctl_pclass_by_name(ctl_state *st, const char *name)
{
    for (int i = 0; i < st->npclasses; i++) {
        if (strcmp(st->pclasses[i].name, name) == 0) {
            return &st->pclasses[i];
        }
    }
    return NULL;
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    return h;
}

static uint64_t id_hash(int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

/* Puts v (an index + 1) into the open-addressed table slots of cap entries (a power of two,
 * with room) at the first free slot from hash h. */
static void slot_put(int *slots, int cap, size_t h, int v)
{
    size_t mask = (size_t)cap - 1, k = h & mask;
    while (slots[k]) {
        k = (k + 1) & mask;
    }
    slots[k] = v;
}

/* Puts node i into both tables (they have room: at most half full), its cluster index into
 * node_cls and its GPU models into node_models. */
static void index_node(ctl_state *st, int i)
{
    const gp_node *n = st->cluster ? gp_cluster_node(st->cluster, st->nodes[i].cl) : NULL;
    st->node_models |= n ? n->models : 0;
    st->node_cls[i] = st->nodes[i].cl;
    slot_put(st->node_name_slots, st->node_slots_cap, name_hash(st->nodes[i].name), i + 1);
    slot_put(st->node_id_slots, st->node_slots_cap, id_hash(st->nodes[i].id), i + 1);
}

/* Makes the tables exact; false when out of memory (callers then walk the nodes). */
static bool nodes_index(ctl_state *st)
{
    if (st->nodes_indexed == st->nnodes && st->node_slots_cap > 0) {
        return true;
    }
    int cap = 64;
    while (cap < st->nnodes * 2 + 2) {
        cap *= 2;
    }
    if (cap != st->node_slots_cap) {
        int *a = calloc((size_t)cap, sizeof(*a)), *b = calloc((size_t)cap, sizeof(*b));
        int *cls = malloc(sizeof(*cls) * (size_t)cap);
        if (!a || !b || !cls) {
            free(a);
            free(b);
            free(cls);
            return false;
        }
        free(st->node_name_slots);
        free(st->node_id_slots);
        free(st->node_cls);
        st->node_name_slots = a;
        st->node_id_slots = b;
        st->node_cls = cls;
        st->node_slots_cap = cap;
    } else {
        memset(st->node_name_slots, 0, sizeof(int) * (size_t)cap);
        memset(st->node_id_slots, 0, sizeof(int) * (size_t)cap);
    }
    st->node_models = 0;
    for (int i = 0; i < st->nnodes; i++) {
        index_node(st, i);
    }
    st->nodes_indexed = st->nnodes;
    return true;
}

int ctl_pool_nodes(ctl_state *st, int *out)
{
    if (!nodes_index(st)) {
        for (int i = 0; i < st->nnodes; i++) {
            out[i] = st->nodes[i].cl;
        }
    } else if (st->nnodes > 0) {
        memcpy(out, st->node_cls, sizeof(*out) * (size_t)st->nnodes);
    }
    return st->nnodes;
}

int ctl_pool_view(ctl_state *st, const int **nodes, uint64_t *models)
{
    if (!nodes_index(st)) {
        return GP_ENOMEM;
    }
    *nodes = st->node_cls;
    *models = st->node_models;
    return st->nnodes;
}

void ctl_state_nodes_moved(ctl_state *st)
{
    st->nodes_indexed = -1;
}

void ctl_state_node_appended(ctl_state *st)
{
    if (st->nodes_indexed == st->nnodes - 1 && st->node_slots_cap >= st->nnodes * 2 + 2) {
        index_node(st, st->nnodes - 1);
        st->nodes_indexed = st->nnodes;
    }
}

ctl_node *ctl_node_by_name(ctl_state *st, const char *name)
{
    if (!nodes_index(st)) {
        for (int i = 0; i < st->nnodes; i++) {
            if (strcmp(st->nodes[i].name, name) == 0) {
                return &st->nodes[i];
            }
        }
        return NULL;
    }
    size_t mask = (size_t)st->node_slots_cap - 1;
    for (size_t k = name_hash(name) & mask; st->node_name_slots[k]; k = (k + 1) & mask) {
        ctl_node *n = &st->nodes[st->node_name_slots[k] - 1];
        if (strcmp(n->name, name) == 0) {
            return n;
        }
    }
    return NULL;
}

ctl_node *ctl_node_by_id(ctl_state *st, int64_t id)
{
    if (!nodes_index(st)) {
        for (int i = 0; i < st->nnodes; i++) {
            if (st->nodes[i].id == id) {
                return &st->nodes[i];
            }
        }
        return NULL;
    }
    size_t mask = (size_t)st->node_slots_cap - 1;
    for (size_t k = id_hash(id) & mask; st->node_id_slots[k]; k = (k + 1) & mask) {
        ctl_node *n = &st->nodes[st->node_id_slots[k] - 1];
        if (n->id == id) {
            return n;
        }
    }
    return NULL;
}

/* Puts token i into both tables (they have room). */
static void index_token(ctl_state *st, int i)
{
    slot_put(st->token_name_slots, st->token_slots_cap, name_hash(st->tokens[i].name), i + 1);
    slot_put(st->token_node_slots, st->token_slots_cap, id_hash(st->tokens[i].node_id), i + 1);
}

/* Makes the tables cover every token; false when out of memory. */
static bool tokens_index(ctl_state *st)
{
    if (st->token_slots_cap < st->ntokens * 2 + 2) {
        int cap = st->token_slots_cap ? st->token_slots_cap : 64;
        while (cap < st->ntokens * 2 + 2) {
            cap *= 2;
        }
        int *a = calloc((size_t)cap, sizeof(*a)), *b = calloc((size_t)cap, sizeof(*b));
        if (!a || !b) {
            free(a);
            free(b);
            return false;
        }
        free(st->token_name_slots);
        free(st->token_node_slots);
        st->token_name_slots = a;
        st->token_node_slots = b;
        st->token_slots_cap = cap;
        st->tokens_indexed = 0;
    }
    for (; st->tokens_indexed < st->ntokens; st->tokens_indexed++) {
        index_token(st, st->tokens_indexed);
    }
    return true;
}

gp_token_rec *ctl_token_by_name(ctl_state *st, const char *name)
{
    if (!tokens_index(st)) {
        for (int i = 0; i < st->ntokens; i++) {
            if (strcmp(st->tokens[i].name, name) == 0) {
                return &st->tokens[i];
            }
        }
        return NULL;
    }
    size_t mask = (size_t)st->token_slots_cap - 1;
    for (size_t k = name_hash(name) & mask; st->token_name_slots[k]; k = (k + 1) & mask) {
        gp_token_rec *t = &st->tokens[st->token_name_slots[k] - 1];
        if (strcmp(t->name, name) == 0) {
            return t;
        }
    }
    return NULL;
}

static int by_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int ctl_tokens_of_node(ctl_state *st, int64_t node_id, int **out)
{
    *out = NULL;
    if (!tokens_index(st)) {
        return GP_ENOMEM;
    }
    size_t mask = (size_t)st->token_slots_cap - 1;
    int n = 0, cap = 0;
    for (size_t k = id_hash(node_id) & mask; st->token_node_slots[k]; k = (k + 1) & mask) {
        int i = st->token_node_slots[k] - 1;
        if (st->tokens[i].node_id != node_id) {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            int *p = realloc(*out, sizeof(*p) * (size_t)cap);
            if (!p) {
                free(*out);
                *out = NULL;
                return GP_ENOMEM;
            }
            *out = p;
        }
        (*out)[n++] = i;
    }
    if (n > 1) {
        qsort(*out, (size_t)n, sizeof(**out), by_int);
    }
    return n;
}

ctl_job *ctl_job_by_id(ctl_state *st, int64_t id)
{
    int lo = 0, hi = st->njobs - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (st->jobs[mid]->id == id) {
            return st->jobs[mid];
        }
        if (st->jobs[mid]->id < id) {
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return NULL;
}

ctl_job *ctl_job_find(ctl_state *st, const char *ref, int64_t tenant_id)
{
    char *end;
    long long id = strtoll(ref, &end, 10);
    if (*ref && !*end && id > 0) {
        ctl_job *j = ctl_job_by_id(st, id);
        return j && (!tenant_id || j->tenant_id == tenant_id) ? j : NULL;
    }
    ctl_job *newest = NULL;
    for (int i = st->njobs - 1; i >= 0; i--) {
        ctl_job *j = st->jobs[i];
        if (strcmp(j->name, ref) != 0 || (tenant_id && j->tenant_id != tenant_id)) {
            continue;
        }
        if (!ctl_job_state_final(j->state)) {
            return j;
        }
        if (!newest) {
            newest = j;
        }
    }
    return newest;
}

int ctl_state_add_job(ctl_state *st, ctl_job *j)
{
    if (st->njobs == st->capjobs) {
        int ncap = st->capjobs ? st->capjobs * 2 : 1024;
        ctl_job **p = realloc(st->jobs, sizeof(*p) * (size_t)ncap);
        if (!p) {
            return GP_ENOMEM;
        }
        st->jobs = p;
        st->capjobs = ncap;
    }
    st->jobs[st->njobs++] = j;
    st->npending += ctl_job_state_waits(j->state);
    ctl_jobs_index_add(st, st->njobs - 1);
    return 0;
}

bool ctl_job_state_waits(ctl_job_state s)
{
    return s == CTL_PENDING || s == CTL_PREEMPTED;
}

void ctl_job_set_state(ctl_state *st, ctl_job *j, ctl_job_state s)
{
    st->npending += ctl_job_state_waits(s) - ctl_job_state_waits(j->state);
    ctl_jobs_index_move(st, j, j->state, s);
    j->state = s;
}

int ctl_job_hold(ctl_state *st, ctl_job *j, bool take)
{
    if (!j->replicas) {
        return 0;
    }
    for (int r = 0; r < j->spec.replicas; r++) {
        int rc = take ? gp_cluster_assign(st->cluster, &j->replicas[r].a)
                      : gp_cluster_release(st->cluster, &j->replicas[r].a);
        if (rc < 0) {
            /* Undo the replicas already done, so the cluster stays consistent. */
            for (int u = r - 1; u >= 0; u--) {
                if (take) {
                    gp_cluster_release(st->cluster, &j->replicas[u].a);
                } else {
                    gp_cluster_assign(st->cluster, &j->replicas[u].a);
                }
            }
            return rc;
        }
    }
    return 0;
}

void ctl_state_placements_changed(ctl_state *st)
{
    st->held_gen++;
}

static int64_t version_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000) * 1000;
}

int64_t ctl_node_desired_version(ctl_state *st, ctl_node *n)
{
    if (n->desired_version == 0) {
        int64_t t = version_clock();
        n->desired_version = t > st->desired_max ? t : st->desired_max + 1;
        st->desired_max = n->desired_version;
    }
    return n->desired_version;
}

void ctl_node_desired_changed(ctl_state *st, ctl_node *n)
{
    if (!n) {
        return;
    }
    if (n->desired_version == 0) {
        ctl_node_desired_version(st, n);
    } else {
        int64_t t = version_clock();
        n->desired_version = t > n->desired_version ? t : n->desired_version + 1;
        if (n->desired_version > st->desired_max) {
            st->desired_max = n->desired_version;
        }
    }
    st->desired_moved = true;
}

void ctl_job_desired_changed(ctl_state *st, const ctl_job *j)
{
    for (int r = 0; j->replicas && r < j->spec.replicas; r++) {
        ctl_node_desired_changed(st, ctl_node_by_id(st, j->replicas[r].node_id));
    }
}

static int by_node(const void *a, const void *b)
{
    const ctl_held *x = a, *y = b;
    if (x->node_id != y->node_id) {
        return x->node_id < y->node_id ? -1 : 1;
    }
    return x->job->id != y->job->id ? (x->job->id < y->job->id ? -1 : 1) : x->replica - y->replica;
}

static int build_held(ctl_state *st)
{
    int n = 0;
    for (int i = 0; i < st->njobs; i++) {
        n += st->jobs[i]->replicas ? st->jobs[i]->spec.replicas : 0;
    }
    if (n > st->capheld) {
        ctl_held *p = realloc(st->held, sizeof(*p) * (size_t)n);
        if (!p) {
            return GP_ENOMEM;
        }
        st->held = p;
        st->capheld = n;
    }
    st->nheld = 0;
    for (int i = 0; i < st->njobs; i++) {
        ctl_job *j = st->jobs[i];
        for (int r = 0; j->replicas && r < j->spec.replicas; r++) {
            st->held[st->nheld++] = (ctl_held){j->replicas[r].node_id, j, r};
        }
    }
    if (st->nheld > 1) {
        qsort(st->held, (size_t)st->nheld, sizeof(*st->held), by_node);
    }
    st->held_built = st->held_gen;
    return 0;
}

int ctl_state_held_on(ctl_state *st, int64_t node_id, const ctl_held **out)
{
    if (st->held_built != st->held_gen) {
        int rc = build_held(st);
        if (rc < 0) {
            return rc;
        }
    }
    *out = NULL;
    if (st->nheld == 0) {
        return 0;
    }
    int lo = 0, hi = st->nheld;
    while (lo < hi) { /* first entry of node_id */
        int mid = lo + (hi - lo) / 2;
        if (st->held[mid].node_id < node_id) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    int end = lo;
    while (end < st->nheld && st->held[end].node_id == node_id) {
        end++;
    }
    *out = st->held + lo;
    return end - lo;
}

void ctl_job_drop_replicas(ctl_state *st, ctl_job *j)
{
    if (!j->replicas) {
        return;
    }
    st->held_gen++;
    ctl_job_desired_changed(st, j); /* every path that ends a placement comes here */
    int64_t *on = realloc(j->ran_on, sizeof(*on) * (size_t)j->spec.replicas);
    if (on) { /* out of memory only loses where the logs are */
        for (int r = 0; r < j->spec.replicas; r++) {
            on[r] = j->replicas[r].node_id;
        }
        j->ran_on = on;
        j->ran_epoch = j->replicas[0].epoch;
    }
    free(j->replicas);
    j->replicas = NULL;
}

/* Where the job runs now, or ran last: node ids per replica, and the epoch. */
static json_t *ran_on_doc(const ctl_job *j, int64_t *epoch)
{
    json_t *list = json_array();
    *epoch = j->replicas ? j->replicas[0].epoch : j->ran_epoch;
    for (int r = 0; r < j->spec.replicas && (j->replicas || j->ran_on); r++) {
        json_array_append_new(list,
                              json_integer(j->replicas ? j->replicas[r].node_id : j->ran_on[r]));
    }
    return list;
}

/* Arrays and dependencies (ctl.h): after_ok's ids, a child's index, an array's count made. */
static void batch_fields(const ctl_job *j, json_t *doc)
{
    if (j->nafter > 0) {
        json_t *ids = json_array();
        for (int i = 0; i < j->nafter; i++) {
            json_array_append_new(ids, json_integer(j->after_ids[i]));
        }
        json_object_set_new(doc, "after_ok", ids);
    }
    if (j->in_array) {
        json_object_set_new(doc, "array_index", json_integer(j->array_index));
    }
    if (ctl_job_is_array(j)) {
        json_object_set_new(doc, "array_made", json_integer(j->array_made));
    }
}

json_t *ctl_job_status_doc(const ctl_job *j)
{
    json_t *reps = json_array();
    if (j->replicas) {
        for (int r = 0; r < j->spec.replicas; r++) {
            json_array_append_new(reps, json_pack("{s:i, s:s, s:i}", "replica", r, "state",
                                                  j->replicas[r].state, "exit_code",
                                                  j->replicas[r].exit_code));
        }
    }
    int64_t epoch;
    json_t *ran = ran_on_doc(j, &epoch);
    json_t *doc = json_pack("{s:s, s:I, s:I, s:i, s:i, s:o, s:o, s:I}", "reason", j->reason,
                            "start_ms", (json_int_t)j->start_ms, "end_ms", (json_int_t)j->end_ms,
                            "restarts", j->restarts, "exit_code", j->exit_code, "replicas", reps,
                            "ran_on", ran, "ran_epoch", (json_int_t)epoch);
    if (j->spare_ok) {
        json_object_set_new(doc, "spare_ok", json_true());
    }
    if (j->owner) {
        json_object_set_new(doc, "owner", json_integer(j->owner));
        json_object_set_new(doc, "revision", json_integer(j->revision));
    } else if (j->revision > 0) {
        /* a service: its spec as now (an update replaces the one stored at submission) */
        json_object_set_new(doc, "service",
                            json_pack("{s:i, s:i, s:i, s:I, s:o*}", "revision", j->revision,
                                      "replicas", j->svc_replicas, "next", j->svc_next,
                                      "rollout_ms", (json_int_t)j->svc_rollout_ms, "spec",
                                      gp_jobspec_to_json(&j->spec)));
    }
    batch_fields(j, doc);
    if (j->fault_ms[0]) {
        json_t *f = json_array();
        for (int i = 0; i < CTL_FAULT_RESTARTS_KEEP && j->fault_ms[i]; i++) {
            json_array_append_new(f, json_integer(j->fault_ms[i]));
        }
        json_object_set_new(doc, "fault_restarts_ms", f);
    }
    return doc;
}
