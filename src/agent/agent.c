/*
 * The agent's rounds (see agent.h): register, then probe → heartbeat → converge, forever; and
 * between rounds, a long-poll of the desired replicas that converges as soon as they change.
 *
 * The controller is the source of what should run; the replica directories are the source of
 * what does. A round never waits for a process: starting detaches a supervisor, stopping sends
 * SIGTERM, and the next round sees the result. When the controller cannot be reached, jobs keep
 * running and their ends stay recorded in their directories until a heartbeat gets through.
 */
#define _DEFAULT_SOURCE /* realpath */

#include "agent/agent.h"
#include "gpupool/constraint.h"
#include "base/clock.h"
#include "agent/check.h"
#include "agent/mig.h"

#include "agent/cdi_host.h"
#include "agent/idmap.h"
#include "agent/images.h"
#include "agent/logserve.h"
#include "agent/memwatch_run.h"
#include "agent/metrics.h"
#include "agent/nvml.h"
#include "agent/pull.h"
#include "agent/replicas.h"
#include "agent/runtime.h"
#include "agent/services.h"
#include "agent/starts.h"
#include "agent/usage.h"
#include "base/log.h"
#include "net/wire.h"
#include "net/wire_desired.h"
#include "net/http_client.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef GP_VERSION
#define GP_VERSION "dev"
#endif

/* A running replica's GPUs and when they were last seen in use (for its idle_ms). */
typedef struct activity {
    gp_replica_key key;
    uint64_t gpus;  /* bit g: the replica holds GPU g (or a share of it) */
    int64_t gpu_ms; /* wall-clock ms one of them last showed utilisation > 0; 0: not seen */
} activity;

/* GPU instances of one GPU, at most (one per memory slice). */
#define AGENT_MAX_GI 8

/* Rounds over the controllers per call (net/servers.h). */
#define AGENT_FAILOVER_ROUNDS 2

/* XIDs kept for the controller while it cannot be reached, at most. */
#define AGENT_MAX_XIDS 256

struct gp_agent {
    gp_agent_config cfg;
    gp_nvml *nvml;
    gp_nvml_inv inv;
    gp_nvml_events *events; /* XIDs; NULL when the driver offers none */
    json_t *xids;           /* XIDs not yet taken by the controller (kept across failed beats) */
    gp_logserve *logs;      /* the log endpoint; NULL without an address */
    gp_http_client *http;   /* with the agent token */
    gp_usage *usage;        /* per-replica GPU memory and utilisation, measured each round */
    gp_metrics *metrics;    /* what GET /metrics shows: the latest round's snapshot */
    int last_xid[GP_NVML_MAX_GPUS]; /* the last XID of each GPU since start; 0: none */
    int64_t beat_failures;          /* rounds whose heartbeat did not get through */
    char token[128];
    bool registered;
    int64_t version; /* of the last desired replicas converged on; 0 = none yet */
    /* The node health check (check.h). */
    gp_check_expect expect;  /* the GPU count and driver at start; links seen active */
    gp_check_result *health; /* the latest result; NULL before the first check */
    int64_t health_at_ms;    /* wall-clock ms it ran */
    int64_t check_seq;       /* the largest check_seq asked for that a check ran for; 0: none */
    int64_t next_check_ms;   /* monotonic; when the periodic check is due */
    activity *acts;          /* running replicas, for idle_ms */
    int nacts;
    gp_cdi_writer *cdi;  /* STATE/cdi/gpupool.json */
    char cdi_error[512]; /* the last failure to update it, logged once; "" none */

    /* The GPU memory watch's thread (memwatch_run.h); NULL: none (memory_grace_s 0). */
    gp_memwatch_run *memwatch;

    /* The sandbox */
    gp_runtime rt;     /* rt.ok false: jobs run as host processes (--runtime none) */
    gp_images *images; /* the image cache; NULL without a runtime */
    char state_abs[GP_AGENT_PATH_MAX]; /* the state directory, absolute */
    char *mask_store;                  /* the masks' text */
    const char **masks;                /* host paths hidden from jobs, NULL-terminated */
    /* A controller from before images refuses fields it does not know: these are then left
     * out of registrations and heartbeats. */
    bool ctl_no_runtime, ctl_no_images;
    gp_svc *svc;      /* probes of notebook and service replicas (services.h) */
    gp_starts starts; /* replicas started and not reported up yet (starts.h) */
};

/* Whether an error of the controller refuses field (a controller older than the field). */
static bool refused_field(int rc, const gp_diag *d, const char *field)
{
    char what[64];
    snprintf(what, sizeof(what), "%s: unknown field", field);
    return rc == GP_EIO && strstr(d->msg, what) != NULL;
}

/* ---- the CDI spec (cdi_host.h) ---- */

/* Takes a fresh inventory (MIG devices come and go) and writes the spec from it when it
 * changed. A failure is logged (once while it stays the same) and tried again next round: jobs
 * without containers do not need the spec, and one that does is refused by podman, not given
 * more. */
static void cdi_update(gp_agent *a, const char *why)
{
    gp_diag d;
    gp_diag_clear(&d);
    gp_nvml_inv *inv = malloc(sizeof(*inv));
    int rc = inv ? gp_nvml_inventory(a->nvml, inv, &d) : gp_diag_set(&d, GP_ENOMEM, "no memory");
    if (rc == 0) {
        GP_LOG(GP_LOG_DEBUG, "cdi", "update: %s", why);
        rc = gp_cdi_writer_update(a->cdi, inv, &d);
    }
    free(inv);
    if (rc < 0 && strcmp(a->cdi_error, d.msg) != 0) {
        GP_LOG(GP_LOG_WARN, "cdi", "spec not updated (%s): %s", why, d.msg);
    }
    snprintf(a->cdi_error, sizeof(a->cdi_error), "%s", rc < 0 ? d.msg : "");
}

/* Updates the spec when this round's MIG devices are not those it was written with (GPUs not
 * sampled this round, lost ones, are not compared), or it was never written. */
static void cdi_refresh(gp_agent *a, const gp_metrics_snapshot *snap)
{
    const gp_nvml_inv *last = gp_cdi_writer_inventory(a->cdi);
    bool stale = last == NULL;
    for (int g = 0; snap && last && !stale && g < snap->ngpus && g < last->ngpus; g++) {
        const gp_metrics_gpu *m = &snap->gpus[g];
        stale = m->sampled && !gp_cdi_mig_same(&last->gpus[g], m->mig, m->nmig);
    }
    if (stale) {
        cdi_update(a, last ? "the MIG devices changed" : "not written yet");
    }
}

/* ---- the node health check (check.h) ---- */

/* Runs the check now; its result goes out with every heartbeat until the next one. */
static void run_check(gp_agent *a)
{
    gp_check_readings *r = malloc(sizeof(*r));
    gp_check_result *res = a->health ? a->health : malloc(sizeof(*res));
    if (!r || !res) {
        free(r);
        GP_LOG(GP_LOG_WARN, "agent", "health check: out of memory");
        return; /* the last result (if any) stays */
    }
    gp_nvml_health(a->nvml, r);
    gp_check_evaluate(r, &a->expect, res);
    gp_check_remember_links(r, &a->expect);
    a->health = res;
    a->health_at_ms = gp_wall_ms();
    GP_LOG(res->nfindings ? GP_LOG_INFO : GP_LOG_DEBUG, "agent",
           "health check seq=%lld fatal=%d warnings=%d", (long long)a->check_seq, res->fatal,
           res->nfindings - res->fatal);
    for (int i = 0; i < res->nfindings; i++) {
        const gp_check_finding *f = &res->findings[i];
        GP_LOG(GP_LOG_WARN, "agent", "health check=%s gpu=%d severity=%s: %s",
               gp_check_name(f->check), f->gpu, gp_check_severity_name(f->severity), f->message);
    }
    free(r);
}

