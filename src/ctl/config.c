/*
 * gpupoold's options as a table of data, in the manner of tmux's options-table.c: each entry
 * gives the key, the type, where the value lives in gp_ctl_config, its bounds, its default and
 * its help; parsing, validation, --dump-config, --help and the Markdown docs all walk the table.
 *
 * Invariants that keep the sources consistent:
 *  - flag and environment names are derived from the key, never written by hand;
 *  - a default is the text a user would write ("1s", "1MiB"), parsed by the same code as every
 *    other source, so a default can never be a value that would be refused;
 *  - every source reduces a value to text first (a YAML scalar, an env value, a flag argument)
 *    and then goes through set_value(), so a value means the same wherever it comes from; the
 *    only structured value is a YAML mapping for scheduler.model_cost;
 *  - the table is grouped by section (keys "a" before "s.a", then one block per section), which
 *    the dump relies on to write each section once.
 *
 * Loading works on a local copy and copies out only when all of it succeeded: nothing is ever
 * half-applied.
 */
#include "ctl/config.h"

#include "gpupool/imageref.h"
#include "net/yaml_json.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table ---- */

typedef enum opt_type {
    T_STRING,   /* a name: non-empty printable text, < GP_NAME_MAX */
    T_PATH,     /* a file or directory name */
    T_ADDR,     /* HOST:PORT -> gp_ctl_addr */
    T_ENUM,     /* one of choices; the index is stored (an enum of int size) */
    T_BOOL,     /* bool */
    T_INT,      /* int or int64_t (by size) within [min, max] */
    T_DOUBLE,   /* finite double within [dmin, dmax] */
    T_DURATION, /* int64_t milliseconds within [min, max] */
    T_SIZE,     /* int64_t bytes within [min, max] */
    T_COSTMAP,  /* gp_ctl_cost_map */
    T_URLS,     /* http:// or https:// URLs, comma-separated, at most max of them; as text */
    T_IMAGE,    /* an OCI image reference (gpupool/imageref.h), stored in its normal form */
    T_TEXT,     /* free text (a command line), < GP_CTL_PATH_MAX */
} opt_type;

#define F_REQUIRED 1u /* no default: some source must set it */
#define F_EMPTY_OK 2u /* "" is a valid value, meaning off or none */

typedef struct opt {
    const char *key; /* YAML path; flag and env names derive from it */
    opt_type type;
    unsigned flags;
    size_t off;  /* offset of the field in gp_ctl_config */
    size_t size; /* size of the field */
    int64_t min, max;
    double dmin, dmax;
    const char *const *choices; /* T_ENUM: NULL-terminated */
    const char *def;            /* default as text; NULL with F_REQUIRED */
    const char *help;
    const char *flag; /* the flag, where not derived from the key ("--advertise-url") */
} opt;

#define AT(m) .off = offsetof(gp_ctl_config, m), .size = sizeof(((gp_ctl_config *)0)->m)

#define SEC  ((int64_t)1000)
#define HOUR (3600 * SEC)
#define KIB  ((int64_t)1024)
#define MIB  (1024 * KIB)

static const char *const log_levels[] = {"debug", "info", "warn", "error", NULL};
static const char *const log_formats[] = {"text", "json", NULL};
static const char *const node_policies[] = {"binpack", "spread", NULL};
static const char *const gpu_policies[] = {"packing", "spread", "topology", "fragmentation", NULL};
static const char *const compute_policies[] = {"shared", "strict", NULL};

/* Enum options store the index of the name in their choices. */
_Static_assert(GP_LOG_DEBUG == 0 && GP_LOG_INFO == 1 && GP_LOG_WARN == 2 && GP_LOG_ERROR == 3,
               "log_levels order");
_Static_assert(GP_CTL_LOG_TEXT == 0 && GP_CTL_LOG_JSON == 1, "log_formats order");
_Static_assert(GP_NODE_BINPACK == 0 && GP_NODE_SPREAD == 1, "node_policies order");
_Static_assert(GP_GPU_PACKING == 0 && GP_GPU_SPREAD == 1 && GP_GPU_TOPOLOGY == 2 &&
                   GP_GPU_FRAGMENTATION == 3,
               "gpu_policies order");
_Static_assert(GP_COMPUTE_SHARED == 0 && GP_COMPUTE_STRICT == 1, "compute_policies order");
_Static_assert(sizeof(gp_log_level) == sizeof(int) && sizeof(gp_ctl_log_format) == sizeof(int) &&
                   sizeof(gp_node_policy) == sizeof(int) && sizeof(gp_gpu_policy) == sizeof(int) &&
                   sizeof(gp_compute_policy) == sizeof(int),
               "enum options are stored as int");

