/*
 * ctl_bench: the controller end to end on loopback. Starts a real gpupoold (its own temporary
 * data directory; its store SQLite there with synchronous=FULL, or --store-url, an empty
 * PostgreSQL database), registers N simulated nodes x 8 GPUs through the API, then C concurrent
 * clients submit J jobs over HTTP, and it measures:
 *   - accepted jobs/s: J / the time from the first submit to the last answer (every 2xx answer
 *     means the job is committed);
 *   - time to schedule: from the last answer until no job that fits is Pending.
 * With --cycle the tenant's quota is one GPU while the jobs are submitted, so all but one wait;
 * then the quota is lifted and the next scheduling cycle finds J pending jobs on N nodes: its
 * duration (input built, decided, committed to the store and applied) is gpupoold's own figure,
 * from its log line "cycle placed=... seconds=...".
 * The nodes are registered once and never heartbeat: gpupoold runs with heartbeat and lost
 * timeouts of an hour so they stay ready however long the run takes.
 * Prints machine-readable lines for bench/ctl_report.py:
 *   ctl_register store=sqlite nodes=1000 gpus=8000 seconds=...
 *   ctl_submit store=sqlite jobs=20000 clients=8 seconds=... jobs_per_s=...
 *   ctl_schedule store=sqlite pending_left=0 seconds=...
 *   ctl_cycle store=sqlite pending=100000 nodes=10000 placed=... seconds=...   (--cycle)
 * Usage: ctl_bench --gpupoold PATH [--nodes 1000] [--jobs 20000] [--clients 8]
 *                  [--store-url URL] [--cycle]
 */
#include "net/http_client.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct bench {
    const char *gpupoold;
    const char *store_url; /* NULL: SQLite in the data directory */
    const char *store;     /* "sqlite" or "postgresql", for the output */
    int nodes, jobs, clients, cycle;
    char dir[256];
    char url[64];
    char admin[128], join[128], user[128];
    pid_t pid;
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

/* Starts gpupoold and waits for its port in the log. */
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
              "--http-threads", "16", "--api-rate-limit", "0", "--nodes-heartbeat-timeout", "1h",
              "--nodes-lost-timeout", "1h", "--store-url", b->store_url ? b->store_url : "",
              (char *)NULL);
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

/* POST body; dies unless the status is 2xx. Returns the answer (caller frees). */
static char *post(gp_http_client *c, const char *path, const char *body, const char *key)
{
    char hdr[160];
    const char *headers[] = {hdr, NULL};
    snprintf(hdr, sizeof(hdr), "Idempotency-Key: %s", key ? key : "");
    int status;
    char *resp = NULL;
    gp_diag d;
    if (gp_http_call(c, body ? "POST" : "GET", path, body, body ? strlen(body) : 0,
                     key ? headers : NULL, &status, &resp, NULL, &d) < 0) {
        die("call", d.msg);
    }
    if (status < 200 || status > 299) {
        die(path, resp);
    }
    return resp;
}

