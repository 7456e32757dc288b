/*
 * Network namespaces of notebook and service replicas.
 *
 * A notebook or service replica runs in a network namespace of its own: nothing on the node or in
 * other jobs can connect to what it listens on. Under podman that is slirp4netns (sandbox.c); as
 * a host process (gpupool-run --runtime none) gpupool-run makes one before exec
 * (gp_netns_unshare). The agent reaches the replica's port from inside that namespace only
 * (gp_netns_connect): the controller's proxy (the agent's tunnel) and the probes.
 */
#ifndef GP_AGENT_NETNS_H
#define GP_AGENT_NETNS_H

#include "gpupool/error.h"

#include <sys/types.h>

/* Moves the calling process (single-threaded: between fork and exec) into a new network
 * namespace with its loopback interface up. Returns 0, or -errno (EPERM without
 * CAP_SYS_ADMIN). */
int gp_netns_unshare(void);

/* Connects to 127.0.0.1:port inside the network namespace of process pid (/proc/PID/ns/net):
 * a thread of its own enters the namespace, makes the socket, and leaves (a socket keeps the
 * namespace it was made in; the calling thread never changes namespace). Waits up to timeout_ms
 * for the connection. Returns 0 with *fd (blocking, close-on-exec; the caller's), or GP_EINVAL
 * (port out of 1..65535, pid <= 0), GP_ENOENT (no such process or namespace), GP_EUNAVAIL
 * (refused, timed out: d says), GP_EIO (setns failed) with d set; *fd is then -1. */
int gp_netns_connect(pid_t pid, int port, int timeout_ms, int *fd, gp_diag *d);

#endif
