/*
 * Convergence plan (see converge.h). Quadratic in the replicas of one node, which are few.
 */
#include "agent/converge.h"

#include <stddef.h>

bool gp_replica_key_equal(const gp_replica_key *a, const gp_replica_key *b)
{
    return a->job == b->job && a->replica == b->replica && a->epoch == b->epoch;
}

static bool is_desired(const gp_replica_key *desired, int n, const gp_replica_key *k)
{
    for (int i = 0; i < n; i++) {
        if (gp_replica_key_equal(&desired[i], k)) {
            return true;
        }
    }
    return false;
}

const char *gp_local_report_state(const gp_local_replica *l)
{
    switch (l->state) {
    case GP_LOCAL_RUNNING:
        return "Running";
    case GP_LOCAL_EXITED:
        return l->exit_code == 0 ? "Succeeded" : "Failed";
    case GP_LOCAL_LOST:
        return "Failed";
    default:
        return NULL;
    }
}

gp_local_state gp_local_state_of(const gp_rdir_view *v, bool young)
{
    gp_rdir_state record = v->status_unreadable ? GP_RDIR_NONE : v->status.state;
    if (record == GP_RDIR_EXITED) {
        return GP_LOCAL_EXITED;
    }
    if (record == GP_RDIR_KILLED) {
        return GP_LOCAL_KILLED;
    }
    if (v->supervisor_alive) {
        return record == GP_RDIR_NONE && !v->status_unreadable ? GP_LOCAL_STARTING
                                                               : GP_LOCAL_RUNNING;
    }
    return record == GP_RDIR_NONE && !v->status_unreadable && young ? GP_LOCAL_STARTING
                                                                    : GP_LOCAL_LOST;
}

int gp_converge(const gp_replica_key *desired, int ndesired, const gp_local_replica *local,
                int nlocal, gp_action *out)
{
    int n = 0;
    for (int i = 0; i < nlocal; i++) {
        const gp_local_replica *l = &local[i];
        bool want = is_desired(desired, ndesired, &l->key);
        bool live = l->state == GP_LOCAL_RUNNING || l->state == GP_LOCAL_STARTING;
        if (live && !want) {
            out[n++] = (gp_action){GP_ACT_STOP, i};
        } else if (!live && !want) {
            out[n++] = (gp_action){GP_ACT_FORGET, i};
        } else if (gp_local_report_state(l)) {
            out[n++] = (gp_action){GP_ACT_REPORT, i};
        }
        if (l->state == GP_LOCAL_LOST) {
            out[n++] = (gp_action){GP_ACT_KILL_GROUP, i};
        }
    }
    for (int d = 0; d < ndesired; d++) {
        bool have = false;
        for (int i = 0; i < nlocal && !have; i++) {
            have = gp_replica_key_equal(&local[i].key, &desired[d]);
        }
        if (!have) {
            out[n++] = (gp_action){GP_ACT_START, d};
        }
    }
    return n;
}
