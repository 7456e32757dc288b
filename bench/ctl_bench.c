/*
 * ctl_bench: the controller end to end on loopback, with a live pool. Starts a real gpupoold (its
 * own temporary data directory; its store SQLite there with synchronous=FULL, or --store-url, an
 * empty PostgreSQL database) with its default heartbeat and lost timeouts, registers N simulated
 * nodes x 8 GPUs through the API, and keeps them alive: from a few threads it sends each node's
 * heartbeat (POST /v1/nodes/{node}/heartbeat with the node's agent token: the document an agent
 * sends, its GPUs' readings and its replicas reported Running as the last answer listed them)
 * every --heartbeat-ms (the agent's default, 1 s), from its registration on, the nodes spread
 * over the interval. Then C
 * concurrent clients submit J jobs over HTTP, and it measures:
 *   - registration: N registrations by C clients, seconds;
 *   - accepted jobs/s: J / the time from the first submit to the last answer (every 2xx answer
 *     means the job is committed);
 *   - the backlog: with --cycle the tenant's quota is one GPU while the jobs are submitted, so
 *     all but a few wait; then the quota is lifted and the scheduler places the backlog: the
 *     first cycle's own figure (gpupoold's log line "cycle placed=... seconds=...") and the time
 *     until no job is pending;
 *   - a loss (--lose L, with --cycle): the heartbeats of L nodes stop; the phase lasts until the
 *     controller has marked them lost and placed their jobs elsewhere;
 *   - latency: during the submits, the backlog and the loss a prober sends a steady trickle of
 *     reads (GET /v1/jobs?state=Pending&limit=100, GET /v1/nodes/X) and submits, and every
 *     heartbeat is timed: p50, p99 and max per phase and kind of call, with the failures;
 *   - gpupoold's memory: VmRSS once the jobs are submitted (J pending) and once the backlog is
 *     placed, and its peak (VmHWM) at the end.
 * Prints machine-readable lines for bench/ctl_report.py:
 *   ctl_register store=sqlite nodes=1000 gpus=8000 seconds=...
 *   ctl_submit store=sqlite jobs=20000 clients=8 nodes=1000 seconds=... jobs_per_s=...
 *   ctl_schedule store=sqlite pending_left=0 seconds=...
 *   ctl_cycle store=sqlite pending=100000 nodes=10000 placed=... seconds=...   (--cycle)
 *   ctl_loss store=sqlite nodes=1000 lost_seen=... seconds=... pending_left=...  (--lose)
 *   ctl_latency store=sqlite phase=backlog kind=heartbeat n=... failed=... p50_ms=... p99_ms=...
 *               max_ms=...
 *   ctl_beats store=sqlite nodes=... interval_ms=... sent=... per_s=... gap_max_ms=...
 *             applied_memory=... applied_store=...  (gpupool_heartbeats_total{path}, all run)
 *   ctl_rss store=sqlite at=submitted|placed|peak pending=... running=... mib=...  (every job
 *           of the pool, from gpupoold's metrics; running: Scheduled or Running)
 * Usage: ctl_bench --gpupoold PATH [--nodes 1000] [--jobs 20000] [--clients 8]
 *                  [--store-url URL] [--cycle] [--lose L] [--heartbeat-ms 1000]
 *                  [--beaters 32] [--submit-only] [--minimal]
 * --minimal: the submits ask for the minimal answer (Prefer: return=minimal: the job's id, name
 * and state), as gpupool submit does; without it, the whole job document as any client gets.
 */
#include "net/http_client.h"
#include "net/wire.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_DESIRED 64 /* replicas a simulated node reports */

/* A simulated node: its agent token, whether it still beats, the replicas it reports. */
typedef struct sim_node {
    char token[128];
    atomic_bool registered; /* token is set: it beats from now on, as an agent does */
    atomic_bool silent;
    int ndesired;
    gp_wire_replica desired[MAX_DESIRED];
} sim_node;

enum { PH_SUBMIT, PH_BACKLOG, PH_LOSS, NPHASES };
enum { K_HEARTBEAT, K_LIST, K_NODE, K_SUBMIT, NKINDS };
static const char *const phase_names[NPHASES] = {"submit", "backlog", "loss"};
static const char *const kind_names[NKINDS] = {"heartbeat", "list_pending", "get_node", "submit"};

/* Latencies in ms, by phase and kind of call. */
typedef struct lat {
    double *v;
    int n, cap, failed;
} lat;