/* The periodic check, when due (check_interval_s > 0). */
static void periodic_check(gp_agent *a)
{
    int64_t now = gp_mono_ms();
    if (a->cfg.check_interval_s > 0 && now >= a->next_check_ms) {
        run_check(a);
        a->next_check_ms = now + (int64_t)a->cfg.check_interval_s * 1000;
    }
}

/* A check the controller asks for in an answer (check_seq above the last one run for) runs now.
 * True when it ran. */
static bool requested_check(gp_agent *a, const gp_wire_desired *answer)
{
    if (answer->check_seq <= a->check_seq) {
        return false;
    }
    a->check_seq = answer->check_seq;
    GP_LOG(GP_LOG_INFO, "agent", "health check requested seq=%lld", (long long)a->check_seq);
    run_check(a);
    return true;
}

/* The heartbeat's "health": the latest result; NULL before the first check. */
static json_t *health_doc(const gp_agent *a)
{
    if (!a->health) {
        return NULL;
    }
    return json_pack("{s:I, s:I, s:o}", "seq", (json_int_t)a->check_seq, "at_ms",
                     (json_int_t)a->health_at_ms, "conditions", gp_check_findings_json(a->health));
}

/* The host's CPUs (milli) and memory (MiB), for the registration. */
static void host_capacity(int64_t *cpu_milli, int64_t *memory_mib)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *cpu_milli = (cpus > 0 ? cpus : 1) * 1000;
    *memory_mib = pages > 0 && page > 0 ? (int64_t)pages * page / (1024 * 1024) : 1024;
}

/* The node's own credential, STATE_DIR/agent.token (0600; the state directory is hidden from
 * jobs): written after each registration, read at start, so a restarted agent re-registers as
 * itself. The controller answers a join token for a known node with 409. */
static int save_token(const gp_agent *a, gp_diag *d)
{
    char path[GP_AGENT_PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/agent.token", a->cfg.state_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        return gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(errno));
    }
    size_t n = strlen(a->token);
    bool ok = write(fd, a->token, n) == (ssize_t)n && fsync(fd) == 0;
    ok &= fchmod(fd, 0600) == 0; /* a file left by an older agent keeps no wider mode */
    close(fd);
    return ok ? 0 : gp_diag_set(d, GP_EIO, "%s: %s", path, strerror(errno));
}

/* Reads STATE_DIR/agent.token into a->token; none (or unreadable): a->token stays "". */
static void load_token(gp_agent *a)
{
    char path[GP_AGENT_PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/agent.token", a->cfg.state_dir);
    a->token[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        return;
    }
    ssize_t n = read(fd, a->token, sizeof(a->token) - 1);
    close(fd);
    a->token[n > 0 ? n : 0] = '\0';
    a->token[strcspn(a->token, " \t\r\n")] = '\0';
}

/* Calls path with client c, sending doc (none when NULL); the answer in *resp (a new reference)
 * when status is 2xx, else an error naming the controller's message. */
static int call_json(gp_http_client *c, const char *method, const char *path, json_t *doc,
                     json_t **resp, gp_diag *d)
{
    char *body = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    if (doc && !body) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int status = 0;
    char *text = NULL;
    int rc =
        gp_http_call(c, method, path, body, body ? strlen(body) : 0, NULL, &status, &text, NULL, d);
    free(body);
    if (rc < 0) {
        return rc;
    }
    json_t *r = json_loads(text, 0, NULL);
    if (status < 200 || status > 299) {
        const char *msg = NULL;
        json_unpack(r, "{s:{s:s}}", "error", "message", &msg);
        rc = gp_diag_set(d,
                         status == 401   ? GP_EAUTH
                         : status == 404 ? GP_ENOENT
                                         : GP_EIO,
                         "%s: %d %s", path, status, msg ? msg : (text ? text : ""));
        json_decref(r);
    } else if (!r) {
        rc = gp_diag_set(d, GP_EIO, "%s: the answer is not JSON", path);
    } else {
        *resp = r;
    }
    free(text);
    return rc;
}

/* ---- the GPU instances of GPUs in MIG mode ---- */

/* Whether a running replica of reps holds the MIG slice of GPU gpu starting at memory slice
 * start. */
static bool mig_held(const gp_replica_watch *reps, int nreps, int gpu, int start)
{
    for (int i = 0; i < nreps; i++) {
        for (int g = 0; g < reps[i].use.ngpus; g++) {
            if (reps[i].use.gpus[g].index == gpu && reps[i].gpus[g].mig_start == start) {
                return true;
            }
        }
    }
    return false;
}

/* The GPU instances of GPU gpu as the controller takes them: [{"profile", "start", "idle",
 * "held"}]; held: a running replica (of reps) has its MIG slice there; idle: held by none and no
 * process runs there as far as NVML tells. NULL when they cannot be read now (the controller then
 * keeps what it knew). */
static json_t *mig_layout_doc(gp_agent *a, int gpu, const gp_replica_watch *reps, int nreps)
{
    gp_nvml_gi gi[AGENT_MAX_GI];
    int n = 0;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_nvml_mig_instances(a->nvml, gpu, gi, AGENT_MAX_GI, &n, &d) < 0) {
        GP_LOG(GP_LOG_DEBUG, "agent", "gpu=%d MIG instances not reported: %s", gpu, d.msg);
        return NULL;
    }
    json_t *list = json_array();
    for (int k = 0; list && k < n; k++) {
        bool held = mig_held(reps, nreps, gpu, gi[k].start);
        json_array_append_new(list,
                              json_pack("{s:s, s:i, s:b, s:b}", "profile", gi[k].profile, "start",
                                        gi[k].start, "idle", !held && !gi[k].busy, "held", held));
    }
    return list;
}

/* Adds "mig_instances" to each GPU in MIG mode of gpus (the registration's or the heartbeat's
 * list, whose entries carry "index"). */
static void add_mig_layouts(gp_agent *a, json_t *gpus, const gp_replica_watch *reps, int nreps)
{
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        int index = (int)json_integer_value(json_object_get(g, "index"));
        json_t *list = index >= 0 && index < a->inv.ngpus && a->inv.gpus[index].mig_mode == 1
                           ? mig_layout_doc(a, index, reps, nreps)
                           : NULL;
        if (list) {
            json_object_set_new(g, "mig_instances", list);
        }
    }
}

/* A client of the controller(s) with token, trusting cfg.cacert when set. */
static int ctl_client(const gp_agent *a, const char *token, gp_http_client **c, gp_diag *d)
{
    int rc = gp_http_client_new_servers(a->cfg.server, token, c, d);
    if (rc == 0 && a->cfg.cacert[0] && gp_http_client_set_ca_file(*c, a->cfg.cacert) < 0) {
        gp_http_client_free(*c);
        *c = NULL;
        rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    return rc;
}

/* POST /v1/nodes with credential token; the answer in *resp. */
static int post_registration(gp_agent *a, const char *token, json_t *doc, json_t **resp, gp_diag *d)
{
    gp_http_client *c = NULL;
    int rc = ctl_client(a, token, &c, d);
    if (rc == 0) {
        rc = call_json(c, "POST", "/v1/nodes", doc, resp, d);
    }
    if (refused_field(rc, d, "runtime")) {
        GP_LOG(GP_LOG_WARN, "agent", "the controller takes no runtime: registering without it");
        a->ctl_no_runtime = true;
        json_object_del(doc, "runtime");
        gp_diag_clear(d);
        rc = call_json(c, "POST", "/v1/nodes", doc, resp, d);
    }
    gp_http_client_free(c);
    return rc;
}

/* Registers with the node's own credential when it has one; when the controller refuses it (401:
 * revoked, or a controller whose store was reset) with the join token, which registers only a
 * node the controller does not know. */
static int register_as(gp_agent *a, json_t *doc, json_t **resp, gp_diag *d)
{
    if (a->token[0]) {
        int rc = post_registration(a, a->token, doc, resp, d);
        if (rc != GP_EAUTH) {
            return rc;
        }
        GP_LOG(GP_LOG_WARN, "agent", "the node's own credential was refused (%s): joining anew",
               d->msg);
        gp_diag_clear(d);
    }
    return post_registration(a, a->cfg.join_token, doc, resp, d);
}

int gp_agent_labels(const char *text, json_t **out, gp_diag *d)
{
    char buf[sizeof(((gp_agent_config *)0)->labels)];
    snprintf(buf, sizeof(buf), "%s", text);
    json_t *o = json_object();
    if (!o) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (eq) {
            *eq = '\0';
        }
        int rc = 0;
        if (!eq || !gp_label_key_ok(tok) || strlen(tok) >= GP_NAME_MAX) {
            rc = gp_diag_set(d, GP_EINVAL,
                             "--labels: %.64s: KEY=VALUE with KEY [prefix/]name (under 64 bytes)",
                             tok);
        } else if (!gp_label_value_ok(eq + 1)) {
            rc = gp_diag_set(d, GP_EINVAL,
                             "--labels: %.64s: the value is at most 63 of [A-Za-z0-9-_.], "
                             "alphanumeric at both ends",
                             tok);
        } else if (json_object_get(o, tok)) {
            rc = gp_diag_set(d, GP_EINVAL, "--labels: %.64s: given twice", tok);
        } else if (json_object_set_new(o, tok, json_string(eq + 1)) < 0) {
            rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
        }
        if (rc < 0) {
            json_decref(o);
            return rc;
        }
    }
    *out = o;
    return 0;
}

