/*
 * Readiness and liveness probes of a service's replica, run by the agent.
 *
 * A probe is one of:
 *   HTTP  GET path on port inside the replica's network: a status line of 2xx or 3xx within the
 *         timeout is a success; anything else (refused, reset, 4xx/5xx, a stall) a failure;
 *   TCP   a connection to port accepted within the timeout;
 *   exec  the command run in the replica (the target's exec prefix, e.g. `podman exec NAME`,
 *         before it; over the host, in the replica's network namespace, as the replica's user in
 *         its working directory): exit 0 within the timeout. One that overruns is killed with
 *         its process group.
 * Connections go through the target's connect function (into the replica's network namespace);
 * without one, to 127.0.0.1 (a replica on the host network).
 *
 * Thresholds (gp_probe_state): a probe's result counts from initial_delay_s after the prober
 * started, every period_s; success_threshold successes in a row make it pass, failure_threshold
 * failures in a row make it fail. Readiness starts failing (a replica is not ready until a probe
 * says so); liveness starts passing (a replica is alive until proven otherwise).
 *
 * The prober (gp_prober) runs each of a replica's probes on a thread of its own, so a probe that
 * hangs holds up neither the agent's round nor the replica's other probe (each attempt is bounded
 * by its timeout). Its status is read under a lock at any time.
 */
#ifndef GP_AGENT_PROBE_H
#define GP_AGENT_PROBE_H

#include "gpupool/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define GP_PROBE_MSG_MAX 256

typedef enum gp_probe_kind {
    GP_PROBE_KIND_NONE = 0,
    GP_PROBE_KIND_HTTP = 1,
    GP_PROBE_KIND_TCP = 2,
    GP_PROBE_KIND_EXEC = 3,
} gp_probe_kind;

/* One probe as the agent runs it. The strings are borrowed by gp_probe_once and copied by
 * gp_prober_start. */
typedef struct gp_probe_conf {
    gp_probe_kind kind;
    const char *path;           /* HTTP: the request path, "/" when NULL */
    int port;                   /* HTTP, TCP: 1..65535 */
    const char *const *command; /* exec: NULL-terminated, non-empty */
    int initial_delay_s;        /* >= 0 */
    int period_s;               /* >= 1 */
    int timeout_s;              /* >= 1 */
    int failure_threshold;      /* >= 1 */
    int success_threshold;      /* >= 1 */
} gp_probe_conf;

/* Opens a TCP connection to port in the replica's network, giving up after timeout_ms: a
 * connected socket (the caller closes it) or a negative GP_E* with msg set. */
typedef int (*gp_probe_connect_fn)(void *ctx, int port, int timeout_ms, char *msg, size_t cap);

/* Where a replica's probes reach it. Borrowed by gp_probe_once, copied by gp_prober_start. */
typedef struct gp_probe_target {
    gp_probe_connect_fn connect; /* NULL: 127.0.0.1 */
    void *connect_ctx;           /* must outlive the prober */
    /* An exec probe's network namespace: an open descriptor of it (the caller's to keep; the
     * probe closes it) or negative when there is none to enter; NULL: the agent's own. Called
     * with connect_ctx before each attempt. */
    int (*netns_fd)(void *ctx);
    const char *const *exec_prefix; /* before an exec probe's command (NULL: none) */
    const char *exec_dir;           /* working directory of the command (NULL: the agent's) */
    uid_t uid;                      /* the command's user and group when drop_to is set */
    gid_t gid;
    bool drop_to;
} gp_probe_target;

/* One attempt of p against t: 1 success, 0 failure (msg says why, e.g. "HTTP 503",
 * "connect: Connection refused", "timed out after 1 s", "exit 3"). */
int gp_probe_once(const gp_probe_conf *p, const gp_probe_target *t, char *msg, size_t cap);

/* The service's Prometheus metric (autoscaling): GET path (NULL: /metrics) on port through t
 * within timeout_ms, an answer of at most GP_PROBE_SCRAPE_MAX bytes with status 200, and the sum
 * of the samples of metric name in it (net/prom.h gp_prom_read_sum). 1 with *value set, else 0
 * with msg saying why. */
#define GP_PROBE_SCRAPE_MAX (1024 * 1024)
int gp_probe_scrape(const gp_probe_target *t, int port, const char *path, const char *name,
                    int timeout_ms, double *value, char *msg, size_t cap);

/* The thresholds of one probe. */
typedef struct gp_probe_state {
    bool pass;                   /* the probe's verdict */
    int successes, failures;     /* in a row */
    char last[GP_PROBE_MSG_MAX]; /* the last failure's message */
} gp_probe_state;

/* pass: the verdict before any result (false for readiness, true for liveness). */
void gp_probe_state_init(gp_probe_state *s, bool pass);
/* Counts one result; true when the verdict changed. */
bool gp_probe_state_observe(gp_probe_state *s, const gp_probe_conf *p, bool success,
                            const char *msg);

typedef struct gp_prober gp_prober;

/* The service's metric, scraped by the prober every period_s (autoscaling). */
typedef struct gp_probe_scrape_conf {
    int port;         /* 1..65535 */
    const char *path; /* NULL: /metrics */
    const char *name; /* the metric; non-empty */
    int period_s;     /* >= 1; the timeout is the same */
} gp_probe_scrape_conf;

typedef struct gp_probe_status {
    bool ready;                 /* readiness passes (true when there is no readiness probe) */
    bool alive;                 /* liveness passes (true when there is none) */
    char why[GP_PROBE_MSG_MAX]; /* liveness's last failure when !alive, else readiness's */
    int attempts;               /* results counted so far, both probes */
    bool has_metric;            /* the last scrape found the metric */
    double metric;
} gp_probe_status;

/* Starts the threads for a replica's probes and scrape (each may be NULL, a probe of kind NONE
 * too): its copies of them and of the target are its own. 0 and *out, GP_EINVAL (a bad probe)
 * or GP_ENOMEM. */
int gp_prober_start(const gp_probe_conf *readiness, const gp_probe_conf *liveness,
                    const gp_probe_scrape_conf *scrape, const gp_probe_target *t, gp_prober **out);
void gp_prober_status(gp_prober *p, gp_probe_status *out);
/* Stops the threads (a probe under way ends within its timeout) and frees p. Accepts NULL. */
void gp_prober_stop(gp_prober *p);

#endif
