/*
 * Label syntax, taint effects and tolerations (gpupool/constraint.h), and the per-node checks
 * the scheduler applies for a request's constraints (node selector, taints, spread, anti-affinity).
 * Pure.
 */
#include "gpupool/constraint.h"

#include "core/cluster_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const effect_names[GP_TAINT_EFFECTS] = {"NoSchedule", "PreferNoSchedule",
                                                           "NoExecute"};

const char *gp_taint_effect_name(int effect)
{
    return effect >= 0 && effect < GP_TAINT_EFFECTS ? effect_names[effect] : "";
}

int gp_taint_effect_parse(const char *name)
{
    for (int i = 0; i < GP_TAINT_EFFECTS; i++) {
        if (strcmp(name, effect_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A name part: 1..63 of [A-Za-z0-9-_.], alphanumeric at both ends (empty when allow_empty). */
static bool name_ok(const char *s, size_t n, bool allow_empty)
{
    if (n == 0) {
        return allow_empty;
    }
    if (n > 63 || !alnum(s[0]) || !alnum(s[n - 1])) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') {
            return false;
        }
    }
    return true;
}

/* A DNS subdomain: dot-separated labels of [a-z0-9-], alphanumeric at both ends, <= 253. */
static bool subdomain_ok(const char *s, size_t n)
{
    if (n == 0 || n > 253) {
        return false;
    }
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') {
            char c = s[i];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
                return false;
            }
            continue;
        }
        size_t len = i - start;
        if (len == 0 || len > 63 || s[start] == '-' || s[i - 1] == '-') {
            return false;
        }
        start = i + 1;
    }
    return true;
}

bool gp_label_key_ok(const char *key)
{
    const char *slash = strchr(key, '/');
    if (!slash) {
        return name_ok(key, strlen(key), false);
    }
    return subdomain_ok(key, (size_t)(slash - key)) && name_ok(slash + 1, strlen(slash + 1), false);
}

bool gp_label_value_ok(const char *value)
{
    return name_ok(value, strlen(value), true);
}

bool gp_tolerates(const gp_toleration *tol, int n, const gp_taint *t)
{
    for (int i = 0; i < n; i++) {
        const gp_toleration *x = &tol[i];
        if (x->effect != GP_TAINT_ANY && x->effect != t->effect) {
            continue;
        }
        if (!x->key) {
            return true; /* Exists with no key: everything */
        }
        if (strcmp(x->key, t->key) == 0 && (!x->equal || strcmp(x->value, t->value) == 0)) {
            return true;
        }
    }
    return false;
}

bool gp_constraints_any(const gp_constraints *k)
{
    return k && (k->nselector || k->nspread || k->anti_affinity);
}

/* ---- per-node checks ---- */

const char *gp_node_label(const gp_cluster *c, int node, const char *key)
{
    const gp_node *n = &c->nodes[node];
    for (int i = 0; i < n->nlabels; i++) {
        if (strcmp(n->labels[i].key, key) == 0) {
            return n->labels[i].value;
        }
    }
    return strcmp(key, GP_LABEL_HOSTNAME) == 0 ? n->name : NULL;
}

int gp_node_selector_miss(const gp_cluster *c, int node, const gp_constraints *k)
{
    for (int i = 0; k && i < k->nselector; i++) {
        const char *v = gp_node_label(c, node, k->selector[i].key);
        if (!v || strcmp(v, k->selector[i].value) != 0) {
            return i;
        }
    }
    return -1;
}

int gp_node_taint_check(const gp_cluster *c, int node, const gp_constraints *k, int *which)
{
    const gp_node *n = &c->nodes[node];
    int worst = 0;
    *which = -1;
    for (int i = 0; i < n->ntaints; i++) {
        const gp_taint *t = &n->taints[i];
        if (k && gp_tolerates(k->tolerations, k->ntolerations, t)) {
            continue;
        }
        int level = t->effect == GP_TAINT_PREFER_NO_SCHEDULE ? 1 : 2;
        if (level > worst) {
            worst = level;
            *which = i;
        }
    }
    return worst;
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    }
    return h | 1; /* never 0: 0 marks a free slot */
}

/* Slot of domain h in a table of mask + 1 slots (open addressing). */
static size_t slot_of(const uint64_t *keys, size_t mask, uint64_t h)
{
    size_t i = (size_t)h & mask;
    while (keys[i] && keys[i] != h) {
        i = (i + 1) & mask;
    }
    return i;
}

/* Marks in ok the nodes spread constraint sp allows; keys, sums: scratch of mask + 1. */
static void spread_one(const gp_cluster *c, const gp_constraints *k, const gp_spread *sp,
                       const int *count, uint8_t *ok, uint64_t *keys, int64_t *sums, size_t mask)
{
    memset(keys, 0, sizeof(uint64_t) * (mask + 1));
    memset(sums, 0, sizeof(int64_t) * (mask + 1));
    for (int n = 0; n < c->nnodes; n++) {
        const char *v = gp_node_label(c, n, sp->topology_key);
        if (v && gp_node_selector_miss(c, n, k) < 0) {
            uint64_t h = fnv(v);
            size_t i = slot_of(keys, mask, h);
            keys[i] = h;
            sums[i] += count[n];
        }
    }
    int64_t least = -1;
    for (size_t i = 0; i <= mask; i++) {
        if (keys[i] && (least < 0 || sums[i] < least)) {
            least = sums[i];
        }
    }
    for (int n = 0; n < c->nnodes; n++) {
        const char *v = gp_node_label(c, n, sp->topology_key);
        if (!v) {
            ok[n] = 0;
            continue;
        }
        size_t i = slot_of(keys, mask, fnv(v));
        int64_t here = keys[i] ? sums[i] : 0;
        if (here + 1 - (least < 0 ? 0 : least) > sp->max_skew) {
            ok[n] = 0;
        }
    }
}

int gp_spread_allowed(const gp_cluster *c, const gp_constraints *k, const int *count, uint8_t *ok)
{
    memset(ok, 1, (size_t)c->nnodes);
    if (!k) {
        return 0;
    }
    for (int n = 0; k->anti_affinity && n < c->nnodes; n++) {
        ok[n] = count[n] == 0;
    }
    if (k->nspread == 0) {
        return 0;
    }
    size_t size = 16;
    while (size < 2 * (size_t)c->nnodes) {
        size *= 2;
    }
    uint64_t *keys = malloc(sizeof(uint64_t) * size);
    int64_t *sums = malloc(sizeof(int64_t) * size);
    if (!keys || !sums) {
        free(keys);
        free(sums);
        return GP_ENOMEM;
    }
    for (int i = 0; i < k->nspread; i++) {
        spread_one(c, k, &k->spread[i], count, ok, keys, sums, size - 1);
    }
    free(keys);
    free(sums);
    return 0;
}
