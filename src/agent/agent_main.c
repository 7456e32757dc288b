/*
 * gpupool-agent: the node agent (see agent.h). Flags, else GPUPOOL_* environment:
 *
 *   gpupool-agent --server URL --join-token-file FILE --state-dir DIR [--name NODE]
 *                 [--address HOST:PORT] [--nvml-library PATH] [--run-binary PATH] [--user NAME]
 *                 [--heartbeat MS] [--grace SECONDS] [--log-max BYTES] [--cpu-milli N]
 *                 [--memory-mib N] [--memory-grace SECONDS] [--memory-interval MS]
 *                 [--check-interval SECONDS] [--dev-root DIR] [--mig-minors FILE]
 *                 [--ld-cache FILE] [--cdi-publish auto|none|DIR]
 *                 [--metrics-token-file FILE] [--metrics-auth token|none]
 *                 [--runtime podman|none] [--podman PATH] [--image-cache-max SIZE]
 *                 [--pids-limit N] [--mask PATH[:PATH...]] [--tenant-uids FIRST]
 *                 [--labels KEY=VALUE[,KEY=VALUE...]] [--log-level LEVEL]
 *   gpupool-agent discover [--nvml-library PATH]
 *   gpupool-agent cdi [--nvml-library PATH] [--dev-root DIR] [--mig-minors FILE]
 *                     [--ld-cache FILE] [--output-dir DIR]
 *   gpupool-agent check [--nvml-library PATH] [--expect-gpus N] [--driver-min VERSION]
 *                       [-o table|json]
 *
 * --memory-grace (GPUPOOL_MEMORY_GRACE_SECONDS, default 1, 0 turns it off): how long a fractional
 * replica's processes may hold more GPU memory than its limit, as NVML sees them, before the
 * agent stops the replica (Failed, with the reason; see memwatch.h). --memory-interval
 * (GPUPOOL_MEMORY_INTERVAL_MS, default 500): how often it measures. With the defaults a replica
 * that goes above its limit is stopped within 1.5 s (an interval to see it, the grace to confirm
 * it).
 *
 * --check-interval (GPUPOOL_CHECK_INTERVAL_SECONDS, default 300, 0: only when the controller
 * asks): how often the agent runs the node health check (check.h) and reports it in heartbeats.
 *
 * --runtime (GPUPOOL_RUNTIME, default podman): every replica runs in a podman sandbox
 * (sandbox.h); the agent detects podman at start and does not start without a working one.
 * none: replicas run as host processes with the agent's privileges (no image jobs): only for
 * trusted jobs on nodes without podman. --podman (GPUPOOL_PODMAN): the program. --image-cache-max
 * (GPUPOOL_IMAGE_CACHE_MAX, default 100G, 0: no cap): bytes of images kept (suffixes K, M, G, T:
 * powers of 1024), the least recently used evicted (images.h). --pids-limit (GPUPOOL_PIDS_LIMIT,
 * default 4096): processes and threads per replica. --mask (GPUPOOL_MASK): more host paths,
 * ':'-separated, hidden from jobs over the host root (the state directory, the join and metrics
 * token files and podman's storage always are). --tenant-uids (GPUPOOL_TENANT_UIDS, default
 * 1073741824): where the tenants' host id ranges start (idmap.h: tenant T's jobs run as FIRST + T *
 * 65536 + their uid); give every node the same; the agent does not start when the ranges meet one
 * of /etc/subuid or /etc/subgid.
 *
 * --address HOST:PORT (GPUPOOL_ADDRESS): where others reach this node (gangs) and where the agent
 * serves /metrics and the replicas' logs; port 0 binds a free port, and the node registers with
 * the port bound (logged as listening=HOST:PORT).
 *
 * The CDI spec (cdi_host.h): --dev-root (GPUPOOL_DEV_ROOT, default /dev) is where the GPUs' device
 * nodes are; --mig-minors (GPUPOOL_MIG_MINORS) the driver's MIG capability table; --ld-cache
 * (GPUPOOL_LD_CACHE) the ld cache the driver's libraries are found in; --cdi-publish
 * (GPUPOOL_CDI_PUBLISH): where the spec is also written for podman (auto: /var/run/cdi on a node
 * with the NVIDIA driver, nowhere on the mock NVML; none; or a directory). `cdi` prints the spec
 * the agent would write (or writes it as DIR/gpupool.json with --output-dir) and exits: 0, 1 when
 * NVML fails or the file cannot be written, 2 for bad usage.
 *
 * discover prints what NVML reports about this machine as JSON (see discover.h) and exits.
 * check runs the node health check once and prints every check with its status, and the
 * findings; exit 0 when no finding is fatal, 1 when one is (NVML not loading is one), 2 for bad
 * usage.
 * Runs until SIGTERM or SIGINT; stopping the agent never stops the jobs. Exit codes: 0 after a
 * clean stop, 1 when it cannot start (NVML, registration), 2 for bad usage.
 *
 * The loop: a round (heartbeat, converge) every --heartbeat ms; between rounds, long-polls of
 * the desired replicas (gp_agent_watch) lasting until the next round but at most WATCH_MAX_MS
 * each, so a signal, which stays pending while a call is in flight, is taken within about a
 * second. After replicas were started, the agent looks at them every STARTS_POLL_MS instead
 * (up to a few seconds), and runs a round as soon as one of them runs, so the controller hears
 * of it at once (starts.h).
 */
