/*
 * The placer: filter, score, pick, over equivalence classes of nodes.
 *
 * Two nodes are in one class when everything the filter and the scores read is equal: capacity,
 * free CPU and memory, schedulability, capabilities, labels, workload classes (when the policy
 * reads them), and the GPUs as a multiset of (model, mode, compute and memory left, MIG state and
 * layout). A class's score for a request never changes, so it is computed once and cached under
 * (class, request). For a MIG request the score ranks first by what the placement does to the
 * node's MIG instances (gp_mig_node_cost: reuse an idle one, else create one destroying none, else
 * destroy the least), and only then by the policy's score. A placement looks at each live class
 * once: O(live classes), not O(nodes); in a pool of identical empty nodes that is one class.
 *
 * Picking: the highest score wins; among classes that tie, one is drawn with probability
 * proportional to its member count, then a member uniformly, which is a uniform draw among all
 * tying nodes. With a tie rank set, the tying node of lowest rank wins instead (each class
 * remembers its lowest-ranked member).
 *
 * Many request shapes: each live class carries a summary of what it offers (placer_fit, kept
 * in the live list with its member count and a member, so a decision reads one array in order
 * and touches a class or a node only to score it), and a class that cannot
 * hold the request is passed over without a look at the cache or the node. Scores are cached
 * per shape in a table of their own (placer_scores), so a decision probes one small table.
 * Neither changes a decision: the summary is a necessary condition of gp_node_fits, and the
 * classes are still visited in the live order, so ties draw from the rng exactly as a scan of
 * every class would (gp_placer_set_plain runs that scan; the tests compare the two).
 *
 * Memory: classes that lose all members stay (the state often recurs) until there are four
 * times as many classes as nodes; then the classes are rebuilt from the nodes, and the cached
 * scores of those that survive follow them to their new numbers. The score cache holds at most
 * PLACER_SCORES_MAX entries (at most 192 MiB): when full, the scores of classes without members
 * go, and if the live ones alone fill three quarters of it, all of it.
 */
#include "core/cluster_impl.h"
#include "core/grow.h"
#include "core/placer.h"
#include "core/policy_impl.h"
#include "core/u64map.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_WORDS  8
#define GPU_WORDS     5
#define MAX_KEY_WORDS (HEADER_WORDS + GPU_WORDS * GP_MAX_GPUS_PER_NODE)

/* An entry of the live list: a class with members, and copies of what a decision reads. */
typedef struct live_class {
    int id;
    int nmembers; /* classes[id].nmembers */
    int rep;      /* classes[id].members[0]: the member scored */
    placer_fit fit;
} live_class;

typedef struct node_class {
    uint64_t hash;
    uint64_t *key;
    int keylen;
    int next; /* next class with the same hash, or -1 */
    int *members;
    int nmembers, cap;
    int live_pos;   /* index in placer.live, or -1 */
    int min_member; /* member of lowest tie rank, or -1 when not known */
    placer_fit fit; /* what the class offers (same for every member) */
} node_class;

struct gp_placer {
    gp_cluster *c;
    const gp_policy *p;
    int nnodes;       /* nodes classified */
    bool dynamic_mig; /* the cluster flag the cached scores assume */
    int *node_class;
    int *node_pos;
    node_class *classes;
    int nclasses, cap_classes;
    gp_u64map class_index; /* key hash -> first class */
    live_class *live;
    int nlive;
    gp_request *requests;
    int nrequests, cap_requests;
    gp_u64map request_index; /* request hash -> request id + 1, chained by linear search */
    placer_scores scores;
    const uint32_t *rank; /* tie-break by lowest rank instead of at random (borrowed) */
    bool plain;           /* no summaries, no cache: the reference scan (tests) */
    int spare_classes;    /* classes kept beyond four per node before a rebuild */
    long rebuilds;
};