typedef struct bench {
    const char *gpupoold;
    const char *store_url; /* NULL: SQLite in the data directory */
    const char *store;     /* "sqlite" or "postgresql", for the output */
    int nodes, jobs, clients, cycle, lose, heartbeat_ms, beaters, submit_only;
    int minimal; /* submits send Prefer: return=minimal (--minimal) */
    char dir[256];
    char url[64];
    char admin[128], join[128], user[128], prober[128];
    pid_t pid;
    sim_node *sim;
    atomic_int phase; /* -1: not measured */
    atomic_bool stop_beats, stop_probe;
    atomic_long beats_sent;
    atomic_long gap_max_ms; /* the longest a node went between two heartbeats */
    pthread_mutex_t lat_lock;
    lat lats[NPHASES][NKINDS];
} bench;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pid_t gpupoold_pid; /* stopped when the benchmark dies */

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "ctl_bench: %s: %s\n", what, detail ? detail : "");
    if (gpupoold_pid > 0) {
        kill(gpupoold_pid, SIGTERM);
        waitpid(gpupoold_pid, NULL, 0);
    }
    exit(1);
}

static void read_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f || !fgets(buf, (int)cap, f)) {
        die("cannot read", path);
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
}

/* Starts gpupoold (default heartbeat and lost timeouts) and waits for its port in the log. */
static void start(bench *b)
{
    char log[300], data[300];
    snprintf(log, sizeof(log), "%s/gpupoold.log", b->dir);
    snprintf(data, sizeof(data), "%s/data", b->dir);
    b->pid = fork();
    if (b->pid == 0) {
        FILE *f = freopen(log, "w", stderr);
        (void)f;
        execl(b->gpupoold, b->gpupoold, "--data-dir", data, "--listen", "127.0.0.1:0",
              "--http-threads", "64", "--api-rate-limit", "0", "--store-url",
              b->store_url ? b->store_url : "", (char *)NULL);
        _exit(127);
    }
    gpupoold_pid = b->pid;
    for (int i = 0; i < 1200; i++) {
        sleep_ms(50);
        FILE *f = fopen(log, "r");
        char line[1024];
        while (f && fgets(line, sizeof(line), f)) {
            const char *p = strstr(line, "listening=127.0.0.1:");
            if (p) {
                snprintf(b->url, sizeof(b->url), "http://127.0.0.1:%d", atoi(p + 20));
            }
        }
        if (f) {
            fclose(f);
        }
        if (b->url[0]) {
            char path[320];
            snprintf(path, sizeof(path), "%s/admin.token", data);
            read_line(path, b->admin, sizeof(b->admin));
            snprintf(path, sizeof(path), "%s/join.token", data);
            read_line(path, b->join, sizeof(b->join));
            return;
        }
    }
    die("gpupoold did not start; see", log);
}

static void record(bench *b, int kind, double ms, bool ok)
{
    int ph = atomic_load(&b->phase);
    if (ph < 0) {
        return;
    }
    pthread_mutex_lock(&b->lat_lock);
    lat *l = &b->lats[ph][kind];
    if (!ok) {
        l->failed++;
    } else {
        if (l->n == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 1024;
            l->v = realloc(l->v, sizeof(*l->v) * (size_t)l->cap);
            if (!l->v) {
                die("out of memory", "latencies");
            }
        }
        l->v[l->n++] = ms;
    }
    pthread_mutex_unlock(&b->lat_lock);
}

/* One call (with key: an Idempotency-Key; with token: as that token, on a client made
 * without one); the status (0 when the call failed), the answer in *resp (caller frees) when
 * resp is not NULL. Timed into kind (-1: not timed). */
static int call_as(bench *b, gp_http_client *c, const char *token, const char *method,
                   const char *path, const char *body, const char *key, int kind, char **resp)
{
    char hdr[160], auth[200];
    const char *headers[4] = {NULL, NULL, NULL, NULL};
    int nh = 0;
    if (key) {
        snprintf(hdr, sizeof(hdr), "Idempotency-Key: %s", key);
        headers[nh++] = hdr;
    }
    if (b->minimal && !strcmp(method, "POST") && !strcmp(path, "/v1/jobs")) {
        headers[nh++] = "Prefer: return=minimal";
    }
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        headers[nh++] = auth;
    }
    int status = 0;
    char *out = NULL;
    gp_diag d;
    double t0 = now_s();
    if (gp_http_call(c, method, path, body, body ? strlen(body) : 0, nh ? headers : NULL, &status,
                     &out, NULL, &d) < 0) {
        status = 0;
    }
    if (kind >= 0) {
        record(b, kind, (now_s() - t0) * 1000, status >= 200 && status <= 299);
    }
    if (resp) {
        *resp = out;
    } else {
        free(out);
    }
    return status;
}

static int call(bench *b, gp_http_client *c, const char *method, const char *path, const char *body,
                const char *key, int kind, char **resp)
{
    return call_as(b, c, NULL, method, path, body, key, kind, resp);
}

