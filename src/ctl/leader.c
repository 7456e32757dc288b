/*
 * The election on a shared store (see leader.h): one thread per gpupoold, a follower trying the
 * lease and reloading its state, or the leader renewing it.
 *
 * The lease belongs to the committer's store connection (its transactions are fenced by it), so
 * every lease call and every load on that connection runs under the state lock once the
 * committer is running; before that this thread is the connection's only user.
 */
#include "ctl/leader.h"

#include "base/clock.h"
#include "base/log.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

bool ctl_store_shared(const char *url)
{
    return strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0;
}

void ctl_holder_url(const char *holder, char *out, size_t cap)
{
    size_t n = strcspn(holder, " ");
    snprintf(out, cap, "%.*s", (int)n, holder);
}

bool ctl_deposed(gpupoold *g)
{
    return atomic_load(&g->elect.deposed);
}

/* Waits ms or until stopped; true when stopped. */
static bool pause_ms(gpupoold *g, int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&g->elect.lock);
    if (!g->elect.stop) {
        pthread_cond_timedwait(&g->elect.cond, &g->elect.lock, &ts);
    }
    bool stop = g->elect.stop;
    pthread_mutex_unlock(&g->elect.lock);
    return stop;
}

/* A follower's view of the store: its state reloaded, and who leads. */
static void follow(gpupoold *g)
{
    gp_diag d;
    gp_diag_clear(&d);
    gp_store_lease lease;
    char leader[CTL_HA_URL_MAX] = "";
    if (gp_store_lease_get(g->store, &lease, &d) == 0 && lease.remaining_ms > 0) {
        ctl_holder_url(lease.holder, leader, sizeof(leader));
    }
    ctl_ha_set(&g->ha, CTL_HA_FOLLOWER, leader);
    ctl_state_lock(&g->st);
    int rc = ctl_state_load(&g->st, g->store, &d);
    if (rc == 0) {
        ctl_auth_refresh(g);
    }
    ctl_state_unlock(&g->st);
    if (rc < 0 && g->ready) {
        GP_LOG(GP_LOG_WARN, "ha", "follower: cannot reload the state: %s", d.msg);
    } else if (rc == 0 && !g->ready) {
        GP_LOG(GP_LOG_INFO, "ha", "follower: state reloaded");
    }
    g->ready = rc == 0;
}

/* The lease is ours: load, start the committer, lead. 0, or an error with the lease given up. */
static int lead(gpupoold *g, int64_t token, int64_t t0, gp_diag *d)
{
    int rc = ctl_lead_load(g, d);
    if (rc == 0) {
        rc = ctl_committer_start(g, d);
    }
    if (rc < 0) {
        GP_LOG(GP_LOG_ERROR, "ha", "took the lease but cannot lead: %s; giving it up", d->msg);
        gp_diag e;
        gp_store_lease_release(g->store, &e);
        return rc;
    }
    atomic_store(&g->elect.leading, true);
    ctl_ha_set(&g->ha, CTL_HA_LEADER, NULL);
    g->ready = true;
    GP_LOG(GP_LOG_WARN, "ha", "leading: token=%lld holder=\"%s\" nodes=%d jobs=%d took_ms=%lld",
           (long long)token, g->elect.holder, g->st.nnodes, g->st.njobs,
           (long long)(gp_mono_ms() - t0));
    return 0;
}

/* One round of a follower: the lease tried, then led or followed. */
static void follower_round(gpupoold *g)
{
    gp_diag d;
    gp_diag_clear(&d);
    int64_t token = 0, t0 = gp_mono_ms();
    int rc = gp_store_lease_acquire(g->store, g->elect.holder, g->cfg->ha.lease_ttl_ms, &token, &d);
    if (rc == 0 && lead(g, token, t0, &d) == 0) {
        return;
    }
    if (rc < 0 && rc != GP_ESTATE) {
        GP_LOG(GP_LOG_WARN, "ha", "follower: cannot try the lease: %s", d.msg);
    }
    follow(g);
}

/* Stops leading at once and has main() exit (only main exits). */
static void depose(gpupoold *g, const char *why)
{
    ctl_ha_set(&g->ha, CTL_HA_FOLLOWER, NULL);
    atomic_store(&g->elect.deposed, true);
    GP_LOG(GP_LOG_ERROR, "ha", "lost the leadership: %s; stopping, exit status %d", why,
           CTL_EXIT_DEPOSED);
    kill(getpid(), SIGTERM);
}

