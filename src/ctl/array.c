/*
 * Job arrays and dependencies (array.h): the children made, counted and cancelled, and the
 * verdict over dependencies applied each cycle.
 */
#include "ctl/array.h"

#include "base/log.h"
#include "ctl/changes.h"
#include "ctl/txn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctl_array_count(ctl_state *st, const ctl_job *arr, ctl_array_counts *c)
{
    memset(c, 0, sizeof(*c));
    c->total = (int)gp_array_count(&arr->spec.array);
    c->made = arr->array_made;
    for (int i = 0; i < st->njobs; i++) {
        const ctl_job *j = st->jobs[i];
        if (j->owner != arr->id || !j->in_array) {
            continue;
        }
        c->pending += ctl_job_state_waits(j->state);
        c->running += ctl_job_state_holds(j->state) || j->state == CTL_SUSPENDED;
        c->succeeded += j->state == CTL_SUCCEEDED;
        c->failed += j->state == CTL_FAILED;
        c->cancelled += j->state == CTL_CANCELLED;
    }
}

int ctl_array_cancel_children(gpupoold *g, const ctl_job *arr, const char *why, gp_diag *d)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < g->st.njobs; i++) {
        ctl_job *j = g->st.jobs[i];
        if (j->owner != arr->id || !j->in_array || ctl_job_state_final(j->state)) {
            continue;
        }
        ctl_job next = *j;
        snprintf(next.reason, sizeof(next.reason), "%s", why);
        next.end_ms = ctl_now_ms();
        rc = ctl_job_end_placement(g, j, &next, CTL_CANCELLED, "Cancelled", d);
    }
    return rc;
}

/* The spec text of arr's child named name: the array's spec without array and after_ok. */
static char *child_text(const ctl_job *arr, const char *name)
{
    json_t *doc = gp_jobspec_to_json(&arr->spec);
    if (!doc) {
        return NULL;
    }
    json_object_del(doc, "array");
    json_object_del(doc, "after_ok");
    char *text = json_object_set_new(doc, "name", json_string(name)) == 0
                     ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS)
                     : NULL;
    json_decref(doc);
    return text;
}

/* Makes arr's next child (index: the array_made-th), Pending, with events on both. */
static int make_child(gpupoold *g, ctl_job *arr, gp_diag *d)
{
    int index = gp_array_at(&arr->spec.array, arr->array_made);
    char name[GP_JOB_NAME_MAX + 16];
    snprintf(name, sizeof(name), "%s-%d", arr->name, index);
    if (strlen(name) >= GP_JOB_NAME_MAX) {
        return gp_diag_set(d, GP_EINVAL, "array: child name %s is too long", name);
    }
    char *text = child_text(arr, name);
    if (!text) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    ctl_job proto = {
        .tenant_id = arr->tenant_id, .owner = arr->id, .in_array = true, .array_index = index};
    snprintf(proto.name, sizeof(proto.name), "%s", name);
    ctl_job arr_next = *arr;
    arr_next.array_made++;
    char msg[160];
    snprintf(msg, sizeof(msg), "%s (index %d)", name, index);
    int rc = ctl_job_make_child(g, &proto, text, &arr_next, "created by its array", "ChildCreated",
                                msg, d);
    free(text);
    if (rc < 0) {
        return rc;
    }
    arr->array_made++;
    return 0;
}

/* Stores j's new reason (and state) when they changed. */
static int set_reason(gpupoold *g, ctl_job *j, ctl_job_state to, const char *reason, gp_diag *d)
{
    if (j->state == to && strcmp(j->reason, reason) == 0) {
        return 0;
    }
    ctl_job next = *j;
    snprintf(next.reason, sizeof(next.reason), "%s", reason);
    if (to == CTL_RUNNING && j->state != CTL_RUNNING) {
        next.start_ms = ctl_now_ms();
    }
    int rc = ctl_job_store(g, &next, to, d);
    if (rc < 0) {
        return rc;
    }
    snprintf(j->reason, sizeof(j->reason), "%s", reason);
    j->start_ms = next.start_ms;
    ctl_job_set_state(&g->st, j, to);
    return 0;
}

/* Ends j (an array: its children too) for good: state to, reason why, event type. */
static int end_job(gpupoold *g, ctl_job *j, ctl_job_state to, const char *type, const char *why,
                   gp_diag *d)
{
    int rc = ctl_job_is_array(j) ? ctl_array_cancel_children(g, j, why, d) : 0;
    ctl_job next = *j;
    snprintf(next.reason, sizeof(next.reason), "%s", why);
    next.end_ms = ctl_now_ms();
    return rc < 0 ? rc : ctl_job_end_placement(g, j, &next, to, type, d);
}

/* The reason of a job waiting for dep. */
static void wait_reason(const ctl_job *dep, char *buf, size_t cap)
{
    snprintf(buf, cap, "waiting for %s", dep->name);
}

/* An array's reason while it runs: its children's progress. */
static void progress_reason(const ctl_array_counts *c, char *buf, size_t cap)
{
    snprintf(buf, cap, "%d children: %d pending, %d running, %d succeeded, %d failed", c->total,
             c->pending + (c->total - c->made), c->running, c->succeeded, c->failed + c->cancelled);
}