static const opt options[] = {
    {.key = "data_dir",
     .type = T_PATH,
     .flags = F_REQUIRED,
     AT(data_dir),
     .help = "directory of the controller's state (the database and its files)"},
    {.key = "listen",
     .type = T_ADDR,
     AT(listen),
     .def = "127.0.0.1:7070",
     .help = "address of the HTTP API"},
    {.key = "store.url",
     .type = T_PATH,
     .flags = F_EMPTY_OK,
     AT(store_url),
     .def = "",
     .help = "the store: sqlite:PATH, or postgresql://USER@HOST:PORT/DB (password from "
             "PGPASSWORD or ~/.pgpass); empty: sqlite:DATA_DIR/gpupool.db"},
    {.key = "ha.advertise_url",
     .type = T_URLS,
     .flags = F_EMPTY_OK,
     AT(ha.advertise_url),
     .max = 1,
     .def = "",
     .flag = "--advertise-url",
     .help = "this controller's URL as the other controllers, the agents and the CLIs reach it "
             "(a shared store only): the leader's, followers redirect writes to it; empty: "
             "http://LISTEN"},
    {.key = "ha.lease_ttl",
     .type = T_DURATION,
     AT(ha.lease_ttl_ms),
     .min = 100,
     .max = 10 * 60 * SEC,
     .def = "3s",
     .help = "how long the leader's lease lasts unrenewed (a shared store only): a new leader "
             "takes over this long after the leader died; the leader that cannot renew within "
             "it stops"},
    {.key = "ha.renew_interval",
     .type = T_DURATION,
     AT(ha.renew_interval_ms),
     .min = 10,
     .max = 5 * 60 * SEC,
     .def = "1s",
     .help = "how often the leader renews its lease and a follower tries to take it and reloads "
             "its state (a shared store only); shorter than ha.lease_ttl"},
    {.key = "tls.listen",
     .type = T_ADDR,
     .flags = F_EMPTY_OK,
     AT(tls.listen),
     .def = "",
     .help = "address of the HTTPS API; empty: no TLS"},
    {.key = "tls.cert",
     .type = T_PATH,
     .flags = F_EMPTY_OK,
     AT(tls.cert),
     .def = "",
     .help = "PEM certificate chain for tls.listen (required with it)"},
    {.key = "tls.key",
     .type = T_PATH,
     .flags = F_EMPTY_OK,
     AT(tls.key),
     .def = "",
     .help = "PEM private key for tls.listen (required with it)"},
    {.key = "log.level",
     .type = T_ENUM,
     AT(log.level),
     .choices = log_levels,
     .def = "info",
     .help = "least severe log lines written"},
    {.key = "log.format",
     .type = T_ENUM,
     AT(log.format),
     .choices = log_formats,
     .def = "text",
     .help = "log lines as key=value text or as JSON"},
    {.key = "http.threads",
     .type = T_INT,
     AT(http.threads),
     .min = 1,
     .max = 256,
     .def = "8",
     .help = "threads serving API requests"},
    {.key = "http.max_body",
     .type = T_SIZE,
     AT(http.max_body),
     .min = KIB,
     .max = 64 * MIB,
     .def = "1MiB",
     .help = "largest request body accepted"},
    {.key = "http.timeout",
     .type = T_DURATION,
     AT(http.timeout_ms),
     .min = SEC,
     .max = HOUR,
     .def = "30s",
     .help = "time a client has to send a request; idle connections close after it"},
    {.key = "http.max_header_bytes",
     .type = T_SIZE,
     AT(http.max_header_bytes),
     .min = KIB,
     .max = 64 * KIB,
     .def = "16KiB",
     .help = "largest request head (request line and headers) accepted; larger: 431 (each "
             "connection holds a buffer of this plus 16 KiB)"},
    {.key = "api.rate_limit",
     .type = T_DOUBLE,
     AT(api.rate_limit),
     .dmin = 0,
     .dmax = 1000000,
     .def = "100",
     .help = "requests per second per tenant (all its users), after the burst; more: 429; "
             "0: no limit"},
    {.key = "api.rate_burst",
     .type = T_INT,
     AT(api.rate_burst),
     .min = 1,
     .max = 1000000,
     .def = "200",
     .help = "requests a tenant may make at once before api.rate_limit applies"},
    {.key = "api.token_rate_limit",
     .type = T_DOUBLE,
     AT(api.token_rate_limit),
     .dmin = 0,
     .dmax = 1000000,
     .def = "0",
     .help = "requests per second per admin, operator or join token (agents: never limited); "
             "0: no limit"},
    {.key = "api.token_rate_burst",
     .type = T_INT,
     AT(api.token_rate_burst),
     .min = 1,
     .max = 1000000,
     .def = "1000",
     .help = "requests such a token may make at once before api.token_rate_limit applies"},
    {.key = "scheduler.interval",
     .type = T_DURATION,
     AT(scheduler.interval_ms),
     .min = 10,
     .max = HOUR,
     .def = "1s",
     .help = "time between periodic scheduling cycles (cycles also run on events)"},
    {.key = "scheduler.node_policy",
     .type = T_ENUM,
     AT(scheduler.node_policy),
     .choices = node_policies,
     .def = "binpack",
     .help = "node choice: binpack (the fullest feasible node) or spread (the emptiest)"},
    {.key = "scheduler.gpu_policy",
     .type = T_ENUM,
     AT(scheduler.gpu_policy),
     .choices = gpu_policies,
     .def = "fragmentation",
     .help = "GPU choice within nodes, unless a job asks for another"},
    {.key = "scheduler.backfill",
     .type = T_BOOL,
     AT(scheduler.backfill),
     .def = "true",
     .help = "EASY backfill: later jobs may run ahead of a blocked one if they do not delay it"},
    {.key = "scheduler.util_threshold",
     .type = T_DOUBLE,
     AT(scheduler.util_threshold),
     .dmin = 0,
     .dmax = 100,
     .def = "80",
     .help = "shared (fractional) placements avoid GPUs busier than this, in percent"},
    {.key = "scheduler.util_weight",
     .type = T_DOUBLE,
     AT(scheduler.util_weight),
     .dmin = 0,
     .dmax = HUGE_VAL,
     .def = "1",
     .help = "weight of the penalty for busy GPUs in scoring; 0 ignores utilisation"},
    {.key = "scheduler.cost_weight",
     .type = T_DOUBLE,
     AT(scheduler.cost_weight),
     .dmin = 0,
     .dmax = HUGE_VAL,
     .def = "1",
     .help = "weight of GPU model price when a job allows several models; 0 ignores cost"},
    {.key = "scheduler.max_preemptions",
     .type = T_INT,
     AT(scheduler.max_preemptions),
     .min = 0,
     .max = 100000,
     .def = "64",
     .help = "most jobs evicted per cycle; 0 disables preemption"},
    {.key = "scheduler.model_cost",
     .type = T_COSTMAP,
     .flags = F_EMPTY_OK,
     AT(scheduler.model_cost),
     .def = "",
     .help = "price per GPU-hour by GPU model name (NVML's or a short name such as A100-80GB); "
             "models not listed cost the same"},
    {.key = "nodes.heartbeat_timeout",
     .type = T_DURATION,
     AT(nodes.heartbeat_timeout_ms),
     .min = SEC,
     .max = 24 * HOUR,
     .def = "40s",
     .help = "a node not heard from for this long is marked not ready"},
    {.key = "nodes.lost_timeout",
     .type = T_DURATION,
     AT(nodes.lost_timeout_ms),
     .min = SEC,
     .max = 7 * 24 * HOUR,
     .def = "2m",
     .help = "a node not heard from for this long is lost: its jobs are restarted elsewhere (or "
             "fail, by their restart policy)"},
    {.key = "nodes.join_token_file",
     .type = T_PATH,
     .flags = F_EMPTY_OK,
     AT(nodes.join_token_file),
     .def = "",
     .help = "where the first start writes the join token; empty: DATA_DIR/join.token"},
    {.key = "secrets.key_file",
     .type = T_PATH,
     .flags = F_EMPTY_OK,
     AT(secrets.key_file),
     .def = "",
     .help = "the AES-256 key (64 hex digits) that seals jobs' secret environment values in the "
             "store; the same file for every controller of a pool; created (0600) at the first "
             "start when missing; empty: DATA_DIR/secret.key"},
    {.key = "jobs.default_queue",
     .type = T_STRING,
     AT(jobs.default_queue),
     .def = "default",
     .help = "queue of jobs that name none"},
    {.key = "jobs.default_priority_class",
     .type = T_STRING,
     AT(jobs.default_priority_class),
     .def = "normal",
     .help = "priority class of jobs that name none"},
    {.key = "jobs.max_pending_per_tenant",
     .type = T_INT,
     AT(jobs.max_pending_per_tenant),
     .min = 1,
     .max = 10000000,
     .def = "100000",
     .help = "most Pending jobs a tenant may have; further submissions are refused"},
    {.key = "jobs.checkpoint_root",
     .type = T_PATH,
     .flags = F_EMPTY_OK,
     AT(jobs.checkpoint_root),
     .def = "",
     .help = "shared directory (the same path on every node) under which each job gets "
             "GPUPOOL_CHECKPOINT_DIR; empty: a directory on the node"},
    {.key = "jobs.compute_policy",
     .type = T_ENUM,
     AT(jobs.compute_policy),
     .choices = compute_policies,
     .def = "shared",
     .help = "when a GPU fraction's compute cap applies, for jobs that name no compute_policy: "
             "shared (only while another tenant is busy on the GPU) or strict (always)"},
    {.key = "jobs.allow_host_rootfs",
     .type = T_BOOL,
     AT(jobs.allow_host_rootfs),
     .def = "true",
     .help = "whether a job may run without an image, over the host's root filesystem mounted "
             "read-only; false: a job must name an image"},
    {.key = "jobs.max_array_size",
     .type = T_INT,
     AT(jobs.max_array_size),
     .min = 1,
     .max = 1000000,
     .def = "10000",
     .help = "most indices a job array may have (its child jobs); a larger array is refused"},
    {.key = "notebooks.image",
     .type = T_IMAGE,
     .flags = F_EMPTY_OK,
     AT(notebooks.image),
     .def = "",
     .help = "the image of a notebook that names none; empty: a notebook must name its image"},
    {.key = "notebooks.command",
     .type = T_TEXT,
     AT(notebooks.command),
     .def = "if [ ! -w \"${HOME:-/}\" ]; then export HOME=\"$PWD\"; fi; "
            "exec jupyter notebook --no-browser --ip=127.0.0.1 --port=\"$GPUPOOL_PORT\" "
            "--NotebookApp.base_url=\"$GPUPOOL_BASE_URL\" --NotebookApp.token= "
            "--NotebookApp.password=",
     .help = "what a notebook that names no command runs, as `/bin/sh -c COMMAND` in its image "
             "(GPUPOOL_PORT and GPUPOOL_BASE_URL say where it serves; only the controller's "
             "proxy reaches it, after its own authentication); the default makes the working "
             "directory HOME when HOME is not writable"},
    {.key = "services.progress_deadline",
     .type = T_DURATION,
     AT(services.progress_deadline_ms),
     .min = SEC,
     .max = 24 * HOUR,
     .def = "10m",
     .help = "how long a service's rolling update waits for its new revision's replicas to be "
             "ready before it is reported stalled (event RolloutStalled; the old replicas keep "
             "serving and the rollout goes on when they become ready)"},
    {.key = "proxy.max_body",
     .type = T_SIZE,
     AT(proxy.max_body),
     .min = KIB,
     .max = 1024 * MIB,
     .def = "64MiB",
     .help = "largest request body accepted through the proxy (/v1/jobs/{job}/proxy/..., "
             "/v1/services/{service}/...; a notebook saved with its plots); other paths keep "
             "http.max_body. A body is held whole in memory: see docs/operations.md"},
    {.key = "proxy.max_body_total",
     .type = T_SIZE,
     AT(proxy.max_body_total),
     .min = 0,
     .max = (int64_t)64 * 1024 * MIB,
     .def = "1GiB",
     .help = "most bytes that request bodies above http.max_body (a proxy's) may add up to over "
             "the requests in progress at once, counted from their Content-Length before they "
             "are read (before authentication); a body past it is answered 503 with "
             "Retry-After; 0: no bound"},
    {.key = "faults.restart_limit",
     .type = T_INT,
     AT(faults.restart_limit),
     .min = 0,
     .max = 64,
     .def = "10",
     .help = "most restarts after faults (GPU, node, maintenance) a job gets within "
             "faults.restart_window; past it the job fails"},
    {.key = "faults.restart_window",
     .type = T_DURATION,
     AT(faults.restart_window_ms),
     .min = SEC,
     .max = 30 * 24 * HOUR,
     .def = "1h",
     .help = "the window of faults.restart_limit"},
    {.key = "faults.spare_fraction",
     .type = T_DOUBLE,
     AT(faults.spare_fraction),
     .dmin = 0,
     .dmax = 0.5,
     .def = "0",
     .help = "share of each GPU model's GPUs held back as hot spares, used only by jobs "
             "restarting after a fault"},
    {.key = "faults.recheck_after",
     .type = T_DURATION,
     AT(faults.recheck_after_ms),
     .min = 0,
     .max = 30 * 24 * HOUR,
     .def = "10m",
     .help = "how long after a fault drained a GPU its node is asked for a health check; a "
             "pass returns the GPU to service (retired GPUs excepted)"},
    {.key = "alerts.alertmanager",
     .type = T_URLS,
     .flags = F_EMPTY_OK,
     AT(alerts.alertmanager),
     .max = 8,
     .def = "",
     .help = "Alertmanager base URLs the controller sends its events to (GPU drained, node lost, "
             "job restarted after a fault, tenant blocked by its quota), each to every URL; "
             "empty: none sent"},
    {.key = "alerts.retry_max",
     .type = T_DURATION,
     AT(alerts.retry_max_ms),
     .min = 0,
     .max = 24 * HOUR,
     .def = "5m",
     .help = "how long an alert an Alertmanager did not take is retried (backoff from 1s "
             "doubling to 1m) before it is counted failed and dropped"},
    {.key = "alerts.resolve_after",
     .type = T_DURATION,
     AT(alerts.resolve_after_ms),
     .min = SEC,
     .max = 7 * 24 * HOUR,
     .def = "1h",
     .help = "endsAt of an event alert, counted from its start; ongoing conditions (node lost, "
             "quota) are sent again every half of it while they last and resolved when they end"},
    {.key = "alerts.external_url",
     .type = T_URLS,
     .flags = F_EMPTY_OK,
     AT(alerts.external_url),
     .max = 1,
     .def = "",
     .help = "the controller's URL as users reach it: alerts link to the object's API URL "
             "under it (generatorURL); empty: no link"},
    {.key = "metrics.auth",
     .type = T_BOOL,
     AT(metrics.auth),
     .def = "true",
     .help = "GET /metrics and /v1/sd/prometheus need a metrics, admin or operator token "
             "(Prometheus: authorization credentials_file); false: anyone who reaches the address "
             "reads them, without a token only pool-wide figures (no tenant, queue or job "
             "labels)"},
    {.key = "billing.price_table",
     .type = T_PATH,
     .flags = F_EMPTY_OK,
     AT(billing.price_table),
     .def = "",
     .help = "YAML file of GPU prices by model and date, CPU and memory prices and the shared-GPU "
             "discount (docs/billing.md); read at start, a bad one stops the start; empty: usage "
             "is reported without cost"},
    {.key = "billing.used_flush_interval",
     .type = T_DURATION,
     AT(billing.used_flush_ms),
     .min = SEC,
     .max = HOUR,
     .def = "1m",
     .help = "how often the utilisation-weighted (used) GPU time of running placements is written "
             "(it is also written when a placement ends); a crash loses at most this much of it"},
    {.key = "ui.dir",
     .type = T_PATH,
     .flags = F_EMPTY_OK,
     AT(ui.dir),
     .def = "",
     .help = "directory of the web dashboard's built files, served at /ui/; empty: "
             "BINDIR/../share/gpupool/ui (BINDIR: gpupoold's directory); none: no dashboard"},
    {.key = "history.max_jobs",
     .type = T_INT,
     AT(history.max_jobs),
     .min = 0,
     .max = 1000000,
     .def = "500",
     .help = "jobs whose GPU utilisation and memory history is kept in memory (GET "
             "/v1/jobs/{id}/metrics); beyond it the job that finished first is dropped, else the "
             "oldest; each takes at most 341 KB (a job of one replica 68 KB); 0: none kept"},
    {.key = "history.max_tenants",
     .type = T_INT,
     AT(history.max_tenants),
     .min = 0,
     .max = 1000000,
     .def = "1000",
     .help = "tenants whose allocation history is kept in memory (GET "
             "/v1/tenants/{name}/metrics), 45 KB each; 0: none kept"},
};