/* POST (GET without a body); dies unless the status is 2xx. Returns the answer (caller
 * frees). */
static char *post(bench *b, gp_http_client *c, const char *path, const char *body, const char *key)
{
    char *resp = NULL;
    int status = call(b, c, body ? "POST" : "GET", path, body, key, -1, &resp);
    if (status < 200 || status > 299) {
        die(path, resp ? resp : "no answer");
    }
    return resp;
}

/* PUT body; dies unless the status is 2xx. */
static void put(bench *b, gp_http_client *c, const char *path, const char *body)
{
    char *resp = NULL;
    int status = call(b, c, "PUT", path, body, NULL, -1, &resp);
    if (status < 200 || status > 299) {
        die(path, resp ? resp : "no answer");
    }
    free(resp);
}

/* The first "cycle placed=P ... seconds=S" line of gpupoold's log after byte from with P > 0:
 * 1 with *placed and *seconds, else 0. */
static int logged_cycle(const bench *b, long from, int *placed, double *seconds)
{
    char log[300], line[1024];
    snprintf(log, sizeof(log), "%s/gpupoold.log", b->dir);
    FILE *f = fopen(log, "r");
    int found = 0;
    if (f && fseek(f, from, SEEK_SET) == 0) {
        while (!found && fgets(line, sizeof(line), f)) {
            const char *p = strstr(line, "cycle placed="), *t = strstr(line, "seconds=");
            found = p && t && (*placed = atoi(p + 13)) > 0;
            if (found) {
                *seconds = atof(t + 8);
            }
        }
    }
    if (f) {
        fclose(f);
    }
    return found;
}

static long log_size(const bench *b)
{
    char log[300];
    snprintf(log, sizeof(log), "%s/gpupoold.log", b->dir);
    FILE *f = fopen(log, "r");
    long n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        n = ftell(f);
    }
    if (f) {
        fclose(f);
    }
    return n;
}

static gp_http_client *client(bench *b, const char *token)
{
    gp_http_client *c;
    gp_diag d;
    if (gp_http_client_new(b->url, token, &c, &d) < 0) {
        die("client", d.msg);
    }
    return c;
}

/* gpupoold's memory: a "VmRSS" or "VmHWM" line of its /proc status, in MiB. */
static double proc_mib(const bench *b, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)b->pid);
    FILE *f = fopen(path, "r");
    double kib = -1;
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':') {
            kib = atof(line + strlen(key) + 1);
        }
    }
    if (f) {
        fclose(f);
    }
    return kib / 1024;
}

/* CPU time gpupoold has used so far (user + system, all its threads), in seconds; -1 when its
 * /proc stat cannot be read. */
static double proc_cpu_s(const bench *b)
{
    char path[64], line[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)b->pid);
    FILE *f = fopen(path, "r");
    bool got = f && fgets(line, sizeof(line), f);
    if (f) {
        fclose(f);
    }
    const char *p = got ? strrchr(line, ')') : NULL; /* the name may hold spaces */
    unsigned long long utime = 0, stime = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
                     &stime) != 2) {
        return -1;
    }
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

typedef struct worker {
    bench *b;
    int id;
    pthread_t t;
} worker;

/* The node's agent token from a registration's answer. */
static void keep_token(sim_node *n, const char *resp)
{
    const char *p = strstr(resp, "\"token\":\"");
    if (!p) {
        die("registration answer without a token", resp);
    }
    snprintf(n->token, sizeof(n->token), "%.*s", (int)strcspn(p + 9, "\""), p + 9);
}

static void *register_nodes(void *arg)
{
    worker *w = arg;
    gp_http_client *c = client(w->b, w->b->join);
    char body[4096];
    for (int n = w->id; n < w->b->nodes; n += w->b->clients) {
        int len = snprintf(body, sizeof(body),
                           "{\"name\":\"node-%d\",\"cpu_milli\":128000,\"memory_mib\":1048576,"
                           "\"gpus\":[",
                           n);
        for (int g = 0; g < 8; g++) {
            len += snprintf(body + len, sizeof(body) - (size_t)len,
                            "%s{\"uuid\":\"GPU-%d-%d\",\"model\":\"A100-80GB\","
                            "\"memory_mib\":81920,\"numa\":%d,\"nvlink\":[%d]}",
                            g ? "," : "", n, g, g / 4, g ^ 1);
        }
        snprintf(body + len, sizeof(body) - (size_t)len, "]}");
        char *resp = post(w->b, c, "/v1/nodes", body, NULL);
        keep_token(&w->b->sim[n], resp);
        atomic_store(&w->b->sim[n].registered, true);
        free(resp);
    }
    gp_http_client_free(c);
    return NULL;
}

