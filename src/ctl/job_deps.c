/*
 * Arrays and dependencies as the state sees them (ctl.h): which jobs are arrays and their
 * children, the verdict over a job's after_ok (the pure rule: gpupool/array.h), and resolving
 * after_ok's names at submission. Reads memory only; the changes are array.c's.
 */
#include "ctl/ctl.h"

#include <stdlib.h>
#include <string.h>

bool ctl_job_is_array(const ctl_job *j)
{
    return j->spec.array.nitems > 0 && j->owner == 0;
}

static gp_dep_state dep_state(const ctl_job *d)
{
    if (!d) {
        return GP_DEP_GONE;
    }
    switch (d->state) {
    case CTL_SUCCEEDED:
        return GP_DEP_SUCCEEDED;
    case CTL_FAILED:
        return GP_DEP_FAILED;
    case CTL_CANCELLED:
        return GP_DEP_CANCELLED;
    default:
        return GP_DEP_ACTIVE;
    }
}

gp_dep_verdict ctl_job_deps(ctl_state *st, const ctl_job *j, const ctl_job **which)
{
    gp_dep_state states[GP_JOB_MAX_AFTER_OK];
    const ctl_job *jobs[GP_JOB_MAX_AFTER_OK];
    int n = j->nafter < GP_JOB_MAX_AFTER_OK ? j->nafter : GP_JOB_MAX_AFTER_OK;
    for (int i = 0; i < n; i++) {
        jobs[i] = ctl_job_by_id(st, j->after_ids[i]);
        states[i] = dep_state(jobs[i]);
    }
    int k = -1;
    gp_dep_verdict v = gp_deps_decide(states, n, &k);
    if (which) {
        *which = k >= 0 ? jobs[k] : NULL;
    }
    return v;
}

int ctl_deps_resolve(ctl_state *st, const gp_jobspec *spec, int64_t tenant_id, int64_t **ids,
                     int *n, gp_diag *d)
{
    *ids = NULL;
    *n = 0;
    int count = 0;
    while (spec->after_ok && spec->after_ok[count]) {
        count++;
    }
    if (count == 0) {
        return 0;
    }
    int64_t *v = calloc((size_t)count, sizeof(*v));
    if (!v) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (int i = 0; i < count; i++) {
        /* tenant_id scopes the lookup: another tenant's job reads as no job at all */
        const ctl_job *dep = ctl_job_find(st, spec->after_ok[i], tenant_id);
        if (!dep || dep->tenant_id != tenant_id) {
            free(v);
            return gp_diag_set(d, GP_ENOENT, "after_ok[%d]: job %s: not found", i,
                               spec->after_ok[i]);
        }
        for (int k = 0; k < i; k++) {
            if (v[k] == dep->id) {
                free(v);
                return gp_diag_set(d, GP_EINVAL, "after_ok[%d]: job %s is named twice", i,
                                   spec->after_ok[i]);
            }
        }
        v[i] = dep->id;
    }
    *ids = v;
    *n = count;
    return 0;
}