#define NOPTIONS ((int)(sizeof(options) / sizeof(options[0])))

#define WHY_MAX  256 /* a problem, without its place: "must be between 1 and 256" */
#define FLAG_MAX 128 /* a flag or env name */

/* ---- names ---- */

/* "scheduler.node_policy" -> "--scheduler-node-policy" */
static void flag_name(const opt *o, char *buf, size_t n)
{
    if (o->flag) {
        snprintf(buf, n, "%s", o->flag);
        return;
    }
    snprintf(buf, n, "--%s", o->key);
    for (char *p = buf + 2; *p; p++) {
        *p = *p == '.' || *p == '_' ? '-' : *p;
    }
}

/* "scheduler.node_policy" -> "GPUPOOL_SCHEDULER_NODE_POLICY" */
static void env_name(const opt *o, char *buf, size_t n)
{
    snprintf(buf, n, "GPUPOOL_%s", o->key);
    for (char *p = buf; *p; p++) {
        *p = *p == '.' ? '_' : (char)toupper((unsigned char)*p);
    }
}

static const opt *find_key(const char *key)
{
    for (int i = 0; i < NOPTIONS; i++) {
        if (strcmp(options[i].key, key) == 0) {
            return &options[i];
        }
    }
    return NULL;
}

static const opt *find_flag(const char *flag)
{
    char name[FLAG_MAX];
    for (int i = 0; i < NOPTIONS; i++) {
        flag_name(&options[i], name, sizeof(name));
        if (strcmp(name, flag) == 0) {
            return &options[i];
        }
    }
    return NULL;
}

/* Whether path names a section: some key starts with "path.". */
static bool is_section(const char *path)
{
    size_t n = strlen(path);
    for (int i = 0; i < NOPTIONS; i++) {
        if (strncmp(options[i].key, path, n) == 0 && options[i].key[n] == '.') {
            return true;
        }
    }
    return false;
}

/* ---- scalar syntax ---- */

static int bad(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(char *why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, WHY_MAX, fmt, ap);
    va_end(ap);
    return GP_EINVAL;
}

