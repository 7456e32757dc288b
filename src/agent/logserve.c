/*
 * The agent's HTTP endpoint (see logserve.h): the router, the log reader, and /metrics (the text
 * is metrics.c's).
 */
#include "agent/logserve.h"
#include "agent/tunnel.h"

#include "net/http_server.h"
#include "net/token.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

struct gp_logserve {
    gp_http_server *http;
    gp_metrics *metrics; /* borrowed; NULL: no /metrics */
    char state_dir[1024];
    char podman[1024]; /* for the tunnel: "" podman in PATH */
    pthread_mutex_t lock;
    char token_hash[GP_TOKEN_HASH_HEX];   /* "" = no token yet: refuse everything */
    char metrics_hash[GP_TOKEN_HASH_HEX]; /* "" = no metrics token */
    bool metrics_open;                    /* /metrics to anyone */
};

void gp_logserve_set_token(gp_logserve *s, const char *token)
{
    pthread_mutex_lock(&s->lock);
    if (!token || !token[0] || gp_token_hash(token, s->token_hash) < 0) {
        s->token_hash[0] = 0;
    }
    pthread_mutex_unlock(&s->lock);
}

void gp_logserve_set_metrics_auth(gp_logserve *s, bool open, const char *metrics_token)
{
    pthread_mutex_lock(&s->lock);
    s->metrics_open = open;
    if (!metrics_token || !metrics_token[0] || gp_token_hash(metrics_token, s->metrics_hash) < 0) {
        s->metrics_hash[0] = 0;
    }
    pthread_mutex_unlock(&s->lock);
}

/* Whether req carries the control token, or for /metrics (metrics true) the metrics token or
 * none at all where /metrics is open; *known says whether it carried one of the tokens (a
 * scraper who sees the jobs' labels). */
static bool authorised(gp_logserve *s, const gp_http_request *req, bool metrics, bool *known)
{
    const char *h = gp_http_request_header(req, "Authorization");
    char hash[GP_TOKEN_HASH_HEX];
    bool given = h && strncasecmp(h, "Bearer ", 7) == 0 && gp_token_hash(h + 7, hash) == 0;
    pthread_mutex_lock(&s->lock);
    *known = (given && s->token_hash[0] && gp_token_hash_equal(s->token_hash, hash)) ||
             (given && metrics && s->metrics_hash[0] && gp_token_hash_equal(s->metrics_hash, hash));
    bool ok = *known || (metrics && s->metrics_open);
    pthread_mutex_unlock(&s->lock);
    return ok;
}

/* Opens the log of replica name ("J-R-E", checked to be only digits and dashes). */
static int open_log(const gp_logserve *s, const char *name, const char *stream, bool times)
{
    if (strspn(name, "0123456789-") != strlen(name) || !name[0]) {
        errno = ENOENT;
        return -1;
    }
    const char *subs[] = {"replicas", "finished"};
    for (int i = 0; i < 2; i++) {
        char path[1400];
        snprintf(path, sizeof(path), "%s/%s/%s/%s.log%s", s->state_dir, subs[i], name, stream,
                 times ? ".times" : "");
        /* a log the job replaced by a symlink or a FIFO is not followed or waited on */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        struct stat sb;
        if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
            return fd;
        }
        if (fd >= 0) {
            close(fd);
            errno = ENOENT;
        }
    }
    return -1;
}

/* GET /metrics: the latest round's snapshot, rendered now (with the jobs' labels or not). */
static void serve_metrics(gp_logserve *s, bool jobs, gp_http_response *resp)
{
    gp_prom p;
    gp_prom_init(&p);
    gp_metrics_render(s->metrics, jobs, &p);
    const char *text = gp_prom_text(&p);
    if (!text) {
        gp_prom_fini(&p);
        gp_http_respond_error(resp, GP_ENOMEM, "metrics: out of memory");
        return;
    }
    /* the response takes the buffer (NULL when nothing was written: an empty page) */
    size_t len = p.len;
    gp_http_response_set_body(resp, 200, GP_PROM_CONTENT_TYPE, p.buf, len);
    p.buf = NULL;
    gp_prom_fini(&p);
}

