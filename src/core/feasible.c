/*
 * Whether a job could ever run (gpupool/feasible.h): the pool as built, then the limits.
 *
 * The pool is judged in one pass over the nodes. Each node gets a level: how many of the
 * stages below it passes in order (GPUs of an allowed model with the MIG profile, enough of
 * them, NVLink-connected, memory of one GPU, CPU, memory). For every stage the pass keeps the
 * most that any node reaching it offers, so the first stage no node passes is named with what
 * the best of the nodes that got that far has ("no node has more than 8").
 */
#include "gpupool/feasible.h"

#include "core/sched_impl.h"
#include "gpupool/modelname.h"

#include <stdio.h>
#include <string.h>

enum { S_CAPS, S_GPU, S_COUNT, S_NVLINK, S_GPUMEM, S_CPU, S_MEM, S_ALL };

typedef struct pool_view {
    const gp_cluster *c;
    const int *nodes;
    int n;
    uint64_t present; /* models some counted node has */
    uint64_t allowed; /* of those, the models the job allows */
    bool restricted;  /* the job names models */
} pool_view;

/* What one node offers a replica. */
typedef struct offer {
    uint32_t gpus; /* GPUs of an allowed model (with the MIG profile, for MIG) */
    int level;     /* stages passed */
    int64_t dim[S_ALL];
} offer;

static int node_at(const pool_view *v, int i)
{
    return v->nodes ? v->nodes[i] : i;
}

static const char *gpu_field(const gp_request *r)
{
    switch (r->kind) {
    case GP_REQ_WHOLE:
        return "resources.gpus";
    case GP_REQ_FRACTION:
        return r->gpu_milli > 0 ? "resources.gpu_milli" : "resources.gpu_memory_mib";
    case GP_REQ_MIG:
        return "resources.mig_profile";
    default:
        return "resources";
    }
}

/* Appends s to buf (cap bytes), separated by ", "; cut short when full. */
static void list_add(char *buf, size_t cap, const char *s)
{
    size_t n = strlen(buf);
    if (n + 1 < cap) {
        snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", s);
    }
}

static void model_list(const gp_cluster *c, uint64_t set, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int m = 0; m < gp_cluster_model_count(c) && m < 64; m++) {
        if (set & (1ull << m)) {
            list_add(buf, cap, gp_cluster_model_info(c, m)->name);
        }
    }
    if (!buf[0]) {
        snprintf(buf, cap, "none (no node has a GPU)");
    }
}

/* The allowed models among those present; GP_EINVAL when the job names none of them. */
static int check_models(pool_view *v, const gp_feasible_job *j, gp_diag *d)
{
    const gp_request *r = j->req;
    char list[300];
    v->allowed = v->present;
    if (r->kind == GP_REQ_NONE) {
        return 0;
    }
    if (j->nmodels > 0) {
        v->restricted = true;
        v->allowed = 0;
        for (int i = 0; i < j->nmodels; i++) {
            v->allowed |= gp_cluster_models_named(v->c, j->models[i]) & v->present;
        }
    } else if (r->allowed_models) {
        v->restricted = true;
        v->allowed = r->allowed_models & v->present;
    }
    if (v->allowed) {
        return 0;
    }
    model_list(v->c, v->present, list, sizeof(list));
    if (j->nmodels == 1) {
        return gp_diag_set(d, GP_EINVAL,
                           "resources.gpu_models[0]: no node has model \"%.64s\"; models in the "
                           "pool: %s",
                           j->models[0], list);
    }
    if (j->nmodels > 1) {
        char names[300] = "";
        for (int i = 0; i < j->nmodels; i++) {
            char q[GP_NAME_MAX + 2];
            snprintf(q, sizeof(q), "\"%s\"", j->models[i]);
            list_add(names, sizeof(names), q);
        }
        return gp_diag_set(d, GP_EINVAL,
                           "resources.gpu_models: no node has any of %s; models in the pool: %s",
                           names, list);
    }
    return gp_diag_set(d, GP_EINVAL, "%s: the job asks for a GPU; models in the pool: %s",
                       r->allowed_models ? "resources.gpu_models" : gpu_field(r), list);
}