static bool parse_i64(const char *s, int64_t *out)
{
    if (!isdigit((unsigned char)s[0]) &&
        !((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1]))) {
        return false;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || errno != 0) {
        return false;
    }
    *out = v;
    return true;
}

/* A finite decimal number: digits, sign, point, exponent; no "inf", "nan" or hex. */
static bool parse_number(const char *s, double *out)
{
    size_t n = strlen(s);
    if (n == 0 || strspn(s, "+-0123456789.eE") != n) {
        return false;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || errno != 0 || !isfinite(v)) {
        return false;
    }
    *out = v;
    return true;
}

/* Shortest text that reads back to the same double; whole numbers without an exponent. */
static void format_double(double v, char *buf, size_t n)
{
    if (v == trunc(v) && fabs(v) < 1e15) {
        snprintf(buf, n, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) {
            return;
        }
    }
}

/* A unit suffix of a duration or size. Units marked canon are the ones the dump writes, largest
 * first; "" is the unit of a bare number. */
typedef struct unit {
    const char *name;
    int64_t scale;
    bool canon;
} unit;

static const unit duration_units[] = {
    {"d", 24 * HOUR, true}, {"h", HOUR, true}, {"m", 60 * SEC, true}, {"s", SEC, true},
    {"ms", 1, true},        {"", SEC, false},  {NULL, 0, false},
};

static const unit size_units[] = {
    {"MiB", MIB, true}, {"Mi", MIB, false}, {"M", MIB, false},
    {"KiB", KIB, true}, {"Ki", KIB, false}, {"K", KIB, false},
    {"B", 1, true},     {"", 1, false},     {NULL, 0, false},
};

/* A non-negative number with an optional unit suffix, as a whole multiple of the smallest unit:
 * "90s", "1.5s", "512KiB", "30" (the bare unit). */
static bool parse_scaled(const char *s, const unit *units, int64_t *out)
{
    size_t n = strspn(s, "0123456789.");
    char num[64];
    if (n == 0 || n >= sizeof(num) || !isdigit((unsigned char)s[0])) {
        return false;
    }
    memcpy(num, s, n);
    num[n] = '\0';
    const unit *u = units;
    while (u->name && strcmp(u->name, s + n) != 0) {
        u++;
    }
    if (!u->name) {
        return false;
    }
    int64_t whole;
    if (!strchr(num, '.')) {
        if (!parse_i64(num, &whole) || whole > INT64_MAX / u->scale) {
            return false;
        }
        *out = whole * u->scale;
        return true;
    }
    double v;
    if (!parse_number(num, &v) || v * (double)u->scale > 1e15) {
        return false;
    }
    double scaled = v * (double)u->scale;
    whole = llround(scaled);
    if (fabs(scaled - (double)whole) > 1e-6) {
        return false; /* finer than the smallest unit */
    }
    *out = whole;
    return true;
}

static void format_scaled(int64_t v, const unit *units, char *buf, size_t n)
{
    const unit *pick = NULL;
    for (const unit *u = units; u->name; u++) {
        if (u->canon && v % u->scale == 0) {
            pick = u; /* the largest that divides; for 0 the smallest */
            if (v != 0) {
                break;
            }
        }
    }
    snprintf(buf, n, "%lld%s", (long long)(v / pick->scale), pick->name);
}

/* Case-insensitive equality with b, which is lower case. */
static bool same_word(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        if (tolower((unsigned char)*a) != *b) {
            return false;
        }
    }
    return *a == *b;
}

static bool parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (same_word(s, yes[i]) || same_word(s, no[i])) {
            *out = same_word(s, yes[i]);
            return true;
        }
    }
    return false;
}

/* HOST:PORT, or [IPV6]:PORT. The host is a name or address without spaces; port 0..65535. */
static int parse_addr(const char *s, gp_ctl_addr *out, char *why)
{
    const char *host = s, *colon;
    size_t hlen;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':') {
            return bad(why, "expected HOST:PORT ([ADDRESS]:PORT for IPv6)");
        }
        host = s + 1;
        hlen = (size_t)(close - host);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon) {
            return bad(why, "expected HOST:PORT");
        }
        hlen = (size_t)(colon - s);
        if (memchr(s, ':', hlen)) {
            return bad(why, "expected HOST:PORT (write an IPv6 address as [ADDRESS]:PORT)");
        }
    }
    if (hlen == 0 || colon[1] == '\0') {
        return bad(why, "expected HOST:PORT");
    }
    if (hlen >= GP_CTL_HOST_MAX) {
        return bad(why, "host longer than %d bytes", GP_CTL_HOST_MAX - 1);
    }
    for (size_t i = 0; i < hlen; i++) {
        if (!isgraph((unsigned char)host[i]) || host[i] == '[' || host[i] == ']') {
            return bad(why, "expected HOST:PORT (bad character in the host)");
        }
    }
    int64_t port;
    if (strspn(colon + 1, "0123456789") != strlen(colon + 1) || !parse_i64(colon + 1, &port) ||
        port > 65535) {
        return bad(why, "port must be between 0 and 65535");
    }
    memcpy(out->host, host, hlen);
    out->host[hlen] = '\0';
    out->port = (int)port;
    return 0;
}

static void format_addr(const gp_ctl_addr *a, char *buf, size_t n)
{
    if (a->host[0] == '\0') {
        snprintf(buf, n, "%s", "");
    } else {
        snprintf(buf, n, strchr(a->host, ':') ? "[%s]:%d" : "%s:%d", a->host, a->port);
    }
}

/* Adds one model's price to m. name is as written (a YAML key or the left of '='). */
static int add_cost(gp_ctl_cost_map *m, const char *name, const char *price, char *why)
{
    if (name[0] == '\0') {
        return bad(why, "a model name is empty");
    }
    if (strlen(name) >= GP_NAME_MAX) {
        return bad(why, "model name %.32s... longer than %d bytes", name, GP_NAME_MAX - 1);
    }
    for (const char *p = name; *p; p++) {
        if (iscntrl((unsigned char)*p) || *p == ',' || *p == '=') {
            return bad(why, "model name %s: may not contain ',', '=' or control characters", name);
        }
    }
    for (int i = 0; i < m->n; i++) {
        if (strcmp(m->entry[i].model, name) == 0) {
            return bad(why, "model %s given twice", name);
        }
    }
    if (m->n >= GP_MAX_MODELS) {
        return bad(why, "more than %d models", GP_MAX_MODELS);
    }
    double v;
    if (!parse_number(price, &v) || v < 0) {
        return bad(why, "price of %s must be a number >= 0", name);
    }
    snprintf(m->entry[m->n].model, GP_NAME_MAX, "%s", name);
    m->entry[m->n++].price = v;
    return 0;
}

static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) {
        s[--n] = '\0';
    }
    size_t lead = strspn(s, " \t\r\n\f\v");
    memmove(s, s + lead, n - lead + 1);
}

/* "A100-80GB=2.5,H100-80GB=4" (spaces around names and prices allowed); "" is the empty map. */
static int parse_costmap(const char *s, gp_ctl_cost_map *m, char *why)
{
    m->n = 0;
    if (s[strspn(s, " \t")] == '\0') {
        return 0;
    }
    for (const char *p = s;;) {
        size_t len = strcspn(p, ",");
        char item[2 * GP_NAME_MAX];
        if (len >= sizeof(item)) {
            return bad(why, "entry %.32s... too long", p);
        }
        memcpy(item, p, len);
        item[len] = '\0';
        char *eq = strchr(item, '=');
        if (!eq) {
            return bad(why, "expected MODEL=PRICE[,MODEL=PRICE...]");
        }
        *eq = '\0';
        trim(item);
        trim(eq + 1);
        int rc = add_cost(m, item, eq + 1, why);
        if (rc < 0) {
            return rc;
        }
        if (p[len] == '\0') {
            return 0;
        }
        p += len + 1;
    }
}

/* ---- values: text <-> field ---- */