/* The heartbeat document of node n: its GPUs' readings and the replicas it was last told to run,
 * reported Running. Caller frees. */
static char *beat_doc(const sim_node *n)
{
    gp_wire_heartbeat hb;
    memset(&hb, 0, sizeof(hb));
    gp_wire_gpu gpus[8];
    gp_wire_replica reps[MAX_DESIRED];
    for (int g = 0; g < 8; g++) {
        gpus[g] = (gp_wire_gpu){.index = g,
                                .utilization = 0,
                                .memory_used_mib = 0,
                                .temperature_c = 40,
                                .power_w = 60,
                                .sm_clock_mhz = 1400,
                                .memory_clock_mhz = 1500,
                                .ecc_uncorrected = 0};
    }
    for (int i = 0; i < n->ndesired; i++) {
        reps[i] = n->desired[i];
    }
    hb.gpus = gpus;
    hb.ngpus = 8;
    hb.replicas = reps;
    hb.nreplicas = (size_t)n->ndesired;
    json_t *doc = gp_wire_heartbeat_encode(&hb);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text) {
        die("out of memory", "heartbeat");
    }
    return text;
}

/* Keeps the replicas the heartbeat's answer (the node's desired document) lists. */
static void read_desired(sim_node *n, const char *resp)
{
    json_t *doc = resp ? json_loads(resp, 0, NULL) : NULL;
    json_t *list = json_object_get(doc, "desired"), *v;
    size_t i;
    n->ndesired = 0;
    json_array_foreach(list, i, v)
    {
        if (n->ndesired < MAX_DESIRED) {
            gp_wire_replica *r = &n->desired[n->ndesired++];
            memset(r, 0, sizeof(*r));
            r->job = json_integer_value(json_object_get(v, "job"));
            r->replica = (int)json_integer_value(json_object_get(v, "replica"));
            r->epoch = json_integer_value(json_object_get(v, "epoch"));
            r->state = GP_WIRE_RUNNING;
            r->idle_ms = -1;
            r->util = -1;
            r->mem_mib = -1;
            r->ready = -1;
        }
    }
    json_decref(doc);
}

/* One beater: the nodes id, id + beaters, ...; node k of N is due at start + k * interval / N,
 * then every interval. */
static void *beat_nodes(void *arg)
{
    worker *w = arg;
    bench *b = w->b;
    gp_http_client *c = client(b, NULL); /* each call carries its node's token */
    double *due = calloc((size_t)b->nodes, sizeof(*due)), t0 = now_s(),
           iv = b->heartbeat_ms / 1000.0;
    double *last = calloc((size_t)b->nodes, sizeof(*last));
    for (int n = w->id; n < b->nodes; n += b->beaters) {
        due[n] = t0 + iv * n / b->nodes;
    }
    while (!atomic_load(&b->stop_beats)) {
        int next = -1;
        for (int n = w->id; n < b->nodes; n += b->beaters) {
            if (atomic_load(&b->sim[n].registered) && !atomic_load(&b->sim[n].silent) &&
                (next < 0 || due[n] < due[next])) {
                next = n;
            }
        }
        if (next < 0) {
            sleep_ms(50);
            continue;
        }
        double wait = due[next] - now_s();
        if (wait > 0) {
            sleep_ms((long)(wait * 1000) + 1);
            continue;
        }
        long gap = last[next] > 0 ? (long)((now_s() - last[next]) * 1000) : 0;
        if (gap > atomic_load(&b->gap_max_ms) && atomic_load(&b->phase) >= 0) {
            atomic_store(&b->gap_max_ms, gap);
        }
        last[next] = now_s();
        char path[96], *resp = NULL, *doc = beat_doc(&b->sim[next]);
        snprintf(path, sizeof(path), "/v1/nodes/node-%d/heartbeat", next);
        int status = call_as(b, c, b->sim[next].token, "POST", path, doc, NULL, K_HEARTBEAT, &resp);
        if (status == 200) {
            read_desired(&b->sim[next], resp);
        }
        free(resp);
        free(doc);
        atomic_fetch_add(&b->beats_sent, 1);
        /* a beater that fell behind beats each node as often as it can, in turn */
        due[next] = due[next] + iv > now_s() ? due[next] + iv : now_s();
    }
    gp_http_client_free(c);
    free(due);
    free(last);
    return NULL;
}