void gp_placer_set_tie_rank(gp_placer *pl, const uint32_t *rank)
{
    pl->rank = rank;
    for (int i = 0; i < pl->nclasses; i++) {
        pl->classes[i].min_member = -1;
    }
}

/* The member of class id with the lowest tie rank. */
static int min_member(gp_placer *pl, int id)
{
    node_class *k = &pl->classes[id];
    if (k->min_member < 0) {
        k->min_member = k->members[0];
        for (int m = 1; m < k->nmembers; m++) {
            if (pl->rank[k->members[m]] < pl->rank[k->min_member]) {
                k->min_member = k->members[m];
            }
        }
    }
    return k->min_member;
}

/* ---- class keys ---- */

static uint64_t mix(uint64_t h, uint64_t w)
{
    return gp_hash64(h ^ w) + 0x9e3779b97f4a7c15ull;
}

static uint64_t labels_hash(const gp_node *n)
{
    uint64_t h = 0;
    for (int i = 0; i < n->nlabels; i++) {
        uint64_t lh = 1469598103934665603ull;
        for (const char *s = n->labels[i].key; *s; s++) {
            lh = (lh ^ (unsigned char)*s) * 1099511628211ull;
        }
        lh = (lh ^ '=') * 1099511628211ull;
        for (const char *s = n->labels[i].value; *s; s++) {
            lh = (lh ^ (unsigned char)*s) * 1099511628211ull;
        }
        h += gp_hash64(lh); /* order-independent */
    }
    return h;
}

static int gpu_cmp(const uint64_t *a, const uint64_t *b)
{
    for (int i = 0; i < GPU_WORDS; i++) {
        if (a[i] != b[i]) {
            return a[i] < b[i] ? -1 : 1;
        }
    }
    return 0;
}

static int build_key(const gp_placer *pl, int node, uint64_t *key)
{
    const gp_node *n = &pl->c->nodes[node];
    key[0] = (uint64_t)n->cpu_milli;
    key[1] = (uint64_t)n->memory_mib;
    key[2] = (uint64_t)n->cpu_free;
    key[3] = (uint64_t)n->mem_free;
    key[4] = gp_policy_uses_tags(pl->p) ? n->tag_mask : 0;
    key[5] = labels_hash(n) ^ (n->schedulable ? 1ull << 63 : 0);
    key[6] = (uint64_t)n->ngpus | (uint64_t)n->caps << 32;
    key[7] = (uint64_t)n->window_ms;
    uint64_t *gk = key + HEADER_WORDS;
    for (int g = 0; g < n->ngpus; g++) {
        const gp_gpu *u = cluster_gpu_const(pl->c, node, g);
        uint64_t t[GPU_WORDS] = {
            (uint64_t)u->model << 48 | (uint64_t)u->mode << 40 | (uint64_t)u->mig_mem_used << 32 |
                (uint64_t)u->mig_compute_used << 24 | (uint64_t)u->mig_dynamic << 16 |
                (uint64_t)u->avail << 8,
            (uint64_t)(uint32_t)u->milli_free,
            (uint64_t)u->mem_free_mib,
            (uint64_t)u->mem_mib,
            0,
        };
        memcpy(&t[4], u->mig_layout, sizeof(u->mig_layout));
        int k = g;
        while (k > 0 && gpu_cmp(gk + (k - 1) * GPU_WORDS, t) > 0) {
            memcpy(gk + k * GPU_WORDS, gk + (k - 1) * GPU_WORDS, sizeof(t));
            k--;
        }
        memcpy(gk + k * GPU_WORDS, t, sizeof(t));
    }
    return HEADER_WORDS + GPU_WORDS * n->ngpus;
}

static uint64_t key_hash(const uint64_t *key, int len)
{
    uint64_t h = (uint64_t)len;
    for (int i = 0; i < len; i++) {
        h = mix(h, key[i]);
    }
    return h == UINT64_MAX ? 0 : h;
}

/* ---- classes ---- */