#include "agent/agent.h"
#include "base/clock.h"
#include "agent/cdi_host.h"
#include "agent/check.h"
#include "agent/discover.h"
#include "agent/idmap.h"

#include "base/log.h"
#include "base/textfile.h"
#include "net/http_client.h"
#include "net/servers.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct flag {
    const char *name;
    const char *env;
    char *dst;
    size_t cap;
} flag;

static int usage(const char *msg)
{
    if (msg) {
        fprintf(stderr, "gpupool-agent: %s\n", msg);
    }
    fprintf(stderr,
            "usage: gpupool-agent --server URL[,URL...] --join-token-file FILE --state-dir DIR\n"
            "                     [--cacert FILE] [--name NODE] [--address HOST:PORT]\n"
            "                     [--nvml-library PATH]\n"
            "                     [--run-binary PATH] [--user NAME] [--heartbeat MS]\n"
            "                     [--grace SECONDS] [--log-max BYTES] [--cpu-milli N]\n"
            "                     [--memory-mib N] [--memory-grace SECONDS]\n"
            "                     [--memory-interval MS] [--check-interval SECONDS]\n"
            "                     [--dev-root DIR] [--mig-minors FILE] [--ld-cache FILE]\n"
            "                     [--cdi-publish auto|none|DIR]\n"
            "                     [--metrics-token-file FILE] [--metrics-auth token|none]\n"
            "                     [--runtime podman|none] [--podman PATH]\n"
            "                     [--image-cache-max SIZE] [--pids-limit N]\n"
            "                     [--mask PATH[:PATH...]] [--tenant-uids FIRST]\n"
            "                     [--labels KEY=VALUE[,KEY=VALUE...]]\n"
            "                     [--log-level debug|info|warn|error]\n"
            "       gpupool-agent discover [--nvml-library PATH]\n"
            "       gpupool-agent cdi [--nvml-library PATH] [--dev-root DIR]\n"
            "                         [--mig-minors FILE] [--ld-cache FILE] [--output-dir DIR]\n"
            "       gpupool-agent check [--nvml-library PATH] [--expect-gpus N]\n"
            "                           [--driver-min VERSION] [-o table|json]\n"
            "--cacert: CA certificates (PEM) that an https controller's certificate is checked\n"
            "against (default: the system's).\n"
            "--memory-grace: a fractional replica whose processes hold more GPU memory than\n"
            "its limit (per NVML) for this long is stopped and fails (default 1; 0: off).\n"
            "--memory-interval: how often that is measured (default 500 ms; 50..60000).\n"
            "--address: where this node is reached and serves /metrics and logs; port 0: a\n"
            "free port, registered as bound.\n"
            "--metrics-token-file: the bearer token Prometheus scrapes /metrics with (the page\n"
            "names the node's jobs and tenants, and jobs share the node's network); without\n"
            "it only the controller reads /metrics. --metrics-auth none serves it to anyone.\n"
            "--runtime: podman (default) runs every job in a sandbox (its image, or the\n"
            "host's root read-only; no root, no capabilities) and needs a working podman;\n"
            "none runs jobs as host processes with the agent's privileges (trusted jobs only).\n"
            "--image-cache-max: bytes of images kept, least recently used evicted (default\n"
            "100G; 0: no cap). --pids-limit: processes per job (default 4096). --mask: more\n"
            "host paths hidden from jobs over the host root. --tenant-uids: the first host\n"
            "uid of the tenants' ranges (default 1073741824; tenant T: FIRST + T * 65536).\n"
            "--labels: the node's labels (zone=a,gpu-type=a100), sent when it registers;\n"
            "jobs pick nodes by them (node_selector, spread). Every node also has the label\n"
            "kubernetes.io/hostname=NAME.\n"
            "--check-interval: the node health check runs at start and this often (default\n"
            "300; 0: only when the controller asks). `check` runs it once: exit 0 without a\n"
            "fatal finding, 1 with one.\n"
            "--dev-root: where the GPU device nodes are (default /dev); --mig-minors: the\n"
            "driver's MIG capability table; --ld-cache: where the driver's libraries are\n"
            "found; --cdi-publish: where the CDI spec is also written for podman (auto:\n"
            "/var/run/cdi with the NVIDIA driver, not with a mock NVML). `cdi` prints the\n"
            "spec the agent writes into STATE/cdi/gpupool.json.\n"
            "Each flag may also come from GPUPOOL_<FLAG> (e.g. GPUPOOL_SERVER); the NVML\n"
            "library from GPUPOOL_NVML_LIBRARY, --memory-grace from\n"
            "GPUPOOL_MEMORY_GRACE_SECONDS, --memory-interval from\n"
            "GPUPOOL_MEMORY_INTERVAL_MS, --check-interval from\n"
            "GPUPOOL_CHECK_INTERVAL_SECONDS, --dev-root from GPUPOOL_DEV_ROOT.\n");
    return 2;
}