/* The prober: every 100 ms a page of pending jobs, a node, and a small submit, each timed. */
static void *probe(void *arg)
{
    worker *w = arg;
    bench *b = w->b;
    gp_http_client *admin = client(b, b->admin), *user = client(b, b->prober);
    char path[96], body[384], key[64];
    for (int i = 0; !atomic_load(&b->stop_probe); i++) {
        call(b, admin, "GET", "/v1/jobs?state=Pending&limit=100", NULL, NULL, K_LIST, NULL);
        snprintf(path, sizeof(path), "/v1/nodes/node-%d", (i * 7919) % b->nodes);
        call(b, admin, "GET", path, NULL, NULL, K_NODE, NULL);
        snprintf(body, sizeof(body),
                 "{\"name\":\"probe-%d\",\"command\":[\"sleep\",\"3600\"],"
                 "\"resources\":{\"gpu_milli\":100,\"gpu_memory_mib\":1024,"
                 "\"cpu_milli\":100,\"memory_mib\":256}}",
                 i);
        snprintf(key, sizeof(key), "probe-%d", i);
        call(b, user, "POST", "/v1/jobs", body, key, K_SUBMIT, NULL);
        sleep_ms(100);
    }
    gp_http_client_free(admin);
    gp_http_client_free(user);
    return NULL;
}

static void *submit_jobs(void *arg)
{
    worker *w = arg;
    gp_http_client *c = client(w->b, w->b->user);
    char body[512], key[64];
    for (int j = w->id; j < w->b->jobs; j += w->b->clients) {
        /* A mix the pool can hold in full: one job in 8 takes a whole GPU, the rest a quarter. */
        if (j % 8 == 0) {
            snprintf(body, sizeof(body),
                     "{\"name\":\"job-%d\",\"command\":[\"sleep\",\"3600\"],"
                     "\"resources\":{\"gpus\":1,\"cpu_milli\":4000,\"memory_mib\":16384}}",
                     j);
        } else {
            snprintf(body, sizeof(body),
                     "{\"name\":\"job-%d\",\"command\":[\"sleep\",\"3600\"],"
                     "\"resources\":{\"gpu_milli\":250,\"gpu_memory_mib\":10240,"
                     "\"cpu_milli\":1000,\"memory_mib\":4096}}",
                     j);
        }
        snprintf(key, sizeof(key), "bench-%d", j);
        free(post(w->b, c, "/v1/jobs", body, key));
    }
    gp_http_client_free(c);
    return NULL;
}

static double run_workers(bench *b, void *(*fn)(void *))
{
    worker *w = calloc((size_t)b->clients, sizeof(*w));
    double t0 = now_s();
    for (int i = 0; i < b->clients; i++) {
        w[i] = (worker){b, i, 0};
        pthread_create(&w[i].t, NULL, fn, &w[i]);
    }
    for (int i = 0; i < b->clients; i++) {
        pthread_join(w[i].t, NULL);
    }
    free(w);
    return now_s() - t0;
}

/* The benchmark's own jobs (job-N, not the prober's) in state, on one page (the list is
 * filtered by the server, at most 1000); -1 when the answer did not come. */
static int count_state(bench *b, gp_http_client *c, const char *state)
{
    char path[96], *resp = NULL;
    snprintf(path, sizeof(path), "/v1/jobs?state=%s&limit=1000", state);
    int status = call(b, c, "GET", path, NULL, NULL, -1, &resp);
    json_t *doc = status == 200 ? json_loads(resp, 0, NULL) : NULL, *v;
    free(resp);
    if (!doc) {
        return -1;
    }
    int n = 0;
    size_t i;
    json_array_foreach(json_object_get(doc, "items"), i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        n += name && strncmp(name, "job-", 4) == 0;
    }
    json_decref(doc);
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_latencies(bench *b)
{
    for (int ph = 0; ph < NPHASES; ph++) {
        for (int k = 0; k < NKINDS; k++) {
            lat *l = &b->lats[ph][k];
            if (l->n + l->failed == 0) {
                continue;
            }
            qsort(l->v, (size_t)l->n, sizeof(*l->v), cmp_double);
            double p50 = l->n ? l->v[(l->n - 1) / 2] : 0;
            double p99 = l->n ? l->v[(int)((l->n - 1) * 0.99)] : 0;
            double mx = l->n ? l->v[l->n - 1] : 0;
            printf("ctl_latency store=%s nodes=%d phase=%s kind=%s n=%d failed=%d p50_ms=%.1f "
                   "p99_ms=%.1f max_ms=%.1f\n",
                   b->store, b->nodes, phase_names[ph], kind_names[k], l->n, l->failed, p50, p99,
                   mx);
            free(l->v);
        }
    }
}

static void parse(bench *b, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cycle")) {
            b->cycle = 1;
            continue;
        }
        if (!strcmp(argv[i], "--minimal")) {
            b->minimal = 1;
            continue;
        }
        if (!strcmp(argv[i], "--submit-only")) {
            b->submit_only = 1;
            continue;
        }
        if (i + 1 == argc) {
            die("missing value of", argv[i]);
        }
        const char *v = argv[++i];
        if (!strcmp(argv[i - 1], "--gpupoold")) {
            b->gpupoold = v;
        } else if (!strcmp(argv[i - 1], "--nodes")) {
            b->nodes = atoi(v);
        } else if (!strcmp(argv[i - 1], "--jobs")) {
            b->jobs = atoi(v);
        } else if (!strcmp(argv[i - 1], "--clients")) {
            b->clients = atoi(v);
        } else if (!strcmp(argv[i - 1], "--store-url")) {
            b->store_url = v;
        } else if (!strcmp(argv[i - 1], "--lose")) {
            b->lose = atoi(v);
        } else if (!strcmp(argv[i - 1], "--heartbeat-ms")) {
            b->heartbeat_ms = atoi(v);
        } else if (!strcmp(argv[i - 1], "--beaters")) {
            b->beaters = atoi(v);
        } else {
            die("unknown flag", argv[i - 1]);
        }
    }
    if (!b->gpupoold || b->nodes < 1 || b->jobs < 1 || b->clients < 1 || b->lose < 0 ||
        b->lose >= b->nodes || b->heartbeat_ms < 10 || b->beaters < 1) {
        die("usage", "ctl_bench --gpupoold PATH [--nodes N] [--jobs J] [--clients C] "
                     "[--store-url URL] [--cycle] [--lose L] [--heartbeat-ms MS] [--beaters T] "
                     "[--submit-only]");
    }
}

