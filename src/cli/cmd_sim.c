/*
 * gpupool sim: replays pod traces through placement policies over a grid of seeds and prints one
 * CSV row per replay; with --out, also writes the report files (sim/report.h).
 *
 * Options come from one table (name, value, default, setter, help) that drives getopt_long, the
 * defaults (each default string goes through the same setter as a command-line value) and the
 * --help text, so the three cannot disagree.
 *
 * Replays run in a pool of --jobs threads. Every trace is read once and shared read-only;
 * gp_replay_run shares nothing between calls. Each replay has a fixed slot in the grid (trace,
 * then policy, then seed), so the output does not depend on the number of threads: workers take
 * the next slot under a mutex, and the main thread prints row i as soon as slots 0..i are done.
 * The first failure stops new replays from starting; the rows already printed stay printed.
 */
#include "cli/cli.h"

#include "gpupool/placement.h"
#include "sim/replay.h"
#include "sim/report.h"
#include "sim/trace.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SEEDS      100000
#define MAX_JOBS       1024
#define MAX_INFLATE    100.0
#define TRACE_NAME_CAP 256
#define FIRST_KEY      256 /* getopt_long value of options[0]; above every short option */

/* The effective configuration; immutable once parsed. */
typedef struct sim_config {
    const char *nodes;
    const char **pods; /* argv strings, in argument order */
    int npods;
    const char **policies; /* static names from gp_policy_names(), in output order */
    int npolicies;
    uint64_t *seeds; /* ascending, distinct */
    int nseeds;
    double inflate;
    gp_tie_mode ties;
    int jobs;
    const char *out;
    int list_policies;
    int help;
} sim_config;

typedef int (*option_fn)(sim_config *cfg, const char *arg, gp_diag *d);

typedef struct sim_option {
    const char *name;
    const char *metavar; /* NULL: a flag without a value */
    const char *dflt;    /* applied through set() before the command line; NULL: none */
    option_fn set;
    const char *help;
} sim_option;

