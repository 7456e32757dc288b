/*
 * The agent's own HTTP endpoint, on the port of its --address:
 *   GET /metrics
 * answers the latest round's metrics (metrics.h) as GP_PROM_CONTENT_TYPE; an empty page before
 * the first round. The page names the jobs on the node and their tenants, and jobs share the
 * node's network: by default it needs `Authorization: Bearer` with the metrics token
 * (gp_logserve_set_metrics_auth: the one Prometheus is given) or the node's control token,
 * others get 401; only an operator's explicit choice (open) serves it to anyone. For the
 * controller only:
 *   GET /v1/replicas/J-R-E/logs?stream=stdout|stderr&offset=N&limit=L
 * answers up to L bytes (default 64 KiB, at most 1 MiB) of the replica's log from byte N, as
 * text/plain (empty past the end; an offset past a log that was rotated since starts again at
 * 0). With times=1 it answers the log's times file instead (logcap.h: "OFFSET UNIX_MS" lines
 * telling when lines were written), in the same way. The replica is looked up in replicas/ and
 * then finished/. Requests must carry the node's
 * control token (`Authorization: Bearer`), which the controller gave at registration; others
 * get 401. It reads files and the published metrics only, so it serves from its own threads
 * beside the agent's rounds. Also for the controller only, with the same token:
 *   GET /v1/replicas/J-R-E/tunnel?port=P   (Upgrade: gpupool-tunnel; tunnel.h)
 * a byte stream to a notebook's or service's declared port inside its own network namespace.
 */
#ifndef GP_AGENT_LOGSERVE_H
#define GP_AGENT_LOGSERVE_H

#include "agent/metrics.h"
#include "gpupool/error.h"

#include <stdbool.h>

typedef struct gp_logserve gp_logserve;

/* Listens on host:port (port 0: a free port the kernel picks; gp_logserve_port names it).
 * state_dir is copied; the token can be replaced later. metrics (borrowed: it must outlive the
 * server; NULL: /metrics answers 404) is what /metrics renders. */
int gp_logserve_start(const char *host, int port, const char *state_dir, gp_metrics *metrics,
                      gp_logserve **out, gp_diag *d);
/* The port listened on. */
int gp_logserve_port(const gp_logserve *s);
/* The token requests must carry (after each registration). Thread-safe. */
void gp_logserve_set_token(gp_logserve *s, const char *token);
/* Who may read /metrics besides the controller: anyone (open), or who carries metrics_token
 * (NULL or "": no one else). Thread-safe; by default no one else. Open, a request without
 * either token gets the page without job, tenant or queue labels (gp_metrics_write). */
void gp_logserve_set_metrics_auth(gp_logserve *s, bool open, const char *metrics_token);
/* The podman binary the tunnel asks for a container's process (NULL or "": podman in PATH).
 * Thread-safe. */
void gp_logserve_set_podman(gp_logserve *s, const char *podman);
void gp_logserve_stop(gp_logserve *s);

#endif
