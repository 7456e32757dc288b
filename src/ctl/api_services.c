/*
 * /v1/services/{name}: a service (service.h) as its callers and an external load balancer see
 * it. GET answers the service's job document with its replicas; GET .../endpoints only the
 * replicas that are ready, the list a load balancer balances over. A user sees its tenant's
 * services only (another tenant's is 404). PUT (the update) is in api_jobs.c beside the
 * submission whose checks it shares.
 */
#include "ctl/api.h"
#include "ctl/service.h"

#include <stdio.h>
#include <string.h>

/* The service named ref (its name or id) within the caller's scope, or NULL. */
static ctl_job *find_service(api_req *rq, const char *ref)
{
    ctl_job *j = ctl_job_find(&rq->g->st, ref, api_scope(rq));
    return j && ctl_job_is_service(j) ? j : NULL;
}

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

/* The service's replicas (ready_only: those ready) as a list; NULL when out of memory. */
static json_t *endpoints_doc(ctl_state *st, const ctl_job *svc, bool ready_only, int *nready)
{
    ctl_job **v;
    int n = ctl_service_replicas(st, svc, &v);
    json_t *list = n >= 0 ? json_array() : NULL;
    *nready = 0;
    for (int i = 0; list && i < n; i++) {
        bool ready = ctl_service_replica_ready(v[i]);
        *nready += ready;
        if (!ready_only || ready) {
            json_array_append_new(list, endpoint_doc(st, v[i]));
        }
    }
    free(v);
    return list;
}

static void answer(api_req *rq, bool ready_only)
{
    ctl_read_lock(rq->g);
    ctl_state *st = &rq->g->st;
    ctl_job *svc = find_service(rq, rq->params[0]);
    json_t *doc = NULL;
    int nready = 0;
    if (svc) {
        json_t *list = endpoints_doc(st, svc, ready_only, &nready);
        doc = ready_only ? json_pack("{s:s, s:I, s:i, s:i, s:o?}", "service", svc->name, "id",
                                     (json_int_t)svc->id, "revision", svc->revision, "ready",
                                     nready, "endpoints", list)
                         : api_job_doc(st, svc);
        if (doc && !ready_only) {
            json_object_set_new(doc, "replica_jobs", list ? list : json_array());
        }
    }
    ctl_read_unlock(rq->g);
    if (!svc) {
        api_error(rq, GP_ENOENT, "service %s: not found", rq->params[0]);
        return;
    }
    if (!doc) {
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    api_reply(rq, 200, doc);
}

void api_services_get(api_req *rq)
{
    answer(rq, false);
}

void api_services_endpoints(api_req *rq)
{
    answer(rq, true);
}
