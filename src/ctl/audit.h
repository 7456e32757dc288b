/*
 * The audit log of gpupoold: one append-only record per change — every API write, every
 * placement the scheduler makes (placement.allocate) and every placement that ends
 * (placement.free: finished, cancelled, requeued, drained, preempted, restarted).
 *
 * A record is written in the transaction of the change it records, and a change whose record
 * cannot be written fails: the API answers 503 and nothing of the change is stored. All
 * functions here run in the committer, under the state lock, inside a store transaction.
 *
 * Who acts: "scheduler" for the placements it makes and the preemptions it decides; else,
 * during an API request, the caller when it is a person (admin, operator, user), and otherwise
 * (an agent's report, a max runtime or deadline enforced) "controller". The tenant of a record is
 * the actor's for users, else the object's where it has one, else empty. Records never hold a
 * token's secret.
 */
#ifndef GP_CTL_AUDIT_H
#define GP_CTL_AUDIT_H

#include "ctl/context.h"

#include <jansson.h>

typedef struct ctl_audit_rec {
    const char *actor;  /* NULL: who is acting now (above); role "" for the controller */
    const char *tenant; /* the object's tenant (used unless the actor is a user); NULL: none */
    const char *action; /* "placement.free" */
    const char *object; /* "job/42" */
    json_t *detail;     /* borrowed; NULL: {} */
} ctl_audit_rec;

/* Appends r, stamped with the time now. 0, or GP_EUNAVAIL with d saying the change cannot be
 * made because its record cannot be written. */
int ctl_audit(gpupoold *g, const ctl_audit_rec *r, gp_diag *d);

/* placement.allocate by the scheduler: j's nreplicas new replicas (node, GPUs, epoch). */
int ctl_audit_allocate(gpupoold *g, const ctl_job *j, const ctl_replica *replicas, int nreplicas,
                       gp_diag *d);
/* placement.free of j's placement (nothing when j holds none) by actor (NULL: who is acting
 * now): how it ended (the job's event: "Cancelled", "Preempted", ...), the reason, and where it
 * ran. Call before memory changes. */
int ctl_audit_free(gpupoold *g, const ctl_job *j, const char *actor, const char *ended,
                   const char *reason, gp_diag *d);

/* Fills op->audit from an API request: its caller who, the request http, the pattern of the route
 * it matched (NULL: none; the path stands for it) and the route's parameters ref and ref2 (NULL:
 * none). api_run calls it before queueing the op; all of them must outlive the op. */
void ctl_audit_prepare(ctl_op *op, const ctl_principal *who, const gp_http_request *http,
                       const char *pattern, const char *ref, const char *ref2);
/* The record of the API change op, after op->run succeeded (the committer, in the op's
 * savepoint). 0 when written or when op records nothing; else as ctl_audit. */
int ctl_audit_op(gpupoold *g, const ctl_op *op, gp_diag *d);

#endif