/* A user token of tenant name (created; with quota, that quota) into out. */
static void make_user(bench *b, gp_http_client *admin, const char *name, const char *quota,
                      char *out, size_t cap)
{
    char body[256];
    snprintf(body, sizeof(body), "{\"name\":\"%s\"%s%s}", name, quota ? ",\"quota\":" : "",
             quota ? quota : "");
    free(post(b, admin, "/v1/tenants", body, NULL));
    snprintf(body, sizeof(body), "{\"name\":\"%s\",\"role\":\"user\",\"tenant\":\"%s\"}", name,
             name);
    char *tok = post(b, admin, "/v1/tokens", body, NULL);
    const char *p = strstr(tok, "\"token\":\"");
    if (!p) {
        die("token", tok);
    }
    snprintf(out, cap, "%.*s", (int)strcspn(p + 9, "\""), p + 9);
    free(tok);
}

/* A wait loop's pause of ms; ends the benchmark when gpupoold has exited meanwhile (a leader
 * that lost its lease, a crash), naming how and keeping its log. */
static void wait_tick(bench *b, int ms)
{
    sleep_ms(ms);
    int st;
    if (waitpid(b->pid, &st, WNOHANG) == b->pid) {
        gpupoold_pid = 0;
        char why[400];
        snprintf(why, sizeof(why), "%s %d; its log: %s/gpupoold.log",
                 WIFEXITED(st) ? "exit status" : "signal",
                 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), b->dir);
        die("gpupoold exited", why);
    }
}

/* The tenant "bench" of the jobs (with --cycle a quota of one GPU) and the prober's own tenant,
 * so its submits count against no limit of the jobs'. */
static void setup_tenant(bench *b, gp_http_client *admin)
{
    /* On PostgreSQL the controller takes the leader's lease after it listens; until then it is a
     * follower (reads answered, writes 503 "no leader yet"): /readyz says its role. */
    for (int i = 0; i < 1200; i++) {
        char *resp = NULL;
        int status = call(b, admin, "GET", "/readyz", NULL, NULL, -1, &resp);
        bool leads = status == 200 && resp && strstr(resp, "\"role\":\"leader\"");
        free(resp);
        if (leads) {
            break;
        }
        wait_tick(b, 50);
    }
    make_user(b, admin, "bench", b->cycle ? "{\"gpus\":1}" : NULL, b->user, sizeof(b->user));
    make_user(b, admin, "probe", NULL, b->prober, sizeof(b->prober));
}

/* Waits (15 minutes at most) until none of the benchmark's jobs is pending: the count left. */
static int wait_placed(bench *b, gp_http_client *admin, double t0)
{
    int left = -1;
    while (now_s() - t0 < 900 && (left = count_state(b, admin, "Pending")) != 0) {
        wait_tick(b, 50);
    }
    return left;
}

