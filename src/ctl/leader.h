/*
 * The election among several gpupoold sharing one store (PostgreSQL): the store's lease with its
 * fencing token (store.h) decides the leader (docs/operations.md, "High availability").
 *
 * A gpupoold on a shared store starts as a follower (ha.h): it answers reads from a state it
 * reloads from the store every ha.renew_interval, and tries the lease as often, its holder
 * "ADVERTISE_URL HOST:PID" (the URL up to the space is what followers redirect writes to; the
 * rest keeps two processes apart even when they were given the same URL). Winning it, it loads
 * the state again (ctl_lead_load), starts the committer and leads. The leader renews the lease
 * every ha.renew_interval; a PostgreSQL that is briefly away is retried. When a renewal says the
 * lease is another's (GP_ESTATE), or none succeeded for ha.lease_ttl, the leader stops at once:
 * every request is answered as by a follower with no leader, the store refuses its transactions
 * (fencing), and main() exits with CTL_EXIT_DEPOSED, for a supervisor to start it again, as a
 * follower. A leader stopped by SIGTERM gives the lease up, so another takes over at once.
 *
 * A gpupoold on SQLite has no election: it is the leader from the start.
 */
#ifndef GP_CTL_LEADER_H
#define GP_CTL_LEADER_H

#include "ctl/server.h"

#include <stdbool.h>
#include <stddef.h>

/* gpupoold's exit status after it lost the leadership (main.c). */
#define CTL_EXIT_DEPOSED 3

/* Whether the store URL names a store several gpupoold may share (postgresql:// or
 * postgres://). */
bool ctl_store_shared(const char *url);
/* The URL a holder "URL HOST:PID" names, into out ("" for an empty holder). */
void ctl_holder_url(const char *holder, char *out, size_t cap);

/* Starts the election thread on g (a follower whose state is loaded). 0, or GP_EIO with d set. */
int ctl_elector_start(gpupoold *g, gp_diag *d);
/* Stops it (no-op when not started). The lease stays as it is: ctl_stop gives it up. */
void ctl_elector_stop(gpupoold *g);
/* Whether this process lost the leadership (main exits with CTL_EXIT_DEPOSED). */
bool ctl_deposed(gpupoold *g);

#endif