static int set_text(const opt *o, const char *s, char *field, char *why)
{
    size_t n = strlen(s);
    if (n == 0 && !(o->flags & F_EMPTY_OK)) {
        return bad(why, "must not be empty");
    }
    if (n >= o->size) {
        return bad(why, "longer than %zu bytes", o->size - 1);
    }
    if (o->type == T_STRING) {
        for (size_t i = 0; i < n; i++) {
            if (iscntrl((unsigned char)s[i])) {
                return bad(why, "must not contain control characters");
            }
        }
    }
    memcpy(field, s, n + 1);
    return 0;
}

static int set_enum(const opt *o, const char *s, void *field, char *why)
{
    for (int i = 0; o->choices[i]; i++) {
        if (strcmp(o->choices[i], s) == 0) {
            memcpy(field, &i, sizeof(i));
            return 0;
        }
    }
    char list[WHY_MAX] = "";
    for (int i = 0; o->choices[i]; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", o->choices[i]);
    }
    return bad(why, "must be one of %s", list);
}

static int set_int(const opt *o, const char *s, void *field, char *why)
{
    int64_t v;
    if (!parse_i64(s, &v)) {
        return bad(why, "must be an integer between %lld and %lld", (long long)o->min,
                   (long long)o->max);
    }
    if (v < o->min || v > o->max) {
        return bad(why, "must be between %lld and %lld", (long long)o->min, (long long)o->max);
    }
    if (o->size == sizeof(int)) {
        int i = (int)v;
        memcpy(field, &i, sizeof(i));
    } else {
        memcpy(field, &v, sizeof(v));
    }
    return 0;
}

static int set_double(const opt *o, const char *s, void *field, char *why)
{
    double v;
    bool ok = parse_number(s, &v);
    if (ok && v >= o->dmin && v <= o->dmax) {
        memcpy(field, &v, sizeof(v));
        return 0;
    }
    char lo[32], hi[32];
    format_double(o->dmin, lo, sizeof(lo));
    format_double(o->dmax, hi, sizeof(hi));
    if (isinf(o->dmax)) {
        return bad(why, "must be a number >= %s", lo);
    }
    return bad(why, "must be a number between %s and %s", lo, hi);
}

static int set_scaled(const opt *o, const char *s, void *field, char *why)
{
    const unit *units = o->type == T_DURATION ? duration_units : size_units;
    int64_t v;
    char lo[32], hi[32];
    format_scaled(o->min, units, lo, sizeof(lo));
    format_scaled(o->max, units, hi, sizeof(hi));
    if (!parse_scaled(s, units, &v)) {
        return o->type == T_DURATION
                   ? bad(why, "must be a duration: seconds, or a number with ms, s, m, h or d "
                              "(such as 500ms, 30s, 2h)")
                   : bad(why, "must be a size: bytes, or a number with B, K, KiB, M or MiB "
                              "(such as 512KiB)");
    }
    if (v < o->min || v > o->max) {
        return bad(why, "must be between %s and %s", lo, hi);
    }
    memcpy(field, &v, sizeof(v));
    return 0;
}

/* Parses text s as option o's value into c. 0, or GP_EINVAL with the problem in why (WHY_MAX
 * bytes); c may then be partly changed, so callers work on a copy. */
/* A list of base URLs: each http:// or https:// with a host, no spaces or controls, none empty;
 * stored as given. */
static int set_urls(const opt *o, const char *s, char *field, char *why)
{
    int rc = set_text(o, s, field, why);
    if (rc < 0 || s[0] == '\0') {
        return rc;
    }
    int64_t n = 0;
    for (const char *p = s;; n++) {
        size_t len = strcspn(p, ",");
        size_t scheme = strncmp(p, "http://", 7) == 0 ? 7 : strncmp(p, "https://", 8) == 0 ? 8 : 0;
        if (len == 0) {
            return bad(why, "an empty entry in the list of URLs");
        }
        if (!scheme || len <= scheme || p[scheme] == '/') {
            return bad(why, "%.*s: expected an http:// or https:// URL",
                       (int)(len < 100 ? len : 100), p);
        }
        for (size_t i = 0; i < len; i++) {
            if (isspace((unsigned char)p[i]) || iscntrl((unsigned char)p[i])) {
                return bad(why, "URLs must not contain spaces or control characters");
            }
        }
        if (!p[len]) {
            break;
        }
        p += len + 1;
    }
    if (n + 1 > o->max) {
        return bad(why, "at most %lld URL%s", (long long)o->max, o->max == 1 ? "" : "s");
    }
    return 0;
}

/* An image reference, or "" where F_EMPTY_OK; stored in its normal form. */
static int set_image(const opt *o, const char *s, char *field, char *why)
{
    if (s[0] == '\0') {
        return set_text(o, s, field, why);
    }
    gp_image_ref ref;
    gp_diag d;
    char normal[GP_IMAGE_REF_MAX];
    if (gp_image_ref_parse(s, "value", &ref, &d) < 0 ||
        gp_image_ref_format(&ref, normal, sizeof(normal)) < 0) {
        return bad(why, "not an image reference (%s)", d.msg);
    }
    return set_text(o, normal, field, why);
}

static int set_value(const opt *o, const char *s, gp_ctl_config *c, char *why)
{
    char *field = (char *)c + o->off;
    switch (o->type) {
    case T_STRING:
    case T_PATH:
    case T_TEXT:
        return set_text(o, s, field, why);
    case T_ADDR:
        if (s[0] == '\0' && (o->flags & F_EMPTY_OK)) {
            memset(field, 0, sizeof(gp_ctl_addr));
            return 0;
        }
        return parse_addr(s, (gp_ctl_addr *)(void *)field, why);
    case T_ENUM:
        return set_enum(o, s, field, why);
    case T_BOOL: {
        bool b;
        if (!parse_bool(s, &b)) {
            return bad(why, "must be true or false (or yes/no, on/off, 1/0)");
        }
        memcpy(field, &b, sizeof(b));
        return 0;
    }
    case T_INT:
        return set_int(o, s, field, why);
    case T_DOUBLE:
        return set_double(o, s, field, why);
    case T_DURATION:
    case T_SIZE:
        return set_scaled(o, s, field, why);
    case T_COSTMAP:
        return parse_costmap(s, (gp_ctl_cost_map *)(void *)field, why);
    case T_URLS:
        return set_urls(o, s, field, why);
    case T_IMAGE:
        return set_image(o, s, field, why);
    }
    return bad(why, "internal error: unknown option type");
}

/* Writes option o's value in c as text that set_value reads back to the same value. */
static void format_value(const opt *o, const gp_ctl_config *c, char *buf, size_t n)
{
    const char *field = (const char *)c + o->off;
    int i;
    int64_t v;
    double x;
    bool b;
    switch (o->type) {
    case T_STRING:
    case T_PATH:
    case T_URLS:
    case T_IMAGE:
    case T_TEXT:
        snprintf(buf, n, "%s", field);
        return;
    case T_ADDR:
        format_addr((const gp_ctl_addr *)(const void *)field, buf, n);
        return;
    case T_ENUM:
        memcpy(&i, field, sizeof(i));
        snprintf(buf, n, "%s", o->choices[i]);
        return;
    case T_BOOL:
        memcpy(&b, field, sizeof(b));
        snprintf(buf, n, "%s", b ? "true" : "false");
        return;
    case T_INT:
        if (o->size == sizeof(int)) {
            memcpy(&i, field, sizeof(i));
            v = i;
        } else {
            memcpy(&v, field, sizeof(v));
        }
        snprintf(buf, n, "%lld", (long long)v);
        return;
    case T_DOUBLE:
        memcpy(&x, field, sizeof(x));
        format_double(x, buf, n);
        return;
    case T_DURATION:
    case T_SIZE:
        memcpy(&v, field, sizeof(v));
        format_scaled(v, o->type == T_DURATION ? duration_units : size_units, buf, n);
        return;
    case T_COSTMAP: {
        const gp_ctl_cost_map *m = (const gp_ctl_cost_map *)(const void *)field;
        buf[0] = '\0';
        for (int k = 0; k < m->n; k++) {
            char price[32];
            size_t used = strlen(buf);
            format_double(m->entry[k].price, price, sizeof(price));
            snprintf(buf + used, n - used, "%s%s=%s", k ? "," : "", m->entry[k].model, price);
        }
        return;
    }
    }
}