/* The lifted quota's backlog: the first cycle's figure and the time until none is pending. */
static void backlog(bench *b, gp_http_client *admin)
{
    sleep_ms(2000); /* the cycles that found the quota full are over */
    long from = log_size(b);
    atomic_store(&b->phase, PH_BACKLOG);
    put(b, admin, "/v1/tenants/bench", "{\"name\":\"bench\"}"); /* no quota */
    double t0 = now_s(), cyc = 0;
    int placed = 0;
    while (now_s() - t0 < 1800 && !logged_cycle(b, from, &placed, &cyc)) {
        wait_tick(b, 50);
    }
    int left = wait_placed(b, admin, t0);
    printf("ctl_schedule store=%s pending_left=%d seconds=%.3f\n", b->store, left, now_s() - t0);
    if (placed > 0) {
        printf("ctl_cycle store=%s pending=%d nodes=%d placed=%d seconds=%.3f\n", b->store, b->jobs,
               b->nodes, placed, cyc);
    }
    if (left > 0) {
        char *resp = post(b, admin, "/v1/jobs?state=Pending&limit=1", NULL, NULL);
        const char *r = strstr(resp, "\"reason\":");
        fprintf(stderr, "ctl_bench: still pending, e.g. %.200s\n", r ? r : resp);
        free(resp);
    }
    fflush(stdout);
}

/* Whether node k's document says it holds nothing (its jobs went elsewhere). */
static bool node_empty(bench *b, gp_http_client *admin, int k)
{
    char path[64], *resp = NULL;
    snprintf(path, sizeof(path), "/v1/nodes/node-%d", k);
    int status = call(b, admin, "GET", path, NULL, NULL, -1, &resp);
    bool empty = status == 200 && strstr(resp, "\"state\":\"NotReady\"") &&
                 strstr(resp, "\"allocated\":{\"gpus\":0,");
    free(resp);
    return empty;
}

/* The heartbeats of nodes [0, lose) stop: until the controller has moved their jobs. */
static void loss(bench *b, gp_http_client *admin)
{
    atomic_store(&b->phase, PH_LOSS);
    for (int k = 0; k < b->lose; k++) {
        atomic_store(&b->sim[k].silent, true);
    }
    double t0 = now_s();
    int seen = 0;
    while (now_s() - t0 < 900 &&
           !(seen = node_empty(b, admin, 0) && node_empty(b, admin, b->lose - 1))) {
        wait_tick(b, 500);
    }
    int left = seen ? wait_placed(b, admin, t0) : -1;
    printf("ctl_loss store=%s nodes=%d of=%d lost_seen=%d pending_left=%d seconds=%.3f\n", b->store,
           b->lose, b->nodes, seen, left, now_s() - t0);
    fflush(stdout);
}

/* The sum of the samples of the controller's metric family (the line's start up to its labels,
 * "gpupool_jobs{") whose labels hold needle: 0 when none (*found false), -1 when the metrics
 * cannot be read. */
