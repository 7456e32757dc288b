/*
 * The failure cache of a cycle: request shapes known not to fit.
 *
 * Within a cycle free capacity only shrinks, except when victims are evicted; so once a shape
 * failed, it fails again until the next eviction (which bumps cy->gen and so invalidates every
 * entry). More than that: a shape that asks for at least as much in every size (CPU, memory,
 * GPU count, compute and memory of a fraction, replicas) as one that failed, with everything
 * else equal (kind, allowed models, MIG profile, capabilities needed, constraints, policy, and for
 * preemption the priority and queue), fails too: every filter is monotone in those sizes. A shape
 * is a class key (everything but the sizes) plus its sizes; each class keeps the minimal failed
 * sizes (a Pareto frontier, small in practice), so 100,000 pending jobs of many shapes cost a few
 * placement attempts, not 100,000.
 *
 * Modes FAIL_RESERVED and FAIL_POOL record an answer rather than a failure, so they match exactly
 * only.
 */
#include "core/grow.h"
#include "core/sched_impl.h"

#include <stdio.h>
#include <string.h>

typedef struct class_key {
    int32_t kind;
    int32_t mode;
    uint64_t allowed_models;
    char mig_profile[16];
    int32_t pol;
    int32_t flags;
    int32_t priority; /* preemption by priority only */
    int32_t queue;    /* reclaim only */
    int32_t spare_ok; /* hot spares */
    int64_t runtime;  /* maintenance windows */
    uint64_t names;   /* FAIL_POOL: the model names the job gives (its reason names them) */
    uint32_t needs;   /* capabilities the nodes must have */
    uint64_t place;   /* the job's constraints (constraints_key) */
} class_key;

_Static_assert(sizeof(class_key) <= FAIL_KEY, "class key too large");

static uint64_t names_hash(const gp_sched_job *j)
{
    uint64_t h = 0x84222325cbf29ce4ull;
    for (int i = 0; j->model_names && i < j->nmodel_names; i++) {
        for (const char *p = j->model_names[i]; *p; p++) {
            h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
        }
        h = (h ^ 0xff) * 0x100000001b3ull; /* between names */
    }
    return h;
}

static void make_key(const job_ctx *jc, int mode, char *key, int64_t *dims)
{
    const gp_request *r = &jc->req;
    class_key k;
    memset(&k, 0, sizeof(k));
    k.kind = r->kind;
    k.mode = mode;
    /* The pool is judged on the job's own models, not those its limits narrowed them to. */
    k.allowed_models = mode == FAIL_POOL ? jc->job->req.allowed_models : r->allowed_models;
    if (mode == FAIL_POOL) {
        k.names = names_hash(jc->job);
    }
    if (r->kind == GP_REQ_MIG) {
        memcpy(k.mig_profile, r->mig_profile, sizeof(k.mig_profile) - 1);
    }
    k.pol = jc->pol;
    k.spare_ok = r->spare_ok;
    k.runtime = r->runtime_ms;
    k.needs = r->needs;
    k.place = constraints_key(jc);
    k.flags = jc->nvl_require | jc->nvl_prefer << 1 | jc->cold << 2 | jc->may_reserved << 3;
    if (mode == FAIL_PREEMPT) {
        k.flags |= jc->reclaim << 4 | jc->job->can_preempt << 5;
        k.priority = jc->job->can_preempt ? jc->job->priority : 0;
        k.queue = jc->reclaim ? jc->job->queue : 0;
    }
    memset(key, 0, FAIL_KEY);
    memcpy(key, &k, sizeof(k));
    memset(dims, 0, sizeof(int64_t) * FAIL_DIMS);
    dims[0] = r->cpu_milli;
    dims[1] = r->memory_mib;
    dims[2] = r->kind == GP_REQ_WHOLE ? r->gpu_count : 0;
    dims[3] = r->kind == GP_REQ_FRACTION ? r->gpu_milli : 0;
    dims[4] = r->kind == GP_REQ_FRACTION ? r->gpu_mem_mib : 0;
    dims[5] = jc->job->replicas;
}

static uint64_t key_hash(const char *key)
{
    uint64_t h = 0, w;
    for (size_t i = 0; i < FAIL_KEY; i += sizeof(w)) {
        memcpy(&w, key + i, sizeof(w));
        h = gp_hash64(h ^ w) + 0x9e3779b97f4a7c15ull;
    }
    return h == UINT64_MAX ? 0 : h;
}

/* -1: a < b somewhere and never above; 0: equal; 1: a >= b everywhere, above somewhere;
 * 2: neither. */
static int dims_cmp(const int64_t *a, const int64_t *b)
{
    bool below = false, above = false;
    for (int i = 0; i < FAIL_DIMS; i++) {
        below |= a[i] < b[i];
        above |= a[i] > b[i];
    }
    return below && above ? 2 : below ? -1 : above ? 1 : 0;
}

static int head(const cycle *cy, uint64_t h)
{
    uint64_t first;
    return gp_u64map_get(&cy->fail_index, h, &first) ? (int)first : -1;
}

const char *fail_lookup(cycle *cy, const job_ctx *jc, int mode, bool *exact, int *fitted)
{
    char key[FAIL_KEY];
    int64_t dims[FAIL_DIMS];
    make_key(jc, mode, key, dims);
    for (int i = head(cy, key_hash(key)); i >= 0; i = cy->fails[i].next) {
        const fail_entry *e = &cy->fails[i];
        if (e->gen != cy->gen || memcmp(e->key, key, FAIL_KEY) != 0) {
            continue;
        }
        int c = dims_cmp(dims, e->dims);
        if (c == 0 || (c == 1 && mode != FAIL_RESERVED && mode != FAIL_POOL)) {
            if (exact) {
                *exact = c == 0;
            }
            if (fitted) {
                *fitted = e->fitted;
            }
            return e->reason;
        }
    }
    return NULL;
}

int fail_record(cycle *cy, const job_ctx *jc, int mode, const char *reason, int fitted)
{
    char key[FAIL_KEY];
    int64_t dims[FAIL_DIMS];
    make_key(jc, mode, key, dims);
    uint64_t h = key_hash(key);
    int slot = -1;
    for (int i = head(cy, h); i >= 0; i = cy->fails[i].next) {
        fail_entry *e = &cy->fails[i];
        bool same = memcmp(e->key, key, FAIL_KEY) == 0;
        /* An entry of an older generation, or larger than this one, is no longer needed. */
        if (same && (e->gen != cy->gen || dims_cmp(e->dims, dims) >= 0)) {
            if (slot < 0) {
                slot = i;
            } else {
                e->gen = 0; /* never matches again (generations start at 1) */
            }
        }
    }
    if (slot < 0) {
        if (gp_grow((void **)&cy->fails, &cy->cap_fails, cy->nfails + 1, sizeof(fail_entry), 64) <
            0) {
            return GP_ENOMEM;
        }
        slot = cy->nfails;
        cy->fails[slot].next = head(cy, h);
        if (gp_u64map_put(&cy->fail_index, h, (uint64_t)slot) < 0) {
            return GP_ENOMEM;
        }
        cy->nfails++;
    }
    fail_entry *e = &cy->fails[slot];
    e->gen = cy->gen;
    e->fitted = fitted;
    memcpy(e->dims, dims, sizeof(e->dims));
    memcpy(e->key, key, FAIL_KEY);
    snprintf(e->reason, sizeof(e->reason), "%s", reason);
    return 0;
}
