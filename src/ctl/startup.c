/*
 * Starting and stopping the controller: the data directory, the store (one connection for the
 * committer, one for readers), the state, and on the first start the defaults and the admin
 * token.
 *
 * First start: in one transaction the controller creates the queue `default`, the priority
 * classes low (-100), normal (0) and high (1000, PreemptLowerPriority), an admin token and a
 * join token, and marks the store initialised. The tokens' secrets are written to
 * DATA_DIR/admin.token and DATA_DIR/join.token (mode 0600, written and synced before the
 * transaction commits). A later start finds the mark and leaves everything alone, so a deleted
 * or edited token file is never silently replaced.
 *
 * Before anything else in the data directory is touched, the controller takes its lock
 * (datalock.h): a second gpupoold on the same directory stops there, naming the first's pid.
 */
#include "ctl/changes.h"
#include "ctl/datalock.h"
#include "ctl/leader.h"
#include "ctl/history.h"
#include "ctl/meter.h"
#include "ctl/notify.h"
#include "ctl/proxy_state.h"
#include "ctl/server.h"
#include "ctl/secrets.h"
#include "ctl/service.h"

#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Writes secret to path, mode 0600, durably (file and directory synced). */
static int write_secret(const char *path, const char *secret, gp_diag *d)
{
    char tmp[GP_CTL_PATH_MAX + 16];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        return gp_diag_set(d, GP_EIO, "%s: %s", tmp, strerror(errno));
    }
    size_t n = strlen(secret);
    bool ok = write(fd, secret, n) == (ssize_t)n && write(fd, "\n", 1) == 1 && fsync(fd) == 0;
    ok &= close(fd) == 0;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(e));
    }
    return 0;
}

static int put_default(gpupoold *g, gp_obj_kind kind, const char *name, const char *json,
                       gp_diag *d)
{
    int64_t id = 0;
    return gp_store_obj_put(g->store, kind, &id, name, json, d);
}

/* The first start's defaults and tokens, the body of one transaction (the tokens go to memory
 * too; the whole state is loaded from the store afterwards). */
static int initialise_body(ctl_txn *tx, void *arg, gp_diag *d)
{
    (void)arg;
    gpupoold *g = tx->g;
    int rc = put_default(g, GP_OBJ_QUEUE, "default",
                         "{\"name\":\"default\",\"weight\":1,\"reclaimable\":true}", d);
    if (rc == 0) {
        rc = put_default(g, GP_OBJ_PRIORITY_CLASS, "low",
                         "{\"name\":\"low\",\"value\":-100,\"preemption_policy\":\"Never\","
                         "\"description\":\"batch work that yields to everything else\"}",
                         d);
    }
    if (rc == 0) {
        rc = put_default(g, GP_OBJ_PRIORITY_CLASS, "normal",
                         "{\"name\":\"normal\",\"value\":0,\"preemption_policy\":\"Never\","
                         "\"description\":\"the default\"}",
                         d);
    }
    if (rc == 0) {
        rc = put_default(g, GP_OBJ_PRIORITY_CLASS, "high",
                         "{\"name\":\"high\",\"value\":1000,\"preemption_policy\":"
                         "\"PreemptLowerPriority\",\"description\":\"may preempt lower "
                         "priority preemptible jobs\"}",
                         d);
    }
    char secret[128], path[GP_CTL_PATH_MAX + 32];
    if (rc == 0) {
        rc = ctl_token_create(g, "admin", CTL_ROLE_ADMIN, 0, 0, 0, secret, sizeof(secret), d);
    }
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/admin.token", g->cfg->data_dir);
        rc = write_secret(path, secret, d);
    }
    if (rc == 0) {
        rc = ctl_token_create(g, "join", CTL_ROLE_JOIN, 0, 0, 0, secret, sizeof(secret), d);
    }
    if (rc == 0) {
        if (g->cfg->nodes.join_token_file[0]) {
            snprintf(path, sizeof(path), "%s", g->cfg->nodes.join_token_file);
        } else {
            snprintf(path, sizeof(path), "%s/join.token", g->cfg->data_dir);
        }
        rc = write_secret(path, secret, d);
    }
    if (rc == 0) {
        rc = gp_store_meta_set(g->store, "initialised", "1", d);
    }
    return rc;
}

static int initialise(gpupoold *g, gp_diag *d)
{
    char buf[8];
    int rc = gp_store_meta_get(g->store, "initialised", buf, sizeof(buf), d);
    if (rc != GP_ENOENT) {
        return rc;
    }
    gp_diag_clear(d);
    rc = ctl_txn_run(g, "first start", CTL_TXN_MEMORY, initialise_body, NULL, NULL, d);
    if (rc < 0) {
        return rc;
    }
    GP_LOG(GP_LOG_INFO, "ctl", "first start: wrote %s/admin.token and the join token",
           g->cfg->data_dir);
    return 0;
}

static int make_dir(const char *dir, gp_diag *d)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        return gp_diag_set(d, GP_EIO, "data_dir %s: %s", dir, strerror(errno));
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        return gp_diag_set(d, GP_EIO, "data_dir %s: not a directory", dir);
    }
    return 0;
}