static long metric_sum(bench *b, gp_http_client *admin, const char *family, const char *needle,
                       bool *found)
{
    *found = false;
    char *resp = NULL;
    if (call(b, admin, "GET", "/metrics", NULL, NULL, -1, &resp) != 200) {
        free(resp);
        return -1;
    }
    long n = 0;
    char *save = NULL;
    for (char *line = strtok_r(resp, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *sp = strrchr(line, ' ');
        if (strncmp(line, family, strlen(family)) == 0 && strstr(line, needle) && sp) {
            n += atol(sp + 1);
            *found = true;
        }
    }
    free(resp);
    return n;
}

/* Every job in state, from the controller's metrics (gpupool_jobs{state=...}); -1 when they
 * cannot be read. */
static long count_all(bench *b, gp_http_client *admin, const char *state)
{
    char needle[64];
    snprintf(needle, sizeof(needle), "state=\"%s\"", state);
    bool found;
    return metric_sum(b, admin, "gpupool_jobs{", needle, &found);
}

static void print_rss(bench *b, gp_http_client *admin, const char *at)
{
    long sched = count_all(b, admin, "Scheduled"), run = count_all(b, admin, "Running");
    printf("ctl_rss store=%s nodes=%d at=%s pending=%ld running=%ld mib=%.0f\n", b->store, b->nodes,
           at, count_all(b, admin, "Pending"), sched < 0 || run < 0 ? -1 : sched + run,
           proc_mib(b, strcmp(at, "peak") == 0 ? "VmHWM" : "VmRSS"));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static bench b = {.nodes = 1000,
                      .jobs = 20000,
                      .clients = 8,
                      .heartbeat_ms = 1000,
                      .beaters = 32,
                      .phase = -1};
    parse(&b, argc, argv);
    b.store = b.store_url && strncmp(b.store_url, "postgres", 8) == 0 ? "postgresql" : "sqlite";
    b.sim = calloc((size_t)b.nodes, sizeof(*b.sim));
    pthread_mutex_init(&b.lat_lock, NULL);
    snprintf(b.dir, sizeof(b.dir), "/tmp/gpupool-bench.XXXXXX");
    if (!b.sim || !mkdtemp(b.dir)) {
        die("setup", strerror(errno));
    }
    gp_http_client_global_init();
    start(&b);
    gp_http_client *admin = client(&b, b.admin);
    setup_tenant(&b, admin);

    worker *beaters = calloc((size_t)b.beaters, sizeof(*beaters)), prober = {&b, 0, 0};
    for (int i = 0; i < b.beaters; i++) { /* each node beats once registered */
        beaters[i] = (worker){&b, i, 0};
        pthread_create(&beaters[i].t, NULL, beat_nodes, &beaters[i]);
    }
    double reg = run_workers(&b, register_nodes);
    printf("ctl_register store=%s nodes=%d gpus=%d seconds=%.3f\n", b.store, b.nodes, b.nodes * 8,
           reg);
    fflush(stdout);
    long beats0 = atomic_load(&b.beats_sent);
    double tb0 = now_s();
    atomic_store(&b.phase, PH_SUBMIT);
    bool said;
    long groups0 = metric_sum(&b, admin, "gpupool_commit_groups_total", "", &said);
    long cycles0 = metric_sum(&b, admin, "gpupool_scheduler_cycles_total", "", &said);
    double cpu0 = proc_cpu_s(&b);
    pthread_create(&prober.t, NULL, probe, &prober);
    double sub = run_workers(&b, submit_jobs);
    printf("ctl_submit store=%s jobs=%d clients=%d nodes=%d seconds=%.3f jobs_per_s=%.0f "
           "answer=%s\n",
           b.store, b.jobs, b.clients, b.nodes, sub, b.jobs / sub, b.minimal ? "minimal" : "full");
    long groups = metric_sum(&b, admin, "gpupool_commit_groups_total", "", &said) - groups0;
    long cycles = metric_sum(&b, admin, "gpupool_scheduler_cycles_total", "", &said) - cycles0;
    double cpu = proc_cpu_s(&b) - cpu0;
    printf("ctl_commit store=%s phase=submit groups=%ld jobs_per_group=%.2f cycles=%ld "
           "server_cpu_us_per_job=%.0f\n",
           b.store, groups, groups > 0 ? b.jobs / (double)groups : 0.0, cycles,
           cpu0 >= 0 ? cpu * 1e6 / b.jobs : -1.0);
    fflush(stdout);
    print_rss(&b, admin, "submitted");
    if (!b.cycle && !b.submit_only) {
        double t0 = now_s();
        int left = wait_placed(&b, admin, t0);
        printf("ctl_schedule store=%s pending_left=%d seconds=%.3f\n", b.store, left, now_s() - t0);
    } else if (!b.submit_only) {
        backlog(&b, admin);
        print_rss(&b, admin, "placed");
        if (b.lose > 0) {
            loss(&b, admin);
        }
    }
    atomic_store(&b.stop_probe, true);
    pthread_join(prober.t, NULL);
    long beats = atomic_load(&b.beats_sent) - beats0;
    double tb = now_s() - tb0;
    atomic_store(&b.stop_beats, true);
    for (int i = 0; i < b.beaters; i++) {
        pthread_join(beaters[i].t, NULL);
    }
    free(beaters);
    /* how the controller applied them, from its start (-1: it does not say) */
    long in_memory = metric_sum(&b, admin, "gpupool_heartbeats_total{", "path=\"memory\"", &said);
    in_memory = said ? in_memory : -1;
    long in_store = metric_sum(&b, admin, "gpupool_heartbeats_total{", "path=\"store\"", &said);
    in_store = said ? in_store : -1;
    printf("ctl_beats store=%s nodes=%d interval_ms=%d beaters=%d sent=%ld per_s=%.0f "
           "target_per_s=%.0f gap_max_ms=%ld applied_memory=%ld applied_store=%ld\n",
           b.store, b.nodes, b.heartbeat_ms, b.beaters, beats, beats / tb,
           (b.nodes - b.lose) * 1000.0 / b.heartbeat_ms, atomic_load(&b.gap_max_ms), in_memory,
           in_store);
    print_rss(&b, admin, "peak");
    print_latencies(&b);
    fflush(stdout);
    gp_http_client_free(admin);
    wait_tick(&b, 0); /* it ran to the end */
    kill(b.pid, SIGTERM);
    waitpid(b.pid, NULL, 0);
    gp_http_client_global_cleanup();
    free(b.sim);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b.dir);
    return system(cmd) == 0 ? 0 : 1;
}