/* Parses a decimal uint64 from [s, end): digits only, no sign, no blanks. */
static int parse_u64(const char *s, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    if (s == end) {
        return GP_EINVAL;
    }
    for (; s < end; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) {
            return GP_EINVAL;
        }
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static int set_nodes(sim_config *cfg, const char *arg, gp_diag *d)
{
    (void)d;
    cfg->nodes = arg;
    return 0;
}

static int add_pods(sim_config *cfg, const char *arg, gp_diag *d)
{
    const char **p = realloc(cfg->pods, sizeof(*p) * (size_t)(cfg->npods + 1));
    if (!p) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    p[cfg->npods++] = arg;
    cfg->pods = p;
    return 0;
}

/* Appends name to list unless it is there already. */
static void add_unique(const char **list, int *n, const char *name)
{
    for (int i = 0; i < *n; i++) {
        if (list[i] == name) {
            return;
        }
    }
    list[(*n)++] = name;
}

static int unknown_policy(const char *tok, size_t len, gp_diag *d)
{
    int count;
    const char *const *names = gp_policy_names(&count);
    char valid[320] = "";
    size_t used = 0;
    for (int i = 0; i < count && used < sizeof(valid); i++) {
        int n = snprintf(valid + used, sizeof(valid) - used, "%s, ", names[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    return gp_diag_set(d, GP_EINVAL, "--policy: unknown policy \"%.*s\" (valid: %sor all)",
                       (int)(len < 100 ? len : 100), tok, valid);
}

/* NAME[,NAME...] or all; duplicates are dropped, the first occurrence keeps its place. */
static int set_policy(sim_config *cfg, const char *arg, gp_diag *d)
{
    int count;
    const char *const *names = gp_policy_names(&count);
    const char **list = malloc(sizeof(*list) * (size_t)(count > 0 ? count : 1));
    int n = 0;
    if (!list) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (const char *p = arg;; p++) {
        size_t len = strcspn(p, ",");
        int all = len == 3 && strncmp(p, "all", 3) == 0, found = all;
        for (int i = 0; i < count; i++) {
            if (all || (strlen(names[i]) == len && strncmp(p, names[i], len) == 0)) {
                add_unique(list, &n, names[i]);
                found = 1;
            }
        }
        if (!found) {
            free(list);
            return unknown_policy(p, len, d);
        }
        p += len;
        if (!*p) {
            break;
        }
    }
    free(cfg->policies);
    cfg->policies = list;
    cfg->npolicies = n;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Parses one item of --seeds, [p, end): N or A-B. */
static int seed_item(const char *arg, const char *p, const char *end, uint64_t *lo, uint64_t *hi,
                     gp_diag *d)
{
    const char *dash = memchr(p, '-', (size_t)(end - p));
    if (parse_u64(p, dash ? dash : end, lo) < 0 || (dash && parse_u64(dash + 1, end, hi) < 0)) {
        return gp_diag_set(d, GP_EINVAL,
                           "--seeds: malformed value \"%s\" (expected A-B, a comma list or a "
                           "number)",
                           arg);
    }
    if (!dash) {
        *hi = *lo;
    }
    if (*hi < *lo) {
        return gp_diag_set(d, GP_EINVAL, "--seeds: range \"%.*s\" in \"%s\" runs backwards",
                           (int)(end - p), p, arg);
    }
    return 0;
}

/* Appends lo..hi to *seeds (n of them so far), at most MAX_SEEDS in all. */
static int append_range(const char *arg, uint64_t lo, uint64_t hi, uint64_t **seeds, size_t *n,
                        gp_diag *d)
{
    if (hi - lo >= MAX_SEEDS || *n + (size_t)(hi - lo) + 1 > MAX_SEEDS) {
        return gp_diag_set(d, GP_EINVAL, "--seeds: \"%s\" names more than %d seeds", arg,
                           MAX_SEEDS);
    }
    uint64_t *grown = realloc(*seeds, sizeof(**seeds) * (*n + (size_t)(hi - lo) + 1));
    if (!grown) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    *seeds = grown;
    for (uint64_t s = lo;; s++) {
        grown[(*n)++] = s;
        if (s == hi) {
            return 0;
        }
    }
}

/* A-B, a comma list of numbers and ranges, or one number; kept sorted and distinct. */
static int set_seeds(sim_config *cfg, const char *arg, gp_diag *d)
{
    uint64_t *seeds = NULL;
    size_t n = 0;
    int rc = 0;
    for (const char *p = arg;; p++) {
        const char *end = p + strcspn(p, ",");
        uint64_t lo = 0, hi = 0;
        rc = seed_item(arg, p, end, &lo, &hi, d);
        if (rc == 0) {
            rc = append_range(arg, lo, hi, &seeds, &n, d);
        }
        if (rc < 0 || !*end) {
            break;
        }
        p = end;
    }
    if (rc < 0) {
        free(seeds);
        return rc;
    }
    qsort(seeds, n, sizeof(*seeds), cmp_u64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m == 0 || seeds[i] != seeds[m - 1]) {
            seeds[m++] = seeds[i];
        }
    }
    free(cfg->seeds);
    cfg->seeds = seeds;
    cfg->nseeds = (int)m;
    return 0;
}

static int set_inflate(sim_config *cfg, const char *arg, gp_diag *d)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (end == arg || *end || errno || !isfinite(v) || v <= 0.0 || v > MAX_INFLATE) {
        return gp_diag_set(d, GP_EINVAL,
                           "--inflate: malformed value \"%s\" (expected a number > 0 and <= %g)",
                           arg, MAX_INFLATE);
    }
    cfg->inflate = v;
    return 0;
}

static int set_ties(sim_config *cfg, const char *arg, gp_diag *d)
{
    if (strcmp(arg, "ordered") == 0) {
        cfg->ties = GP_TIES_ORDERED;
    } else if (strcmp(arg, "random") == 0) {
        cfg->ties = GP_TIES_RANDOM;
    } else {
        return gp_diag_set(d, GP_EINVAL,
                           "--ties: unknown value \"%s\" (expected ordered or random)", arg);
    }
    return 0;
}

static int set_jobs(sim_config *cfg, const char *arg, gp_diag *d)
{
    uint64_t v;
    if (parse_u64(arg, arg + strlen(arg), &v) < 0 || v < 1 || v > MAX_JOBS) {
        return gp_diag_set(d, GP_EINVAL,
                           "--jobs: malformed value \"%s\" (expected an integer 1..%d)", arg,
                           MAX_JOBS);
    }
    cfg->jobs = (int)v;
    return 0;
}

static int set_out(sim_config *cfg, const char *arg, gp_diag *d)
{
    if (!*arg) {
        return gp_diag_set(d, GP_EINVAL, "--out: empty directory name");
    }
    cfg->out = arg;
    return 0;
}

static int set_list(sim_config *cfg, const char *arg, gp_diag *d)
{
    (void)arg;
    (void)d;
    cfg->list_policies = 1;
    return 0;
}

static int set_help(sim_config *cfg, const char *arg, gp_diag *d)
{
    (void)arg;
    (void)d;
    cfg->help = 1;
    return 0;
}

static const sim_option options[] = {
    {"nodes", "FILE", NULL, set_nodes, "node list (openb_node_list_*.csv); required"},
    {"pods", "FILE", NULL, add_pods, "pod list (openb_pod_list_*.csv); required; repeatable"},
    {"policy", "NAME[,NAME...]|all", "all", set_policy, "placement policies, in output order"},
    {"seeds", "A-B|A,B,...|N", "42-51", set_seeds, "shuffle seeds"},
    {"inflate", "X", "1.3", set_inflate, "replay until the GPU request is X x the capacity"},
    {"ties", "ordered|random", "ordered", set_ties,
     "ties go to the first node of a per-seed order, or drawn anew"},
    {"jobs", "N", NULL, set_jobs, "replays run in parallel (default: the online CPUs)"},
    {"out", "DIR", NULL, set_out, "also write the report files into DIR (see below)"},
    {"list-policies", NULL, NULL, set_list, "print the policy names, one a line, and exit"},
    {"help", NULL, NULL, set_help, "print this help and exit"},
};

#define NOPTIONS ((int)(sizeof(options) / sizeof(options[0])))

static void usage(FILE *f)
{
    fputs("usage: gpupool sim --nodes FILE --pods FILE [--pods FILE ...] "
          "[--policy NAME[,NAME...]|all]\n"
          "                   [--seeds 42-51] [--inflate 1.3] [--jobs N] [--out DIR]\n"
          "       gpupool sim --list-policies\n\n"
          "Replays each pod trace on the nodes with each policy and seed, and prints one CSV row\n"
          "per replay, ordered by trace (as given), policy (as given) and seed (ascending):\n"
          "trace,policy,seed,unalloc_pct_at_100,unalloc_pct_at_130,placed,failed,wall_ms\n\n"
          "options:\n",
          f);
    for (int i = 0; i < NOPTIONS; i++) {
        const sim_option *o = &options[i];
        char left[64];
        snprintf(left, sizeof(left), "--%s%s%s", o->name, o->metavar ? " " : "",
                 o->metavar ? o->metavar : "");
        fprintf(f, "  %-28s %s", left, o->help);
        if (o->dflt) {
            fprintf(f, " (default: %s)", o->dflt);
        }
        fputc('\n', f);
    }
    int count;
    const char *const *names = gp_policy_names(&count);
    fputs("\npolicies:\n", f);
    for (int i = 0; i < count; i++) {
        const char *summary = gp_policy_summary(names[i]);
        fprintf(f, "  %-12s %s\n", names[i], summary ? summary : "");
    }
    fputs("\nWith --out DIR: summary.md (mean and sd over seeds per trace and policy),\n"
          "results.csv (the rows above), curves.csv (allocated vs arrived % after every\n"
          "arrival) and alloc-TRACE.svg (that curve, mean over seeds, one line per policy).\n"
          "Exit status: 0 done, 1 internal failure (memory, writing), 2 bad usage or input.\n",
          f);
}

static int config_init(sim_config *cfg, gp_diag *d)
{
    *cfg = (sim_config){0};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cfg->jobs = cpus < 1 ? 1 : cpus > MAX_JOBS ? MAX_JOBS : (int)cpus;
    for (int i = 0; i < NOPTIONS; i++) {
        if (options[i].dflt) {
            int rc = options[i].set(cfg, options[i].dflt, d);
            if (rc < 0) {
                return rc;
            }
        }
    }
    return 0;
}

static void config_fini(sim_config *cfg)
{
    free(cfg->pods);
    free(cfg->policies);
    free(cfg->seeds);
    *cfg = (sim_config){0};
}

/* Reports getopt_long's '?' (unknown option) or ':' (missing value). */
static int option_error(int c, char **argv, gp_diag *d)
{
    if (c == ':' && optopt >= FIRST_KEY && optopt < FIRST_KEY + NOPTIONS) {
        return gp_diag_set(d, GP_EINVAL, "--%s: missing value (see 'gpupool sim --help')",
                           options[optopt - FIRST_KEY].name);
    }
    if (c == ':') {
        return gp_diag_set(d, GP_EINVAL, "%s: missing value (see 'gpupool sim --help')",
                           argv[optind - 1]);
    }
    if (optopt >= FIRST_KEY && optopt < FIRST_KEY + NOPTIONS) {
        return gp_diag_set(d, GP_EINVAL, "--%s takes no value (see 'gpupool sim --help')",
                           options[optopt - FIRST_KEY].name);
    }
    if (optopt > 0 && optopt < FIRST_KEY) {
        return gp_diag_set(d, GP_EINVAL, "unknown option -%c (see 'gpupool sim --help')", optopt);
    }
    return gp_diag_set(d, GP_EINVAL, "unknown or ambiguous option %s (see 'gpupool sim --help')",
                       argv[optind - 1]);
}

static int parse_args(int argc, char **argv, sim_config *cfg, gp_diag *d)
{
    struct option longopts[NOPTIONS + 1];
    for (int i = 0; i < NOPTIONS; i++) {
        longopts[i] =
            (struct option){options[i].name, options[i].metavar ? required_argument : no_argument,
                            NULL, FIRST_KEY + i};
    }
    longopts[NOPTIONS] = (struct option){0};
    opterr = 0;
    optind = 1;
    for (;;) {
        int c = getopt_long(argc, argv, ":h", longopts, NULL);
        if (c == -1) {
            break;
        }
        if (c == 'h') {
            cfg->help = 1;
            continue;
        }
        if (c < FIRST_KEY || c >= FIRST_KEY + NOPTIONS) {
            return option_error(c, argv, d);
        }
        int rc = options[c - FIRST_KEY].set(cfg, optarg, d);
        if (rc < 0) {
            return rc;
        }
    }
    if (optind < argc) {
        return gp_diag_set(d, GP_EINVAL, "unexpected argument \"%s\" (see 'gpupool sim --help')",
                           argv[optind]);
    }
    return 0;
}

/* A pod trace with the shared node list, and its name in the output. */
typedef struct sim_trace {
    gp_trace trace;
    char name[TRACE_NAME_CAP];
} sim_trace;

/* The trace name of a pod file: the base name without ".csv" and without the
 * "openb_pod_list_" prefix (kept when nothing would be left). */
static void trace_name(const char *path, char *out, size_t cap)
{
    static const char prefix[] = "openb_pod_list_";
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 4 && strcmp(base + len - 4, ".csv") == 0) {
        len -= 4;
    }
    size_t plen = sizeof(prefix) - 1;
    if (len > plen && strncmp(base, prefix, plen) == 0) {
        base += plen;
        len -= plen;
    }
    if (len >= cap) {
        len = cap - 1;
    }
    memcpy(out, base, len);
    out[len] = '\0';
}

static void free_traces(sim_trace *traces, int n, gp_trace *nodes)
{
    for (int i = 0; traces && i < n; i++) {
        traces[i].trace.nodes = NULL; /* shared: freed with nodes */
        gp_trace_fini(&traces[i].trace);
    }
    free(traces);
    gp_trace_fini(nodes);
}

static int name_traces(const sim_config *cfg, sim_trace *traces, gp_diag *d)
{
    for (int i = 0; i < cfg->npods; i++) {
        trace_name(cfg->pods[i], traces[i].name, sizeof(traces[i].name));
        for (int j = 0; j < i; j++) {
            if (strcmp(traces[i].name, traces[j].name) == 0) {
                return gp_diag_set(d, GP_EINVAL, "--pods: %s and %s both give the trace name %s",
                                   cfg->pods[j], cfg->pods[i], traces[i].name);
            }
        }
    }
    return 0;
}

/* Reads the node list into nodes and every pod list into *out (nodes shared). */
static int load_traces(const sim_config *cfg, gp_trace *nodes, sim_trace **out, gp_diag *d)
{
    *out = NULL;
    sim_trace *traces = calloc((size_t)cfg->npods, sizeof(*traces));
    if (!traces) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    int rc = name_traces(cfg, traces, d);
    if (rc == 0) {
        rc = gp_trace_read_nodes(nodes, cfg->nodes, d);
    }
    for (int i = 0; rc == 0 && i < cfg->npods; i++) {
        traces[i].trace.nodes = nodes->nodes;
        traces[i].trace.nnodes = nodes->nnodes;
        rc = gp_trace_read_pods(&traces[i].trace, cfg->pods[i], d);
    }
    if (rc < 0) {
        free_traces(traces, cfg->npods, nodes);
        return rc;
    }
    *out = traces;
    return 0;
}

enum { RUN_DONE = 0, RUN_PENDING = 1 }; /* run states; a failed run holds its negative code */

/* The grid of replays and the state the workers share (under mu). */
typedef struct sim_pool {
    const sim_config *cfg;
    const sim_trace *traces;
    gp_sim_run *runs;
    int *state;
    int nruns;
    int keep_curve;
    pthread_mutex_t mu;
    pthread_cond_t changed; /* a run finished */
    int next;               /* the next run to start */
    int stop;               /* a run failed: start no more */
    int failed;             /* lowest failed run seen, or -1 */
    gp_diag fail;           /* why it failed */
} sim_pool;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void run_one(sim_pool *p, int i)
{
    gp_sim_run *run = &p->runs[i];
    int per_trace = p->cfg->npolicies * p->cfg->nseeds;
    gp_replay_params params = {.policy = run->policy,
                               .seed = run->seed,
                               .inflate = p->cfg->inflate,
                               .keep_curve = p->keep_curve,
                               .ties = p->cfg->ties};
    gp_diag d;
    gp_diag_clear(&d);
    int64_t t0 = now_ns();
    int rc = gp_replay_run(&p->traces[i / per_trace].trace, &params, &run->result, &d);
    run->wall_ms = (now_ns() - t0 + 500000) / 1000000;
    pthread_mutex_lock(&p->mu);
    p->state[i] = rc < 0 ? rc : RUN_DONE;
    if (rc < 0) {
        p->stop = 1;
        if (p->failed < 0 || i < p->failed) {
            p->failed = i;
            p->fail = d;
            p->fail.code = rc;
        }
    }
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->mu);
}

static void *worker(void *arg)
{
    sim_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int i = p->stop || p->next >= p->nruns ? -1 : p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i < 0) {
            return NULL;
        }
        run_one(p, i);
    }
}