int ctl_lead_load(gpupoold *g, gp_diag *d)
{
    pthread_mutex_lock(&g->st.lock);
    int rc = ctl_state_load(&g->st, g->store, d);
    if (rc == 0) {
        rc = initialise(g, d);
    }
    if (rc == 0) {
        rc = ctl_secrets_start(g, d); /* the key of secret env values, checked */
    }
    if (rc == 0) {
        rc = ctl_state_load(&g->st, g->store, d); /* with the defaults */
    }
    if (rc == 0) {
        ctl_nodes_grace(&g->st, ctl_now_ms()); /* for every agent to report */
        rc = ctl_sched_reset(g, d);
    }
    if (rc == 0) {
        rc = ctl_meter_start(g, d); /* the price table, and the ledger checked */
    }
    if (rc == 0) {
        ctl_auth_refresh(g);
        rc = g->auth.e ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (rc < 0) {
        ctl_meter_stop(g);
        gp_sched_free(g->sched);
        g->sched = NULL;
    }
    pthread_mutex_unlock(&g->st.lock);
    return rc;
}

int ctl_start(gpupoold *g, const gp_ctl_config *cfg, gp_diag *d)
{
    return ctl_start_with(g, cfg, NULL, NULL, d);
}

int ctl_start_with(gpupoold *g, const gp_ctl_config *cfg, ctl_store_wrap_fn wrap, void *ctx,
                   gp_diag *d)
{
    memset(g, 0, sizeof(*g));
    g->cfg = cfg;
    g->datalock = -1;
    ctl_metrics_init(&g->metrics);
    pthread_mutex_init(&g->st.lock, NULL);
    pthread_mutex_init(&g->reader_lock, NULL);
    pthread_mutex_init(&g->auth_lock, NULL);
    ctl_ha_init(&g->ha);
    char path[GP_CTL_PATH_MAX + 32];
    snprintf(path, sizeof(path), "sqlite:%s/gpupool.db", cfg->data_dir);
    const char *url = cfg->store_url[0] ? cfg->store_url : path;
    int rc = make_dir(cfg->data_dir, d);
    if (rc == 0 && !(g->history = ctl_history_new(cfg))) {
        rc =
            gp_diag_set(d, GP_ENOMEM, "out of memory (history.max_jobs %d)", cfg->history.max_jobs);
    }
    if (rc == 0) {
        rc = ctl_datalock_take(cfg->data_dir, &g->datalock, d);
    }
    if (rc == 0) {
        rc = gp_store_open_url(url, &g->store, d); /* the writer */
    }
    if (rc == 0 && wrap) {
        rc = wrap(ctx, &g->store, d);
    }
    if (rc == 0) {
        rc = gp_store_open_url(url, &g->reader, d);
    }
    g->st.checkpoint_root = cfg->jobs.checkpoint_root;
    bool shared = ctl_store_shared(url);
    if (rc == 0 && shared) { /* a follower until it wins the lease: reads only (leader.h) */
        ctl_ha_set(&g->ha, CTL_HA_FOLLOWER, NULL);
        rc = ctl_state_load(&g->st, g->store, d);
        if (rc == 0) {
            rc = ctl_secrets_verify(g, d);
        }
        ctl_auth_refresh(g);
    } else if (rc == 0) {
        rc = ctl_lead_load(g, d);
    }
    if (rc == 0) {
        rc = ctl_desired_waiters_start(&g->st, d);
    }
    if (rc == 0) {
        rc = ctl_notify_start(g, d);
    }
    if (rc == 0 && (!g->auth.e || !(g->proxy = ctl_proxy_new()))) {
        rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        g->ready = true;
        rc = shared ? ctl_elector_start(g, d) : ctl_committer_start(g, d);
    }
    if (rc < 0) {
        ctl_stop(g);
        return rc;
    }
    GP_LOG(GP_LOG_INFO, "ctl", "state loaded: tenants=%d queues=%d nodes=%d jobs=%d pending=%d",
           g->st.ntenants, g->st.nqueues, g->st.nnodes, g->st.njobs, g->st.npending);
    return 0;
}

void ctl_stop(gpupoold *g)
{
    g->ready = false;
    ctl_elector_stop(g);              /* first: it may start the committer */
    ctl_desired_waiters_stop(&g->st); /* before the state goes: its thread reads it */
    ctl_committer_stop(g);
    if (atomic_load(&g->elect.leading) && !ctl_deposed(g)) {
        gp_diag d;
        if (gp_store_lease_release(g->store, &d) == 0) { /* another takes over at once */
            GP_LOG(GP_LOG_INFO, "ha", "lease given up");
        }
    }
    ctl_notify_stop(g);       /* after the committer: the last alerts are out */
    ctl_proxy_free(g->proxy); /* waits for its workers, whose sockets it shuts down */
    g->proxy = NULL;
    ctl_meter_stop(g);
    ctl_history_free(g->history);
    g->history = NULL;
    gp_sched_free(g->sched);
    g->sched = NULL;
    ctl_cycle_buf_free(g->cycbuf);
    ctl_services_free(g);
    g->cycbuf = NULL;
    ctl_state_clear(&g->st);
    gp_store_close(g->store);
    gp_store_close(g->reader);
    g->store = g->reader = NULL;
    ctl_auth_table_fini(&g->auth);
    pthread_mutex_destroy(&g->auth_lock);
    pthread_mutex_destroy(&g->reader_lock);
    pthread_mutex_destroy(&g->st.lock);
    ctl_ha_fini(&g->ha);
    ctl_metrics_fini(&g->metrics);
    ctl_datalock_release(g->datalock); /* last: nothing of this process uses the directory now */
    g->datalock = -1;
}

void ctl_check_liveness(gpupoold *g)
{
    int64_t now = ctl_now_ms();
    ctl_state *st = &g->st;
    for (int i = 0; i < st->nnodes; i++) {
        ctl_node *n = &st->nodes[i];
        if (n->ready && now - n->heartbeat_ms > g->cfg->nodes.heartbeat_timeout_ms) {
            n->ready = false;
            ctl_node_update_schedulable(st, n);
            GP_LOG(GP_LOG_WARN, "nodes", "node=%s state=NotReady silent_ms=%lld", n->name,
                   (long long)(now - n->heartbeat_ms));
        }
    }
}
