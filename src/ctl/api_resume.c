/*
 * POST /v1/jobs/{job}/resume: a notebook Suspended for idleness back to Pending (idle.h); the
 * proxy resumes one the same way when it is asked for it (proxy.c).
 */
#include "ctl/api.h"
#include "ctl/idle.h"
#include "ctl/proxy.h"

#include <stdio.h>

typedef struct resume_arg {
    const char *ref;
    int64_t scope;
    const char *who;
} resume_arg;

static int resume_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    resume_arg *a = op->arg;
    ctl_job *j = ctl_job_find(&g->st, a->ref, a->scope);
    if (!j) {
        return gp_diag_set(d, GP_ENOENT, "job %s: not found", a->ref);
    }
    char why[128];
    snprintf(why, sizeof(why), "resumed by %s", a->who);
    int rc = ctl_job_resume(g, j, why, d);
    if (rc < 0) {
        return rc;
    }
    op->kick = true;
    op->result = api_job_doc(&g->st, j);
    return 0;
}

void api_jobs_resume(api_req *rq)
{
    resume_arg a = {rq->params[0], api_scope(rq), rq->who.name};
    ctl_op op = {.run = resume_run, .arg = &a};
    api_run(rq, &op);
}

int px_resume(gpupoold *g, int64_t job, int64_t tenant, const char *who, gp_diag *d)
{
    char ref[32];
    snprintf(ref, sizeof(ref), "%lld", (long long)job);
    resume_arg a = {ref, tenant, who};
    ctl_op op = {.run = resume_run, .arg = &a};
    int rc = ctl_run_op(g, &op);
    json_decref(op.result);
    if (rc < 0) {
        *d = op.diag;
    }
    return rc;
}
