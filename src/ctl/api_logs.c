/*
 * GET /v1/jobs/{job}/logs: a replica's output, fetched from the agent of the node it runs (or
 * last ran) on. The controller calls the agent's own endpoint
 *   GET http://NODE-ADDRESS/v1/replicas/J-R-E/logs?stream=S&offset=N&limit=L
 * with the node's control token (made at registration), and passes the bytes on as text/plain.
 * Following (`gpupool logs -f`) is the client asking again from offset + what it got. With
 * times=1 the answer is the log's times file instead ("OFFSET UNIX_MS" lines: when the lines
 * starting at OFFSET were written; agent/logcap.h), read the same way.
 */
#include "ctl/api.h"

#include "net/http_client.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct logs_target {
    char url[192];
    char token[64];
    char path[160];
    bool current; /* the replica's placement is the job's current one (it may be starting) */
} logs_target;

/* Finds where the replica's logs are; an error answered when it cannot. */
static int locate(api_req *rq, int replica, logs_target *t)
{
    ctl_read_lock(rq->g);
    ctl_state *st = &rq->g->st;
    ctl_job *j = ctl_job_find(st, rq->params[0], api_scope(rq));
    int rc = 0;
    if (!j) {
        rc = GP_ENOENT;
        api_error(rq, rc, "job %s: not found", rq->params[0]);
    } else if (replica < 0 || replica >= j->spec.replicas) {
        rc = GP_EINVAL;
        api_error(rq, rc, "replica: job %s has replicas 0 to %d", rq->params[0],
                  j->spec.replicas - 1);
    } else if (!j->replicas && !j->ran_on) {
        rc = GP_ESTATE;
        api_error(rq, rc, "job %s has not run yet: no logs", rq->params[0]);
    }
    const ctl_node *n = NULL;
    int64_t epoch = 0, id = 0;
    if (rc == 0) {
        n = ctl_node_by_id(st, j->replicas ? j->replicas[replica].node_id : j->ran_on[replica]);
        epoch = j->replicas ? j->replicas[replica].epoch : j->ran_epoch;
        id = j->id;
    }
    char host[128];
    if (rc == 0 && (!n || !ctl_node_host(n, host, sizeof(host)))) {
        rc = GP_EUNAVAIL;
        api_error(rq, rc, "the node of replica %d has no address to fetch logs from", replica);
    }
    if (rc == 0) {
        snprintf(t->url, sizeof(t->url), "http://%s", n->address);
        snprintf(t->token, sizeof(t->token), "%s", n->control_token);
        snprintf(t->path, sizeof(t->path), "/v1/replicas/%lld-%d-%lld/logs", (long long)id, replica,
                 (long long)epoch);
        t->current = j->replicas != NULL;
    }
    ctl_read_unlock(rq->g);
    return rc;
}

static int number(api_req *rq, const char *name, long long lo, long long hi, long long dflt,
                  long long *out)
{
    const char *v = gp_http_request_query(rq->http, name);
    char *end;
    *out = v ? strtoll(v, &end, 10) : dflt;
    if (v && (!*v || *end || *out < lo || *out > hi)) {
        api_error(rq, GP_EINVAL, "%s: must be a whole number from %lld to %lld", name, lo, hi);
        return GP_EINVAL;
    }
    return 0;
}

void api_jobs_logs(api_req *rq)
{
    long long replica, offset, limit, times;
    const char *stream = gp_http_request_query(rq->http, "stream");
    stream = stream ? stream : "stdout";
    if (number(rq, "replica", 0, GP_JOB_MAX_REPLICAS - 1, 0, &replica) < 0 ||
        number(rq, "offset", 0, INT64_MAX / 2, 0, &offset) < 0 ||
        number(rq, "limit", 1, 1 << 20, 1 << 16, &limit) < 0 ||
        number(rq, "times", 0, 1, 0, &times) < 0) {
        return;
    }
    if (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0) {
        api_error(rq, GP_EINVAL, "stream: must be stdout or stderr");
        return;
    }
    logs_target t;
    if (locate(rq, (int)replica, &t) < 0) {
        return;
    }
    char path[256];
    snprintf(path, sizeof(path), "%s?stream=%s&offset=%lld&limit=%lld%s", t.path, stream, offset,
             limit, times ? "&times=1" : "");
    gp_http_client *c = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    int status = 0;
    char *body = NULL;
    size_t len = 0;
    int rc = gp_http_client_new(t.url, t.token, &c, &d);
    if (rc == 0) {
        gp_http_client_set_timeout(c, 10000, 3000);
        rc = gp_http_call(c, "GET", path, NULL, 0, NULL, &status, &body, &len, &d);
    }
    gp_http_client_free(c);
    if (rc < 0) {
        api_error(rq, GP_EUNAVAIL, "the node's agent did not answer: %s", d.msg);
    } else if (status == 200) {
        gp_http_response_set_body(rq->resp, 200, "text/plain; charset=utf-8", body, len);
        body = NULL;
    } else if (status == 404 && (t.current || times)) {
        /* placed, and the agent has not started it yet (or an agent too old to keep times):
         * nothing to show so far */
        gp_http_response_set_body(rq->resp, 200, "text/plain; charset=utf-8", NULL, 0);
    } else if (status == 404) {
        api_error(rq, GP_ENOENT, "no %s of replica %lld on its node (cleaned up?)", stream,
                  replica);
    } else {
        api_error(rq, GP_EUNAVAIL, "the node's agent answered %d: %.200s", status,
                  body ? body : "");
    }
    free(body);
}