static const gp_mig_profile *mig_of(const gp_cluster *c, int model, const char *profile)
{
    const gp_gpu_model *m = gp_cluster_model_info(c, model);
    return m && m->mig != GP_MIG_NONE ? gp_mig_find(m->mig, profile) : NULL;
}

/* Replicas of r one GPU could hold (capped at cap). */
static int64_t gpu_slots(const gp_cluster *c, const gp_gpu *u, const gp_request *r, int64_t cap)
{
    int64_t k = cap;
    if (r->kind == GP_REQ_MIG) {
        const gp_mig_profile *p = mig_of(c, u->model, r->mig_profile);
        return p ? p->max_instances : 0;
    }
    if (r->gpu_milli > 0 && GP_MILLI_PER_GPU / r->gpu_milli < k) {
        k = GP_MILLI_PER_GPU / r->gpu_milli;
    }
    if (r->gpu_mem_mib > 0 && u->mem_mib / r->gpu_mem_mib < k) {
        k = u->mem_mib / r->gpu_mem_mib;
    }
    return k;
}

/* The node's offer and its level; *slots the replicas it could hold at once (level S_ALL). */
static void judge_node(const pool_view *v, const gp_feasible_job *j, int node, offer *o,
                       int64_t *slots)
{
    const gp_cluster *c = v->c;
    const gp_node *n = gp_cluster_node(c, node);
    const gp_request *r = j->req;
    int64_t most = j->replicas, gslots = 0;
    memset(o, 0, sizeof(*o));
    for (int g = 0; g < n->ngpus && r->kind != GP_REQ_NONE; g++) {
        const gp_gpu *u = gp_cluster_gpu(c, node, g);
        if (!(v->allowed & (1ull << u->model)) ||
            (r->kind == GP_REQ_MIG && !mig_of(c, u->model, r->mig_profile))) {
            continue;
        }
        o->gpus |= 1u << g;
        o->dim[S_GPUMEM] = u->mem_mib > o->dim[S_GPUMEM] ? u->mem_mib : o->dim[S_GPUMEM];
        if (r->kind != GP_REQ_WHOLE) {
            gslots += gpu_slots(c, u, r, most);
        }
    }
    int count = __builtin_popcount(o->gpus);
    o->dim[S_COUNT] = count;
    o->dim[S_CPU] = n->cpu_milli;
    o->dim[S_MEM] = n->memory_mib;
    bool nvl = r->kind == GP_REQ_WHOLE && r->gpu_count > 1 && j->topology == GP_TOPO_REQUIRE_NVLINK;
    bool pass[S_ALL] = {
        [S_CAPS] = (n->caps & r->needs) == r->needs,
        [S_GPU] = r->kind == GP_REQ_NONE || o->gpus != 0,
        [S_COUNT] = r->kind != GP_REQ_WHOLE || count >= r->gpu_count,
        [S_NVLINK] = !nvl || gpus_clique(c, node, o->gpus, r->gpu_count),
        [S_GPUMEM] = r->kind != GP_REQ_FRACTION || r->gpu_mem_mib <= o->dim[S_GPUMEM],
        [S_CPU] = n->cpu_milli >= r->cpu_milli,
        [S_MEM] = n->memory_mib >= r->memory_mib,
    };
    while (o->level < S_ALL && pass[o->level]) {
        o->level++;
    }
    *slots = 0;
    if (o->level < S_ALL) {
        return;
    }
    *slots = r->kind == GP_REQ_NONE    ? most
             : r->kind == GP_REQ_WHOLE ? count / r->gpu_count
                                       : gslots;
    if (r->cpu_milli > 0 && n->cpu_milli / r->cpu_milli < *slots) {
        *slots = n->cpu_milli / r->cpu_milli;
    }
    if (r->memory_mib > 0 && n->memory_mib / r->memory_mib < *slots) {
        *slots = n->memory_mib / r->memory_mib;
    }
}

