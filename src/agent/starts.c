/*
 * The replicas started and not yet reported up (see starts.h).
 */
#include "agent/starts.h"

void gp_starts_add(gp_starts *s, const gp_replica_key *k, int64_t now_ms)
{
    for (int i = 0; i < s->n; i++) {
        if (gp_replica_key_equal(&s->keys[i], k)) {
            s->until_ms = now_ms + GP_STARTS_WATCH_MS;
            return;
        }
    }
    if (s->n < GP_STARTS_MAX) {
        s->keys[s->n++] = *k;
        s->until_ms = now_ms + GP_STARTS_WATCH_MS;
    }
}

/* Whether k still starts in local (no directory yet counts as starting). */
static bool starting(const gp_replica_key *k, const gp_local_replica *local, int nlocal)
{
    for (int i = 0; i < nlocal; i++) {
        if (gp_replica_key_equal(&local[i].key, k)) {
            return local[i].state == GP_LOCAL_STARTING;
        }
    }
    return true;
}

int gp_starts_due(gp_starts *s, const gp_local_replica *local, int nlocal, int64_t now_ms)
{
    if (s->n > 0 && now_ms >= s->until_ms) {
        s->n = 0; /* watched long enough: the regular heartbeats report them */
    }
    if (s->n == 0) {
        return -1;
    }
    for (int i = 0; i < s->n; i++) {
        if (!starting(&s->keys[i], local, nlocal)) {
            return 1;
        }
    }
    return 0;
}

void gp_starts_reported(gp_starts *s, const gp_local_replica *local, int nlocal)
{
    int kept = 0;
    for (int i = 0; i < s->n; i++) {
        bool up = false;
        bool found = false;
        for (int j = 0; j < nlocal && !found; j++) {
            found = gp_replica_key_equal(&local[j].key, &s->keys[i]);
            up = found && local[j].state != GP_LOCAL_STARTING;
        }
        if (found && !up) {
            s->keys[kept++] = s->keys[i];
        }
    }
    s->n = kept;
}
