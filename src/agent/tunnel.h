/*
 * The agent's tunnel into a notebook's or service's network namespace (served by logserve.c):
 *
 *   GET /v1/replicas/J-R-E/tunnel?port=P
 *   Connection: Upgrade
 *   Upgrade: gpupool-tunnel
 *   Authorization: Bearer NODE-CONTROL-TOKEN      (checked by the caller, as for the logs)
 *
 * The replica must run here (replicas/J-R-E), be of kind notebook or service, and P must be
 * the port its spec declares: others are refused (404 no such replica, 400 not a notebook or
 * service, 403 another port), so a tenant reaches only its job's declared port. The agent
 * connects to 127.0.0.1:P inside the replica's network namespace (netns.h; as a host process the
 * job's leader from child.pid, checked to be a session leader whose parent is the replica's
 * supervisor; in a sandbox the container's init, from podman) — never on the node's network —
 * answers 101 Switching Protocols (Upgrade: gpupool-tunnel) and then passes bytes both ways until
 * either side ends. 503 when the replica does not accept the connection (not started, not
 * listening yet). At most GP_TUNNEL_MAX tunnels are open at once (503 past that).
 */
#ifndef GP_AGENT_TUNNEL_H
#define GP_AGENT_TUNNEL_H

#include "net/http_server.h"

#include <sys/types.h>

#define GP_TUNNEL_MAX 256

/* Serves the request above for replica name ("J-R-E", digits and dashes) from state_dir's
 * replicas. podman: the podman binary ("" or NULL: podman in PATH) to find a container's
 * process. Thread-safe. */
void gp_tunnel_serve(const char *state_dir, const char *podman, const char *name,
                     const gp_http_request *req, gp_http_response *resp);

/* The process whose network namespace is replica directory dir's (the same rules as above; the
 * probes use it too, services.h); 0 when it does not run. podman as above. Thread-safe. */
pid_t gp_tunnel_replica_pid(const char *dir, const char *podman);

#endif