/* Reads the first line of the secret file path (what names it in messages) into buf. */
static int read_secret(const char *what, const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gpupool-agent: %s %s: %s\n", what, path, strerror(errno));
        return -1;
    }
    bool ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\r\n")] = 0;
    if (!ok || !buf[0]) {
        fprintf(stderr, "gpupool-agent: %s %s: empty\n", what, path);
        return -1;
    }
    return 0;
}

/* The longest long-poll: bounds how long a pending SIGTERM waits for the call in flight. */
#define WATCH_MAX_MS 1000
/* Less time than this before the next round is slept, not polled. */
#define WATCH_MIN_MS 20
/* While replicas it started are still starting, the agent looks at them this often (and does
 * not long-poll), to report them Running as soon as they run (starts.h). */
#define STARTS_POLL_MS 20

/* Waits up to ms (0: just looks) for SIGINT or SIGTERM; the signal, or -1. */
static int wait_signal(const sigset_t *set, int64_t ms)
{
    ms = ms > 0 ? ms : 0;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    return sigtimedwait(set, NULL, &ts);
}

/* Rounds every heartbeat_ms and long-polls between them, until a signal; returns it. */
static int run_loop(gp_agent *a, const gp_agent_config *cfg, const sigset_t *set)
{
    int sig = -1;
    int64_t next = gp_mono_ms();
    while (sig < 0) {
        gp_diag d;
        gp_diag_clear(&d);
        int64_t now = gp_mono_ms();
        if (now >= next) {
            if (gp_agent_round(a, &d) < 0 || d.code) {
                GP_LOG(GP_LOG_WARN, "agent", "round: %s", d.msg);
            }
            next = now + cfg->heartbeat_ms;
            sig = wait_signal(set, 0);
            continue;
        }
        int starts = gp_agent_starts_due(a);
        if (starts == 1) {
            next = now; /* a replica came up: report it now */
            continue;
        }
        if (starts == 0) {
            int64_t nap = next - now < STARTS_POLL_MS ? next - now : STARTS_POLL_MS;
            sig = wait_signal(set, nap);
            continue;
        }
        int64_t left = next - now;
        if (left >= WATCH_MIN_MS) {
            int w = gp_agent_watch(a, left < WATCH_MAX_MS ? left : WATCH_MAX_MS, &d);
            if (w >= 0) {
                next = w == 2 ? gp_mono_ms() : next; /* a requested check: send it now */
                sig = wait_signal(set, 0);
                continue;
            }
            GP_LOG(GP_LOG_DEBUG, "agent", "long-poll: %s", d.msg);
        }
        sig = wait_signal(set, next - gp_mono_ms()); /* the next round will do */
    }
    return sig;
}

