/*
 * Internal to services (service.c, service_tick.c): the replica jobs made and stopped by the
 * reconciliation. Both run in the committer, in its transaction (store first, then memory).
 */
#ifndef GP_CTL_SERVICE_IMPL_H
#define GP_CTL_SERVICE_IMPL_H

#include "ctl/context.h"

/* Creates replica job NAME-N of svc at its revision, Pending (N the service's counter, past
 * the names an active job of the tenant holds), with events on both. */
int ctl__service_create_replica(gpupoold *g, ctl_job *svc, gp_diag *d);
/* Cancels replica job r of svc (why: its reason), with an event of type on the service. */
int ctl__service_stop_replica(gpupoold *g, const ctl_job *svc, ctl_job *r, const char *type,
                              const char *why, gp_diag *d);

#endif