void gp_ctl_config_default(gp_ctl_config *out)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < NOPTIONS; i++) {
        char why[WHY_MAX];
        /* Defaults are checked by test_config; a bad one would leave the field zero. */
        if (options[i].def) {
            (void)set_value(&options[i], options[i].def, out, why);
        }
    }
}

/* ---- source: the YAML file ---- */

#define FILE_MAX (1024 * 1024)

typedef struct file_src {
    const char *name; /* as given, for messages */
    json_t *lines;    /* key path -> line */
} file_src;

/* "config.yaml:7: path: why", or "config.yaml:7: unknown key path" when why is NULL. */
static int file_err(const file_src *f, const char *path, const char *why, gp_diag *d)
{
    json_t *line = json_object_get(f->lines, path);
    char at[32] = "";
    if (json_is_integer(line)) {
        snprintf(at, sizeof(at), ":%lld", (long long)json_integer_value(line));
    }
    if (!why) {
        return gp_diag_set(d, GP_EINVAL, "%s%s: unknown key %s", f->name, at, path);
    }
    return gp_diag_set(d, GP_EINVAL, "%s%s: %s: %s", f->name, at, path, why);
}

/* The text of a YAML scalar as the user wrote it, near enough to parse: strings as they are,
 * numbers and booleans printed back, null as "". NULL for a mapping or a list. */
static const char *scalar_text(json_t *v, char *buf, size_t n)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return strlen(json_string_value(v)) == json_string_length(v) ? json_string_value(v) : NULL;
    case JSON_INTEGER:
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    case JSON_REAL:
        snprintf(buf, n, "%.17g", json_real_value(v));
        return buf;
    case JSON_TRUE:
        return "true";
    case JSON_FALSE:
        return "false";
    case JSON_NULL:
        return "";
    default:
        return NULL;
    }
}

static int file_costmap(const file_src *f, const char *path, json_t *obj, gp_ctl_config *c,
                        gp_diag *d)
{
    gp_ctl_cost_map *m = &c->scheduler.model_cost;
    m->n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        char entry[512], buf[64], why[WHY_MAX];
        snprintf(entry, sizeof(entry), "%s.%s", path, k);
        const char *text =
            json_is_number(v) || json_is_string(v) ? scalar_text(v, buf, sizeof(buf)) : NULL;
        if (!text) {
            return file_err(f, entry, "must be a number >= 0", d);
        }
        if (add_cost(m, k, text, why) < 0) {
            return file_err(f, entry, why, d);
        }
    }
    return 0;
}

/* A list of URLs in the file (a YAML sequence): joined with commas, then read as one value. */
static int file_urls(const file_src *f, const opt *o, json_t *v, gp_ctl_config *c, gp_diag *d)
{
    char text[GP_CTL_PATH_MAX], why[WHY_MAX];
    size_t used = 0, i;
    json_t *e;
    text[0] = '\0';
    json_array_foreach(v, i, e)
    {
        const char *s = json_string_value(e);
        if (!s) {
            return file_err(f, o->key, "must be a list of URLs", d);
        }
        int w = snprintf(text + used, sizeof(text) - used, "%s%s", i ? "," : "", s);
        if (w < 0 || (size_t)w >= sizeof(text) - used) {
            return file_err(f, o->key, "the URLs are too long", d);
        }
        used += (size_t)w;
    }
    if (set_value(o, text, c, why) < 0) {
        return file_err(f, o->key, why, d);
    }
    return 0;
}

static int file_value(const file_src *f, const opt *o, json_t *v, gp_ctl_config *c, gp_diag *d)
{
    if (o->type == T_COSTMAP && json_is_object(v)) {
        return file_costmap(f, o->key, v, c, d);
    }
    if (o->type == T_URLS && json_is_array(v)) {
        return file_urls(f, o, v, c, d);
    }
    char buf[64], why[WHY_MAX];
    const char *text = scalar_text(v, buf, sizeof(buf));
    if (!text) {
        return file_err(f, o->key,
                        o->type == T_COSTMAP ? "must be a mapping of GPU model to price"
                                             : "must be a single value, not a mapping or list",
                        d);
    }
    if (set_value(o, text, c, why) < 0) {
        return file_err(f, o->key, why, d);
    }
    return 0;
}

/* Applies the settings of mapping obj, whose keys are below prefix ("" at the top). */
static int file_walk(const file_src *f, json_t *obj, const char *prefix, gp_ctl_config *c,
                     gp_diag *d)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        char path[512];
        snprintf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", k);
        /* A dotted key ("scheduler.interval: 1s") would be a second spelling: refused. */
        const opt *o = strchr(k, '.') ? NULL : find_key(path);
        int rc = 0;
        if (o) {
            rc = file_value(f, o, v, c, d);
        } else if (!strchr(k, '.') && is_section(path)) {
            if (!json_is_object(v) && !json_is_null(v)) {
                return file_err(f, path, "must be a mapping of settings", d);
            }
            rc = json_is_object(v) ? file_walk(f, v, path, c, d) : 0;
        } else {
            return file_err(f, path, NULL, d);
        }
        if (rc < 0) {
            return rc;
        }
    }
    return 0;
}

/* Reads a whole file (at most FILE_MAX bytes) into *text (malloc'd, NUL-terminated). */
static int read_file(const char *name, char **text, size_t *len, gp_diag *d)
{
    FILE *fp = fopen(name, "rb");
    if (!fp) {
        int e = errno;
        return gp_diag_set(d, e == ENOENT ? GP_ENOENT : GP_EIO, "%s: %s", name, strerror(e));
    }
    char *buf = malloc(FILE_MAX + 1);
    if (!buf) {
        fclose(fp);
        return gp_diag_set(d, GP_ENOMEM, "%s: out of memory", name);
    }
    size_t n = fread(buf, 1, FILE_MAX + 1, fp);
    int failed = ferror(fp);
    fclose(fp);
    if (failed || n > FILE_MAX) {
        free(buf);
        return failed ? gp_diag_set(d, GP_EIO, "%s: read error", name)
                      : gp_diag_set(d, GP_EINVAL, "%s: larger than %d bytes", name, FILE_MAX);
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

/* Whether text holds no YAML node: only blank lines and comments (all defaults). */
static bool blank_yaml(const char *text)
{
    for (const char *p = text; *p;) {
        p += strspn(p, " \t\r");
        if (*p == '#') {
            p += strcspn(p, "\n");
        }
        if (*p && *p != '\n') {
            return false;
        }
        p += *p == '\n';
    }
    return true;
}

static int apply_file(const char *name, gp_ctl_config *c, gp_diag *d)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_file(name, &text, &len, d);
    if (rc < 0 || blank_yaml(text)) {
        free(rc < 0 ? NULL : text);
        return rc;
    }
    file_src f = {.name = name};
    json_t *root = NULL;
    rc = gp_yaml_to_json_lines(text, len, &root, &f.lines, d);
    free(text);
    if (rc < 0) {
        char inner[sizeof(d->msg)];
        snprintf(inner, sizeof(inner), "%s", d->msg);
        return gp_diag_set(d, rc, "%s: %s", name, inner);
    }
    if (json_is_object(root)) {
        rc = file_walk(&f, root, "", c, d);
    } else if (!json_is_null(root)) {
        rc = gp_diag_set(d, GP_EINVAL, "%s: must be a mapping of settings", name);
    }
    json_decref(root);
    json_decref(f.lines);
    return rc;
}

/* ---- source: the environment ---- */

/* The value of name in envp (the first, as getenv), or NULL. */
static const char *env_get(char **envp, const char *name)
{
    size_t n = strlen(name);
    for (; envp && *envp; envp++) {
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=') {
            return *envp + n + 1;
        }
    }
    return NULL;
}

