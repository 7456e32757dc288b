/*
 * The proxy's idle upstream tunnels (keep-alive). A tunnel through a node's agent to one job
 * replica's port (agent/tunnel.h) whose last exchange ended cleanly (proxy_pass.c decides) is
 * kept here to carry the next request to the same target: no dial, no upgrade, no connect by
 * the agent inside the replica's namespace.
 *
 * A tunnel is bound to everything its target names (px_pool_key): the tenant, the agent's
 * address, the job, the replica, its epoch and the port. One is handed out only for a target
 * equal in every field, so it never carries another tenant's, job's or replica's request, nor
 * one for a restarted replica (a new epoch): the tunnels of an older epoch of the same replica
 * are closed as soon as the newer one is asked for or kept.
 *
 * Bounds: at most PX_POOL_PER_TARGET idle tunnels per target and PX_POOL_MAX in all (past
 * either the oldest is closed: each holds a thread and one of the agent's tunnels); one idle for
 * PX_POOL_IDLE_MS is closed by the next call (px_pool_sweep runs from the scheduling loop too).
 * A tunnel the job or the agent closed meanwhile, or on which bytes came unasked, is closed when
 * found (a poll before handing one out, and in every sweep); one the upstream closes just as it
 * is handed out is the caller's to retry (proxy_pass.c).
 *
 * All functions are thread-safe; times are the caller's monotonic clock in milliseconds. The
 * pool owns the sockets it holds (it closes them); px_pool_take hands one over to the caller.
 */
#ifndef GP_CTL_PROXY_POOL_H
#define GP_CTL_PROXY_POOL_H

#include <stdint.h>

#define PX_POOL_PER_TARGET 8
#define PX_POOL_MAX        128
#define PX_POOL_IDLE_MS    (30 * 1000)

/* What a tunnel is bound to. */
typedef struct px_pool_key {
    int64_t tenant;
    int64_t job;
    int replica;
    int64_t epoch;
    int port;        /* the job's port */
    char agent[160]; /* the agent's "host:port" */
} px_pool_key;

typedef struct px_pool px_pool;

/* NULL when out of memory. */
px_pool *px_pool_new(void);
/* Closes every tunnel held and frees. Accepts NULL. */
void px_pool_free(px_pool *p);

/* An idle tunnel for key, the most recently kept first (the caller's, to close or give back),
 * or -1 when none is held. */
int px_pool_take(px_pool *p, const px_pool_key *key, int64_t now_ms);
/* Keeps fd idle for key; the pool takes it (it is closed at once when p is NULL or stopped). */
void px_pool_put(px_pool *p, const px_pool_key *key, int fd, int64_t now_ms);
/* Closes the tunnels idle past PX_POOL_IDLE_MS and those found closed by their upstream. */
void px_pool_sweep(px_pool *p, int64_t now_ms);
/* Closes every tunnel held, and keeps none from now on (the controller stops). */
void px_pool_stop(px_pool *p);
/* How many tunnels are held (for tests and metrics). */
int px_pool_count(px_pool *p);

#endif