/* The largest set of pairwise NVLink-connected allowed GPUs on any node reaching S_NVLINK. */
static int best_clique(const pool_view *v, const gp_feasible_job *j)
{
    int best = 1;
    for (int i = 0; i < v->n; i++) {
        int node = node_at(v, i);
        offer o;
        int64_t slots;
        if (!gp_cluster_node(v->c, node)) {
            continue;
        }
        judge_node(v, j, node, &o, &slots);
        for (int k = j->req->gpu_count - 1; o.level >= S_NVLINK && k > best; k--) {
            if (gpus_clique(v->c, node, o.gpus, k)) {
                best = k;
            }
        }
    }
    return best;
}

static void mig_list(const pool_view *v, char *buf, size_t cap)
{
    bool seen[GP_MIG_GEOMETRY_COUNT] = {false};
    buf[0] = '\0';
    for (int m = 0; m < gp_cluster_model_count(v->c) && m < 64; m++) {
        gp_mig_geometry g = gp_cluster_model_info(v->c, m)->mig;
        if (!(v->allowed & (1ull << m)) || g == GP_MIG_NONE || seen[g]) {
            continue;
        }
        seen[g] = true;
        int np;
        const gp_mig_profile *p = gp_mig_profiles(g, &np);
        for (int k = 0; k < np; k++) {
            if (!strstr(buf, p[k].name)) {
                list_add(buf, cap, p[k].name);
            }
        }
    }
}

/* The message for the first stage no node passes; best[s] is the most a node reaching s has. */
static int stage_error(const pool_view *v, const gp_feasible_job *j, int stage, const int64_t *best,
                       gp_diag *d)
{
    const gp_request *r = j->req;
    const char *of = v->restricted ? " of the allowed models" : "";
    const char *with = r->kind != GP_REQ_NONE ? " with the GPUs the job asks for" : "";
    char list[300], a[32], b[32];
    switch (stage) {
    case S_CAPS:
        return gp_diag_set(d, GP_EINVAL, "%s", GP_FEASIBLE_NO_RUNTIME);
    case S_GPU:
        if (r->kind != GP_REQ_MIG) { /* check_models saw one: only a node out of range */
            return gp_diag_set(d, GP_EINVAL, "%s: no node has a GPU%s", gpu_field(r), of);
        }
        mig_list(v, list, sizeof(list));
        return gp_diag_set(d, GP_EINVAL,
                           "resources.mig_profile: no GPU%s in the pool has MIG profile \"%s\"; "
                           "%s%s",
                           of, r->mig_profile, list[0] ? "profiles in the pool: " : "",
                           list[0] ? list : "no GPU of them is MIG-capable");
    case S_COUNT:
        return gp_diag_set(d, GP_EINVAL,
                           "resources.gpus: the job asks for %d GPUs per replica, but no node "
                           "has more than %lld GPUs%s",
                           r->gpu_count, (long long)best[S_COUNT], of);
    case S_NVLINK:
        return gp_diag_set(d, GP_EINVAL,
                           "topology: require-nvlink needs %d GPUs%s pairwise NVLink-connected on "
                           "one node, but no node has more than %d",
                           r->gpu_count, of, best_clique(v, j));
    case S_GPUMEM:
        fmt_mib(a, sizeof(a), best[S_GPUMEM]);
        fmt_mib(b, sizeof(b), r->gpu_mem_mib);
        return gp_diag_set(d, GP_EINVAL,
                           "resources.gpu_memory_mib: the job asks for %s of one GPU, but the "
                           "largest GPU%s has %s",
                           b, of, a);
    case S_CPU:
        fmt_cores(a, sizeof(a), best[S_CPU]);
        fmt_cores(b, sizeof(b), r->cpu_milli);
        return gp_diag_set(d, GP_EINVAL,
                           "resources.cpu_milli: the job asks for %s CPU cores per replica, but no "
                           "node%s has more than %s",
                           b, with, a);
    default:
        fmt_mib(a, sizeof(a), best[S_MEM]);
        fmt_mib(b, sizeof(b), r->memory_mib);
        return gp_diag_set(d, GP_EINVAL,
                           "resources.memory_mib: the job asks for %s of memory per replica, but "
                           "no node%s has more than %s",
                           b, with, a);
    }
}

