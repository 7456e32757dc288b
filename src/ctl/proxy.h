/*
 * The controller's proxy to notebooks and services (api layer): what proxy.c (routing,
 * authentication, sessions) hands proxy_pass.c (the pass itself, on a worker thread).
 *
 *   ANY /v1/jobs/{job}/proxy/...      passed, path unchanged, to the job's port through the
 *                                     agent's tunnel (agent/tunnel.h), HTTP/1.1 or upgraded
 *                                     (WebSocket); the answer streamed back
 *   POST /v1/jobs/{job}/proxy-session a one-time code that opens the proxy in a browser
 *   ANY /v1/services/{service}/...    a service (ctl/service.h): passed to one of its ready
 *                                     replica jobs in turn, the /v1/services/{service} prefix
 *                                     stripped (also reached as /v1/jobs/{service}/proxy/...)
 *
 * See docs/api.md ("Notebooks and services: the proxy") for the contract with clients.
 */
#ifndef GP_CTL_PROXY_H
#define GP_CTL_PROXY_H

#include "ctl/api.h"
#include "ctl/proxy_pool.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PX_COOKIE "gp_proxy" /* the session cookie's name; never passed to the job */

/* One proxied request, copied out of the HTTP request and the state (the worker owns it). */
typedef struct px_target {
    gpupoold *g;
    int64_t job;
    int64_t tenant;
    char agent_host[128]; /* the node's agent */
    int agent_port;
    char token[64];   /* the node's control token */
    char tunnel[160]; /* "/v1/replicas/J-R-E/tunnel?port=P" */
    char node[64];    /* for messages */
    int port;         /* the job's port */
    char *head;       /* the request head for the job (malloc'd) */
    size_t head_len;
    char *body; /* malloc'd copy of the request body */
    size_t body_len;
    bool upgrade;    /* the client asked for an upgrade (WebSocket) */
    bool head_only;  /* HEAD: the answer has no body */
    bool retry_ok;   /* idempotent: may be sent again on a fresh tunnel after a reused one failed */
    px_pool_key key; /* what its tunnel is bound to (proxy_pool.h) */
} px_target;

/* Resumes the Suspended job (of tenant; 0: any) through the committer, as who (for its event).
 * 0, or an error with d set (GP_ESTATE: it is not Suspended). api_resume.c. */
int px_resume(gpupoold *g, int64_t job, int64_t tenant, const char *who, gp_diag *d);

/* Whether path is under /v1/jobs/{job}/proxy (the job's reference into job, cap bytes). */
bool px_path_match(const char *path, char *job, size_t cap);
/* Whether path is under /v1/services/{service}/ (a service's address: its name into name, cap
 * bytes); /v1/services/{service} itself is the API's. */
bool px_service_path_match(const char *path, char *name, size_t cap);

/* Passes t's request on a worker thread of its own and answers req from there (the request is
 * deferred). Takes t (also on failure, after answering resp). */
void px_pass_start(px_target *t, const gp_http_request *req, gp_http_response *resp);

#endif
