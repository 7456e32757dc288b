/*
 * GET /v1/services/{service}: a service (service.h) as its callers and an external load
 * balancer see it: the service's job document with "endpoints", its ready replica jobs (what a
 * load balancer balances over), and "replica_jobs", every one not yet over. A user sees its
 * tenant's services only (another tenant's is 404). PUT (the update) is in api_jobs.c beside
 * the submission whose checks it shares; the service's address, /v1/services/{service}/..., is
 * the proxy's (proxy.c).
 */
#include "ctl/api.h"
#include "ctl/service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One replica job as an endpoint: {job, name, revision, state, ready, node, proxy}. */
static json_t *endpoint_doc(ctl_state *st, const ctl_job *r)
{
    const ctl_node *n = r->replicas ? ctl_node_by_id(st, r->replicas[0].node_id) : NULL;
    char proxy[64];
    snprintf(proxy, sizeof(proxy), "/v1/jobs/%lld/proxy/", (long long)r->id);
    return json_pack("{s:I, s:s, s:i, s:s, s:b, s:s?, s:s}", "job", (json_int_t)r->id, "name",
                     r->name, "revision", r->revision, "state", ctl_job_state_name(r->state),
                     "ready", ctl_service_replica_ready(r), "node", n ? n->name : NULL, "proxy",
                     proxy);
}

/* doc's "endpoints" (the ready replica jobs) and "replica_jobs" (all not over). */
static int add_replicas(ctl_state *st, const ctl_job *svc, json_t *doc)
{
    ctl_job **v;
    int n = ctl_service_replicas(st, svc, &v);
    json_t *all = n >= 0 ? json_array() : NULL, *ready = n >= 0 ? json_array() : NULL;
    for (int i = 0; all && ready && i < n; i++) {
        json_array_append_new(all, endpoint_doc(st, v[i]));
        if (ctl_service_replica_ready(v[i])) {
            json_array_append_new(ready, endpoint_doc(st, v[i]));
        }
    }
    free(v);
    int rc = all && ready ? 0 : GP_ENOMEM;
    json_object_set_new(doc, "endpoints", ready ? ready : json_array());
    json_object_set_new(doc, "replica_jobs", all ? all : json_array());
    return rc;
}

void api_services_get(api_req *rq)
{
    ctl_read_lock(rq->g);
    ctl_state *st = &rq->g->st;
    ctl_job *svc = ctl_job_find(st, rq->params[0], api_scope(rq));
    svc = svc && ctl_job_is_service(svc) ? svc : NULL;
    json_t *doc = svc ? api_job_doc(st, svc) : NULL;
    int rc = doc ? add_replicas(st, svc, doc) : GP_ENOMEM;
    ctl_read_unlock(rq->g);
    if (!svc) {
        api_error(rq, GP_ENOENT, "service %s: not found", rq->params[0]);
        return;
    }
    if (rc < 0) {
        json_decref(doc);
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    api_reply(rq, 200, doc);
}
