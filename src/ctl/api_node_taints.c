/*
 * A node's taints, set by operators (staff):
 *
 *   POST /v1/nodes/{node}/taints  {"add": [{"key", "value", "effect"}],
 *                                  "remove": [{"key", "effect"}]}
 *       add: a taint replaces the one of the same key and effect; remove: by key, and effect
 *       when given (else every effect of the key); removing a taint the node lacks is a 404 and
 *       changes nothing (kubectl's `taint ... key-`).
 *   PUT  /v1/nodes/{node}/taints  {"taints": [...]}: the whole list.
 *
 * The list is stored with the node (it survives a controller restart and the agent registering
 * again), audited (node.taint), and applies to the next cycle. A NoExecute taint also requeues,
 * in the same transaction, every job on the node that does not tolerate it (event Requeued, the
 * reason naming the taint).
 */
#include "ctl/api.h"
#include "ctl/doc.h"
#include "ctl/recovery.h"
#include "gpupool/constraint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct taint_arg {
    const char *node;
    bool replace;  /* PUT: taints is the whole list */
    gp_taint *add; /* owned */
    int nadd;
    gp_taint *remove; /* owned; effect -1: every effect of the key */
    int nremove;
} taint_arg;

/* The node's taints after a: into *out (owned) and *n. */
static int apply(const ctl_node *node, const taint_arg *a, gp_taint **out, int *n, gp_diag *d)
{
    size_t cap = (size_t)node->ntaints + (size_t)a->nadd + 1;
    gp_taint *t = calloc(cap, sizeof(gp_taint));
    if (!t) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int k = 0;
    for (int i = 0; !a->replace && i < node->ntaints; i++) {
        t[k++] = node->taints[i];
    }
    for (int r = 0; r < a->nremove; r++) {
        int before = k, w = 0;
        for (int i = 0; i < k; i++) {
            const gp_taint *x = &t[i];
            bool gone = strcmp(x->key, a->remove[r].key) == 0 &&
                        (a->remove[r].effect < 0 || a->remove[r].effect == x->effect);
            if (!gone) {
                t[w++] = *x;
            }
        }
        k = w;
        if (k == before) {
            free(t);
            return gp_diag_set(d, GP_ENOENT, "remove[%d]: node %s has no taint %s%s%s", r,
                               node->name, a->remove[r].key, a->remove[r].effect < 0 ? "" : ":",
                               a->remove[r].effect < 0 ? ""
                                                       : gp_taint_effect_name(a->remove[r].effect));
        }
    }
    for (int i = 0; i < a->nadd; i++) {
        int at = k;
        for (int j = 0; j < k; j++) {
            if (strcmp(t[j].key, a->add[i].key) == 0 && t[j].effect == a->add[i].effect) {
                at = j;
            }
        }
        t[at] = a->add[i];
        k += at == k;
    }
    if (k > CTL_MAX_TAINTS) {
        free(t);
        return gp_diag_set(d, GP_EINVAL, "taints: at most %d per node", CTL_MAX_TAINTS);
    }
    *out = t;
    *n = k;
    return 0;
}

static int taint_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    taint_arg *a = op->arg;
    ctl_node *n = ctl_node_by_name(&g->st, a->node);
    if (!n) {
        return gp_diag_set(d, GP_ENOENT, "node %s: not found", a->node);
    }
    ctl_node next = *n;
    int rc = apply(n, a, &next.taints, &next.ntaints, d);
    if (rc < 0) {
        return rc;
    }
    rc = ctl_node_commit(g, n, &next, d);
    if (rc < 0) {
        free(next.taints);
        return rc;
    }
    op->dirty = true; /* memory changed: a later failure reloads */
    int evicted = 0;
    rc = ctl_node_evict_untolerated(g, n, &evicted, d);
    if (rc < 0) {
        return rc;
    }
    GP_LOG(GP_LOG_INFO, "nodes", "node=%s taints=%d evicted=%d by=%s", n->name, n->ntaints, evicted,
           op->audit.who ? op->audit.who->name : "");
    op->kick = true;
    op->result = api_node_doc(&g->st, n, 0);
    return op->result ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
}

/* Reads "remove": [{"key", "effect"}] (effect may be left out). */
static int read_remove(json_t *list, taint_arg *a, gp_diag *d)
{
    if (!list || json_is_null(list)) {
        return 0;
    }
    if (!json_is_array(list) || json_array_size(list) > CTL_MAX_TAINTS) {
        return gp_diag_set(d, GP_EINVAL, "remove: must be a list of at most %d taints",
                           CTL_MAX_TAINTS);
    }
    size_t n = json_array_size(list);
    a->remove = calloc(n + 1, sizeof(gp_taint));
    if (!a->remove) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(list, i);
        json_t *key = json_object_get(r, "key"), *effect = json_object_get(r, "effect");
        static const char *const fields[] = {"key", "effect", NULL};
        char path[32];
        snprintf(path, sizeof(path), "remove[%zu]", i);
        int rc = json_is_object(r) ? doc_check_fields(r, path, fields, d)
                                   : gp_diag_set(d, GP_EINVAL, "%s: must be an object", path);
        if (rc < 0) {
            return rc;
        }
        if (!json_is_string(key) || !gp_label_key_ok(json_string_value(key))) {
            return gp_diag_set(d, GP_EINVAL, "%s.key: required, a label key", path);
        }
        snprintf(a->remove[i].key, sizeof(a->remove[i].key), "%s", json_string_value(key));
        a->remove[i].effect = -1;
        if (effect && !json_is_null(effect) &&
            (!json_is_string(effect) ||
             (a->remove[i].effect = gp_taint_effect_parse(json_string_value(effect))) < 0)) {
            return gp_diag_set(
                d, GP_EINVAL, "%s.effect: must be NoSchedule, PreferNoSchedule or NoExecute", path);
        }
    }
    a->nremove = (int)n;
    return 0;
}

static int read_body(json_t *doc, void *arg, gp_diag *d)
{
    taint_arg *a = arg;
    static const char *const post_fields[] = {"add", "remove", NULL};
    static const char *const put_fields[] = {"taints", NULL};
    if (!json_is_object(doc)) {
        return gp_diag_set(d, GP_EINVAL, "body: must be an object");
    }
    int rc = doc_check_fields(doc, "", a->replace ? put_fields : post_fields, d);
    if (rc == 0 && a->replace) {
        json_t *t = json_object_get(doc, "taints");
        rc = t ? ctl_taints_read(t, "taints", &a->add, &a->nadd, d)
               : gp_diag_set(d, GP_EINVAL, "taints: required (an empty list removes them all)");
    } else if (rc == 0) {
        rc = ctl_taints_read(json_object_get(doc, "add"), "add", &a->add, &a->nadd, d);
        rc = rc < 0 ? rc : read_remove(json_object_get(doc, "remove"), a, d);
    }
    return rc;
}

static void taints(api_req *rq, bool replace)
{
    taint_arg a = {.node = rq->params[0], .replace = replace};
    if (api_read_body(rq, read_body, &a) == 0) {
        ctl_op op = {.run = taint_run, .arg = &a};
        api_run(rq, &op);
    }
    free(a.add);
    free(a.remove);
}

void api_nodes_taint(api_req *rq)
{
    taints(rq, false);
}

void api_nodes_taints_put(api_req *rq)
{
    taints(rq, true);
}
