/*
 * The agent's tunnel into a replica's network namespace (contract in tunnel.h).
 *
 * The handler checks the request and the replica, connects inside the namespace (a local
 * connect: it does not wait on anything remote) and answers the upgrade; the relay then runs on
 * a detached thread of its own per tunnel, which ends with the connection.
 */
#include "agent/tunnel.h"

#include "agent/cmd.h"
#include "agent/netns.h"
#include "agent/replica_dir.h"
#include "base/log.h"
#include "net/relay.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 5000

static atomic_int open_tunnels;

typedef struct tunnel {
    int target; /* the socket inside the replica's namespace */
    int client; /* the upgraded connection */
    gp_http_upgraded *h;
    char *first;
    size_t first_len;
} tunnel;

static void *tunnel_main(void *arg)
{
    tunnel *t = arg;
    gp_relay_run(t->client, t->target, t->first, t->first_len, NULL, NULL);
    close(t->target);
    gp_http_upgraded_close(t->h);
    free(t->first);
    free(t);
    atomic_fetch_sub(&open_tunnels, 1);
    return NULL;
}

static void on_upgraded(void *ctx, int fd, const char *extra, size_t extra_len, gp_http_upgraded *h)
{
    tunnel *t = ctx;
    t->client = fd;
    t->h = h;
    pthread_t th;
    if (fd >= 0 && (extra_len == 0 || (t->first = malloc(extra_len)) != NULL)) {
        if (extra_len > 0) {
            memcpy(t->first, extra, extra_len);
        }
        t->first_len = extra_len;
        if (pthread_create(&th, NULL, tunnel_main, t) == 0) {
            pthread_detach(th);
            return;
        }
    }
    if (h) {
        gp_http_upgraded_close(h);
    }
    close(t->target);
    free(t->first);
    free(t);
    atomic_fetch_sub(&open_tunnels, 1);
}

/* Containers' first processes, as podman named them: asking podman takes a process start, and
 * every proxied request opens a tunnel. An entry is believed while its process lives with the
 * same start time. */
#define PID_CACHE 64
static struct {
    char container[96];
    gp_rdir_pid pid;
} pid_cache[PID_CACHE];
static unsigned pid_cache_next;
static pthread_mutex_t pid_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static pid_t cached_pid(const char *container)
{
    pid_t pid = 0;
    pthread_mutex_lock(&pid_cache_lock);
    for (int i = 0; i < PID_CACHE && !pid; i++) {
        if (strcmp(pid_cache[i].container, container) == 0 &&
            gp_rdir_pid_alive(&pid_cache[i].pid)) {
            pid = pid_cache[i].pid.pid;
        }
    }
    pthread_mutex_unlock(&pid_cache_lock);
    return pid;
}

static void cache_pid(const char *container, pid_t pid)
{
    gp_rdir_pid p = {.pid = pid};
    bool zombie;
    if (gp_rdir_proc_start(pid, &p.start, &zombie) != 0 || zombie) {
        return;
    }
    pthread_mutex_lock(&pid_cache_lock);
    unsigned i = pid_cache_next++ % PID_CACHE;
    snprintf(pid_cache[i].container, sizeof(pid_cache[i].container), "%s", container);
    pid_cache[i].pid = p;
    pthread_mutex_unlock(&pid_cache_lock);
}

/* The pid of the container's first process, from podman. */
static pid_t container_pid(const char *podman, const char *container)
{
    pid_t known = cached_pid(container);
    if (known > 0) {
        return known;
    }
    char *argv[] = {(char *)(podman && podman[0] ? podman : "podman"),
                    "inspect",
                    "--format",
                    "{{.State.Pid}}",
                    (char *)container,
                    NULL};
    gp_cmd_result r;
    gp_diag d = {0};
    if (gp_cmd_run(argv, NULL, 10000, 64, &r, &d) != 0) {
        return 0;
    }
    long pid = r.status == 0 && r.out ? strtol(r.out, NULL, 10) : 0;
    gp_cmd_result_fini(&r);
    if (pid <= 1) {
        return 0;
    }
    cache_pid(container, (pid_t)pid);
    return (pid_t)pid;
}

