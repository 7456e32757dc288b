/*
 * The reasons of jobs that can never run: "unschedulable: WHY" from gpupool/feasible.h, in
 * place of a reason about the capacity in use or the usage of a limit.
 *
 * The pool verdict of a shape is cached for the cycle (mode FAIL_POOL of the failure cache,
 * exact shapes only, the job's own allowed models and the names it gives in the key), so a
 * cycle judges each blocked shape against the nodes once. The limits verdict costs O(models)
 * and is not cached.
 */
#include "core/sched_impl.h"
#include "gpupool/feasible.h"

#include <stdio.h>

static void ask_of(const job_ctx *jc, bool names, gp_feasible_job *a)
{
    const gp_sched_job *j = jc->job;
    *a = (gp_feasible_job){.req = &j->req,
                           .replicas = j->replicas,
                           .topology = j->topology,
                           .preemptible = j->preemptible,
                           .models = names ? j->model_names : NULL,
                           .nmodels = names && j->model_names ? j->nmodel_names : 0};
}

static void never_reason(const job_ctx *jc, const char *why, char *reason)
{
    reasonf(reason, "unschedulable: %.200s%s", why,
            jc->job->allow_unschedulable ? " (allowed to wait)" : "");
}

int never_pool(cycle *cy, const job_ctx *jc, char *reason, bool *never)
{
    char why[SCHED_REASON];
    const char *cached = fail_lookup(cy, jc, FAIL_POOL, NULL, NULL);
    if (cached) {
        snprintf(why, sizeof(why), "%s", cached);
    } else {
        gp_feasible_job a;
        gp_diag d;
        gp_diag_clear(&d);
        ask_of(jc, true, &a);
        int rc = gp_feasible_pool(cy->c, cy->in->pool_nodes, cy->in->npool_nodes, &a, &d);
        snprintf(why, sizeof(why), "%s", rc < 0 ? gp_feasible_why(d.msg) : "");
        rc = fail_record(cy, jc, FAIL_POOL, why, 0);
        if (rc < 0) {
            return rc;
        }
    }
    *never = why[0] != '\0';
    if (*never) {
        never_reason(jc, why, reason);
    }
    return 0;
}

void never_limits(const cycle *cy, const job_ctx *jc, char *reason)
{
    const gp_sched_job *j = jc->job;
    gp_feasible_job a;
    gp_diag d;
    gp_diag_clear(&d);
    /* The job's allowed models are resolved already: the names are not needed here. */
    ask_of(jc, false, &a);
    if (gp_feasible_limits(cy->c, &a, &cy->in->tenants[j->tenant], &cy->in->queues[j->queue], &d) <
        0) {
        never_reason(jc, gp_feasible_why(d.msg), reason);
    }
}