static bool number(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !*s || *end || v < lo || v > hi) {
        return false;
    }
    *out = v;
    return true;
}

/* gpupool-agent discover [--nvml-library PATH]: 0, 1 when NVML fails, 2 for bad usage. */
static int discover_main(int argc, char **argv)
{
    const char *lib = getenv("GPUPOOL_NVML_LIBRARY");
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--nvml-library") && i + 1 < argc) {
            lib = argv[++i];
        } else {
            char msg[300];
            snprintf(msg, sizeof(msg), "discover: %s: unknown flag or missing value", argv[i]);
            return usage(msg);
        }
    }
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_nvml_discover(lib, stdout, &d) < 0) {
        fprintf(stderr, "gpupool-agent discover: %s\n", d.msg);
        return 1;
    }
    return 0;
}

/* gpupool-agent cdi: 0, 1 when NVML fails or the spec cannot be written, 2 for bad usage. */
static int cdi_main(int argc, char **argv)
{
    const char *lib = getenv("GPUPOOL_NVML_LIBRARY"), *out_dir = NULL;
    gp_cdi_options o = {getenv("GPUPOOL_DEV_ROOT"), getenv("GPUPOOL_MIG_MINORS"),
                        getenv("GPUPOOL_LD_CACHE"), NULL};
    for (int i = 2; i < argc; i += 2) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char msg[300];
        snprintf(msg, sizeof(msg), "cdi: %s: unknown flag or missing value", f);
        if (!v) {
            return usage(msg);
        } else if (!strcmp(f, "--nvml-library")) {
            lib = v;
        } else if (!strcmp(f, "--dev-root")) {
            o.dev_root = v;
        } else if (!strcmp(f, "--mig-minors")) {
            o.mig_minors = v;
        } else if (!strcmp(f, "--ld-cache")) {
            o.ld_cache = v;
        } else if (!strcmp(f, "--output-dir")) {
            out_dir = v;
        } else {
            return usage(msg);
        }
    }
    if ((o.dev_root && o.dev_root[0] && o.dev_root[0] != '/') || (out_dir && out_dir[0] != '/')) {
        return usage("cdi: --dev-root and --output-dir take absolute directories");
    }
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_cdi_generate(&o, lib, out_dir, stdout, &d) < 0) {
        fprintf(stderr, "gpupool-agent cdi: %s\n", d.msg);
        return 1;
    }
    return 0;
}

/* The check's result as a table: every check, then the findings, then the verdict. */
static void print_table(const gp_check_result *res, FILE *out)
{
    fprintf(out, "%-16s %-8s %s\n", "CHECK", "STATUS", "DETAIL");
    for (int c = 0; c < GP_CHECK_COUNT; c++) {
        fprintf(out, "%-16s %-8s %s\n", gp_check_name((gp_check_id)c),
                gp_check_status_name(res->status[c]), res->detail[c]);
    }
    if (res->nfindings > 0) {
        fprintf(out, "\n%-8s %-4s %-16s %s\n", "SEVERITY", "GPU", "CHECK", "MESSAGE");
    }
    for (int i = 0; i < res->nfindings; i++) {
        const gp_check_finding *f = &res->findings[i];
        char gpu[16];
        snprintf(gpu, sizeof(gpu), "%d", f->gpu);
        fprintf(out, "%-8s %-4s %-16s %s\n", gp_check_severity_name(f->severity),
                f->gpu < 0 ? "-" : gpu, gp_check_name(f->check), f->message);
    }
    fprintf(out, "\n%s: %d fatal, %d warning%s\n", res->fatal ? "UNHEALTHY" : "healthy", res->fatal,
            res->nfindings - res->fatal, res->nfindings - res->fatal == 1 ? "" : "s");
}

