/*
 * Probers of running notebook and service replicas (services.h). The table is small (the
 * replicas of one node) and scanned linearly each round.
 */
#define _GNU_SOURCE
#include "agent/services.h"

#include "agent/probe.h"
#include "agent/replica_dir.h"
#include "agent/replicas.h"
#include "agent/sandbox.h"
#include "agent/tunnel.h"
#include "agent/netns.h"
#include "base/log.h"
#include "net/wire.h"
#include "net/wire_desired.h"

#include <math.h>

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the probes of one replica connect: its directory (its namespace's process is looked up
 * at each attempt, tunnel.h). Owned by the entry, on the heap: the prober's threads hold it. */
typedef struct reach {
    char dir[GP_REPLICAS_PATH_MAX];
    const char *podman; /* NULL: over the host */
} reach;

typedef struct entry {
    gp_replica_key key;
    gp_prober *p; /* NULL: a notebook or service replica without probes or scrape */
    reach *r;
    bool svc;     /* a notebook's or service's (else a batch job's: nothing to do) */
    bool broken;  /* its probes could not be started: never ready */
    bool seen;    /* running this round */
    bool stopped; /* stopped for its liveness: not stopped again */
} entry;

struct gp_svc {
    gp_svc_env env;
    entry *e;
    int n, cap;
};

gp_svc *gp_svc_new(const gp_svc_env *env)
{
    gp_svc *s = calloc(1, sizeof(*s));
    if (s) {
        s->env = *env;
    }
    return s;
}

static void entry_stop(entry *e)
{
    gp_prober_stop(e->p); /* its threads first: they use e->r */
    free(e->r);
    e->p = NULL;
    e->r = NULL;
}

void gp_svc_free(gp_svc *s)
{
    for (int i = 0; s && i < s->n; i++) {
        entry_stop(&s->e[i]);
    }
    if (s) {
        free(s->e);
        free(s);
    }
}

static entry *find(gp_svc *s, const gp_replica_key *k)
{
    for (int i = 0; i < s->n; i++) {
        if (gp_replica_key_equal(&s->e[i].key, k)) {
            return &s->e[i];
        }
    }
    return NULL;
}

static gp_probe_conf conf_of(const gp_probe *p)
{
    gp_probe_kind kinds[] = {GP_PROBE_KIND_NONE, GP_PROBE_KIND_HTTP, GP_PROBE_KIND_TCP,
                             GP_PROBE_KIND_EXEC};
    return (gp_probe_conf){.kind = kinds[p->type <= GP_PROBE_EXEC ? p->type : 0],
                           .path = p->path,
                           .port = p->port,
                           .command = (const char *const *)p->command,
                           .initial_delay_s = (int)p->initial_delay_s,
                           .period_s = (int)p->period_s,
                           .timeout_s = (int)p->timeout_s,
                           .failure_threshold = p->failure_threshold,
                           .success_threshold = p->success_threshold};
}

/* The service's Prometheus metric from spec.json's job spec (spec.autoscale): 1 with sc set. */
static int scrape_of(json_t *spec, int port, gp_probe_scrape_conf *sc)
{
    const char *metric = "", *name = NULL, *path = NULL;
    int mport = port;
    json_unpack(json_object_get(spec, "spec"), "{s:{s?s, s?{s?s, s?s, s?i}}}", "autoscale",
                "metric", &metric, "prometheus", "name", &name, "path", &path, "port", &mport);
    if (strcmp(metric, "prometheus") != 0 || !name || mport < 1 || mport > 65535) {
        return 0;
    }
    *sc = (gp_probe_scrape_conf){.port = mport, .path = path, .name = name, .period_s = 5};
    return 1;
}

/* A connection to port inside the replica's network namespace (gp_probe_connect_fn). */
static int reach_connect(void *ctx, int port, int timeout_ms, char *msg, size_t cap)
{
    const reach *r = ctx;
    pid_t pid = gp_tunnel_replica_pid(r->dir, r->podman);
    if (pid <= 0) {
        snprintf(msg, cap, "connect: the replica does not run");
        return GP_EUNAVAIL;
    }
    int fd = -1;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_netns_connect(pid, port, timeout_ms, &fd, &d);
    if (rc < 0) {
        snprintf(msg, cap, "%s", d.msg);
        return rc;
    }
    return fd;
}

/* The replica's network namespace, for an exec probe over the host. */
static int reach_netns(void *ctx)
{
    const reach *r = ctx;
    pid_t pid = gp_tunnel_replica_pid(r->dir, NULL);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
    return pid > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
}

/* Where the probes reach the replica: connections inside its network namespace; exec probes
 * through `podman exec NAME` in a sandbox, else in its namespace, work directory and the agent's
 * --user. */
static void target_of(gp_svc *s, const gp_replica_key *k, reach *r, gp_probe_target *t,
                      const char **prefix, char *name, char *work, size_t cap)
{
    memset(t, 0, sizeof(*t));
    t->connect = reach_connect;
    t->connect_ctx = r;
    if (s->env.rt && s->env.rt->ok) {
        r->podman = s->env.rt->podman;
        char *abs = realpath(r->dir, NULL);
        gp_sandbox_name(k->job, k->replica, k->epoch, abs ? abs : r->dir, name);
        free(abs);
        prefix[0] = s->env.rt->podman;
        prefix[1] = "exec";
        prefix[2] = name;
        prefix[3] = NULL;
        t->exec_prefix = prefix;
        return;
    }
    t->netns_fd = reach_netns;
    snprintf(work, cap, "%s/%s", r->dir, GP_RDIR_WORK);
    t->exec_dir = work;
    const struct passwd *pw = s->env.user && s->env.user[0] ? getpwnam(s->env.user) : NULL;
    if (pw) {
        t->drop_to = true;
        t->uid = pw->pw_uid;
        t->gid = pw->pw_gid;
    }
}