static int find_or_add_class(gp_placer *pl, int node, const uint64_t *key, int len)
{
    uint64_t h = key_hash(key, len), first;
    int head = gp_u64map_get(&pl->class_index, h, &first) ? (int)first : -1;
    for (int id = head; id >= 0; id = pl->classes[id].next) {
        const node_class *k = &pl->classes[id];
        if (k->keylen == len && memcmp(k->key, key, sizeof(uint64_t) * (size_t)len) == 0) {
            return id;
        }
    }
    if (gp_grow((void **)&pl->classes, &pl->cap_classes, pl->nclasses + 1, sizeof(node_class),
                256) < 0) {
        return GP_ENOMEM;
    }
    node_class *k = &pl->classes[pl->nclasses];
    memset(k, 0, sizeof(*k));
    k->key = malloc(sizeof(uint64_t) * (size_t)len);
    if (!k->key || gp_u64map_put(&pl->class_index, h, (uint64_t)pl->nclasses) < 0) {
        free(k->key);
        return GP_ENOMEM;
    }
    memcpy(k->key, key, sizeof(uint64_t) * (size_t)len);
    k->keylen = len;
    k->hash = h;
    k->next = head;
    k->live_pos = -1;
    k->min_member = -1;
    placer_fit_of(pl->c, node, &k->fit);
    return pl->nclasses++;
}

static void class_remove(gp_placer *pl, int node)
{
    int id = pl->node_class[node];
    if (id < 0) {
        return;
    }
    node_class *k = &pl->classes[id];
    int pos = pl->node_pos[node];
    int last = k->members[--k->nmembers];
    k->members[pos] = last;
    pl->node_pos[last] = pos;
    pl->node_class[node] = -1;
    if (k->min_member == node) {
        k->min_member = -1;
    }
    if (k->nmembers == 0) {
        live_class moved = pl->live[--pl->nlive];
        pl->live[k->live_pos] = moved;
        pl->classes[moved.id].live_pos = k->live_pos;
        k->live_pos = -1;
    } else {
        pl->live[k->live_pos].nmembers = k->nmembers;
        pl->live[k->live_pos].rep = k->members[0];
    }
}

static int class_add(gp_placer *pl, int id, int node)
{
    node_class *k = &pl->classes[id];
    if (gp_grow((void **)&k->members, &k->cap, k->nmembers + 1, sizeof(int), 4) < 0) {
        return GP_ENOMEM;
    }
    pl->node_pos[node] = k->nmembers;
    k->members[k->nmembers++] = node;
    if (pl->rank && k->min_member >= 0 && pl->rank[node] < pl->rank[k->min_member]) {
        k->min_member = node;
    }
    pl->node_class[node] = id;
    if (k->nmembers == 1) {
        k->live_pos = pl->nlive;
        pl->live[pl->nlive++] = (live_class){.id = id, .fit = k->fit};
    }
    pl->live[k->live_pos].nmembers = k->nmembers;
    pl->live[k->live_pos].rep = k->members[0];
    return 0;
}

static int classify(gp_placer *pl, int node)
{
    uint64_t key[MAX_KEY_WORDS];
    int len = build_key(pl, node, key);
    int id = find_or_add_class(pl, node, key, len);
    if (id < 0) {
        return id;
    }
    if (id == pl->node_class[node]) {
        return 0;
    }
    class_remove(pl, node);
    return class_add(pl, id, node);
}

static void drop_classes(gp_placer *pl)
{
    for (int i = 0; i < pl->nclasses; i++) {
        free(pl->classes[i].key);
        free(pl->classes[i].members);
    }
    pl->nclasses = 0;
    pl->nlive = 0;
    gp_u64map_clear(&pl->class_index);
    for (int i = 0; i < pl->nnodes; i++) {
        pl->node_class[i] = -1;
    }
}

static int class_renumbered(void *ctx, int id)
{
    return ((const int *)ctx)[id];
}

