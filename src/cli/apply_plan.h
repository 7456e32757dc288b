/*
 * What `gpupool apply` does with translated objects (k8s.h) on a server: a plan made first for
 * every object (each compared with what the server has and validated by the server's dry run,
 * nothing stored), then carried out in order (priority classes, queues, tenants, then jobs),
 * so that a manifest the server refuses leaves nothing applied.
 */
#ifndef GP_CLI_APPLY_PLAN_H
#define GP_CLI_APPLY_PLAN_H

#include "cli/client.h"
#include "cli/k8s.h"

typedef enum gp_apply_action {
    GP_APPLY_UNCHANGED = 0,
    GP_APPLY_CREATE,
    GP_APPLY_UPDATE, /* PUT of an object; a service's rolling update */
} gp_apply_action;

typedef struct gp_apply_step {
    const gp_k8s_object *obj; /* borrowed */
    gp_apply_action action;
    json_t *body; /* owned: what is sent (an update: the server's document merged with ours) */
    json_t *dry;  /* owned: the server's dry-run answer */
    int deferred; /* a job naming a tenant, queue or priority class this apply creates: the
                     server can check it only once they exist (planned again by gp_apply_run) */
} gp_apply_step;

/* "job", "service", "tenant", "queue", "priorityclass": what an object is, in messages. */
const char *gp_apply_kind(const gp_k8s_object *o);

/* Plans every object of r in apply order into *steps (a new array of r->nobjects; free with
 * gp_apply_steps_free). 0, or GP_EXIT_FAILURE after printing every refusal (the server's
 * messages, "gpupool apply: job/x: ..."); *steps is NULL then. */
int gp_apply_plan(gp_cli_conn *c, const gp_k8s_result *r, gp_apply_step **steps);
/* Carries out the steps; prints "KIND/NAME created|configured|unchanged" per step (out NULL),
 * KIND/NAME (out "name"), or at the end {"items": [{"kind", "name", "action", "server": the
 * server's answer}]} (out "json" or "yaml"). Deferred jobs are planned once the objects are applied
 * and before any job is: one refused then leaves the objects applied and no job. 0, or
 * GP_EXIT_FAILURE at the first failure (printed; the steps before it stay applied). */
int gp_apply_run(gp_cli_conn *c, gp_apply_step *steps, size_t n, const char *out);
void gp_apply_steps_free(gp_apply_step *steps, size_t n);

/* `gpupool delete -f`: cancels each job's active job (a service with its replicas), deletes
 * each tenant, queue and priority class (in that order: what jobs name goes last); a tenant
 * made of a ResourceQuota alone only loses its quota. Prints "KIND/NAME deleted" or "... not
 * found" per object. 0, or GP_EXIT_FAILURE when any was not found or refused. */
int gp_apply_delete(gp_cli_conn *c, const gp_k8s_result *r);

#endif