/* Fills e for replica k and starts what it needs (e->p, for a notebook or service with probes
 * or a scrape). 0 when its spec.json cannot be read or understood: tried again next round. */
static int start_one(gp_svc *s, const gp_replica_key *k, entry *e)
{
    char dir[GP_REPLICAS_PATH_MAX];
    json_t *spec = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_replicas_dir(s->env.state_dir, "replicas", k, dir, sizeof(dir)) < 0 ||
        gp_rdir_read_json(dir, GP_RDIR_SPEC, GP_RDIR_SPEC_MAX, &spec, &d) < 0) {
        return 0;
    }
    gp_wire_desired_replica r;
    int rc = gp_wire_desired_replica_decode(spec, "spec.json", &r, &d);
    if (rc < 0 || r.kind <= GP_JOB_BATCH) {
        if (rc == 0) {
            gp_wire_desired_replica_fini(&r);
        }
        json_decref(spec);
        *e = (entry){.key = *k};
        return rc == 0;
    }
    gp_probe_conf ready = conf_of(&r.readiness), live = conf_of(&r.liveness);
    gp_probe_scrape_conf sc;
    bool scrape = scrape_of(spec, r.port, &sc);
    const char *prefix[4];
    char name[GP_SANDBOX_NAME_MAX], work[GP_REPLICAS_PATH_MAX + 16];
    gp_probe_target t;
    *e = (entry){.key = *k, .svc = true};
    rc = GP_ENOMEM;
    if ((ready.kind || live.kind || scrape) && (e->r = calloc(1, sizeof(*e->r))) != NULL) {
        snprintf(e->r->dir, sizeof(e->r->dir), "%s", dir);
        target_of(s, k, e->r, &t, prefix, name, work, sizeof(work));
        rc = gp_prober_start(&ready, &live, scrape ? &sc : NULL, &t, &e->p);
    }
    if (ready.kind || live.kind || scrape) {
        e->broken = !e->p;
        if (!e->p) {
            GP_LOG(GP_LOG_WARN, "probe", "job=%lld replica=%d: probes not started: %s",
                   (long long)k->job, k->replica, gp_strerror(rc));
        }
    }
    gp_wire_desired_replica_fini(&r);
    json_decref(spec);
    return 1;
}

/* A replica whose liveness failed: stopped with the reason (once). */
static void check_alive(gp_svc *s, entry *e)
{
    gp_probe_status st;
    if (!e->p || e->stopped) {
        return;
    }
    gp_prober_status(e->p, &st);
    if (st.alive) {
        return;
    }
    char why[GP_PROBE_MSG_MAX + 32];
    snprintf(why, sizeof(why), "LivenessFailed: %s", st.why);
    gp_diag d;
    gp_diag_clear(&d);
    GP_LOG(GP_LOG_INFO, "probe", "job=%lld replica=%d epoch=%lld stopped: %s",
           (long long)e->key.job, e->key.replica, (long long)e->key.epoch, why);
    if (gp_replicas_stop(s->env.state_dir, &e->key, false, why, &d) < 0) {
        GP_LOG(GP_LOG_WARN, "probe", "stop failed: %s", d.msg);
        return;
    }
    e->stopped = true;
}

void gp_svc_round(gp_svc *s, const gp_local_replica *local, int nlocal)
{
    for (int i = 0; i < s->n; i++) {
        s->e[i].seen = false;
    }
    for (int i = 0; i < nlocal; i++) {
        if (local[i].state != GP_LOCAL_RUNNING) {
            continue;
        }
        entry *e = find(s, &local[i].key);
        if (!e) {
            if (s->n == s->cap) {
                int cap = s->cap ? 2 * s->cap : 16;
                entry *v = realloc(s->e, (size_t)cap * sizeof(*v));
                if (!v) {
                    continue;
                }
                s->e = v;
                s->cap = cap;
            }
            if (!start_one(s, &local[i].key, &s->e[s->n])) {
                continue;
            }
            e = &s->e[s->n++];
        }
        e->seen = true;
        check_alive(s, e);
    }
    int kept = 0;
    for (int i = 0; i < s->n; i++) {
        if (s->e[i].seen) {
            s->e[kept++] = s->e[i];
        } else {
            entry_stop(&s->e[i]);
        }
    }
    s->n = kept;
}

void gp_svc_report(gp_svc *s, const gp_replica_key *k, int *ready, bool *has_metric, double *metric)
{
    *ready = -1;
    *has_metric = false;
    *metric = 0;
    const entry *e = s ? find(s, k) : NULL;
    if (!e || !e->svc) {
        return;
    }
    if (!e->p) {
        *ready = !e->broken;
        return;
    }
    gp_probe_status st;
    gp_prober_status(e->p, &st);
    *ready = st.ready && st.alive;
    /* The service says what the value is: one the wire refuses would have the controller refuse
     * the whole heartbeat, every replica of the node with it, so it is left out. */
    *has_metric = st.has_metric && isfinite(st.metric) && fabs(st.metric) <= GP_WIRE_METRIC_MAX;
    *metric = *has_metric ? st.metric : 0;
}