static int do_register(gp_agent *a, gp_diag *d)
{
    int64_t cpu, mem;
    host_capacity(&cpu, &mem);
    json_t *labels = NULL;
    if (gp_agent_labels(a->cfg.labels, &labels, d) < 0) {
        return GP_EINVAL; /* checked at start: only out of memory */
    }
    json_t *doc = gp_nvml_node_doc(&a->inv, a->cfg.name, a->cfg.address,
                                   a->cfg.cpu_milli ? a->cfg.cpu_milli : cpu,
                                   a->cfg.memory_mib ? a->cfg.memory_mib : mem, labels);
    json_decref(labels);
    add_mig_layouts(a, json_object_get(doc, "gpus"), NULL, 0);
    if (doc && !a->ctl_no_runtime) {
        json_object_set_new(doc, "runtime", gp_runtime_json(&a->rt));
    }
    json_t *resp = NULL;
    int rc = doc ? register_as(a, doc, &resp, d) : gp_diag_set(d, GP_ENOMEM, "out of memory");
    json_decref(doc);
    const char *token = NULL, *control = NULL;
    if (rc == 0 &&
        json_unpack(resp, "{s:s, s?s}", "token", &token, "control_token", &control) != 0) {
        rc = gp_diag_set(d, GP_EIO, "/v1/nodes: the answer has no token");
    }
    if (rc == 0 && a->logs) {
        gp_logserve_set_token(a->logs, control);
    }
    if (rc == 0) {
        snprintf(a->token, sizeof(a->token), "%s", token);
        gp_http_client_free(a->http);
        a->http = NULL;
        rc = ctl_client(a, a->token, &a->http, d);
    }
    if (rc == 0) {
        /* One more round after a failure is enough here: the agent's loop tries again anyway,
         * and a round held up for seconds would delay the replicas' supervision. */
        gp_http_client_set_failover(a->http, AGENT_FAILOVER_ROUNDS, 200);
    }
    json_decref(resp);
    if (rc == 0) {
        rc = save_token(a, d);
    }
    a->registered = rc == 0;
    if (rc == 0) {
        GP_LOG(GP_LOG_INFO, "agent", "registered node=%s gpus=%d server=%s", a->cfg.name,
               a->inv.ngpus, a->cfg.server);
    }
    return rc;
}

/* Serves the replicas' logs on the port of the node's address (none when it has no port). Port
 * 0 asks for a free port: the address then becomes HOST:PORT with the port bound, and the node
 * registers with it. */
static int start_logs(gp_agent *a, gp_diag *d)
{
    const char *colon = strrchr(a->cfg.address, ':');
    bool any_port = colon && strcmp(colon + 1, "0") == 0;
    int port = colon ? atoi(colon + 1) : 0;
    if (port <= 0 && !any_port) {
        GP_LOG(GP_LOG_WARN, "agent", "no --address port: logs cannot be fetched from this node");
        return 0;
    }
    char host[128];
    snprintf(host, sizeof(host), "%.*s", (int)(colon - a->cfg.address), a->cfg.address);
    int rc = gp_logserve_start(host[0] ? host : "0.0.0.0", port, a->cfg.state_dir, a->metrics,
                               &a->logs, d);
    if (rc == 0) {
        gp_logserve_set_metrics_auth(a->logs, a->cfg.metrics_open, a->cfg.metrics_token);
        gp_logserve_set_podman(a->logs, a->cfg.podman);
        snprintf(a->cfg.address, sizeof(a->cfg.address), "%.100s:%d", host,
                 gp_logserve_port(a->logs));
        GP_LOG(GP_LOG_INFO, "agent", "listening=%s", a->cfg.address);
    }
    return rc;
}

/* The paths no job may see (sandbox.h): the state directory, the join token, podman's storage
 * and what the operator named. */