/* What an array past its dependencies does now: make children (*make of them), end (*end: the
 * final state), or only show its progress. */
static void array_plan(const ctl_job *arr, const ctl_array_counts *c, int *make, ctl_job_state *end)
{
    int ended = c->succeeded + c->failed + c->cancelled;
    int active = c->made - ended;
    int limit = arr->spec.array.max_running > 0 ? arr->spec.array.max_running : c->total;
    *make = c->total - c->made < limit - active ? c->total - c->made : limit - active;
    *make = *make < 0 ? 0 : *make;
    *end = CTL_RUNNING;
    if (c->made == c->total && ended == c->total) {
        *end = c->succeeded == c->total ? CTL_SUCCEEDED : CTL_FAILED;
    }
}

/* A waiting job's dependencies: 1 when it may go on, 0 when it waits or was cancelled. */
static int gate(gpupoold *g, ctl_job *j, gp_diag *d)
{
    const ctl_job *dep = NULL;
    gp_dep_verdict v = ctl_job_deps(&g->st, j, &dep);
    char why[256];
    if (v == GP_DEPS_FAIL) {
        snprintf(why, sizeof(why), "DependencyFailed: %s ended %s", dep ? dep->name : "a job",
                 dep ? ctl_job_state_name(dep->state) : "and is gone");
        int rc = end_job(g, j, CTL_CANCELLED, "DependencyFailed", why, d);
        return rc < 0 ? rc : 0;
    }
    if (v == GP_DEPS_WAIT) {
        wait_reason(dep, why, sizeof(why));
        int rc = set_reason(g, j, CTL_PENDING, why, d);
        return rc < 0 ? rc : 0;
    }
    return 1;
}

/* An array past its dependencies: children made up to its limit, its progress, its end. */
static int run_array(gpupoold *g, ctl_job *arr, gp_diag *d)
{
    ctl_array_counts c;
    ctl_array_count(&g->st, arr, &c);
    int make;
    ctl_job_state end;
    array_plan(arr, &c, &make, &end);
    int rc = 0;
    for (int i = 0; rc == 0 && i < make; i++) {
        rc = make_child(g, arr, d);
    }
    if (rc < 0) {
        return rc;
    }
    ctl_array_count(&g->st, arr, &c);
    array_plan(arr, &c, &make, &end);
    char why[160];
    if (end != CTL_RUNNING) {
        snprintf(why, sizeof(why), "%d children: %d succeeded, %d failed, %d cancelled", c.total,
                 c.succeeded, c.failed, c.cancelled);
        return end_job(g, arr, end, "ArrayDone", why, d);
    }
    progress_reason(&c, why, sizeof(why));
    return set_reason(g, arr, CTL_RUNNING, why, d);
}

/* Whether the tick would change j now (so a cycle with nothing to do makes no store call). */
static bool wants_change(ctl_state *st, const ctl_job *j)
{
    char why[256];
    if (ctl_job_state_waits(j->state) && j->nafter > 0) {
        const ctl_job *dep = NULL;
        gp_dep_verdict v = ctl_job_deps(st, j, &dep);
        if (v == GP_DEPS_FAIL) {
            return true;
        }
        if (v == GP_DEPS_WAIT) {
            wait_reason(dep, why, sizeof(why));
            return j->state != CTL_PENDING || strcmp(j->reason, why) != 0;
        }
    }
    if (!ctl_job_is_array(j) || ctl_job_state_final(j->state)) {
        return false;
    }
    ctl_array_counts c;
    ctl_array_count(st, j, &c);
    int make;
    ctl_job_state end;
    array_plan(j, &c, &make, &end);
    progress_reason(&c, why, sizeof(why));
    return make > 0 || end != CTL_RUNNING || j->state != CTL_RUNNING || strcmp(j->reason, why) != 0;
}

/* Whether the tick has something to look at for j. */
static bool concerns(const ctl_job *j)
{
    return (ctl_job_is_array(j) && !ctl_job_state_final(j->state)) ||
           (j->nafter > 0 && ctl_job_state_waits(j->state));
}

static int tick_step(ctl_txn *tx, void *arg, gp_diag *d)
{
    ctl_job *j = ctl_job_by_id(tx->st, ((const ctl_tick *)arg)->id);
    if (!j || !concerns(j)) {
        return 0;
    }
    tx->dirty = true; /* memory follows each store write: a failure reloads it */
    int rc = 1;
    if (ctl_job_state_waits(j->state) && j->nafter > 0) {
        rc = gate(tx->g, j, d);
    }
    if (rc == 1 && ctl_job_is_array(j) && !ctl_job_state_final(j->state)) {
        rc = run_array(tx->g, j, d);
    }
    return rc < 0 ? rc : 0;
}

static bool pick(gpupoold *g, const ctl_job *j, int64_t now)
{
    (void)now;
    return concerns(j) && wants_change(&g->st, j);
}

int ctl_batch_tick(gpupoold *g, int64_t now, gp_diag *d)
{
    return ctl_txn_each_job(g, "arrays", pick, tick_step, now, d);
}