static int apply_env(char **envp, gp_ctl_config *c, gp_diag *d)
{
    for (int i = 0; i < NOPTIONS; i++) {
        char name[FLAG_MAX], why[WHY_MAX];
        env_name(&options[i], name, sizeof(name));
        const char *v = env_get(envp, name);
        if (v && set_value(&options[i], v, c, why) < 0) {
            return gp_diag_set(d, GP_EINVAL, "%s: %s", name, why);
        }
    }
    return 0;
}

/* ---- source: the command line ---- */

static bool is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

static bool is_version(const char *a)
{
    return strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0;
}

/* The flags that are not settings. 1 if name is one (handled), 0 if not, or an error. *i moves
 * past a value taken from the next argument. */
static int meta_flag(const char *name, const char *val, int argc, char **argv, int *i,
                     gp_ctl_cli *cli, gp_diag *d)
{
    bool *b = strcmp(name, "--help") == 0          ? &cli->help
              : strcmp(name, "--version") == 0     ? &cli->version
              : strcmp(name, "--dump-config") == 0 ? &cli->dump_config
                                                   : NULL;
    if (b) {
        *b = true;
        return val ? gp_diag_set(d, GP_EINVAL, "%s: takes no value", name) : 1;
    }
    if (strcmp(name, "--config") != 0) {
        return 0;
    }
    if (!val && *i + 1 >= argc) {
        return gp_diag_set(d, GP_EINVAL, "--config: requires a value (FILE)");
    }
    val = val ? val : argv[++*i];
    if (val[0] == '\0' || strlen(val) >= sizeof(cli->config_file)) {
        return gp_diag_set(d, GP_EINVAL, "--config: must be a file name shorter than %zu bytes",
                           sizeof(cli->config_file));
    }
    snprintf(cli->config_file, sizeof(cli->config_file), "%s", val);
    return 1;
}

/* Applies argv's settings to c and its other flags to cli. "--flag value" and "--flag=value";
 * a bool flag without a value (at the end, or before another flag) means true. */
static int apply_flags(int argc, char **argv, gp_ctl_config *c, gp_ctl_cli *cli, gp_diag *d)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a) || is_version(a)) {
            continue; /* handled before anything else */
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            return a[0] == '-' ? gp_diag_set(d, GP_EINVAL, "%s: unknown flag", a)
                               : gp_diag_set(d, GP_EINVAL,
                                             "%s: unexpected argument (settings are flags: "
                                             "--KEY VALUE)",
                                             a);
        }
        const char *eq = strchr(a, '=');
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        char name[FLAG_MAX];
        snprintf(name, sizeof(name), "%.*s", (int)nlen, a);
        const char *val = eq ? eq + 1 : NULL;
        int rc = meta_flag(name, val, argc, argv, &i, cli, d);
        if (rc != 0) {
            if (rc < 0) {
                return rc;
            }
            continue;
        }
        const opt *o = nlen < sizeof(name) ? find_flag(name) : NULL;
        if (!o) {
            return gp_diag_set(d, GP_EINVAL, "%s: unknown flag", name);
        }
        if (!val && o->type == T_BOOL && (i + 1 >= argc || argv[i + 1][0] == '-')) {
            val = "true";
        } else if (!val && i + 1 >= argc) {
            return gp_diag_set(d, GP_EINVAL, "%s: requires a value", name);
        } else if (!val) {
            val = argv[++i];
        }
        char why[WHY_MAX];
        if (set_value(o, val, c, why) < 0) {
            return gp_diag_set(d, GP_EINVAL, "%s: %s", name, why);
        }
    }
    return 0;
}

/* ---- loading ---- */

static int required(const opt *o, const char *when, gp_diag *d)
{
    char flag[FLAG_MAX], env[FLAG_MAX];
    flag_name(o, flag, sizeof(flag));
    env_name(o, env, sizeof(env));
    return gp_diag_set(d, GP_EINVAL, "%s: required%s (%s, %s or %s in the config file)", o->key,
                       when, flag, env, o->key);
}

/* What no single value can say: required settings, and settings that go together. */
static int check(const gp_ctl_config *c, gp_diag *d)
{
    for (int i = 0; i < NOPTIONS; i++) {
        const char *field = (const char *)c + options[i].off;
        if ((options[i].flags & F_REQUIRED) && field[0] == '\0') {
            return required(&options[i], "", d);
        }
    }
    if (c->tls.listen.host[0]) {
        if (!c->tls.cert[0]) {
            return required(find_key("tls.cert"), " when tls.listen is set", d);
        }
        if (!c->tls.key[0]) {
            return required(find_key("tls.key"), " when tls.listen is set", d);
        }
        if (c->tls.listen.port != 0 && c->tls.listen.port == c->listen.port &&
            strcmp(c->tls.listen.host, c->listen.host) == 0) {
            return gp_diag_set(d, GP_EINVAL, "tls.listen: must differ from listen");
        }
    }
    if (c->ha.renew_interval_ms >= c->ha.lease_ttl_ms) {
        return gp_diag_set(d, GP_EINVAL, "ha.renew_interval: must be shorter than ha.lease_ttl");
    }
    return 0;
}