/* The flags of check into *e, *lib and *json; 0, or usage's exit code. */
static int check_flags(int argc, char **argv, gp_check_expect *e, const char **lib, bool *json)
{
    for (int i = 2; i < argc; i += 2) { /* every flag takes a value */
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n = 0;
        int cmp = 0;
        char msg[300];
        snprintf(msg, sizeof(msg), "check: %s: unknown flag or missing value", f);
        if (!v) {
            return usage(msg);
        } else if (!strcmp(f, "--nvml-library")) {
            *lib = v;
        } else if (!strcmp(f, "--expect-gpus")) {
            if (!number(v, 0, GP_CHECK_MAX_GPUS, &n)) {
                return usage("check: --expect-gpus: a whole number of GPUs, 0..32");
            }
            e->gpus = (int)n;
        } else if (!strcmp(f, "--driver-min")) {
            if (strlen(v) >= sizeof(e->driver_min) || gp_check_version_cmp(v, v, &cmp) < 0) {
                return usage("check: --driver-min: a version of numbers and dots (535.104.05)");
            }
            snprintf(e->driver_min, sizeof(e->driver_min), "%s", v);
        } else if (!strcmp(f, "-o") || !strcmp(f, "--output")) {
            if (strcmp(v, "table") != 0 && strcmp(v, "json") != 0) {
                return usage("check: -o: table or json");
            }
            *json = !strcmp(v, "json");
        } else {
            return usage(msg);
        }
    }
    return 0;
}

/* gpupool-agent check: 0 without a fatal finding, 1 with one, 2 for bad usage. */
static int check_main(int argc, char **argv)
{
    const char *lib = getenv("GPUPOOL_NVML_LIBRARY");
    bool json = false;
    gp_check_expect e;
    gp_check_expect_init(&e);
    int rc = check_flags(argc, argv, &e, &lib, &json);
    if (rc) {
        return rc;
    }
    gp_check_readings *r = malloc(sizeof(*r));
    gp_check_result *res = malloc(sizeof(*res));
    if (!r || !res) {
        free(r);
        free(res);
        fprintf(stderr, "gpupool-agent check: out of memory\n");
        return 1;
    }
    gp_nvml *h = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_nvml_open_partial(lib, &h, &d) < 0) {
        gp_check_readings_init(r);
        snprintf(r->driver_error, sizeof(r->driver_error), "%s", d.msg);
        fprintf(stderr, "gpupool-agent check: %s\n", d.msg);
    } else {
        gp_nvml_health(h, r);
        gp_nvml_close(h);
    }
    gp_check_evaluate(r, &e, res);
    if (json) {
        json_t *doc = gp_check_result_json(res, r);
        if (doc) {
            json_dumpf(doc, stdout, JSON_INDENT(2));
            fputc('\n', stdout);
        }
        json_decref(doc);
    } else {
        print_table(res, stdout);
    }
    rc = res->fatal ? 1 : 0;
    free(r);
    free(res);
    return rc;
}

/* A size in bytes with an optional K, M, G or T (powers of 1024). */
static bool size_value(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    int shift = !*end               ? 0
                : !strcmp(end, "K") ? 10
                : !strcmp(end, "M") ? 20
                : !strcmp(end, "G") ? 30
                : !strcmp(end, "T") ? 40
                                    : -1;
    if (errno || end == s || v < 0 || shift < 0 || v > (INT64_MAX >> shift)) {
        return false;
    }
    *out = (int64_t)v << shift;
    return true;
}

/* Whether the tenants' ranges from first stay clear of the host's subordinate ids (useradd's
 * ranges for rootless users): 1, else 0 with the reason on stderr. */
static int tenant_uids_clear(int64_t first)
{
    static const char *const files[] = {"/etc/subuid", "/etc/subgid"};
    int64_t end = first + gp_idmap_tenants(first) * GP_IDMAP_SIZE;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char who[256];
        char *text = gp_text_read(files[i], 16u << 20, NULL);
        if (!text && errno != ENOENT) {
            fprintf(stderr, "gpupool-agent: %s: %s\n", files[i], strerror(errno));
            return 0;
        }
        int hit = text && gp_idmap_subid_overlap(text, first, end, who, sizeof(who));
        free(text);
        if (hit) {
            fprintf(stderr,
                    "gpupool-agent: --tenant-uids %lld: the tenants' host ids %lld to %lld meet "
                    "%s's \"%s\"; give a FIRST past it\n",
                    (long long)first, (long long)first, (long long)end - 1, files[i], who);
            return 0;
        }
    }
    return 1;
}

