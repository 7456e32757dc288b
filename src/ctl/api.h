/*
 * The HTTP API of gpupoold: the route table, the request context every handler gets, and the
 * helpers they answer with. One file per resource (api_jobs.c, api_nodes.c, api_objects.c,
 * api_tokens.c) implements the handlers; router.c matches routes, authenticates the caller and
 * checks its role before any handler runs.
 *
 * Tenant scoping: a user acts within its tenant, and another tenant's objects do not exist for
 * it — every lookup a handler makes for a user passes the user's tenant, and a miss is 404.
 */
#ifndef GP_CTL_API_H
#define GP_CTL_API_H

#include "ctl/audit.h"
#include "ctl/changes.h"
#include "ctl/server.h"

#include <jansson.h>

/* Roles as bits, for the route table. */
#define R_ADMIN    (1u << CTL_ROLE_ADMIN)
#define R_OPERATOR (1u << CTL_ROLE_OPERATOR)
#define R_USER     (1u << CTL_ROLE_USER)
#define R_JOIN     (1u << CTL_ROLE_JOIN)
#define R_AGENT    (1u << CTL_ROLE_AGENT)
#define R_METRICS  (1u << CTL_ROLE_METRICS)
#define R_STAFF    (R_ADMIN | R_OPERATOR)
#define R_PEOPLE   (R_ADMIN | R_OPERATOR | R_USER)
#define R_ANYONE   0u /* no token needed */
/* Monitoring (/metrics, service discovery): with metrics.auth (the default) admins, operators and
 * metrics tokens (R_SCRAPERS); without it anyone, and a request without a token is answered
 * pool-wide figures only (no tenant, queue or job names: api_scrape_full). */
#define R_SCRAPE   (1u << 31)
#define R_SCRAPERS (R_STAFF | R_METRICS)

#define API_MAX_PARAMS 2

typedef struct api_req {
    gpupoold *g;
    const gp_http_request *http;
    gp_http_response *resp;
    ctl_principal who;
    const char *params[API_MAX_PARAMS]; /* the {…} segments of the path, in order */
    char param_buf[API_MAX_PARAMS][256];
    const struct api_route *route; /* the route matched */
} api_req;

typedef void (*api_handler)(api_req *rq);

typedef struct api_route {
    const char *method;
    const char *pattern; /* "/v1/jobs/{job}/cancel" */
    unsigned roles;      /* who may call it; R_ANYONE: no token needed */
    api_handler handler;
    const char *summary;
} api_route;

/* The route table (router.c), terminated by a NULL method. */
extern const api_route api_routes[];

