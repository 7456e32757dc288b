/*
 * The controller's role among several gpupoold sharing one store: the leader, which runs the
 * committer and the scheduler and takes every write, or a follower, which answers reads and
 * sends writes to the leader (docs/operations.md, "High availability").
 *
 * A single gpupoold (SQLite, one data directory) is always the leader. The role and the
 * leader's advertised URL are set by the lease holder's loop and read by every request
 * (router.c), so they sit behind their own mutex and never the state lock.
 *
 * What a follower answers for a request it does not serve: 307 with Location the leader's
 * advertised URL plus the request's path (clients given several servers resend to that server
 * when it is one of theirs: net/servers.h) and {"error": {...}, "leader": URL}; with no leader
 * known, 503 {"error": {"code": "GP_EUNAVAIL", ...}, "leader": null} and Retry-After: 1.
 */
#ifndef GP_CTL_HA_H
#define GP_CTL_HA_H

#include "net/http_server.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define CTL_HA_URL_MAX 512

typedef enum ctl_ha_role { CTL_HA_LEADER = 0, CTL_HA_FOLLOWER = 1 } ctl_ha_role;

typedef struct ctl_ha {
    pthread_mutex_t lock;
    ctl_ha_role role;
    char leader[CTL_HA_URL_MAX]; /* a follower's leader ("" while none is known) */
} ctl_ha;

/* The leader, with no leader URL. ctl_ha_fini releases the mutex. */
void ctl_ha_init(ctl_ha *h);
void ctl_ha_fini(ctl_ha *h);
/* Sets the role and, for a follower, its leader's advertised URL (NULL or "": none known). */
void ctl_ha_set(ctl_ha *h, ctl_ha_role role, const char *leader);
/* The role now, and the leader's URL into leader ("" when none or when leading). */
ctl_ha_role ctl_ha_get(ctl_ha *h, char *leader, size_t cap);
/* "leader" or "follower". */
const char *ctl_ha_role_name(ctl_ha_role role);

/* Whether a follower answers the route (method, route pattern) itself: reads (GET, HEAD),
 * except a node's desired replicas, which agents long-poll on the leader whose committer wakes
 * them, and the history of jobs and tenants, which only the leader keeps (history.h).
 * Everything else goes to the leader. */
bool ctl_ha_follower_serves(const char *method, const char *pattern);
/* The Location of a request at leader: leader + path, each byte outside the unreserved set and
 * '/' percent-encoded (path is the decoded path), then '?' and query when query (the query as
 * sent, not decoded: the request target after its '?') is neither NULL nor "": a browser that
 * follows the redirect keeps its parameters (a proxy session's one-time code). A query byte
 * that is not printable ASCII, or a space, is percent-encoded. 0, or -1 when it does not fit. */
int ctl_ha_location(const char *leader, const char *path, const char *query, char *out, size_t cap);
/* A follower's answer to a request it does not serve (see above); target is the request target
 * as sent (its query is kept), or NULL. */
void ctl_ha_redirect(const char *leader, const char *path, const char *target,
                     gp_http_response *resp);

#endif