/* PUT body; dies unless the status is 2xx. */
static void put(gp_http_client *c, const char *path, const char *body)
{
    int status;
    char *resp = NULL;
    gp_diag d;
    if (gp_http_call(c, "PUT", path, body, strlen(body), NULL, &status, &resp, NULL, &d) < 0) {
        die("call", d.msg);
    }
    if (status < 200 || status > 299) {
        die(path, resp);
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

typedef struct worker {
    bench *b;
    int id;
    pthread_t t;
} worker;

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
        free(post(c, "/v1/nodes", body, NULL));
    }
    gp_http_client_free(c);
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
        free(post(c, "/v1/jobs", body, key));
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

/* Pending jobs left (reads one page: the list is filtered and counted by the server); -1 when
 * the answer did not come (a long cycle holds the state: reads wait for it). */
static int pending(gp_http_client *c)
{
    int status;
    char *resp = NULL;
    gp_diag d;
    if (gp_http_call(c, "GET", "/v1/jobs?state=Pending&limit=1000", NULL, 0, NULL, &status, &resp,
                     NULL, &d) < 0 ||
        status != 200) {
        free(resp);
        return -1;
    }
    int n = 0;
    for (const char *p = resp; (p = strstr(p, "\"state\":\"Pending\"")); p++) {
        n++;
    }
    free(resp);
    return n;
}

int main(int argc, char **argv)
{
    bench b = {.nodes = 1000, .jobs = 20000, .clients = 8};
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 == argc && strcmp(argv[i], "--cycle") != 0) {
            die("missing value of", argv[i]);
        }
        if (!strcmp(argv[i], "--gpupoold")) {
            b.gpupoold = argv[i + 1];
        } else if (!strcmp(argv[i], "--nodes")) {
            b.nodes = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--jobs")) {
            b.jobs = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--clients")) {
            b.clients = atoi(argv[i + 1]);
        } else if (!strcmp(argv[i], "--store-url")) {
            b.store_url = argv[i + 1];
        } else if (!strcmp(argv[i], "--cycle")) {
            b.cycle = 1;
            i--; /* a flag without a value */
        } else {
            die("unknown flag", argv[i]);
        }
    }
    if (!b.gpupoold || b.nodes < 1 || b.jobs < 1 || b.clients < 1) {
        die("usage", "ctl_bench --gpupoold PATH [--nodes N] [--jobs J] [--clients C] "
                     "[--store-url URL] [--cycle]");
    }
    b.store = b.store_url && strncmp(b.store_url, "postgres", 8) == 0 ? "postgresql" : "sqlite";
    snprintf(b.dir, sizeof(b.dir), "/tmp/gpupool-bench.XXXXXX");
    if (!mkdtemp(b.dir)) {
        die("mkdtemp", strerror(errno));
    }
    gp_http_client_global_init();
    start(&b);
    gp_http_client *admin = client(&b, b.admin);
    free(post(admin, "/v1/tenants",
              b.cycle ? "{\"name\":\"bench\",\"quota\":{\"gpus\":1}}" : "{\"name\":\"bench\"}",
              NULL));
    char *tok = post(admin, "/v1/tokens",
                     "{\"name\":\"bench\",\"role\":\"user\",\"tenant\":\"bench\"}", NULL);
    const char *p = strstr(tok, "\"token\":\"");
    if (!p) {
        die("token", tok);
    }
    snprintf(b.user, sizeof(b.user), "%.*s", (int)strcspn(p + 9, "\""), p + 9);
    free(tok);

    double reg = run_workers(&b, register_nodes);
    printf("ctl_register store=%s nodes=%d gpus=%d seconds=%.3f\n", b.store, b.nodes, b.nodes * 8,
           reg);
    fflush(stdout);
    double sub = run_workers(&b, submit_jobs);
    printf("ctl_submit store=%s jobs=%d clients=%d seconds=%.3f jobs_per_s=%.0f\n", b.store, b.jobs,
           b.clients, sub, b.jobs / sub);
    fflush(stdout);
    long from = 0;
    if (b.cycle) {
        sleep_ms(2000); /* the cycles that found the quota full are over */
        from = log_size(&b);
        put(admin, "/v1/tenants/bench", "{\"name\":\"bench\"}"); /* no quota */
    }
    double t_last = now_s();
    int left = -1, placed = 0;
    double cyc = 0;
    /* --cycle: the cycle's own line first (reads wait while it runs), then the list. */
    while (b.cycle && now_s() - t_last < 1800 && !logged_cycle(&b, from, &placed, &cyc)) {
        sleep_ms(50);
    }
    while (now_s() - t_last < 1800 && (left = pending(admin)) != 0) {
        sleep_ms(10);
    }
    printf("ctl_schedule store=%s pending_left=%d seconds=%.3f\n", b.store, left, now_s() - t_last);
    if (placed > 0) {
        printf("ctl_cycle store=%s pending=%d nodes=%d placed=%d seconds=%.3f\n", b.store, b.jobs,
               b.nodes, placed, cyc);
    }
    if (left > 0) {
        char *resp = post(admin, "/v1/jobs?state=Pending&limit=1", NULL, NULL);
        const char *r = strstr(resp, "\"reason\":");
        fprintf(stderr, "ctl_bench: still pending, e.g. %.200s\n", r ? r : resp);
        free(resp);
    }
    fflush(stdout);
    gp_http_client_free(admin);
    kill(b.pid, SIGTERM);
    waitpid(b.pid, NULL, 0);
    gp_http_client_global_cleanup();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b.dir);
    return system(cmd) == 0 ? 0 : 1;
}