int gp_feasible_pool(const gp_cluster *c, const int *nodes, int nnodes, const gp_feasible_job *j,
                     gp_diag *d)
{
    pool_view v = {c, nodes, nodes ? nnodes : gp_cluster_node_count(c), 0, 0, false};
    uint64_t present = 0;
    for (int i = 0; i < v.n; i++) {
        const gp_node *n = gp_cluster_node(c, node_at(&v, i));
        present |= n ? n->models : 0;
    }
    return gp_feasible_pool_models(c, nodes, nnodes, present, j, d);
}

int gp_feasible_pool_models(const gp_cluster *c, const int *nodes, int nnodes, uint64_t present,
                            const gp_feasible_job *j, gp_diag *d)
{
    pool_view v = {c, nodes, nodes ? nnodes : gp_cluster_node_count(c), present, 0, false};
    if (v.n == 0) {
        return 0; /* nothing registered yet: nothing to judge against */
    }
    int rc = check_models(&v, j, d);
    if (rc < 0) {
        return rc;
    }
    int64_t best[S_ALL] = {0}, room = 0;
    int top = 0;
    for (int i = 0; i < v.n; i++) {
        int node = node_at(&v, i);
        if (!gp_cluster_node(c, node)) {
            continue;
        }
        offer o;
        int64_t slots;
        judge_node(&v, j, node, &o, &slots);
        for (int s = 0; s <= o.level && s < S_ALL; s++) {
            best[s] = o.dim[s] > best[s] ? o.dim[s] : best[s];
        }
        top = o.level > top ? o.level : top;
        room += room < j->replicas ? slots : 0;
        if (top == S_ALL && room >= j->replicas) {
            return 0; /* the nodes after this one cannot change the verdict */
        }
    }
    if (top < S_ALL) {
        return stage_error(&v, j, top, best, d);
    }
    if (room < j->replicas) {
        return gp_diag_set(d, GP_EINVAL,
                           "replicas: %d replicas placed together, but the pool has room for at "
                           "most %lld of them at once",
                           j->replicas, (long long)room);
    }
    return 0;
}

/* ---- limits ---- */

/* GPU compute and memory one replica of r takes on model m; false when m cannot hold it. The
 * scheduler's own rule (sched_limits.c), so both judge alike. */
static bool need_on(const gp_cluster *c, const gp_request *r, int m, int64_t *milli, int64_t *mem)
{
    const gp_gpu_model *gm = gp_cluster_model_info(c, m);
    const gp_mig_profile *p = NULL;
    *milli = req_gpu_milli(r);
    switch (r->kind) {
    case GP_REQ_WHOLE:
        *mem = gm->mem_mib * r->gpu_count;
        return true;
    case GP_REQ_FRACTION:
        *mem = r->gpu_mem_mib;
        return true;
    case GP_REQ_MIG:
        p = mig_of(c, m, r->mig_profile);
        *mem = p ? gm->mem_mib * p->memory_slices / GP_MIG_MEMORY_SLICES : 0;
        return p != NULL;
    default:
        *mem = 0;
        return true;
    }
}

enum { B_NONE, B_MODEL, B_MEM, B_QMEM };

/* Why model m (-1: GPU memory only) can never hold the job's replicas (B_*), with the totals
 * it would take. */
static int model_block(const gp_sched_tenant *t, const gp_sched_queue *q, int m, int64_t milli,
                       int64_t mem)
{
    if (t && m >= 0 && t->quota_model_milli[m] >= 0 && milli > t->quota_model_milli[m]) {
        return B_MODEL;
    }
    if (t && t->quota_gpu_mem_mib >= 0 && mem > t->quota_gpu_mem_mib) {
        return B_MEM;
    }
    return q && q->capability.gpu_mem_mib >= 0 && mem > q->capability.gpu_mem_mib ? B_QMEM : B_NONE;
}

/* mib written in the unit a limit was set in ("120 GiB", "1536 MiB"), as the scheduler's
 * reasons write it. */
static void fmt_limit_mem(char *buf, size_t size, int64_t mib, int64_t limit_mib)
{
    char n[24];
    gp_sched_fmt_mem(n, sizeof(n), mib, limit_mib);
    snprintf(buf, size, "%s %s", n, gp_sched_mem_unit(limit_mib));
}

