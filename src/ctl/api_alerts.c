/*
 * GET /v1/alerts: the alerts the controller raised that are still active (notify.h,
 * alerts_active.h) — GPUs drained, nodes lost, tenants blocked by their quota, jobs restarted
 * after a fault or stopped for being idle — whether or not an Alertmanager receives them.
 *
 * Tenant scoping: a user sees the alerts of its own tenant and those that name no tenant (a
 * node or a GPU, which /v1/nodes shows it anyway), never an alert labelled with another
 * tenant.
 */
#include "ctl/api.h"
#include "ctl/notify.h"

void api_alerts_list(api_req *rq)
{
    const char *tenant = rq->who.role == CTL_ROLE_USER ? rq->who.tenant : NULL;
    json_t *doc = ctl_notify_active(rq->g, tenant, ctl_now_ms());
    if (!doc) {
        api_error(rq, GP_ENOMEM, "out of memory");
        return;
    }
    api_reply(rq, 200, doc);
}