/* Builds the classes afresh from the nodes, in node order (dropping those without members).
 * Cached scores follow their class to its new number: a node off the change list is in the
 * state its old class describes, so its old and new classes have one key. */
static int rebuild(gp_placer *pl)
{
    gp_cluster *c = pl->c;
    int *old = malloc(sizeof(int) * (size_t)(pl->nnodes + 1));
    int *to = malloc(sizeof(int) * (size_t)(pl->nclasses + 1));
    if (old) {
        memcpy(old, pl->node_class, sizeof(int) * (size_t)pl->nnodes);
    }
    for (int i = 0; to && i < pl->nclasses; i++) {
        to[i] = -1;
    }
    drop_classes(pl);
    pl->rebuilds++;
    int rc = 0;
    for (int i = 0; i < pl->nnodes && rc == 0; i++) {
        rc = classify(pl, i);
    }
    if (rc == 0 && old && to) {
        for (int i = 0; i < pl->nnodes; i++) {
            if (!c->changed_flag[i] && old[i] >= 0) {
                to[old[i]] = pl->node_class[i];
            }
        }
        placer_scores_prune(&pl->scores, class_renumbered, to);
    } else {
        placer_scores_clear(&pl->scores);
    }
    free(old);
    free(to);
    return rc;
}

/* Brings the classes up to date with the cluster's change list. */
static int sync(gp_placer *pl)
{
    gp_cluster *c = pl->c;
    if (c->nnodes != pl->nnodes) {
        int *nc = realloc(pl->node_class, sizeof(int) * (size_t)c->nnodes);
        if (!nc) {
            return GP_ENOMEM;
        }
        pl->node_class = nc;
        int *np = realloc(pl->node_pos, sizeof(int) * (size_t)c->nnodes);
        if (!np) {
            return GP_ENOMEM;
        }
        pl->node_pos = np;
        live_class *live = realloc(pl->live, sizeof(live_class) * (size_t)c->nnodes);
        if (!live) {
            return GP_ENOMEM;
        }
        pl->live = live;
        for (int i = pl->nnodes; i < c->nnodes; i++) {
            pl->node_class[i] = -1;
        }
        pl->nnodes = c->nnodes;
        placer_scores_clear(&pl->scores); /* normalisation by the largest node may change */
    }
    if (c->dynamic_mig != pl->dynamic_mig) {
        pl->dynamic_mig = c->dynamic_mig;
        placer_scores_clear(&pl->scores);
    }
    if (pl->nclasses > 4 * pl->nnodes + pl->spare_classes) {
        int rc = rebuild(pl);
        if (rc < 0) {
            return rc;
        }
        gp_cluster_clear_changed(c);
        return 0;
    }
    const int *changed;
    int n = gp_cluster_changed_nodes(c, &changed);
    for (int i = 0; i < n; i++) {
        int rc = classify(pl, changed[i]);
        if (rc < 0) {
            return rc;
        }
    }
    gp_cluster_clear_changed(c);
    return 0;
}

/* ---- requests ---- */

static void canonical(const gp_request *r, gp_request *out)
{
    memset(out, 0, sizeof(*out));
    out->cpu_milli = r->cpu_milli;
    out->memory_mib = r->memory_mib;
    out->kind = r->kind;
    out->allowed_models = r->allowed_models;
    out->spare_ok = r->spare_ok;
    out->runtime_ms = r->runtime_ms;
    out->needs = r->needs;
    switch (r->kind) {
    case GP_REQ_WHOLE:
        out->gpu_count = r->gpu_count;
        break;
    case GP_REQ_FRACTION:
        out->gpu_milli = r->gpu_milli;
        out->gpu_mem_mib = r->gpu_mem_mib;
        break;
    case GP_REQ_MIG:
        memcpy(out->mig_profile, r->mig_profile, sizeof(out->mig_profile));
        out->mig_profile[sizeof(out->mig_profile) - 1] = '\0';
        break;
    default:
        break;
    }
}