static int model_error(const gp_cluster *c, const gp_feasible_job *j, const gp_sched_tenant *t,
                       const gp_sched_queue *q, int m, int why, int others, gp_diag *d)
{
    int64_t milli, mem;
    need_on(c, j->req, m, &milli, &mem);
    milli *= j->replicas;
    mem *= j->replicas;
    const char *name = gp_cluster_model_info(c, m)->name;
    const char *more = others ? " (and no other allowed model has room)" : "";
    char a[32], b[32];
    if (why == B_MODEL) {
        fmt_gpus(a, sizeof(a), milli);
        fmt_gpus(b, sizeof(b), t->quota_model_milli[m]);
        return gp_diag_set(d, GP_EINVAL,
                           "%s: the job needs %s %s GPUs in all, more than tenant %s's quota of %s "
                           "for that model%s",
                           gpu_field(j->req), a, name, t->name, b, more);
    }
    int64_t limit = why == B_MEM ? t->quota_gpu_mem_mib : q->capability.gpu_mem_mib;
    fmt_limit_mem(a, sizeof(a), mem, limit);
    fmt_limit_mem(b, sizeof(b), limit, limit);
    if (why == B_MEM) {
        return gp_diag_set(d, GP_EINVAL,
                           "%s: the job needs %s of GPU memory in all (on %s), more than tenant "
                           "%s's quota of %s%s",
                           gpu_field(j->req), a, name, t->name, b, more);
    }
    return gp_diag_set(d, GP_EINVAL,
                       "queue: queue %s may hold at most %s of GPU memory; the job needs %s in all "
                       "(on %s)%s",
                       q->name, b, a, name, more);
}

/* Per-model quotas, GPU memory quota and capability: GP_EINVAL when no allowed model could
 * ever hold the job; else *min_mem, the least GPU memory it takes on a model that could. */
static int check_models_limits(const gp_cluster *c, const gp_feasible_job *j,
                               const gp_sched_tenant *t, const gp_sched_queue *q, int64_t *min_mem,
                               gp_diag *d)
{
    uint64_t allowed = j->req->allowed_models;
    if (j->nmodels > 0) {
        allowed = 0;
        for (int i = 0; i < j->nmodels; i++) {
            allowed |= gp_cluster_models_named(c, j->models[i]);
        }
    }
    int first = -1, why = B_NONE, blocked = 0;
    *min_mem = -1;
    for (int m = 0; m < gp_cluster_model_count(c) && m < GP_MAX_MODELS; m++) {
        int64_t milli, mem;
        if ((allowed && !(allowed & (1ull << m))) || !need_on(c, j->req, m, &milli, &mem)) {
            continue;
        }
        int b = model_block(t, q, m, milli * j->replicas, mem * j->replicas);
        if (b == B_NONE) {
            *min_mem = *min_mem < 0 || mem * j->replicas < *min_mem ? mem * j->replicas : *min_mem;
        } else if (blocked++ == 0) {
            first = m;
            why = b;
        }
    }
    if (*min_mem < 0 && first >= 0) {
        return model_error(c, j, t, q, first, why, blocked - 1, d);
    }
    return 0;
}

/* The queue's capability over GPU compute, CPU and memory. */
static int check_capability(const gp_sched_queue *q, const gp_res *need, gp_diag *d)
{
    static const char *const what[3] = {"GPUs", "CPU cores", "memory"};
    const int64_t caps[3] = {q->capability.gpu_milli, q->capability.cpu_milli,
                             q->capability.memory_mib};
    const int64_t needs[3] = {need->gpu_milli, need->cpu_milli, need->memory_mib};
    for (int i = 0; i < 3; i++) {
        if (caps[i] >= 0 && needs[i] > caps[i]) {
            char a[32], b[32];
            void (*fmt)(char *, size_t, int64_t) = i == 0 ? fmt_gpus : i == 1 ? fmt_cores : fmt_mib;
            fmt(a, sizeof(a), caps[i]);
            fmt(b, sizeof(b), needs[i]);
            return gp_diag_set(d, GP_EINVAL,
                               "queue: queue %s may hold at most %s %s; the job needs %s in all",
                               q->name, a, i == 2 ? "of memory" : what[i], b);
        }
    }
    return 0;
}