/* ---- answering ---- */
/* Answers doc (reference stolen) with status. */
void api_reply(api_req *rq, int status, json_t *doc);
void api_error(api_req *rq, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void api_diag(api_req *rq, const gp_diag *d);
/* Runs op through the committer and answers its result or its error. */
void api_run(api_req *rq, ctl_op *op);
/* The same without holding the server thread while the op waits for its group commit: the
 * request is deferred and answered from the committer once the op's group is committed (a 2xx
 * is sent only after the COMMIT), or failed (its error). op is copied; its arg is arg, owned
 * from now on: fini(arg) is called once the answer is built (at once when it cannot be
 * deferred). What the audit record needs of the request is copied. A server that stops waits
 * for the answer (gp_http_defer_awaited): a change it makes is never answered 503. */
void api_run_async(api_req *rq, const ctl_op *op, void *arg, void (*fini)(void *arg));

/* Parses the body as a JSON object (YAML too when the Content-Type says so). NULL after
 * answering 400 naming the line and column. */
json_t *api_body(api_req *rq);
/* The body read by read (into arg; it names what is wrong in d): 0, or -1 after answering the
 * body's or read's error. */
int api_read_body(api_req *rq, int (*read)(json_t *doc, void *arg, gp_diag *d), void *arg);
/* The paging parameters of a list: limit (1..1000; *limit keeps its default when absent) and
 * after (an id, >= 0; what names it in the error). GP_EINVAL after answering 400. */
int api_page(api_req *rq, const char *what, int *limit, int64_t *after);
/* A time query parameter key: milliseconds since the epoch, a date (its UTC midnight) or an RFC
 * 3339 time. 0 (*ms left alone when absent), or GP_EINVAL after answering 400. */
int api_time_param(api_req *rq, const char *key, int64_t *ms);
/* Who is calling, from the Authorization header: 0 with rq->who set, or an error answered. */
int api_authenticate(api_req *rq);
/* A user's own tenant id; 0 for the other roles (no scoping). */
int64_t api_scope(const api_req *rq);
/* Whether a monitoring request may see per-tenant labels: its caller was authenticated (a
 * scraper's token). */
bool api_scrape_full(const api_req *rq);

/* ---- handlers ---- */
void api_jobs_submit(api_req *rq);
void api_jobs_list(api_req *rq);
void api_jobs_get(api_req *rq);
void api_jobs_cancel(api_req *rq);
void api_jobs_requeue(api_req *rq);
void api_jobs_events(api_req *rq);
void api_jobs_logs(api_req *rq);
/* Services (api_services.c; PUT in api_jobs.c, the submission's path). */
void api_services_get(api_req *rq);
void api_services_put(api_req *rq);
/* The proxy to notebooks and services (proxy.c): ANY /v1/jobs/{job}/proxy/... (routed before
 * the table, with its own authentication) and POST /v1/jobs/{job}/proxy-session. */
void api_jobs_proxy(api_req *rq);
/* ANY /v1/services/{service}/...: the service's address, balanced (proxy.c, routed likewise). */
void api_services_proxy(api_req *rq);
void api_jobs_proxy_session(api_req *rq);
/* POST /v1/jobs/{job}/resume: a Suspended notebook back to Pending (api_resume.c). */
void api_jobs_resume(api_req *rq);
/* GET /v1/jobs/{job}/metrics and GET /v1/tenants/{tenant}/metrics (api_history.c). */
void api_jobs_metrics(api_req *rq);
void api_tenants_metrics(api_req *rq);

void api_nodes_register(api_req *rq);
void api_nodes_list(api_req *rq);
void api_nodes_get(api_req *rq);
void api_nodes_heartbeat(api_req *rq);
void api_nodes_cordon(api_req *rq);
void api_nodes_drain(api_req *rq);
void api_nodes_uncordon(api_req *rq);
/* POST and PUT /v1/nodes/{node}/taints (api_node_taints.c). */
void api_nodes_taint(api_req *rq);
void api_nodes_taints_put(api_req *rq);
void api_nodes_gpu_drain(api_req *rq);
void api_nodes_gpu_undrain(api_req *rq);
void api_nodes_check(api_req *rq);
/* api_node_admit.c */
void api_nodes_admit(api_req *rq);

void api_tenants_list(api_req *rq);
void api_tenants_get(api_req *rq);
void api_tenants_create(api_req *rq);
void api_tenants_update(api_req *rq);
void api_tenants_delete(api_req *rq);
/* /v1/tenants/{tenant}/registries[/{registry}] (registries.c). */
void api_registries_list(api_req *rq);
void api_registries_put(api_req *rq);
void api_registries_delete(api_req *rq);
void api_queues_list(api_req *rq);
void api_queues_get(api_req *rq);
void api_queues_create(api_req *rq);
void api_queues_update(api_req *rq);
void api_queues_delete(api_req *rq);
void api_pclasses_list(api_req *rq);
void api_pclasses_get(api_req *rq);
void api_pclasses_create(api_req *rq);
void api_pclasses_update(api_req *rq);
void api_pclasses_delete(api_req *rq);
/* GET /v1/nodes/{node}/desired (desired.c). */
void api_nodes_desired(api_req *rq);
/* The node's desired document, {"node", "version", "cordoned", "desired": [...]}, as the
 * heartbeat and the long-poll answer it. secrets: the caller is the node's own agent, so each
 * replica from an image carries "registry_auth" when its tenant has credentials for the image's
 * registry (never for anyone else). Under the state lock. 0, or GP_ENOMEM. */
int api_desired_answer(ctl_state *st, ctl_node *n, bool secrets, json_t **out);
void api_volumes_list(api_req *rq);
void api_volumes_get(api_req *rq);
void api_volumes_create(api_req *rq);
void api_volumes_update(api_req *rq);
void api_volumes_delete(api_req *rq);

void api_tokens_list(api_req *rq);
void api_tokens_create(api_req *rq);
void api_tokens_revoke(api_req *rq);
void api_whoami(api_req *rq);

void api_healthz(api_req *rq);
void api_readyz(api_req *rq);
void api_openapi(api_req *rq);
/* GET /v1/audit (api_audit.c). */
void api_audit_list(api_req *rq);
/* GET /v1/usage: the metering report (api_usage.c). */
void api_usage(api_req *rq);
/* GET /metrics and GET /v1/sd/prometheus (api_metrics.c). */
void api_metrics(api_req *rq);
void api_sd_prometheus(api_req *rq);
/* GET /v1/alerts: the alerts the controller raised that are still active (api_alerts.c). */
void api_alerts_list(api_req *rq);
/* The web dashboard's static files (api_ui.c): GET / and /ui redirect to /ui/, which answers
 * index.html; GET /ui/{path...} a file under ui.dir. */
void api_ui_root(api_req *rq);
void api_ui_redirect(api_req *rq);
void api_ui_index(api_req *rq);
void api_ui_file(api_req *rq);
/* The directory the dashboard is served from: ui.dir, or with ui.dir "" the installed layout
 * beside the executable (BINDIR/../share/gpupool/ui). 0 with its real path in dir; GP_ENOENT
 * (ui.dir none: off, or no index.html there: not built) with why set to say which. */
int api_ui_dir(const gp_ctl_config *cfg, char *dir, size_t cap, char *why, size_t whycap);

/* ---- documents shown by the API ---- */
/* A job as the API shows it (placement with node names and GPU UUIDs). Under the state lock. */
json_t *api_job_doc(ctl_state *st, const ctl_job *j);
/* A node with its GPUs' allocation (holders are hidden from users of other tenants). */
json_t *api_node_doc(ctl_state *st, const ctl_node *n, int64_t scope);

#endif