int gp_ctl_config_load(int argc, char **argv, char **envp, gp_ctl_config *out, gp_ctl_cli *cli,
                       gp_diag *d)
{
    gp_diag local;
    d = d ? d : &local;
    gp_diag_clear(d);
    gp_ctl_cli k;
    memset(&k, 0, sizeof(k));
    for (int i = 1; i < argc; i++) {
        k.help = k.help || is_help(argv[i]);
        k.version = k.version || is_version(argv[i]);
    }
    if (k.help || k.version) {
        gp_ctl_config_default(out);
        *cli = k;
        return 0;
    }
    gp_ctl_config *work = malloc(2 * sizeof(*work));
    if (!work) {
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    gp_ctl_config *scratch = work + 1;
    gp_ctl_config_default(work);
    /* Flags once into a scratch copy: a bad flag is reported before any file is read. */
    *scratch = *work;
    int rc = apply_flags(argc, argv, scratch, &k, d);
    const char *env_file = env_get(envp, "GPUPOOL_CONFIG");
    if (rc == 0 && !k.config_file[0] && env_file && env_file[0]) {
        if (strlen(env_file) < sizeof(k.config_file)) {
            snprintf(k.config_file, sizeof(k.config_file), "%s", env_file);
        } else {
            rc = gp_diag_set(d, GP_EINVAL, "GPUPOOL_CONFIG: longer than %zu bytes",
                             sizeof(k.config_file) - 1);
        }
    }
    if (rc == 0 && k.config_file[0]) {
        rc = apply_file(k.config_file, work, d);
    }
    rc = rc == 0 ? apply_env(envp, work, d) : rc;
    rc = rc == 0 ? apply_flags(argc, argv, work, &k, d) : rc;
    rc = rc == 0 ? check(work, d) : rc;
    if (rc == 0) {
        *out = *work;
        *cli = k;
    }
    free(work);
    return rc;
}

void gp_ctl_config_sched(const gp_ctl_config *cfg, gp_sched_config *out)
{
    memset(out, 0, sizeof(*out));
    out->node_policy = cfg->scheduler.node_policy;
    out->gpu_policy = cfg->scheduler.gpu_policy;
    out->backfill = cfg->scheduler.backfill;
    out->util_threshold = cfg->scheduler.util_threshold;
    out->util_weight = cfg->scheduler.util_weight;
    out->cost_weight = cfg->scheduler.cost_weight;
    out->max_preemptions = cfg->scheduler.max_preemptions;
}

/* ---- output: dump, usage, docs ---- */

/* A YAML double-quoted scalar. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\x%02x", *p);
        } else {
            fputc(*p, f);
        }
    }
    fputc('"', f);
}

static bool quoted_type(opt_type t)
{
    return t == T_STRING || t == T_PATH || t == T_ADDR || t == T_URLS || t == T_IMAGE ||
           t == T_TEXT;
}

static void dump_value(FILE *f, const opt *o, const gp_ctl_config *c, const char *indent,
                       const char *leaf)
{
    if (o->type == T_COSTMAP) {
        const gp_ctl_cost_map *m =
            (const gp_ctl_cost_map *)(const void *)((const char *)c + o->off);
        fprintf(f, "%s%s:%s\n", indent, leaf, m->n ? "" : " {}");
        for (int k = 0; k < m->n; k++) {
            char price[32];
            format_double(m->entry[k].price, price, sizeof(price));
            fprintf(f, "%s  ", indent);
            put_quoted(f, m->entry[k].model);
            fprintf(f, ": %s\n", price);
        }
        return;
    }
    char buf[GP_CTL_PATH_MAX + 16];
    format_value(o, c, buf, sizeof(buf));
    fprintf(f, "%s%s: ", indent, leaf);
    if (quoted_type(o->type)) {
        put_quoted(f, buf);
    } else {
        fputs(buf, f);
    }
    fputc('\n', f);
}

int gp_ctl_config_dump(const gp_ctl_config *cfg, FILE *f)
{
    fputs("# gpupoold configuration (defaults < file < GPUPOOL_* environment < flags)\n", f);
    char section[64] = "";
    for (int i = 0; i < NOPTIONS; i++) {
        const opt *o = &options[i];
        const char *dot = strchr(o->key, '.');
        size_t slen = dot ? (size_t)(dot - o->key) : 0;
        if (slen != strlen(section) || strncmp(section, o->key, slen) != 0) {
            snprintf(section, sizeof(section), "%.*s", (int)slen, o->key);
            fprintf(f, "%s:\n", section);
        }
        dump_value(f, o, cfg, dot ? "  " : "", dot ? dot + 1 : o->key);
    }
    return ferror(f) ? GP_EIO : 0;
}

/* The placeholder of a flag's value in --help. */
static void value_name(const opt *o, char *buf, size_t n)
{
    static const char *const names[] = {
        [T_STRING] = "NAME",       [T_PATH] = "PATH",
        [T_ADDR] = "HOST:PORT",    [T_ENUM] = "",
        [T_BOOL] = "[BOOL]",       [T_INT] = "N",
        [T_DOUBLE] = "NUMBER",     [T_DURATION] = "DURATION",
        [T_SIZE] = "SIZE",         [T_COSTMAP] = "MODEL=PRICE,...",
        [T_URLS] = "URL[,URL...]", [T_IMAGE] = "IMAGE",
        [T_TEXT] = "TEXT",
    };
    snprintf(buf, n, "%s", o->type == T_URLS && o->max == 1 ? "URL" : names[o->type]);
    for (int i = 0; o->type == T_ENUM && o->choices[i]; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s", i ? "|" : "", o->choices[i]);
    }
}

/* The type and bounds, for the docs: "integer 1..256", "duration 10ms..1h". */
static void type_text(const opt *o, char *buf, size_t n)
{
    char lo[32], hi[32];
    const unit *units = o->type == T_DURATION ? duration_units : size_units;
    switch (o->type) {
    case T_INT:
        snprintf(buf, n, "integer %lld..%lld", (long long)o->min, (long long)o->max);
        return;
    case T_DOUBLE:
        format_double(o->dmin, lo, sizeof(lo));
        format_double(o->dmax, hi, sizeof(hi));
        snprintf(buf, n, isinf(o->dmax) ? "number >= %s" : "number %s..%s", lo, hi);
        return;
    case T_DURATION:
    case T_SIZE:
        format_scaled(o->min, units, lo, sizeof(lo));
        format_scaled(o->max, units, hi, sizeof(hi));
        snprintf(buf, n, "%s %s..%s", o->type == T_DURATION ? "duration" : "size", lo, hi);
        return;
    case T_ENUM:
        snprintf(buf, n, "one of ");
        for (int i = 0; o->choices[i]; i++) {
            size_t used = strlen(buf);
            snprintf(buf + used, n - used, "%s%s", i ? ", " : "", o->choices[i]);
        }
        return;
    case T_COSTMAP:
        snprintf(buf, n, "map of GPU model to price >= 0 (env and flag: MODEL=PRICE,...)");
        return;
    case T_STRING:
        snprintf(buf, n, "name");
        return;
    case T_PATH:
        snprintf(buf, n, "path");
        return;
    case T_URLS:
        if (o->max > 1) {
            snprintf(buf, n, "http(s) URLs, comma-separated, at most %lld", (long long)o->max);
        } else {
            snprintf(buf, n, "http(s) URL");
        }
        return;
    case T_ADDR:
        snprintf(buf, n, "HOST:PORT%s", o->flags & F_EMPTY_OK ? " or empty" : "");
        return;
    case T_IMAGE:
        snprintf(buf, n, "image reference%s", o->flags & F_EMPTY_OK ? " or empty" : "");
        return;
    case T_TEXT:
        snprintf(buf, n, "text");
        return;
    case T_BOOL:
        snprintf(buf, n, "bool");
        return;
    }
}

static const char *default_text(const opt *o)
{
    return !o->def ? "required" : o->def[0] ? o->def : "empty";
}

void gp_ctl_config_usage(FILE *f)
{
    fputs("usage: gpupoold [--config FILE] [--dump-config] [--help] [--version] "
          "[--SETTING VALUE]...\n\n"
          "Settings come from, lowest precedence first: the defaults below; the YAML file\n"
          "named by --config FILE (or GPUPOOL_CONFIG); GPUPOOL_* environment variables;\n"
          "flags (--SETTING VALUE or --SETTING=VALUE).\n\n"
          "  --config FILE      read settings from a YAML file\n"
          "  --dump-config      print the effective configuration as YAML and exit\n"
          "  --help, -h         print this help and exit\n"
          "  --version, -V      print the version and exit\n\nsettings:\n",
          f);
    for (int i = 0; i < NOPTIONS; i++) {
        const opt *o = &options[i];
        char flag[FLAG_MAX], env[FLAG_MAX], val[128];
        flag_name(o, flag, sizeof(flag));
        env_name(o, env, sizeof(env));
        value_name(o, val, sizeof(val));
        fprintf(f, "  %s %s\n      %s\n      (%s; %s%s)\n", flag, val, o->help, env,
                o->def ? "default " : "", default_text(o));
    }
    fputs("\nDurations: seconds, or a number with ms, s, m, h or d. Sizes: bytes, or a number\n"
          "with B, K/KiB or M/MiB. Booleans: true/false, yes/no, on/off, 1/0.\n",
          f);
}

/* A Markdown table cell, '|' escaped; code cells in backquotes. */
static void put_cell(FILE *f, const char *s, bool code)
{
    fputs(code ? " `" : " ", f);
    for (; *s; s++) {
        if (*s == '|') {
            fputc('\\', f);
        }
        fputc(*s, f);
    }
    fputs(code ? "` |" : " |", f);
}

void gp_ctl_config_doc(FILE *f)
{
    fputs("| Key | Flag | Environment | Type | Default | Meaning |\n"
          "|-----|------|-------------|------|---------|---------|\n",
          f);
    for (int i = 0; i < NOPTIONS; i++) {
        const opt *o = &options[i];
        char flag[FLAG_MAX], env[FLAG_MAX], type[160];
        flag_name(o, flag, sizeof(flag));
        env_name(o, env, sizeof(env));
        type_text(o, type, sizeof(type));
        fputc('|', f);
        put_cell(f, o->key, true);
        put_cell(f, flag, true);
        put_cell(f, env, true);
        put_cell(f, type, false);
        put_cell(f, default_text(o), o->def && o->def[0]);
        put_cell(f, o->help, false);
        fputc('\n', f);
    }
}