/* A job that is not preemptible may not take its queue past its guarantee: one that needs more
 * than the whole guarantee never runs. The scheduler's rule: GPU compute counts when the
 * guarantee sets it (>= 0), the rest only above 0. */
static int check_guarantee(const gp_feasible_job *j, const gp_sched_queue *q, const gp_res *need,
                           gp_diag *d)
{
    static const char *const what[4] = {"GPUs", "of GPU memory", "CPU cores", "of memory"};
    const gp_res *g = &q->guarantee;
    const int64_t owed[4] = {g->gpu_milli, g->gpu_mem_mib, g->cpu_milli, g->memory_mib};
    const int64_t needs[4] = {need->gpu_milli, need->gpu_mem_mib, need->cpu_milli,
                              need->memory_mib};
    for (int i = 0; i < 4 && !j->preemptible; i++) {
        if (needs[i] > 0 && (i == 0 ? owed[i] >= 0 : owed[i] > 0) && needs[i] > owed[i]) {
            char a[32], b[32];
            void (*fmt)(char *, size_t, int64_t) = i == 0 ? fmt_gpus : i == 2 ? fmt_cores : fmt_mib;
            fmt(a, sizeof(a), needs[i]);
            fmt(b, sizeof(b), owed[i]);
            return gp_diag_set(d, GP_EINVAL,
                               "preemptible: the job needs %s %s in all, more than queue %s is "
                               "owed (%s %s); only a preemptible job may go beyond its queue's "
                               "guarantee",
                               a, what[i], q->name, b, what[i]);
        }
    }
    return 0;
}

int gp_feasible_limits(const gp_cluster *c, const gp_feasible_job *j, const gp_sched_tenant *t,
                       const gp_sched_queue *q, gp_diag *d)
{
    const gp_request *r = j->req;
    gp_res need = {req_gpu_milli(r) * j->replicas, 0, r->cpu_milli * j->replicas,
                   r->memory_mib * j->replicas};
    if (t && t->quota_gpu_milli >= 0 && need.gpu_milli > t->quota_gpu_milli) {
        char a[32], b[32];
        fmt_gpus(a, sizeof(a), need.gpu_milli);
        fmt_gpus(b, sizeof(b), t->quota_gpu_milli);
        return gp_diag_set(d, GP_EINVAL,
                           "%s: the job needs %s GPUs in all, more than tenant %s's quota of %s "
                           "GPUs",
                           gpu_field(r), a, t->name, b);
    }
    int64_t min_mem = -1;
    if (r->kind == GP_REQ_FRACTION && r->gpu_mem_mib > 0) {
        /* The same on every model: judged even before any node has registered. */
        int64_t mem = r->gpu_mem_mib * j->replicas;
        int why = model_block(t, q, -1, 0, mem);
        if (why != B_NONE) {
            char a[32], b[32];
            int64_t limit = why == B_MEM ? t->quota_gpu_mem_mib : q->capability.gpu_mem_mib;
            fmt_limit_mem(a, sizeof(a), mem, limit);
            fmt_limit_mem(b, sizeof(b), limit, limit);
            return why == B_MEM ? gp_diag_set(d, GP_EINVAL,
                                              "resources.gpu_memory_mib: the job needs %s of GPU "
                                              "memory in all, more than tenant %s's quota of %s",
                                              a, t->name, b)
                                : gp_diag_set(d, GP_EINVAL,
                                              "queue: queue %s may hold at most %s of GPU memory; "
                                              "the job needs %s in all",
                                              q->name, b, a);
        }
    }
    if (r->kind != GP_REQ_NONE) {
        int rc = check_models_limits(c, j, t, q, &min_mem, d);
        if (rc < 0) {
            return rc;
        }
    }
    need.gpu_mem_mib = min_mem > 0 ? min_mem : 0;
    int rc = q ? check_capability(q, &need, d) : 0;
    return rc == 0 && q ? check_guarantee(j, q, &need, d) : rc;
}

const char *gp_feasible_why(const char *msg)
{
    const char *p = strstr(msg, ": ");
    if (!p) {
        return msg;
    }
    for (const char *s = msg; s < p; s++) {
        if (*s == ' ') {
            return msg; /* "FIELD: " has no space in FIELD */
        }
    }
    return p + 2;
}