static void handle(void *ctx, const gp_http_request *req, gp_http_response *resp)
{
    gp_logserve *s = ctx;
    bool known = false;
    if (strcmp(req->path, "/metrics") == 0 && s->metrics) {
        if (strcmp(req->method, "GET") != 0) {
            gp_http_respond_error(resp, GP_ENOENT, "%s /metrics: only GET", req->method);
        } else if (!authorised(s, req, true, &known)) {
            gp_http_respond_error(resp, GP_EAUTH,
                                  "Authorization: the pool's metrics token (the agent's "
                                  "--metrics-token-file) or the node's control token");
        } else {
            serve_metrics(s, known, resp);
        }
        return;
    }
    char name[64];
    int used = 0;
    if (strcmp(req->method, "GET") == 0 &&
        sscanf(req->path, "/v1/replicas/%63[0-9-]/tunnel%n", name, &used) == 1 &&
        !req->path[used]) {
        if (!authorised(s, req, false, &known)) {
            gp_http_respond_error(resp, GP_EAUTH, "Authorization: the node's control token only");
        } else {
            char podman[sizeof(s->podman)];
            pthread_mutex_lock(&s->lock);
            memcpy(podman, s->podman, sizeof(podman));
            pthread_mutex_unlock(&s->lock);
            gp_tunnel_serve(s->state_dir, podman, name, req, resp);
        }
        return;
    }
    used = 0;
    if (strcmp(req->method, "GET") != 0 ||
        sscanf(req->path, "/v1/replicas/%63[0-9-]/logs%n", name, &used) != 1 || req->path[used]) {
        gp_http_respond_error(resp, GP_ENOENT, "%s %s: no such endpoint", req->method, req->path);
        return;
    }
    if (!authorised(s, req, false, &known)) {
        gp_http_respond_error(resp, GP_EAUTH, "Authorization: the node's control token only");
        return;
    }
    const char *stream = gp_http_request_query(req, "stream");
    const char *off = gp_http_request_query(req, "offset"),
               *lim = gp_http_request_query(req, "limit");
    long long offset = off ? atoll(off) : 0, limit = lim ? atoll(lim) : 65536;
    if (!stream || (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0)) {
        stream = "stdout";
    }
    limit = limit < 1 ? 1 : limit > (1 << 20) ? (1 << 20) : limit;
    const char *times = gp_http_request_query(req, "times");
    bool want_times = times && strcmp(times, "1") == 0;
    int fd = open_log(s, name, stream, want_times);
    if (fd < 0) {
        gp_http_respond_error(resp, GP_ENOENT, "replica %s: no %s%s", name, stream,
                              want_times ? " times" : "");
        return;
    }
    struct stat sb;
    if (fstat(fd, &sb) == 0 && offset > sb.st_size) {
        offset = 0; /* rotated since: the client reads the new file from its start */
    }
    char *buf = malloc((size_t)limit + 1);
    ssize_t n = buf ? pread(fd, buf, (size_t)limit, offset < 0 ? 0 : offset) : -1;
    close(fd);
    if (n < 0) {
        free(buf);
        gp_http_respond_error(resp, GP_EIO, "replica %s: reading %s failed", name, stream);
        return;
    }
    gp_http_response_set_body(resp, 200, "text/plain; charset=utf-8", buf, (size_t)n);
}

int gp_logserve_start(const char *host, int port, const char *state_dir, gp_metrics *metrics,
                      gp_logserve **out, gp_diag *d)
{
    *out = NULL;
    gp_logserve *s = calloc(1, sizeof(*s));
    if (!s) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&s->lock, NULL);
    s->metrics = metrics;
    snprintf(s->state_dir, sizeof(s->state_dir), "%s", state_dir);
    gp_http_server_config cfg = {
        .host = host, .port = port, .threads = 2, .max_body = 4096, .timeout_s = 30};
    int rc = gp_http_server_start(&cfg, handle, s, &s->http, d);
    if (rc < 0) {
        pthread_mutex_destroy(&s->lock);
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int gp_logserve_port(const gp_logserve *s)
{
    return gp_http_server_port(s->http);
}

void gp_logserve_set_podman(gp_logserve *s, const char *podman)
{
    pthread_mutex_lock(&s->lock);
    snprintf(s->podman, sizeof(s->podman), "%s", podman ? podman : "");
    pthread_mutex_unlock(&s->lock);
}

void gp_logserve_stop(gp_logserve *s)
{
    if (s) {
        gp_http_server_stop(s->http);
        pthread_mutex_destroy(&s->lock);
        free(s);
    }
}