static int collect_masks(gp_agent *a)
{
    const gp_agent_config *c = &a->cfg;
    size_t len = strlen(c->masks) + strlen(a->state_abs) + 2 * GP_AGENT_PATH_MAX +
                 strlen(a->rt.graph_root) + strlen(a->rt.run_root) + 8;
    a->mask_store = calloc(1, len);
    a->masks = calloc(strlen(c->masks) / 2 + 8, sizeof(char *));
    if (!a->mask_store || !a->masks) {
        return GP_ENOMEM;
    }
    /* the tokens: the join token, and the metrics token that reads every tenant's job names */
    char *token = c->join_token_file[0] ? realpath(c->join_token_file, NULL) : NULL;
    char *scrape = c->metrics_token_file[0] ? realpath(c->metrics_token_file, NULL) : NULL;
    snprintf(a->mask_store, len, "%s:%s:%s:%s:%s:%s", a->state_abs, token ? token : "",
             scrape ? scrape : "", a->rt.graph_root, a->rt.run_root, c->masks);
    free(token);
    free(scrape);
    int n = 0;
    char *save = NULL;
    for (char *p = strtok_r(a->mask_store, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        if (p[0] == '/') {
            a->masks[n++] = p;
        }
    }
    return 0;
}

/* Detects podman (runtime.h) unless told to run jobs as host processes. */
static int setup_sandbox(gp_agent *a, gp_diag *d)
{
    if (!realpath(a->cfg.state_dir, a->state_abs)) {
        snprintf(a->state_abs, sizeof(a->state_abs), "%s", a->cfg.state_dir);
    }
    if (strcmp(a->cfg.runtime, "none") == 0) {
        GP_LOG(GP_LOG_WARN, "agent",
               "runtime=none: jobs run as host processes, without a "
               "sandbox; image jobs fail");
        return 0;
    }
    gp_runtime_probe(a->cfg.podman[0] ? a->cfg.podman : NULL, "/sys/fs/cgroup", &a->rt);
    if (!a->rt.ok) {
        return gp_diag_set(d, GP_EUNAVAIL,
                           "no container runtime: %.300s (every job runs in a podman sandbox: "
                           "install podman, or start the agent with --runtime none to run jobs "
                           "as host processes)",
                           a->rt.why);
    }
    GP_LOG(GP_LOG_INFO, "agent",
           "runtime=podman version=%s oci_runtime=%s cgroups=%s cgroup_manager=%s init=%s "
           "nofile=%lld:%lld nproc=%lld:%lld",
           a->rt.version, a->rt.oci_runtime, gp_cgroup_mode_name(a->rt.cgroups),
           a->rt.cgroup_manager, a->rt.init_path[0] ? a->rt.init_path : "none",
           (long long)a->rt.nofile.soft, (long long)a->rt.nofile.hard, (long long)a->rt.nproc.soft,
           (long long)a->rt.nproc.hard);
    a->images = gp_images_new(a->cfg.state_dir, a->cfg.image_cache_max);
    return a->images && collect_masks(a) == 0 ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
}

int gp_agent_new(const gp_agent_config *cfg, gp_agent **out, gp_diag *d)
{
    *out = NULL;
    gp_agent *a = calloc(1, sizeof(*a));
    if (!a) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    a->cfg = *cfg;
    int rc = mkdir(cfg->state_dir, 0700) != 0 && errno != EEXIST
                 ? gp_diag_set(d, GP_EIO, "state dir %s: %s", cfg->state_dir, strerror(errno))
                 : 0;
    rc = rc ? rc : setup_sandbox(a, d);
    if (rc == 0) {
        rc = gp_nvml_open(cfg->nvml_library[0] ? cfg->nvml_library : NULL, &a->nvml, d);
    }
    if (rc == 0) {
        rc = gp_nvml_inventory(a->nvml, &a->inv, d);
    }
    if (rc == 0) {
        GP_LOG(GP_LOG_INFO, "agent", "nvml=%s gpus=%d driver=%s cuda=%s", gp_nvml_path(a->nvml),
               a->inv.ngpus, a->inv.driver_version, a->inv.cuda_version);
        gp_diag ed;
        gp_diag_clear(&ed);
        if (gp_nvml_events_open(a->nvml, &a->events, &ed) < 0) {
            GP_LOG(GP_LOG_WARN, "agent", "no XID events: %s", ed.msg);
        }
        a->usage = gp_usage_new();
        a->metrics = gp_metrics_new();
        rc = a->usage && a->metrics ? start_logs(a, d) : gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        gp_cdi_options co = {cfg->dev_root, cfg->mig_minors, cfg->ld_cache, cfg->cdi_publish};
        rc = gp_cdi_writer_new(&co, cfg->state_dir, a->nvml, &a->inv, &a->cdi, d);
    }
    if (rc == 0) {
        cdi_update(a, "start");
    }
    if (rc == 0 && cfg->memory_grace_s > 0) {
        gp_memwatch_run_config mc = {.state_dir = a->cfg.state_dir,
                                     .nvml = a->nvml,
                                     .inv = &a->inv,
                                     .interval_ms = cfg->memory_interval_ms,
                                     .grace_ms = (int64_t)cfg->memory_grace_s * 1000,
                                     .started_grace_ms = 2 * cfg->heartbeat_ms + 5000};
        rc = gp_memwatch_run_start(&mc, &a->memwatch, d);
    }
    if (rc == 0) {
        GP_LOG(GP_LOG_INFO, "agent", "memwatch grace_s=%d interval_ms=%lld%s", cfg->memory_grace_s,
               (long long)cfg->memory_interval_ms,
               a->memwatch ? "" : " (off: GPU memory limits are not watched)");
        gp_check_expect_init(&a->expect);
        a->expect.gpus = a->inv.ngpus;
        snprintf(a->expect.driver_seen, sizeof(a->expect.driver_seen), "%s", a->inv.driver_version);
        periodic_check(a); /* the first heartbeat carries it */
    }
    if (rc == 0) {
        gp_svc_env se = {a->cfg.state_dir, a->cfg.user, a->rt.ok ? &a->rt : NULL};
        a->svc = gp_svc_new(&se);
        rc = a->svc ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        load_token(a);
        rc = do_register(a, d);
    }
    if (rc < 0) {
        gp_agent_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void gp_agent_free(gp_agent *a)
{
    if (a) {
        gp_memwatch_run_stop(a->memwatch); /* before the NVML handle it uses */
        gp_svc_free(a->svc);
        gp_http_client_free(a->http);
        gp_logserve_stop(a->logs);
        gp_metrics_free(a->metrics);
        gp_usage_free(a->usage);
        gp_nvml_events_close(a->events);
        json_decref(a->xids);
        gp_nvml_close(a->nvml);
        gp_cdi_writer_free(a->cdi);
        free(a->health);
        free(a->acts);
        gp_images_free(a->images);
        free(a->masks);
        free(a->mask_store);
        free(a);
    }
}

/* ---- idle replicas: output and GPU use ---- */

/* The GPUs of a replica, from its spec.json (gpus[].index); 0 when it cannot be read. */
static uint64_t replica_gpus(const gp_agent *a, const gp_replica_key *k)
{
    char dir[GP_REPLICAS_PATH_MAX];
    json_t *spec = NULL;
    gp_diag d;
    if (gp_replicas_dir(a->cfg.state_dir, "replicas", k, dir, sizeof(dir)) < 0 ||
        gp_rdir_read_json(dir, GP_RDIR_SPEC, GP_RDIR_SPEC_MAX, &spec, &d) < 0) {
        return 0;
    }
    uint64_t mask = 0;
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(spec, "gpus"), i, g)
    {
        json_int_t index = json_integer_value(json_object_get(g, "index"));
        mask |= index >= 0 && index < 64 ? UINT64_C(1) << index : 0;
    }
    json_decref(spec);
    return mask;
}

/* The index of k's activity in a->acts; a->nacts when there is none. */
static int activity_of(const gp_agent *a, const gp_replica_key *k)
{
    int j = 0;
    while (j < a->nacts && !gp_replica_key_equal(&a->acts[j].key, k)) {
        j++;
    }
    return j;
}

/* Keeps one activity per running replica (busy: bit g, GPU g showed utilisation > 0 now). */
static void track_activity(gp_agent *a, const gp_local_replica *local, int nlocal, uint64_t busy,
                           int64_t now)
{
    activity *next = calloc((size_t)nlocal + 1, sizeof(*next));
    if (!next) {
        return; /* the old ones stay: idle_ms is then a round behind */
    }
    int n = 0;
    for (int i = 0; i < nlocal; i++) {
        const gp_replica_key *k = &local[i].key;
        if (local[i].state != GP_LOCAL_RUNNING) {
            continue;
        }
        int j = activity_of(a, k);
        next[n] = j < a->nacts ? a->acts[j] : (activity){*k, replica_gpus(a, k), 0};
        if (next[n].gpus & busy) {
            next[n].gpu_ms = now;
        }
        n++;
    }
    free(a->acts);
    a->acts = next;
    a->nacts = n;
}

/* Wall-clock ms of the last change of DIR/NAME; 0 when it does not exist. */
static int64_t mtime_ms(const char *dir, const char *name)
{
    char path[GP_REPLICAS_PATH_MAX + 32];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (stat(path, &sb) != 0) {
        return 0;
    }
    return (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000;
}

/* Milliseconds since a running replica last wrote output or used its GPUs, counted from its
 * start when it did neither yet; -1 when nothing says (see agent.h). */
static int64_t idle_ms(const gp_agent *a, const gp_replica_key *k, int64_t now)
{
    char dir[GP_REPLICAS_PATH_MAX];
    if (gp_replicas_dir(a->cfg.state_dir, "replicas", k, dir, sizeof(dir)) < 0) {
        return -1;
    }
    int j = activity_of(a, k);
    int64_t last = j < a->nacts ? a->acts[j].gpu_ms : 0;
    int64_t out = mtime_ms(dir, GP_RDIR_STDOUT), err = mtime_ms(dir, GP_RDIR_STDERR);
    last = out > last ? out : last;
    last = err > last ? err : last;
    gp_rdir_status st;
    gp_diag d;
    if (gp_rdir_read_status(dir, &st, &d) == 0 && st.start_ms > last) {
        last = st.start_ms;
    }
    return last <= 0 ? -1 : now > last ? now - last : 0;
}

/* The mean utilisation (percent) of the GPUs of running replica k as measured this round
 * (usage.h); -1 when none of them has a reading. */
static int replica_util(const gp_replica_watch *reps, int nreps, const gp_replica_key *k)
{
    for (int i = 0; i < nreps; i++) {
        if (!gp_replica_key_equal(&reps[i].use.key, k)) {
            continue;
        }
        int sum = 0, known = 0;
        for (int g = 0; g < reps[i].use.ngpus; g++) {
            if (reps[i].gpus[g].util >= 0) {
                sum += reps[i].gpus[g].util;
                known++;
            }
        }
        return known ? (sum + known / 2) / known : -1;
    }
    return -1;
}

/* The GPU memory (MiB) the processes of running replica k hold on its GPUs as measured this
 * round (usage.h); -1 when none of its GPUs could be measured. */
static int64_t replica_mem(const gp_replica_watch *reps, int nreps, const gp_replica_key *k)
{
    for (int i = 0; i < nreps; i++) {
        if (!gp_replica_key_equal(&reps[i].use.key, k)) {
            continue;
        }
        int64_t sum = 0;
        bool known = false;
        for (int g = 0; g < reps[i].use.ngpus; g++) {
            if (reps[i].use.gpus[g].used_mib >= 0) {
                sum += reps[i].use.gpus[g].used_mib;
                known = true;
            }
        }
        return known && sum <= GP_WIRE_MAX_MEMORY_MIB ? sum : -1;
    }
    return -1;
}

/* A replica whose image is being pulled (a starting one with a pull.json): Running with
 * "phase": "Pulling" and "pull" (agent.h); NULL for a starting one without. */
static json_t *pulling_report(const gp_agent *a, const gp_local_replica *l)
{
    gp_wire_replica r = {.job = l->key.job,
                         .replica = l->key.replica,
                         .epoch = l->key.epoch,
                         .state = GP_WIRE_RUNNING,
                         .idle_ms = -1,
                         .util = -1,
                         .ready = -1,
                         .mem_mib = -1,
                         .pulling = true};
    if (!gp_replicas_pull(a->cfg.state_dir, &l->key, r.pull_image, sizeof(r.pull_image),
                          &r.pull_done_bytes, &r.pull_total_bytes)) {
        return NULL;
    }
    return gp_wire_replica_encode(&r);
}

/* The reason of a replica whose image could not be pulled ("ImagePullFailed: ..." in its
 * final record) into why; left alone otherwise. */
static void pull_failure(const gp_agent *a, const gp_replica_key *k, char *why, size_t cap)
{
    char dir[GP_REPLICAS_PATH_MAX];
    gp_rdir_status st;
    gp_diag d;
    if (gp_replicas_dir(a->cfg.state_dir, "replicas", k, dir, sizeof(dir)) == 0 &&
        gp_rdir_read_status(dir, &st, &d) == 0 &&
        strncmp(st.reason, GP_PULL_REASON_PREFIX, strlen(GP_PULL_REASON_PREFIX)) == 0) {
        snprintf(why, cap, "%s", st.reason);
    }
}

/* The report of one replica; NULL when its state is not reported. A replica the agent stopped
 * for a reason of its own (the GPU memory watch) is Failed, with that reason. A running one
 * carries idle_ms and util when known. */
static json_t *replica_report(const gp_agent *a, const gp_local_replica *l, int64_t now,
                              const gp_replica_watch *reps, int nreps)
{
    const char *state = gp_local_report_state(l);
    char why[256] = "";
    if ((l->state == GP_LOCAL_KILLED || l->state == GP_LOCAL_LOST) &&
        gp_replicas_stop_reason(a->cfg.state_dir, &l->key, why, sizeof(why))) {
        state = "Failed";
    }
    if (l->state == GP_LOCAL_EXITED && l->exit_code == 125) {
        pull_failure(a, &l->key, why, sizeof(why));
    }
    if (!state && l->state == GP_LOCAL_STARTING) {
        return pulling_report(a, l);
    }
    if (!state) {
        return NULL;
    }
    bool running = l->state == GP_LOCAL_RUNNING;
    gp_wire_replica r = {.job = l->key.job,
                         .replica = l->key.replica,
                         .epoch = l->key.epoch,
                         .state = strcmp(state, "Running") == 0     ? GP_WIRE_RUNNING
                                  : strcmp(state, "Succeeded") == 0 ? GP_WIRE_SUCCEEDED
                                                                    : GP_WIRE_FAILED,
                         .exit_code = l->state == GP_LOCAL_LOST ? 137 : l->exit_code,
                         .idle_ms = running ? idle_ms(a, &l->key, now) : -1,
                         .util = running ? replica_util(reps, nreps, &l->key) : -1,
                         .mem_mib = running ? replica_mem(reps, nreps, &l->key) : -1,
                         .ready = -1};
    if (running) {
        gp_svc_report(a->svc, &l->key, &r.ready, &r.has_metric, &r.metric);
    }
    snprintf(r.reason, sizeof(r.reason), "%s", why);
    return gp_wire_replica_encode(&r);
}

/* The heartbeat's reading of a GPU sampled this round, through the wire codec (net/wire.h). */
static json_t *gpu_reading(const gp_metrics_gpu *m)
{
    /* A reading outside the wire's range (a broken sensor) is left out, not sent: the
     * controller would refuse the whole heartbeat. */
    const gp_nvml_readings *r = &m->r;
    gp_wire_gpu g = {
        .index = m->index,
        .utilization = r->util_gpu >= 0 && r->util_gpu <= 100 ? r->util_gpu : -1,
        .memory_used_mib = r->memory_used_mib >= 0 && r->memory_used_mib <= GP_WIRE_MAX_MEMORY_MIB
                               ? r->memory_used_mib
                               : -1,
        .temperature_c =
            r->temperature_c >= 0 && r->temperature_c <= 150 ? r->temperature_c : GP_WIRE_NO_TEMP,
        .power_w = r->power_w >= 0 && r->power_w <= 5000 ? r->power_w : -1,
        .sm_clock_mhz = r->sm_clock_mhz >= 0 && r->sm_clock_mhz <= 100000 ? r->sm_clock_mhz : -1,
        .memory_clock_mhz =
            r->memory_clock_mhz >= 0 && r->memory_clock_mhz <= 100000 ? r->memory_clock_mhz : -1,
        .ecc_uncorrected = r->ecc_uncorrected >= 0 ? r->ecc_uncorrected : -1,
    };
    return gp_wire_gpu_encode(&g);
}

/* The heartbeat document: every reportable replica, this round's reading of every GPU (with the
 * GPU instances of those in MIG mode), the XIDs not yet delivered and the latest health check. */
static json_t *heartbeat_doc(gp_agent *a, const gp_metrics_snapshot *snap,
                             const gp_local_replica *local, int nlocal,
                             const gp_replica_watch *reps, int nreps)
{
    json_t *out = json_array(), *gpus = json_array();
    uint64_t busy = 0;
    for (int g = 0; g < snap->ngpus; g++) {
        const gp_metrics_gpu *m = &snap->gpus[g];
        busy |= m->sampled && m->r.util_gpu > 0 ? UINT64_C(1) << g : 0;
        if (m->sampled) {
            json_array_append_new(gpus, gpu_reading(m));
        }
    }
    int64_t now = gp_wall_ms();
    track_activity(a, local, nlocal, busy, now);
    for (int i = 0; i < nlocal; i++) {
        json_t *r = replica_report(a, &local[i], now, reps, nreps);
        if (r) {
            json_array_append_new(out, r);
        }
    }
    add_mig_layouts(a, gpus, reps, nreps);
    json_t *doc = json_pack("{s:o, s:o, s:O}", "replicas", out, "gpus", gpus, "events", a->xids);
    if (doc && a->images && !a->ctl_no_images) {
        json_object_set_new(doc, "images", gp_images_doc(a->images));
    }
    json_t *health = health_doc(a);
    if (doc && health) {
        json_object_set_new(doc, "health", health);
    } else {
        json_decref(health);
    }
    return doc;
}

/* ---- the round's readings ---- */

/* XIDs since the last round (the wait returns at once when there is none), after those a failed
 * heartbeat did not deliver: the controller acts on each once it has it. Each GPU's last one is
 * kept for the metrics. */
static void collect_xids(gp_agent *a)
{
    if (!a->xids) {
        a->xids = json_array();
    }
    gp_nvml_event ev;
    gp_diag ed;
    while (a->events && gp_nvml_events_wait(a->events, 0, &ev, &ed) == 1) {
        GP_LOG(GP_LOG_WARN, "agent", "xid gpu=%d xid=%d", ev.gpu, ev.xid);
        if (ev.gpu < 0) {
            continue;
        }
        if (ev.gpu < GP_NVML_MAX_GPUS) {
            a->last_xid[ev.gpu] = ev.xid;
        }
        if (json_array_size(a->xids) >= AGENT_MAX_XIDS) {
            GP_LOG(GP_LOG_WARN, "agent", "more than %d XIDs undelivered: the oldest is dropped",
                   AGENT_MAX_XIDS);
            json_array_remove(a->xids, 0);
        }
        if (ev.xid < 1 || ev.xid > GP_WIRE_XID_MAX) {
            GP_LOG(GP_LOG_WARN, "agent", "xid gpu=%d xid=%d: outside 1..%d, not reported", ev.gpu,
                   ev.xid, GP_WIRE_XID_MAX);
            continue;
        }
        gp_wire_xid x = {.gpu = ev.gpu, .xid = ev.xid};
        json_array_append_new(a->xids, gp_wire_xid_encode(&x));
    }
}

/* A new snapshot with this round's reading of every GPU and its MIG devices, the node's identity
 * and each GPU's last XID (slices come later: fill_snapshot). NULL when out of memory. */
static gp_metrics_snapshot *sample_gpus(gp_agent *a)
{
    gp_metrics_snapshot *s = gp_metrics_snapshot_new(0);
    if (!s) {
        return NULL;
    }
    snprintf(s->node, sizeof(s->node), "%s", a->cfg.name);
    snprintf(s->version, sizeof(s->version), "%s", GP_VERSION);
    snprintf(s->driver_version, sizeof(s->driver_version), "%s", a->inv.driver_version);
    snprintf(s->cuda_version, sizeof(s->cuda_version), "%s", a->inv.cuda_version);
    collect_xids(a);
    s->ngpus = a->inv.ngpus;
    for (int g = 0; g < s->ngpus; g++) {
        gp_metrics_gpu *m = &s->gpus[g];
        const gp_nvml_gpu *ig = &a->inv.gpus[g];
        gp_diag d;
        gp_diag_clear(&d);
        m->index = g;
        snprintf(m->uuid, sizeof(m->uuid), "%s", ig->uuid);
        snprintf(m->pci_bus_id, sizeof(m->pci_bus_id), "%s", ig->pci_bus_id);
        snprintf(m->model, sizeof(m->model), "%s", ig->name);
        m->sampled = gp_nvml_sample(a->nvml, g, &m->r, &d) == 0;
        if (m->sampled &&
            gp_nvml_sample_mig(a->nvml, g, m->mig, GP_NVML_MAX_MIG, &m->nmig, &d) < 0) {
            m->nmig = 0;
        }
        m->last_xid = a->events ? a->last_xid[g] : -1;
    }
    return s;
}

/* Every running replica as the round sees it (replicas.h), measured (usage.h); *n how many. The
 * array is malloc'd (the caller frees it); NULL when out of memory. */
static gp_replica_watch *running_replicas(gp_agent *a, const gp_local_replica *local, int nlocal,
                                          const gp_metrics_snapshot *snap, int *n)
{
    gp_replica_watch *reps = calloc((size_t)nlocal + 1, sizeof(*reps));
    *n = 0;
    for (int i = 0; reps && i < nlocal; i++) {
        gp_diag d;
        gp_diag_clear(&d);
        if (local[i].state != GP_LOCAL_RUNNING) {
            continue;
        }
        if (gp_replicas_watch_info(a->cfg.state_dir, &local[i].key, &reps[*n], &d) < 0) {
            GP_LOG(GP_LOG_WARN, "agent", "replica job=%lld replica=%d: %s",
                   (long long)local[i].key.job, local[i].key.replica, d.msg);
            continue;
        }
        for (int g = 0; g < reps[*n].use.ngpus; g++) {
            gp_memwatch_gpu *w = &reps[*n].use.gpus[g];
            w->uuid = w->index < a->inv.ngpus ? a->inv.gpus[w->index].uuid : NULL;
        }
        (*n)++;
    }
    if (reps && snap) {
        gp_usage_measure(a->usage, a->nvml, snap, reps, *n);
    }
    return reps;
}

/* ---- metrics ---- */

static void job_of(const gp_replica_watch *w, gp_metrics_job *j)
{
    snprintf(j->name, sizeof(j->name), "%s", w->name);
    j->id = w->use.key.job;
    snprintf(j->tenant, sizeof(j->tenant), "%s", w->tenant);
    snprintf(j->queue, sizeof(j->queue), "%s", w->queue);
}

/* The slice of GPU entry g of replica w (on a GPU of memory_mib); for a MIG slice also marks its
 * MIG device held. */
static void slice_of(gp_metrics_snapshot *s, const gp_replica_watch *w, int g, int64_t memory_mib,
                     gp_metrics_slice *sl)
{
    const gp_replica_gpu *r = &w->gpus[g];
    gp_metrics_gpu *gpu = &s->gpus[w->use.gpus[g].index];
    int64_t used = w->use.gpus[g].used_mib;
    *sl = (gp_metrics_slice){.gpu = gpu->index,
                             .replica = w->use.key.replica,
                             .milli = r->milli,
                             .gpu_instance = -1,
                             .used_bytes = used >= 0 ? used << 20 : -1,
                             .limit_bytes = -1,
                             .util_ratio = r->slice_util / 100.0};
    job_of(w, &sl->job);
    if (r->mig_start >= 0) {
        sl->kind = GP_METRICS_MIG;
        snprintf(sl->profile, sizeof(sl->profile), "%s", w->mig_profile);
        for (int m = 0; m < gpu->nmig; m++) {
            if (r->mig_uuid[0] && strcmp(gpu->mig[m].uuid, r->mig_uuid) == 0) {
                sl->gpu_instance = gpu->mig[m].gpu_instance;
                sl->limit_bytes =
                    gpu->mig[m].memory_total_mib >= 0 ? gpu->mig[m].memory_total_mib << 20 : -1;
                gpu->mig_held[m] = true;
                job_of(w, &gpu->mig_job[m]);
            }
        }
    } else if (r->milli < 1000) {
        sl->kind = GP_METRICS_FRACTION;
        sl->limit_bytes = r->memory_mib > 0 ? r->memory_mib << 20 : -1;
    } else {
        sl->kind = GP_METRICS_WHOLE;
        sl->limit_bytes = memory_mib << 20;
    }
}

/* The slices of every running replica, who holds each GPU whole, and the replicas by state. */
static void fill_snapshot(gp_agent *a, gp_metrics_snapshot *s, const gp_local_replica *local,
                          int nlocal, const gp_replica_watch *reps, int nreps)
{
    int users[GP_NVML_MAX_GPUS] = {0}; /* replicas on each GPU outside MIG */
    int total = 0;
    for (int i = 0; i < nreps; i++) {
        total += reps[i].use.ngpus;
    }
    free(s->slices);
    s->nslices = 0;
    s->slices = calloc((size_t)total + 1, sizeof(*s->slices));
    s->cap_slices = s->slices ? total : 0;
    for (int i = 0; i < nreps; i++) {
        for (int g = 0; g < reps[i].use.ngpus; g++) {
            int idx = reps[i].use.gpus[g].index;
            if (idx < 0 || idx >= s->ngpus || s->nslices == s->cap_slices) {
                continue;
            }
            slice_of(s, &reps[i], g, a->inv.gpus[idx].memory_mib, &s->slices[s->nslices++]);
            users[idx] += reps[i].gpus[g].mig_start < 0;
        }
    }
    for (int i = 0; i < s->nslices; i++) {
        const gp_metrics_slice *sl = &s->slices[i];
        if (sl->kind == GP_METRICS_WHOLE && users[sl->gpu] == 1) {
            s->gpus[sl->gpu].held = true;
            s->gpus[sl->gpu].job = sl->job;
        }
    }
    for (int i = 0; i < nlocal; i++) {
        if ((unsigned int)local[i].state < GP_METRICS_NSTATES) {
            s->replicas[local[i].state]++;
        }
    }
    s->heartbeat_failures = a->beat_failures;
}
/* True when podman resolves every GPU of the replica through the node's CDI spec: it is
 * published where podman reads it and names each (uuid, or mig_uuid for a slice). Otherwise
 * the replica runs without GPU devices (gpupool-run logs it); the reason is logged here. */
static bool cdi_resolves(gp_agent *a, const gp_wire_desired_replica *r)
{
    const char *dir = gp_cdi_writer_published(a->cdi);
    if (!gp_cdi_writer_inventory(a->cdi) || !gp_cdi_podman_reads(dir)) {
        GP_LOG(GP_LOG_INFO, "cdi", "job=%lld: no GPU devices in its container: the spec is %s",
               (long long)r->job,
               dir[0] ? "published where podman does not read it" : "not published");
        return false;
    }
    for (size_t i = 0; i < r->ngpus; i++) {
        const char *name = r->gpus[i].mig_uuid[0] ? r->gpus[i].mig_uuid : r->gpus[i].uuid;
        if (!name[0] || !gp_cdi_writer_has(a->cdi, name)) {
            GP_LOG(GP_LOG_WARN, "cdi", "job=%lld: %s is not in the CDI spec: no GPU devices",
                   (long long)r->job, name[0] ? name : "a GPU without uuid");
            return false;
        }
    }
    return true;
}

/* A sandboxed replica's user namespace: its tenant's host ids (idmap.h), from the tenant's id in
 * the desired replica (the same on every node; none given: 0). Only root maps ids onto the
 * host's: an agent running as another user gives none. */
static int tenant_ids(gp_agent *a, const gp_wire_desired_replica *r, json_t *spec, gp_diag *d)
{
    if (!a->rt.ok || geteuid() != 0) {
        return 0;
    }
    gp_idmap m;
    int rc = gp_idmap_tenant(a->cfg.tenant_uids, r->tenant_id >= 0 ? r->tenant_id : 0, &m, d);
    if (rc == 0) {
        json_object_set_new(
            spec, "userns",
            json_pack("{s:I, s:I}", "uid_base", (json_int_t)m.base, "size", (json_int_t)m.size));
    }
    return rc;
}

/* For each MIG slice of r (mig_start >= 0) the MIG device, made to match the controller's choice
 * of profile and placement (mig.h): its UUID into the slice's mig_uuid. */
static int mig_devices(gp_agent *a, gp_wire_desired_replica *r, gp_diag *d)
{
    for (size_t i = 0; i < r->ngpus; i++) {
        gp_wire_desired_gpu *g = &r->gpus[i];
        if (g->mig_start < 0) {
            continue;
        }
        int rc = r->mig_profile[0]
                     ? gp_nvml_mig_ensure(a->nvml, g->index, r->mig_profile, g->mig_start,
                                          g->mig_uuid, sizeof(g->mig_uuid), d)
                     : gp_diag_set(d, GP_EINVAL, "a MIG slice without spec.resources.mig_profile");
        if (rc < 0) {
            return rc;
        }
        if (!gp_cdi_writer_has(a->cdi, g->mig_uuid)) {
            cdi_update(a, "a new MIG device"); /* before the replica starts */
        }
    }
    return 0;
}

/* The spec gpupool-run reads: the desired replica encoded (a fraction's limits come in its
 * gpu_share, decided by the controller), plus what the agent adds: for a MIG slice the MIG
 * device's UUID, the tenant's ids, the CDI members and env_extra. *out is the text; *auth the
 * registry credentials (registry_auth), kept out of it (NULL: none); on failure (a MIG instance
 * that cannot be made now) d says why and the next round retries. */
static int run_spec(gp_agent *a, const gp_wire_desired_replica *want, char **out, char **auth,
                    gp_diag *d)
{
    *out = NULL;
    *auth = NULL;
    gp_wire_desired_gpu gpus[GP_WIRE_MAX_GPUS];
    gp_wire_desired_replica r = *want; /* borrows want's members; gpus and credentials its own */
    if (want->ngpus > 0) {             /* a replica without GPUs has none to copy (gpus NULL) */
        memcpy(gpus, want->gpus, want->ngpus * sizeof(*gpus));
    }
    r.gpus = gpus;
    r.auth_registry = r.auth_username = r.auth_password = NULL; /* beside spec.json, never in it */
    json_t *creds = gp_wire_desired_auth_encode(want);
    *auth = creds ? json_dumps(creds, JSON_COMPACT) : NULL;
    json_decref(creds);
    int rc = mig_devices(a, &r, d);
    json_t *spec = rc == 0 ? gp_wire_desired_replica_encode(&r) : NULL;
    rc = rc ? rc : spec ? tenant_ids(a, &r, spec, d) : gp_diag_set(d, GP_ENOMEM, "out of memory");
    if (rc == 0 && r.ngpus > 0 && gp_cdi_writer_inventory(a->cdi)) {
        json_object_set_new(spec, "cdi_spec_dir", json_string(gp_cdi_writer_dir(a->cdi)));
    }
    if (rc == 0 && r.ngpus > 0 && cdi_resolves(a, &r)) {
        json_object_set_new(spec, "cdi_devices", json_true());
    }
    if (rc == 0) {
        json_object_set_new(spec, "env_extra", json_object());
    }
    if (rc == 0 && !(*out = json_dumps(spec, JSON_COMPACT))) {
        rc = gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    json_decref(spec);
    return rc;
}

/* Carries out the plan. Errors of one action are logged; the next round retries. */
static void carry_out(gp_agent *a, const gp_wire_desired *want, const gp_replica_key *keys,
                      int nkeys, const gp_local_replica *local, int nlocal)
{
    gp_action *plan = malloc(sizeof(*plan) * (size_t)(2 * (nkeys + nlocal) + 1));
    if (!plan) {
        return;
    }
    int n = gp_converge(keys, nkeys, local, nlocal, plan);
    gp_replicas_env env = {a->cfg.state_dir, a->cfg.run_binary, a->cfg.user,
                           a->cfg.grace_s,   a->cfg.log_max,    a->rt.ok ? &a->rt : NULL,
                           a->masks,         a->cfg.pids_limit};
    for (int i = 0; i < n; i++) {
        gp_diag d;
        gp_diag_clear(&d);
        int rc = 0;
        const gp_local_replica *l = plan[i].kind == GP_ACT_START ? NULL : &local[plan[i].index];
        switch (plan[i].kind) {
        case GP_ACT_START: {
            char *spec = NULL, *auth = NULL;
            rc = run_spec(a, &want->replicas[plan[i].index], &spec, &auth, &d);
            if (rc == 0) {
                rc = gp_replicas_start(&env, &keys[plan[i].index], spec, auth, &d);
            }
            if (rc == 0) {
                gp_starts_add(&a->starts, &keys[plan[i].index], gp_mono_ms());
            }
            free(spec);
            if (auth) {
                memset(auth, 0, strlen(auth));
            }
            free(auth);
            break;
        }
        case GP_ACT_STOP:
            GP_LOG(GP_LOG_INFO, "agent", "stop job=%lld replica=%d epoch=%lld",
                   (long long)l->key.job, l->key.replica, (long long)l->key.epoch);
            rc = gp_replicas_stop(a->cfg.state_dir, &l->key, false, NULL, &d);
            break;
        case GP_ACT_KILL_GROUP:
            rc = gp_replicas_stop(a->cfg.state_dir, &l->key, true, NULL, &d);
            gp_replicas_remove_sandbox(&env, &l->key);
            break;
        case GP_ACT_FORGET:
            rc = gp_replicas_forget(a->cfg.state_dir, &l->key, a->cfg.finished_keep, &d);
            break;
        case GP_ACT_REPORT:
            break; /* reported in the heartbeat already */
        }
        if (rc < 0) {
            GP_LOG(GP_LOG_WARN, "agent", "action failed: %s", d.msg);
        }
    }
    free(plan);
}

/* Converges on the desired replicas of a decoded answer (heartbeat or long-poll) and records
 * its version. */
static void converge_to(gp_agent *a, const gp_wire_desired *want, const gp_local_replica *local,
                        int nlocal)
{
    int nkeys = (int)want->nreplicas;
    gp_replica_key *keys = calloc((size_t)nkeys + 1, sizeof(*keys));
    for (int i = 0; keys && i < nkeys; i++) {
        const gp_wire_desired_replica *r = &want->replicas[i];
        keys[i] = (gp_replica_key){r->job, r->replica, r->epoch};
    }
    if (keys) {
        carry_out(a, want, keys, nkeys, local, nlocal);
        a->version = want->version; /* 0 (a controller without versions): no long-poll */
    }
    free(keys);
}

/* Decodes a controller's answer (net/wire_desired.h); one that does not decode is logged and
 * not acted on: the agent keeps what it runs and asks again. */
static int decode_answer(json_t *resp, gp_wire_desired *want, gp_diag *d)
{
    int rc = gp_wire_desired_decode(resp, want, d);
    if (rc < 0) {
        GP_LOG(GP_LOG_WARN, "agent", "the controller's desired replicas are refused: %s", d->msg);
    }
    return rc;
}

/* Sends the heartbeat of this round; 0 and *resp the answer, or the error (d says why). */
static int heartbeat(gp_agent *a, const gp_metrics_snapshot *snap, const gp_local_replica *local,
                     int nlocal, const gp_replica_watch *reps, int nreps, json_t **resp, gp_diag *d)
{
    json_t *beat = snap ? heartbeat_doc(a, snap, local, nlocal, reps, nreps) : NULL;
    char path[128];
    snprintf(path, sizeof(path), "/v1/nodes/%s/heartbeat", a->cfg.name);
    int rc = beat ? call_json(a->http, "POST", path, beat, resp, d)
                  : gp_diag_set(d, GP_ENOMEM, "heartbeat: out of memory");
    if (refused_field(rc, d, "images")) {
        GP_LOG(GP_LOG_WARN, "agent", "the controller takes no images: heartbeats leave them out");
        a->ctl_no_images = true;
        json_object_del(beat, "images");
        gp_diag_clear(d);
        rc = call_json(a->http, "POST", path, beat, resp, d);
    }
    json_decref(beat);
    if (rc == GP_EAUTH || rc == GP_ENOENT) {
        a->registered = false; /* token revoked or the node forgotten: register again */
    }
    return rc;
}

/* The image cache (images.h): the images of the replicas here, used until now or until they
 * ended; listed again and trimmed to its cap when due. */
static void track_images(gp_agent *a, const gp_local_replica *local, int nlocal)
{
    if (!a->images) {
        return;
    }
    int64_t now = gp_wall_ms();
    bool starting = false;
    for (int i = 0; i < nlocal; i++) {
        bool running = local[i].state == GP_LOCAL_RUNNING;
        starting = starting || local[i].state == GP_LOCAL_STARTING;
        char dir[GP_REPLICAS_PATH_MAX];
        gp_rdir_status st;
        gp_diag d;
        if (gp_replicas_dir(a->cfg.state_dir, "replicas", &local[i].key, dir, sizeof(dir)) == 0 &&
            gp_rdir_read_status(dir, &st, &d) == 0 && st.image_id[0]) {
            gp_images_used(a->images, st.image_id, running ? now : st.end_ms, running);
        }
    }
    gp_images_refresh(a->images, &a->rt, now, false, starting);
}

int gp_agent_round(gp_agent *a, gp_diag *d)
{
    /* The controller away: the round goes on without a heartbeat (metrics); the memory watch has
     * a thread of its own (memwatch_run.h) */
    bool registered = a->registered || do_register(a, d) == 0;
    gp_local_replica *local = NULL;
    int nlocal = 0;
    int rc = gp_replicas_scan(a->cfg.state_dir, 2 * a->cfg.heartbeat_ms + 5000, &local, &nlocal, d);
    if (rc < 0) {
        return rc;
    }
    periodic_check(a);
    if (a->svc) {
        gp_svc_round(a->svc, local, nlocal);
    }
    track_images(a, local, nlocal);
    gp_metrics_snapshot *snap = sample_gpus(a);
    cdi_refresh(a, snap);
    int nreps = 0;
    gp_replica_watch *reps = running_replicas(a, local, nlocal, snap, &nreps);
    json_t *resp = NULL;
    rc = registered ? heartbeat(a, snap, local, nlocal, reps, nreps, &resp, d) : GP_EUNAVAIL;
    a->beat_failures += rc < 0;
    if (snap) {
        fill_snapshot(a, snap, local, nlocal, reps, nreps);
        gp_metrics_publish(a->metrics, snap);
    }
    if (rc == 0) {
        json_array_clear(a->xids); /* delivered */
        gp_starts_reported(&a->starts, local, nlocal);
    } else {
        a->starts.n = 0; /* the controller is away: the regular rounds report them */
    }
    gp_wire_desired want;
    if (rc == 0 && decode_answer(resp, &want, d) == 0) {
        converge_to(a, &want, local, nlocal);
        requested_check(a, &want); /* its result goes out with the next heartbeat */
        gp_wire_desired_fini(&want);
    }
    free(reps);
    free(local);
    json_decref(resp);
    return 0; /* a failed heartbeat: d says why; jobs keep running */
}

int gp_agent_starts_due(gp_agent *a)
{
    if (a->starts.n == 0) {
        return -1;
    }
    gp_local_replica *local = NULL;
    int nlocal = 0;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_replicas_scan(a->cfg.state_dir, 2 * a->cfg.heartbeat_ms + 5000, &local, &nlocal, &d) <
        0) {
        return -1; /* the round will say why */
    }
    int due = gp_starts_due(&a->starts, local, nlocal, gp_mono_ms());
    free(local);
    return due;
}

/* The long-poll's transport timeout beyond the wait: an answer that has not come by then is
 * given up (the next round heartbeats anyway), so a stop is never held up for long. */
#define WATCH_SLACK_MS 1000

int gp_agent_watch(gp_agent *a, int64_t wait_ms, gp_diag *d)
{
    if (!a->registered || a->version <= 0) {
        return gp_diag_set(d, GP_ESTATE, "no desired replicas to wait on yet");
    }
    char path[256];
    snprintf(path, sizeof(path), "/v1/nodes/%s/desired?version=%lld&wait=%lld", a->cfg.name,
             (long long)a->version, (long long)(wait_ms > 0 ? wait_ms : 0));
    json_t *resp = NULL;
    gp_http_client_set_timeout(a->http, (long)wait_ms + WATCH_SLACK_MS, 10000);
    int rc = call_json(a->http, "GET", path, NULL, &resp, d);
    gp_http_client_set_timeout(a->http, 30000, 10000); /* the client's defaults */
    gp_wire_desired want;
    rc = rc < 0 ? rc : decode_answer(resp, &want, d);
    json_decref(resp);
    if (rc < 0) {
        return rc;
    }
    bool checked = requested_check(a, &want);
    int64_t version = want.version;
    if (version == a->version) {
        gp_wire_desired_fini(&want);
        return checked ? 2 : 0;
    }
    gp_local_replica *local = NULL;
    int nlocal = 0;
    rc = gp_replicas_scan(a->cfg.state_dir, 2 * a->cfg.heartbeat_ms + 5000, &local, &nlocal, d);
    if (rc == 0) {
        GP_LOG(GP_LOG_DEBUG, "agent", "desired changed version=%lld", (long long)version);
        converge_to(a, &want, local, nlocal);
    }
    free(local);
    gp_wire_desired_fini(&want);
    return rc < 0 ? rc : checked ? 2 : 1;
}