static uint64_t request_hash(const gp_request *r)
{
    uint64_t h = mix(mix(mix(0, (uint64_t)r->cpu_milli), (uint64_t)r->memory_mib),
                     (uint64_t)r->kind << 32 | (uint32_t)r->gpu_count);
    h = mix(mix(mix(h, (uint64_t)(uint32_t)r->gpu_milli), (uint64_t)r->gpu_mem_mib),
            r->allowed_models);
    h = mix(mix(mix(h, (uint64_t)r->spare_ok), (uint64_t)r->runtime_ms), r->needs);
    for (int i = 0; i < (int)sizeof(r->mig_profile) && r->mig_profile[i]; i++) {
        h = mix(h, (unsigned char)r->mig_profile[i]);
    }
    return h == UINT64_MAX ? 0 : h;
}

/* Id of request r, interning it when new; negative on out of memory. */
static int intern(gp_placer *pl, const gp_request *r)
{
    gp_request cr;
    canonical(r, &cr);
    uint64_t h = request_hash(&cr), v;
    /* Hash collisions between distinct requests are resolved by probing h+1, h+2, ... */
    for (;; h = (h + 1 == UINT64_MAX) ? 0 : h + 1) {
        if (!gp_u64map_get(&pl->request_index, h, &v)) {
            break;
        }
        if (memcmp(&pl->requests[v], &cr, sizeof(cr)) == 0) {
            return (int)v;
        }
    }
    if (gp_grow((void **)&pl->requests, &pl->cap_requests, pl->nrequests + 1, sizeof(gp_request),
                64) < 0) {
        return GP_ENOMEM;
    }
    if (gp_u64map_put(&pl->request_index, h, (uint64_t)pl->nrequests) < 0) {
        return GP_ENOMEM;
    }
    pl->requests[pl->nrequests] = cr;
    return pl->nrequests++;
}

/* ---- public ---- */

int gp_placer_new(gp_cluster *c, const gp_policy *p, gp_placer **out)
{
    *out = NULL;
    gp_placer *pl = calloc(1, sizeof(*pl));
    if (!pl) {
        return GP_ENOMEM;
    }
    pl->c = c;
    pl->p = p;
    pl->dynamic_mig = c->dynamic_mig;
    gp_u64map_init(&pl->class_index);
    gp_u64map_init(&pl->request_index);
    placer_scores_init(&pl->scores, PLACER_SCORES_MAX);
    pl->spare_classes = 1024;
    /* Every existing node is new to this placer. */
    for (int i = 0; i < c->nnodes; i++) {
        if (!c->changed_flag[i]) {
            c->changed_flag[i] = 1;
            c->changed[c->nchanged++] = i;
        }
    }
    *out = pl;
    return 0;
}

void gp_placer_free(gp_placer *pl)
{
    if (!pl) {
        return;
    }
    drop_classes(pl);
    free(pl->classes);
    free(pl->node_class);
    free(pl->node_pos);
    free(pl->live);
    free(pl->requests);
    gp_u64map_fini(&pl->class_index);
    gp_u64map_fini(&pl->request_index);
    placer_scores_fini(&pl->scores);
    free(pl);
}

/* Every policy scores within ±MIG_COST_STEP / 2 (at most 100 in magnitude), so a MIG cost step
 * outweighs any difference of scores. */
#define MIG_COST_STEP 1000.0

/* The node's score for r: the policy's, below a MIG request's cost on the node. */
static double node_score(const gp_placer *pl, int node, const gp_request *r)
{
    double s = gp_policy_score(pl->p, pl->c, node, r);
    return r->kind == GP_REQ_MIG ? s - MIG_COST_STEP * gp_mig_node_cost(pl->c, node, r) : s;
}

static int class_if_members(void *ctx, int id)
{
    const gp_placer *pl = ctx;
    return id < pl->nclasses && pl->classes[id].nmembers > 0 ? id : -1;
}