/* Prints the rows in grid order as their runs finish; stops at the first run that failed. */
static void print_rows(sim_pool *p)
{
    for (int i = 0; i < p->nruns; i++) {
        pthread_mutex_lock(&p->mu);
        while (p->state[i] == RUN_PENDING && !p->stop) {
            pthread_cond_wait(&p->changed, &p->mu);
        }
        int st = p->state[i];
        pthread_mutex_unlock(&p->mu);
        if (st != RUN_DONE) {
            return;
        }
        gp_report_print_row(stdout, &p->runs[i]);
        fflush(stdout);
    }
}

/* Runs the grid on cfg->jobs threads (fewer if fewer could start; inline if none could). */
static void run_grid(sim_pool *p)
{
    gp_report_print_header(stdout);
    int jobs = p->cfg->jobs < p->nruns ? p->cfg->jobs : p->nruns;
    pthread_t *threads = malloc(sizeof(*threads) * (size_t)(jobs > 0 ? jobs : 1));
    int started = 0;
    while (threads && started < jobs && pthread_create(&threads[started], NULL, worker, p) == 0) {
        started++;
    }
    if (started == 0) {
        worker(p);
    }
    print_rows(p);
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
    }
    free(threads);
}

/* Fills the grid: runs in (trace, policy, seed) order, all pending. */
static int pool_init(sim_pool *p, const sim_config *cfg, const sim_trace *traces, gp_diag *d)
{
    *p = (sim_pool){.cfg = cfg, .traces = traces, .keep_curve = cfg->out != NULL, .failed = -1};
    size_t n = (size_t)cfg->npods * (size_t)cfg->npolicies * (size_t)cfg->nseeds;
    if (n > INT_MAX / 2) {
        return gp_diag_set(d, GP_EINVAL, "%zu replays are too many", n);
    }
    p->nruns = (int)n;
    p->runs = calloc(n ? n : 1, sizeof(*p->runs));
    p->state = malloc(sizeof(*p->state) * (n ? n : 1));
    if (!p->runs || !p->state) {
        free(p->runs);
        free(p->state);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (int i = 0; i < p->nruns; i++) {
        int s = i % cfg->nseeds, pol = i / cfg->nseeds % cfg->npolicies;
        p->runs[i].trace = traces[i / (cfg->nseeds * cfg->npolicies)].name;
        p->runs[i].policy = cfg->policies[pol];
        p->runs[i].seed = cfg->seeds[s];
        p->state[i] = RUN_PENDING;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->changed, NULL);
    return 0;
}

static void pool_fini(sim_pool *p)
{
    for (int i = 0; i < p->nruns; i++) {
        if (p->state[i] == RUN_DONE) {
            gp_replay_result_fini(&p->runs[i].result);
        }
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->changed);
    free(p->runs);
    free(p->state);
}

static int write_report(const sim_config *cfg, const sim_pool *p, gp_diag *d)
{
    const char **names = malloc(sizeof(*names) * (size_t)cfg->npods);
    if (!names) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    for (int i = 0; i < cfg->npods; i++) {
        names[i] = p->traces[i].name;
    }
    gp_report r = {.nodes_path = cfg->nodes,
                   .traces = names,
                   .ntraces = cfg->npods,
                   .policies = cfg->policies,
                   .npolicies = cfg->npolicies,
                   .seeds = cfg->seeds,
                   .nseeds = cfg->nseeds,
                   .inflate = cfg->inflate,
                   .runs = p->runs};
    int rc = gp_report_write(&r, cfg->out, d);
    free(names);
    return rc;
}

/* Loads the traces, runs the grid, prints it and writes the report; returns the exit status. */
static int simulate(const sim_config *cfg)
{
    gp_diag d;
    gp_diag_clear(&d);
    gp_trace nodes = {0};
    sim_trace *traces;
    int rc = load_traces(cfg, &nodes, &traces, &d);
    if (rc < 0) {
        fprintf(stderr, "gpupool sim: %s\n", d.msg);
        return rc == GP_ENOMEM ? GP_EXIT_FAILURE : GP_EXIT_USAGE;
    }
    sim_pool pool;
    int status = GP_EXIT_OK;
    if ((rc = pool_init(&pool, cfg, traces, &d)) < 0) {
        fprintf(stderr, "gpupool sim: %s\n", d.msg);
        free_traces(traces, cfg->npods, &nodes);
        return rc == GP_ENOMEM ? GP_EXIT_FAILURE : GP_EXIT_USAGE;
    }
    run_grid(&pool);
    if (pool.failed >= 0) {
        const gp_sim_run *run = &pool.runs[pool.failed];
        fprintf(stderr, "gpupool sim: trace %s, policy %s, seed %llu: %s\n", run->trace,
                run->policy, (unsigned long long)run->seed, pool.fail.msg);
        rc = pool.fail.code;
        status =
            rc == GP_ENOMEM || rc == GP_EINTERNAL || rc == GP_EIO ? GP_EXIT_FAILURE : GP_EXIT_USAGE;
    } else if (cfg->out && write_report(cfg, &pool, &d) < 0) {
        fprintf(stderr, "gpupool sim: %s\n", d.msg);
        status = GP_EXIT_FAILURE;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gpupool sim: cannot write to standard output: %s\n", strerror(errno));
        status = GP_EXIT_FAILURE;
    }
    pool_fini(&pool);
    free_traces(traces, cfg->npods, &nodes);
    return status;
}

static void list_policies(void)
{
    int count;
    const char *const *names = gp_policy_names(&count);
    for (int i = 0; i < count; i++) {
        puts(names[i]);
    }
}

int gp_cli_sim(int argc, char **argv)
{
    sim_config cfg;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = config_init(&cfg, &d);
    if (rc == 0) {
        rc = parse_args(argc, argv, &cfg, &d);
    }
    int status = GP_EXIT_OK;
    if (rc < 0) {
        fprintf(stderr, "gpupool sim: %s\n", d.msg);
        status = rc == GP_ENOMEM ? GP_EXIT_FAILURE : GP_EXIT_USAGE;
    } else if (cfg.help) {
        usage(stdout);
    } else if (cfg.list_policies) {
        list_policies();
    } else if (!cfg.nodes || cfg.npods == 0) {
        fprintf(stderr, "gpupool sim: missing %s (see 'gpupool sim --help')\n",
                !cfg.nodes ? "--nodes FILE" : "--pods FILE");
        status = GP_EXIT_USAGE;
    } else {
        status = simulate(&cfg);
    }
    config_fini(&cfg);
    return status;
}