/* The sandbox's flags into cfg; 0, or usage's exit code. */
static int sandbox_flags(gp_agent_config *cfg, const char *cache, const char *pids,
                         const char *uids)
{
    if (uids[0] &&
        (!number(uids, GP_IDMAP_FIRST_MIN, GP_IDMAP_END - GP_IDMAP_SIZE, &cfg->tenant_uids))) {
        return usage("--tenant-uids: the first host uid of the tenants' ranges, 65536 to "
                     "4294901759");
    }
    if (strcmp(cfg->runtime, "podman") != 0 && strcmp(cfg->runtime, "none") != 0) {
        return usage("--runtime: podman or none");
    }
    if (cache[0] && !size_value(cache, &cfg->image_cache_max)) {
        return usage("--image-cache-max: bytes, with an optional K, M, G or T (0: no cap)");
    }
    if (pids[0] && !number(pids, 0, 1 << 30, &cfg->pids_limit)) {
        return usage("--pids-limit: a whole number of processes (0: podman's default)");
    }
    for (const char *p = cfg->masks; *p;) {
        size_t len = strcspn(p, ":");
        if (len > 0 && p[0] != '/') {
            return usage("--mask: absolute paths, ':' between them");
        }
        p += len + (p[len] == ':');
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "discover")) {
        return discover_main(argc, argv);
    }
    if (argc > 1 && !strcmp(argv[1], "check")) {
        return check_main(argc, argv);
    }
    if (argc > 1 && !strcmp(argv[1], "cdi")) {
        return cdi_main(argc, argv);
    }
    gp_agent_config cfg = {.heartbeat_ms = 1000,
                           .grace_s = 10,
                           .log_max = 64 << 20,
                           .finished_keep = 200,
                           .memory_grace_s = 1,
                           .memory_interval_ms = 500,
                           .check_interval_s = 300,
                           .runtime = "podman",
                           .image_cache_max = INT64_C(100) << 30,
                           .pids_limit = 4096,
                           .tenant_uids = GP_IDMAP_FIRST_DEFAULT};
    char token_file[GP_AGENT_PATH_MAX] = "", heartbeat[32] = "", grace[32] = "", logmax[32] = "",
         cpu[32] = "", mem[32] = "", mgrace[32] = "", minterval[32] = "", cinterval[32] = "",
         level[16] = "info", metrics_file[GP_AGENT_PATH_MAX] = "", metrics_auth[16] = "token",
         cache[32] = "", pids[32] = "", uids[32] = "";
    flag flags[] = {
        {"--server", "GPUPOOL_SERVER", cfg.server, sizeof(cfg.server)},
        {"--join-token-file", "GPUPOOL_JOIN_TOKEN_FILE", token_file, sizeof(token_file)},
        {"--cacert", "GPUPOOL_CACERT", cfg.cacert, sizeof(cfg.cacert)},
        {"--state-dir", "GPUPOOL_STATE_DIR", cfg.state_dir, sizeof(cfg.state_dir)},
        {"--name", "GPUPOOL_NODE_NAME", cfg.name, sizeof(cfg.name)},
        {"--address", "GPUPOOL_ADDRESS", cfg.address, sizeof(cfg.address)},
        {"--nvml-library", "GPUPOOL_NVML_LIBRARY", cfg.nvml_library, sizeof(cfg.nvml_library)},
        {"--run-binary", "GPUPOOL_RUN_BINARY", cfg.run_binary, sizeof(cfg.run_binary)},
        {"--user", "GPUPOOL_RUN_USER", cfg.user, sizeof(cfg.user)},
        {"--heartbeat", "GPUPOOL_HEARTBEAT_MS", heartbeat, sizeof(heartbeat)},
        {"--grace", "GPUPOOL_GRACE_SECONDS", grace, sizeof(grace)},
        {"--log-max", "GPUPOOL_LOG_MAX", logmax, sizeof(logmax)},
        {"--cpu-milli", "GPUPOOL_CPU_MILLI", cpu, sizeof(cpu)},
        {"--memory-mib", "GPUPOOL_MEMORY_MIB", mem, sizeof(mem)},
        {"--memory-grace", "GPUPOOL_MEMORY_GRACE_SECONDS", mgrace, sizeof(mgrace)},
        {"--memory-interval", "GPUPOOL_MEMORY_INTERVAL_MS", minterval, sizeof(minterval)},
        {"--check-interval", "GPUPOOL_CHECK_INTERVAL_SECONDS", cinterval, sizeof(cinterval)},
        {"--dev-root", "GPUPOOL_DEV_ROOT", cfg.dev_root, sizeof(cfg.dev_root)},
        {"--mig-minors", "GPUPOOL_MIG_MINORS", cfg.mig_minors, sizeof(cfg.mig_minors)},
        {"--ld-cache", "GPUPOOL_LD_CACHE", cfg.ld_cache, sizeof(cfg.ld_cache)},
        {"--cdi-publish", "GPUPOOL_CDI_PUBLISH", cfg.cdi_publish, sizeof(cfg.cdi_publish)},
        {"--metrics-token-file", "GPUPOOL_METRICS_TOKEN_FILE", metrics_file, sizeof(metrics_file)},
        {"--metrics-auth", "GPUPOOL_METRICS_AUTH", metrics_auth, sizeof(metrics_auth)},
        {"--runtime", "GPUPOOL_RUNTIME", cfg.runtime, sizeof(cfg.runtime)},
        {"--podman", "GPUPOOL_PODMAN", cfg.podman, sizeof(cfg.podman)},
        {"--image-cache-max", "GPUPOOL_IMAGE_CACHE_MAX", cache, sizeof(cache)},
        {"--pids-limit", "GPUPOOL_PIDS_LIMIT", pids, sizeof(pids)},
        {"--mask", "GPUPOOL_MASK", cfg.masks, sizeof(cfg.masks)},
        {"--tenant-uids", "GPUPOOL_TENANT_UIDS", uids, sizeof(uids)},
        {"--log-level", "GPUPOOL_LOG_LEVEL", level, sizeof(level)},
        {"--labels", "GPUPOOL_NODE_LABELS", cfg.labels, sizeof(cfg.labels)},
    };
    int nflags = (int)(sizeof(flags) / sizeof(flags[0]));
    for (int f = 0; f < nflags; f++) {
        const char *v = getenv(flags[f].env);
        if (v) {
            snprintf(flags[f].dst, flags[f].cap, "%s", v);
        }
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(NULL);
            return 0;
        }
        int f = 0;
        while (f < nflags && strcmp(argv[i], flags[f].name) != 0) {
            f++;
        }
        if (f == nflags) {
            char msg[300];
            snprintf(msg, sizeof(msg), "%s: unknown flag", argv[i]);
            return usage(msg);
        }
        if (i + 1 >= argc) {
            char msg[300];
            snprintf(msg, sizeof(msg), "%s: needs a value", argv[i]);
            return usage(msg);
        }
        snprintf(flags[f].dst, flags[f].cap, "%s", argv[++i]);
    }
    gp_log_level lv;
    if (gp_log_parse_level(level, &lv) < 0) {
        return usage("--log-level: must be debug, info, warn or error");
    }
    gp_log_set_level(lv);
    int64_t x;
    if ((heartbeat[0] && !number(heartbeat, 50, 600000, &cfg.heartbeat_ms)) ||
        (grace[0] && !number(grace, 0, 3600, &x)) ||
        (logmax[0] && !number(logmax, 0, INT64_MAX, &cfg.log_max)) ||
        (cpu[0] && !number(cpu, 1, INT64_C(1) << 40, &cfg.cpu_milli)) ||
        (mem[0] && !number(mem, 1, INT64_C(1) << 40, &cfg.memory_mib))) {
        return usage("--heartbeat, --grace, --log-max, --cpu-milli and --memory-mib take "
                     "positive whole numbers (heartbeat 50..600000 ms, grace 0..3600 s)");
    }
    if (grace[0]) {
        cfg.grace_s = (int)x;
    }
    if (mgrace[0] && !number(mgrace, 0, 86400, &x)) {
        return usage("--memory-grace: a whole number of seconds, 0..86400 (0: no GPU memory "
                     "watch)");
    }
    if (mgrace[0]) {
        cfg.memory_grace_s = (int)x;
    }
    if (minterval[0] && !number(minterval, 50, 60000, &cfg.memory_interval_ms)) {
        return usage("--memory-interval: a whole number of milliseconds, 50..60000");
    }
    if (cinterval[0] && !number(cinterval, 0, 86400, &x)) {
        return usage("--check-interval: a whole number of seconds, 0..86400 (0: only when the "
                     "controller asks)");
    }
    if (cinterval[0]) {
        cfg.check_interval_s = (int)x;
    }
    if (cfg.dev_root[0] && cfg.dev_root[0] != '/') {
        return usage("--dev-root: an absolute directory");
    }
    if (cfg.cdi_publish[0] && cfg.cdi_publish[0] != '/' && strcmp(cfg.cdi_publish, "auto") != 0 &&
        strcmp(cfg.cdi_publish, "none") != 0) {
        return usage("--cdi-publish: auto, none or an absolute directory");
    }
    if (strcmp(metrics_auth, "token") != 0 && strcmp(metrics_auth, "none") != 0) {
        return usage("--metrics-auth: token or none");
    }
    cfg.metrics_open = strcmp(metrics_auth, "none") == 0;
    json_t *labels = NULL;
    gp_diag ld;
    if (gp_agent_labels(cfg.labels, &labels, &ld) < 0) {
        return usage(ld.msg);
    }
    json_decref(labels);
    int sandbox_rc = sandbox_flags(&cfg, cache, pids, uids);
    if (sandbox_rc) {
        return sandbox_rc;
    }
    if (strcmp(cfg.runtime, "podman") == 0 && !tenant_uids_clear(cfg.tenant_uids)) {
        return 1;
    }
    /* a sandboxed job's user is an id of its tenant's range (idmap.h) */
    struct passwd *pw = cfg.user[0] ? getpwnam(cfg.user) : NULL;
    if (pw && strcmp(cfg.runtime, "podman") == 0 &&
        (pw->pw_uid >= GP_IDMAP_SIZE || pw->pw_gid >= GP_IDMAP_SIZE)) {
        return usage("--user: a sandboxed job's user needs a uid and gid below 65536");
    }
    if (!cfg.server[0] || !token_file[0] || !cfg.state_dir[0]) {
        return usage("--server, --join-token-file and --state-dir are required");
    }
    gp_servers servers;
    gp_diag sd;
    if (gp_servers_parse(cfg.server, &servers, &sd) < 0) {
        fprintf(stderr, "gpupool-agent: --server: %s\n", sd.msg);
        return 2;
    }
    if (cfg.cacert[0] && access(cfg.cacert, R_OK) != 0) {
        fprintf(stderr, "gpupool-agent: --cacert %s: %s\n", cfg.cacert, strerror(errno));
        return 2;
    }
    if (!cfg.name[0] && gethostname(cfg.name, sizeof(cfg.name) - 1) != 0) {
        return usage("--name: the host name is unknown; give one");
    }
    if (!cfg.run_binary[0]) {
        /* gpupool-run beside this program */
        char self[GP_AGENT_PATH_MAX - 16];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        self[n > 0 ? n : 0] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = 0;
        }
        snprintf(cfg.run_binary, sizeof(cfg.run_binary), "%s/gpupool-run", self);
    }
    snprintf(cfg.join_token_file, sizeof(cfg.join_token_file), "%s", token_file);
    snprintf(cfg.metrics_token_file, sizeof(cfg.metrics_token_file), "%s", metrics_file);
    if (read_secret("join token file", token_file, cfg.join_token, sizeof(cfg.join_token)) < 0 ||
        (metrics_file[0] && read_secret("--metrics-token-file", metrics_file, cfg.metrics_token,
                                        sizeof(cfg.metrics_token)) < 0)) {
        return 1;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    gp_http_client_global_init();
    gp_agent *a;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_agent_new(&cfg, &a, &d) < 0) {
        fprintf(stderr, "gpupool-agent: %s\n", d.msg);
        gp_http_client_global_cleanup();
        return 1;
    }
    int sig = run_loop(a, &cfg, &set);
    GP_LOG(GP_LOG_INFO, "agent", "signal=%d stopping; jobs keep running", sig);
    gp_agent_free(a);
    gp_http_client_global_cleanup();
    return 0;
}