/* Makes room in the score cache: the scores of classes without members go first, and if live
 * classes alone fill more than three quarters of it, all of it (so a prune, O(limit), comes at
 * most once per limit / 4 puts). */
static void make_room(gp_placer *pl)
{
    placer_scores_prune(&pl->scores, class_if_members, pl);
    if (pl->scores.total > pl->scores.limit / 4 * 3) {
        placer_scores_clear(&pl->scores);
    }
}

/* The score of live class i for r (request id rid); -HUGE_VAL when it cannot hold r. */
static double class_score(gp_placer *pl, int i, int rid, const gp_request *r, int *computed)
{
    const live_class *lc = &pl->live[i];
    int rep = lc->rep;
    double s;
    if (pl->plain) {
        (*computed)++;
        return gp_node_fits(pl->c, rep, r) ? node_score(pl, rep, r) : -HUGE_VAL;
    }
    if (!placer_fit_may(&lc->fit, r)) {
        return -HUGE_VAL;
    }
    if (placer_scores_get(&pl->scores, rid, lc->id, &s)) {
        return s;
    }
    s = gp_node_fits(pl->c, rep, r) ? node_score(pl, rep, r) : -HUGE_VAL;
    (*computed)++;
    if (pl->scores.total >= pl->scores.limit) {
        make_room(pl);
    }
    placer_scores_put(&pl->scores, rid, lc->id, s);
    return s;
}

int gp_placer_place(gp_placer *pl, const gp_request *r, gp_rng *rng, gp_assignment *out,
                    gp_place_info *info)
{
    gp_place_info dummy;
    info = info ? info : &dummy;
    memset(info, 0, sizeof(*info));
    if (gp_request_check(r, NULL) < 0) {
        return GP_EINVAL;
    }
    int rc = sync(pl);
    if (rc < 0) {
        return rc;
    }
    int rid = intern(pl, r);
    if (rid < 0) {
        return rid;
    }
    double best = -HUGE_VAL;
    int chosen = -1, ranked = -1;
    uint64_t weight = 0;
    for (int i = 0; i < pl->nlive; i++) {
        double s = class_score(pl, i, rid, r, &info->classes_scored);
        if (s == -HUGE_VAL) {
            continue;
        }
        int id = pl->live[i].id;
        uint64_t n = (uint64_t)pl->live[i].nmembers;
        info->feasible_nodes += (int)n;
        if (pl->rank && !gp_policy_uniform(pl->p)) {
            int m = min_member(pl, id);
            if (s > best || (s == best && pl->rank[m] < pl->rank[ranked])) {
                best = s;
                ranked = m;
                chosen = id;
            }
        } else if (s > best) {
            best = s;
            chosen = id;
            weight = n;
        } else if (s == best) {
            weight += n;
            if (gp_rng_below(rng, weight) < n) {
                chosen = id;
            }
        }
    }
    info->classes_seen = pl->nlive;
    if (chosen < 0) {
        return GP_ENOSPC;
    }
    const node_class *k = &pl->classes[chosen];
    int node = ranked >= 0
                   ? ranked
                   : k->members[k->nmembers == 1 ? 0 : gp_rng_below(rng, (uint64_t)k->nmembers)];
    return gp_policy_choose(pl->p, pl->c, node, r, rng, out);
}

void gp_placer_set_plain(gp_placer *pl, bool plain)
{
    pl->plain = plain;
}

void gp_placer_set_cache_limit(gp_placer *pl, size_t entries)
{
    placer_scores_clear(&pl->scores);
    pl->scores.limit = entries;
}

void gp_placer_cache_usage(const gp_placer *pl, size_t *entries, size_t *bytes)
{
    *entries = pl->scores.total;
    *bytes = placer_scores_bytes(&pl->scores);
}

void gp_placer_set_spare_classes(gp_placer *pl, int spare)
{
    pl->spare_classes = spare;
}

long gp_placer_rebuilds(const gp_placer *pl)
{
    return pl->rebuilds;
}