/* One renewal of the leader; *last_ok is when the last good one started. False when deposed. */
static bool leader_round(gpupoold *g, int64_t *last_ok)
{
    gp_diag d;
    gp_diag_clear(&d);
    int64_t ttl = g->cfg->ha.lease_ttl_ms;
    ctl_state_lock(&g->st);
    int64_t t0 = gp_mono_ms();
    int rc = t0 - *last_ok < ttl ? gp_store_lease_renew(g->store, ttl, &d)
                                 : gp_diag_set(&d, GP_EUNAVAIL, "not renewed in time");
    ctl_state_unlock(&g->st);
    if (rc == 0) {
        if (t0 - *last_ok > 2 * g->cfg->ha.renew_interval_ms) {
            GP_LOG(GP_LOG_INFO, "ha", "lease renewed after %lld ms", (long long)(t0 - *last_ok));
        }
        *last_ok = t0;
        return true;
    }
    if (rc == GP_ESTATE || gp_mono_ms() - *last_ok >= ttl) {
        char why[sizeof(d.msg) + 64];
        snprintf(why, sizeof(why), "%s%s",
                 rc == GP_ESTATE ? "" : "cannot renew the lease: ", d.msg);
        depose(g, why);
        return false;
    }
    GP_LOG(GP_LOG_WARN, "ha", "renewing the lease: %s; retrying", d.msg);
    return true;
}

static void *elector_main(void *arg)
{
    gpupoold *g = arg;
    int64_t last_ok = 0;
    for (;;) {
        int64_t wait = g->cfg->ha.renew_interval_ms;
        if (!atomic_load(&g->elect.leading)) {
            follower_round(g);
            last_ok = gp_mono_ms();
        } else if (!leader_round(g, &last_ok)) {
            break;
        } else if (last_ok + g->cfg->ha.renew_interval_ms < gp_mono_ms()) {
            wait = g->cfg->ha.renew_interval_ms / 4 + 1; /* failing: retry sooner */
        }
        if (pause_ms(g, wait)) {
            break;
        }
    }
    return NULL;
}

int ctl_elector_start(gpupoold *g, gp_diag *d)
{
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    const gp_ctl_config *c = g->cfg;
    char *h = g->elect.holder;
    size_t cap = sizeof(g->elect.holder);
    int n =
        c->ha.advertise_url[0]
            ? snprintf(h, cap, "%s %s:%d", c->ha.advertise_url, host, (int)getpid())
            : snprintf(h, cap,
                       strchr(c->listen.host, ':') ? "http://[%s]:%d %s:%d" : "http://%s:%d %s:%d",
                       c->listen.host, c->listen.port, host, (int)getpid());
    if (n < 0 || (size_t)n >= cap) {
        return gp_diag_set(d, GP_EINVAL, "ha.advertise_url: too long for the lease's holder");
    }
    pthread_mutex_init(&g->elect.lock, NULL);
    pthread_cond_init(&g->elect.cond, NULL);
    g->elect.stop = false;
    if (pthread_create(&g->elect.thread, NULL, elector_main, g) != 0) {
        pthread_cond_destroy(&g->elect.cond);
        pthread_mutex_destroy(&g->elect.lock);
        return gp_diag_set(d, GP_EIO, "cannot start the election thread");
    }
    g->elect.running = true;
    GP_LOG(GP_LOG_INFO, "ha", "follower: holder=\"%s\" lease_ttl_ms=%lld renew_interval_ms=%lld",
           g->elect.holder, (long long)c->ha.lease_ttl_ms, (long long)c->ha.renew_interval_ms);
    return 0;
}

void ctl_elector_stop(gpupoold *g)
{
    if (!g->elect.running) {
        return;
    }
    pthread_mutex_lock(&g->elect.lock);
    g->elect.stop = true;
    pthread_cond_signal(&g->elect.cond);
    pthread_mutex_unlock(&g->elect.lock);
    pthread_join(g->elect.thread, NULL);
    pthread_cond_destroy(&g->elect.cond);
    pthread_mutex_destroy(&g->elect.lock);
    g->elect.running = false;
}