pid_t gp_tunnel_replica_pid(const char *dir, const char *podman)
{
    gp_rdir_view v;
    gp_diag d = {0};
    if (gp_rdir_probe(dir, &v, &d) != 0 || !v.supervisor_alive || !v.child_alive ||
        v.status.state != GP_RDIR_RUNNING) {
        return 0;
    }
    if (v.status.container[0]) {
        return container_pid(podman, v.status.container);
    }
    /* child.pid is writable by a job running as the agent's user: believe it only for the
     * supervisor's own child leading its session (another job's leader has another parent). */
    pid_t ppid, sid;
    if (gp_rdir_proc_session(v.child.pid, &ppid, &sid) != 0 || sid != v.child.pid ||
        ppid != v.supervisor.pid) {
        return 0;
    }
    return v.child.pid;
}

/* Checks that the replica is a notebook or service declaring port; an error answered if not. */
static int check_spec(const char *dir, const char *name, int port, gp_http_response *resp)
{
    json_t *spec = NULL;
    gp_diag d = {0};
    if (gp_rdir_read_json(dir, GP_RDIR_SPEC, GP_RDIR_SPEC_MAX, &spec, &d) != 0) {
        return gp_http_respond_error(resp, GP_ENOENT, "replica %s: not on this node", name),
               GP_ENOENT;
    }
    const char *kind = "batch";
    json_int_t declared = 0;
    json_unpack(spec, "{s?s, s?I}", "kind", &kind, "port", &declared);
    int rc = 0;
    if (strcmp(kind, "notebook") != 0 && strcmp(kind, "service") != 0) {
        rc = GP_EINVAL;
        gp_http_respond_error(resp, rc, "replica %s: a %s job has no tunnel", name, kind);
    } else if (declared != port) {
        rc = GP_EPERM;
        gp_http_respond_error(resp, rc, "port: replica %s serves on port %lld only", name,
                              (long long)declared);
    }
    json_decref(spec);
    return rc;
}

static bool token_in(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && *p;) {
        p += strspn(p, " \t,");
        size_t len = strcspn(p, " \t,");
        if (len == n && strncasecmp(p, word, n) == 0) {
            return true;
        }
        p += len;
    }
    return false;
}

void gp_tunnel_serve(const char *state_dir, const char *podman, const char *name,
                     const gp_http_request *req, gp_http_response *resp)
{
    const char *up = gp_http_request_header(req, "Upgrade");
    const char *conn = gp_http_request_header(req, "Connection");
    const char *p = gp_http_request_query(req, "port");
    char *end = NULL;
    long port = p ? strtol(p, &end, 10) : 0;
    if (!up || strcasecmp(up, "gpupool-tunnel") != 0 || !token_in(conn, "upgrade")) {
        gp_http_respond_error(resp, GP_EINVAL,
                              "Upgrade: gpupool-tunnel with Connection: Upgrade required");
        return;
    }
    if (!p || !*p || *end || port < 1 || port > 65535) {
        gp_http_respond_error(resp, GP_EINVAL, "port: must be between 1 and 65535");
        return;
    }
    char dir[1400];
    snprintf(dir, sizeof(dir), "%s/replicas/%s", state_dir, name);
    if (check_spec(dir, name, (int)port, resp) != 0) {
        return;
    }
    pid_t pid = gp_tunnel_replica_pid(dir, podman);
    if (pid <= 0) {
        gp_http_respond_error(resp, GP_EUNAVAIL, "replica %s: not running", name);
        return;
    }
    if (atomic_fetch_add(&open_tunnels, 1) >= GP_TUNNEL_MAX) {
        atomic_fetch_sub(&open_tunnels, 1);
        gp_http_respond_error(resp, GP_EUNAVAIL, "%d tunnels open: try again later", GP_TUNNEL_MAX);
        return;
    }
    gp_diag d = {0};
    tunnel *t = calloc(1, sizeof(*t));
    if (!t || gp_netns_connect(pid, (int)port, CONNECT_TIMEOUT_MS, &t->target, &d) != 0) {
        atomic_fetch_sub(&open_tunnels, 1);
        gp_http_respond_error(resp, t ? d.code : GP_ENOMEM, "replica %s: %s", name,
                              t ? d.msg : "out of memory");
        free(t);
        return;
    }
    gp_http_response_set_upgrade(resp, on_upgraded, t);
    gp_http_response_add_header(resp, "Upgrade", "gpupool-tunnel");
    gp_http_response_add_header(resp, "Connection", "Upgrade");
}
