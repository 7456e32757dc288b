/*
 * gpupool up / gpupool down: a whole pool on one machine.
 *
 * `up` starts gpupoold (its data in DIR, created with its parents when missing: the database,
 * admin.token, join.token, scrape.token: the pool's metrics token, made through the API once the
 * controller answers) and one gpupool-agent per node
 * of SPEC, each with its own state directory under DIR/agents/NAME and, for simulated nodes, its
 * own copy of a mock NVML inventory (GPU and MIG UUIDs made unique per node). Every process runs
 * detached in a session of its own, its log in DIR/logs/, its pid in DIR/pids/ (for people and
 * tests: `down` does not trust these files). The controller listens on 127.0.0.1:PORT; each agent
 * is told the address 127.0.0.1:0, binds a free port itself and registers with the port it got, so
 * other services on the machine never collide with it. `up` returns once the controller answers and
 * every agent has registered. When it fails (a process exits at start, or does not come up in
 * time), it stops every process of the pool before it returns. With no --nodes on a machine whose
 * NVML library loads, one agent uses the real GPUs instead.
 *
 * `down` stops the pool's processes as /proc shows them (pool_procs.h), however they were
 * started: the agents, the jobs' supervisors (each stops its job's process group) and gpupoold,
 * waiting for each.
 *
 * The programs are found beside this one (gpupoold, gpupool-agent, gpupool-run) and the mock
 * library in ../lib; inventories in GP_INVENTORY_DIR (the source tree's deploy/inventories in a
 * build, or a path given in SPEC).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli/args.h"
#include "cli/cli.h"
#include "cli/secretfile.h"
#include "cli/client.h"
#include "cli/pool_procs.h"
#include "net/http_client.h"
#include "net/token.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef GP_INVENTORY_DIR
#define GP_INVENTORY_DIR "/usr/share/gpupool/inventories"
#endif

#define UP_PATH      1024
#define UP_MAX_NODES 64

static const gp_cli_opt up_opts[] = {
    {"data-dir", 'd', "DIR", "where the pool keeps everything (default ./gpupool-pool)"},
    {"port", 'p', "PORT", "the controller's port on 127.0.0.1 (default 7070)"},
    {"nodes", 'n', "SPEC",
     "simulated nodes: INVENTORY[:COUNT],... (default dgx-a100:2,pcie-t4:1; INVENTORY is a "
     "name in " GP_INVENTORY_DIR " or a YAML file)"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec up_spec = {"up",
                                    "up [--data-dir DIR] [--port PORT] [--nodes SPEC]",
                                    "Start a local pool in the background: gpupoold and one "
                                    "agent per node (mock NVML for simulated nodes).",
                                    up_opts,
                                    0,
                                    0,
                                    0};

static const gp_cli_opt down_opts[] = {
    {"data-dir", 'd', "DIR", "the pool's directory (default ./gpupool-pool)"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec down_spec = {"down",
                                      "down [--data-dir DIR]",
                                      "Stop a pool started by gpupool up: its agents, jobs and "
                                      "controller.",
                                      down_opts,
                                      0,
                                      0,
                                      0};

/* snprintf for paths: a path that does not fit is cut (and then fails to open), never overrun;
 * through vsnprintf, so the compiler does not guess at lengths it cannot know. */
static void pathf(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pathf(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* The directory of this program. */
static void self_dir(char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    buf[n > 0 ? n : 0] = 0;
    char *slash = strrchr(buf, '/');
    if (slash) {
        *slash = 0;
    }
}

/* mkdir -p: dir's missing parents (mode 0755 less the umask), then dir itself (mode 0700: it
 * holds the tokens). */
static int make_path(const char *dir)
{
    char path[UP_PATH];
    pathf(path, sizeof(path), "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') {
            continue;
        }
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "gpupool up: %s: %s\n", path, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "gpupool up: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int make_dirs(const char *dir)
{
    char path[UP_PATH];
    const char *subs[] = {"/logs", "/pids", "/agents"};
    if (make_path(dir) < 0) {
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        pathf(path, sizeof(path), "%s%s", dir, subs[i]);
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            fprintf(stderr, "gpupool up: %s: %s\n", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* The pids of the processes of the pool at dir (every kind) into pids; how many. */
static int pool_pids(const char *dir, pid_t *pids, int cap)
{
    int n = 0;
    for (int k = 0; k < GP_POOL_NKINDS && n < cap; k++) {
        n += gp_pool_find(dir, (gp_pool_kind)k, pids + n, cap - n);
    }
    return n;
}

/* Starts argv detached (new session, stdin /dev/null, output to DIR/logs/NAME.log) with the
 * extra environment variables env ("NAME=VALUE", NULL-terminated; may be NULL), records its
 * pid in DIR/pids/NAME.pid and in *started. */
static int spawn(const char *dir, const char *name, char *const *argv, char *const *env,
                 pid_t *started)
{
    char log[UP_PATH], pidpath[UP_PATH];
    pathf(log, sizeof(log), "%s/logs/%s.log", dir, name);
    pathf(pidpath, sizeof(pidpath), "%s/pids/%s.pid", dir, name);
    int pfd[2];
    if (pipe(pfd) != 0) {
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        return -1;
    }
    if (pid == 0) {
        close(pfd[0]);
        setsid();
        pid_t child = fork();
        if (child != 0) {
            ssize_t w = write(pfd[1], &child, sizeof(child));
            (void)w;
            _exit(child > 0 ? 0 : 1);
        }
        int in = open("/dev/null", O_RDONLY), out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) {
            _exit(127);
        }
        close(pfd[1]);
        for (int i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            char var[128];
            snprintf(var, sizeof(var), "%.*s", (int)(eq - env[i]), env[i]);
            setenv(var, eq + 1, 1);
        }
        execv(argv[0], argv);
        dprintf(2, "gpupool up: exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    pid_t child = 0;
    ssize_t r = read(pfd[0], &child, sizeof(child));
    close(pfd[0]);
    waitpid(pid, NULL, 0);
    if (r != sizeof(child) || child <= 0) {
        return -1;
    }
    *started = child;
    FILE *f = fopen(pidpath, "w");
    if (!f) {
        return -1;
    }
    fprintf(f, "%ld\n", (long)child);
    return fclose(f) == 0 ? 0 : -1;
}

/* Copies the inventory at src to dst with every GPU and MIG UUID made unique to node. */
static int node_inventory(const char *src, const char *dst, const char *node)
{
    FILE *in = fopen(src, "r");
    if (!in) {
        fprintf(stderr, "gpupool up: inventory %s: %s\n", src, strerror(errno));
        return -1;
    }
    FILE *out = fopen(dst, "w");
    if (!out) {
        fclose(in);
        fprintf(stderr, "gpupool up: %s: %s\n", dst, strerror(errno));
        return -1;
    }
    char line[4096];
    while (fgets(line, sizeof(line), in)) {
        for (char *p = line; *p; p++) {
            bool gpu = strncmp(p, "GPU-", 4) == 0, mig = strncmp(p, "MIG-", 4) == 0;
            bool word = p == line || !(p[-1] == '-' || (p[-1] >= 'A' && p[-1] <= 'Z'));
            if ((gpu || mig) && word && strstr(line, "uuid")) {
                fprintf(out, "%.4s%s-", p, node);
                p += 3;
            } else {
                fputc(*p, out);
            }
        }
    }
    fclose(in);
    return fclose(out) == 0 ? 0 : -1;
}

/* Whether the real NVML library loads (a machine with NVIDIA GPUs). */
static bool real_nvml(void)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        dlclose(h);
    }
    return h != NULL;
}

typedef struct up_node {
    char name[64];
    char inventory[UP_PATH]; /* "" = the real NVML */
} up_node;

/* Parses SPEC into nodes; -1 after printing what is wrong. */
static int parse_nodes(const char *spec, up_node *nodes, int *n)
{
    char buf[UP_PATH];
    snprintf(buf, sizeof(buf), "%s", spec);
    *n = 0;
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        int64_t count = 1;
        if (colon) {
            *colon = 0;
            if (gp_cli_parse_int(colon + 1, 1, UP_MAX_NODES, &count) < 0) {
                return gp_cli_usage_error(&up_spec, "--nodes: %s: the count must be 1..%d", tok,
                                          UP_MAX_NODES);
            }
        }
        char path[UP_PATH];
        if (strchr(tok, '/') || strstr(tok, ".yaml")) {
            snprintf(path, sizeof(path), "%s", tok);
        } else {
            pathf(path, sizeof(path), "%s/%s.yaml", GP_INVENTORY_DIR, tok);
        }
        if (access(path, R_OK) != 0) {
            return gp_cli_usage_error(&up_spec, "--nodes: inventory %s: %s", path, strerror(errno));
        }
        const char *base = strrchr(tok, '/') ? strrchr(tok, '/') + 1 : tok;
        for (int i = 0; i < count; i++) {
            if (*n == UP_MAX_NODES) {
                return gp_cli_usage_error(&up_spec, "--nodes: at most %d nodes", UP_MAX_NODES);
            }
            up_node *u = &nodes[(*n)++];
            snprintf(u->name, sizeof(u->name), "%.*s-%d", (int)strcspn(base, "."), base, *n);
            snprintf(u->inventory, sizeof(u->inventory), "%s", path);
        }
    }
    return *n ? 0 : gp_cli_usage_error(&up_spec, "--nodes: no node given");
}

/* The processes this `up` started: their names (as in DIR/logs/NAME.log) and pids. */
typedef struct up_started {
    char name[UP_MAX_NODES + 1][96];
    pid_t pid[UP_MAX_NODES + 1];
    int n;
} up_started;

/* The last lines of DIR/logs/NAME.log on stderr, indented: why a process did not start. */
static void print_log_tail(const char *dir, const char *name)
{
    char path[UP_PATH], tail[2048];
    pathf(path, sizeof(path), "%s/logs/%s.log", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) {
        return;
    }
    long at = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : 0;
    fseek(f, at > (long)sizeof(tail) - 1 ? at - (long)sizeof(tail) + 1 : 0, SEEK_SET);
    size_t n = fread(tail, 1, sizeof(tail) - 1, f);
    fclose(f);
    tail[n] = '\0';
    const char *p = tail;
    for (int lines = 0, i = (int)n - 1; i > 0; i--) { /* the last 5 lines */
        if (tail[i - 1] == '\n' && ++lines == 5) {
            p = tail + i;
            break;
        }
    }
    for (const char *line = p; *line;) {
        size_t len = strcspn(line, "\n");
        fprintf(stderr, "    %.*s\n", (int)len, line);
        line += len + (line[len] == '\n');
    }
}

/* The first started process that is no longer alive, or -1. */
static int first_dead(const up_started *s)
{
    for (int i = 0; i < s->n; i++) {
        if (!gp_pool_alive(s->pid[i])) {
            return i;
        }
    }
    return -1;
}

/* Waits until GET path answers 200 (and, with want > 0, its "items" has want entries). Gives
 * up after about 30 s, or at once when a process of started exits (it says which, and why from
 * its log). */
static int wait_ready(const char *dir, const up_started *started, const char *url,
                      const char *token, const char *path, int want)
{
    gp_http_client *c = NULL;
    gp_diag d;
    if (gp_http_client_new(url, token, &c, &d) < 0) {
        return -1;
    }
    gp_http_client_set_timeout(c, 2000, 1000);
    int rc = -1, dead = -1;
    for (int i = 0; i < 300 && rc < 0 && dead < 0; i++) {
        int status = 0;
        char *body = NULL;
        if (gp_http_call(c, "GET", path, NULL, 0, NULL, &status, &body, NULL, &d) == 0 &&
            status == 200) {
            json_t *doc = json_loads(body, 0, NULL);
            size_t n = json_array_size(json_object_get(doc, "items"));
            /* a controller on a shared store answers ready as a follower before it leads */
            const char *role = json_string_value(json_object_get(doc, "role"));
            bool leads = !role || strcmp(role, "follower") != 0;
            json_decref(doc);
            rc = leads && (want <= 0 || (int)n >= want) ? 0 : -1;
        }
        free(body);
        if (rc < 0 && (dead = first_dead(started)) < 0) {
            sleep_ms(100);
        }
    }
    gp_http_client_free(c);
    if (dead >= 0) {
        fprintf(stderr, "gpupool up: %s exited at start; the end of %s/logs/%s.log:\n",
                started->name[dead], dir, started->name[dead]);
        print_log_tail(dir, started->name[dead]);
    }
    return rc;
}

static int read_token(const char *dir, const char *file, char *buf, size_t cap)
{
    char path[UP_PATH];
    pathf(path, sizeof(path), "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    bool ok = f && fgets(buf, (int)cap, f);
    if (f) {
        fclose(f);
    }
    buf[ok ? strcspn(buf, "\r\n") : 0] = 0;
    return ok ? 0 : -1;
}

/* One call to the controller at url with token: the status, and the body in *body (the
 * caller's; may be NULL). -1 when it cannot be reached. */
static int ctl_call(const char *url, const char *token, const char *method, const char *path,
                    const char *req, char **body)
{
    gp_http_client *c = NULL;
    gp_diag d;
    int status = -1;
    char *resp = NULL;
    const char *hdrs[] = {"Content-Type: application/json", NULL};
    if (gp_http_client_new(url, token, &c, &d) == 0) {
        gp_http_client_set_timeout(c, 10000, 2000);
        if (gp_http_call(c, method, path, req, req ? strlen(req) : 0, req ? hdrs : NULL, &status,
                         &resp, NULL, &d) < 0) {
            status = -1;
        }
    }
    gp_http_client_free(c);
    if (body) {
        *body = resp;
    } else {
        free(resp);
    }
    return status;
}

/* The pool's metrics token, DIR/scrape.token (0600): a token of role metrics, which reads
 * /metrics and /v1/sd/prometheus of the controller and /metrics of every agent (each is given
 * the file), and nothing else; Prometheus's scrape configuration names the file. Kept across
 * `up`s while the controller still takes it; otherwise (first start, revoked, a file of an older
 * version) a new one is created with the admin token. */
static int scrape_token(const char *dir, const char *url, const char *admin)
{
    char path[UP_PATH], secret[GP_TOKEN_MAX + 64];
    pathf(path, sizeof(path), "%s/scrape.token", dir);
    if (read_token(dir, "scrape.token", secret, sizeof(secret)) == 0 && secret[0] &&
        ctl_call(url, secret, "GET", "/v1/sd/prometheus", NULL, NULL) == 200) {
        return 0;
    }
    char req[128], *body = NULL;
    snprintf(req, sizeof(req), "{\"name\":\"scrape-%lld\",\"role\":\"metrics\"}",
             (long long)time(NULL));
    int status = ctl_call(url, admin, "POST", "/v1/tokens", req, &body);
    json_t *doc = status == 201 && body ? json_loads(body, 0, NULL) : NULL;
    const char *token = json_string_value(json_object_get(doc, "token"));
    int rc = token ? gp_cli_write_secret(path, token) : -1;
    if (rc < 0) {
        fprintf(stderr, "gpupool up: %s: cannot make the metrics token (HTTP %d: %s)\n", path,
                status, body ? body : "no answer");
    }
    json_decref(doc);
    free(body);
    return rc;
}

/* Starts the agent of node u, recorded in *started. It binds a free port of 127.0.0.1 itself
 * (--address 127.0.0.1:0) and registers with it. */
static int start_agent(const char *dir, const char *bin, const char *url, const up_node *u,
                       up_started *started)
{
    char agent_dir[UP_PATH], inv[UP_PATH + 32], agent[UP_PATH], lib[UP_PATH], join[UP_PATH];
    pathf(agent_dir, sizeof(agent_dir), "%s/agents/%s", dir, u->name);
    if (mkdir(agent_dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "gpupool up: %s: %s\n", agent_dir, strerror(errno));
        return -1;
    }
    pathf(agent, sizeof(agent), "%s/gpupool-agent", bin);
    pathf(join, sizeof(join), "%s/join.token", dir);
    char inv_env[UP_PATH + 64], ctl_env[UP_PATH + 64];
    char *env[] = {inv_env, ctl_env, NULL};
    char scrape[UP_PATH];
    pathf(scrape, sizeof(scrape), "%s/scrape.token", dir);
    /* The controller's files are hidden from jobs over the host root, with what GPUPOOL_MASK
     * names (the flag takes the variable's place). */
    const char *more = getenv("GPUPOOL_MASK");
    char masks[8 * UP_PATH];
    pathf(masks, sizeof(masks),
          "%s/admin.token:%s/scrape.token:%s/gpupool.db:%s/gpupool.db-wal:%s/gpupool.db-shm:%s/"
          "logs%s%s",
          dir, dir, dir, dir, dir, dir, more && *more ? ":" : "", more && *more ? more : "");
    char *argv[18] = {agent,
                      "--server",
                      (char *)url,
                      "--join-token-file",
                      join,
                      "--state-dir",
                      agent_dir,
                      "--name",
                      (char *)u->name,
                      "--address",
                      "127.0.0.1:0",
                      "--metrics-token-file",
                      scrape,
                      "--mask",
                      masks,
                      NULL};
    if (u->inventory[0]) {
        pathf(inv, sizeof(inv), "%s/inventory.yaml", agent_dir);
        if (node_inventory(u->inventory, inv, u->name) < 0) {
            return -1;
        }
        pathf(lib, sizeof(lib), "%s/../lib/libgpupool-nvml-mock.so", bin);
        argv[15] = "--nvml-library";
        argv[16] = lib;
        argv[17] = NULL;
        pathf(inv_env, sizeof(inv_env), "GPUPOOL_NVML_MOCK_INVENTORY=%s", inv);
        /* Faults are injected by appending lines to this file (see src/nvml-mock). */
        pathf(ctl_env, sizeof(ctl_env), "GPUPOOL_NVML_MOCK_CONTROL=%s/nvml-control", agent_dir);
    }
    int i = started->n;
    pathf(started->name[i], sizeof(started->name[i]), "agent-%s", u->name);
    if (spawn(dir, started->name[i], argv, u->inventory[0] ? env : NULL, &started->pid[i]) < 0) {
        return -1;
    }
    started->n++;
    return 0;
}

/* Starts gpupoold on 127.0.0.1:port and waits for it to answer and for admin.token. */
static int start_ctl(const char *abs, const char *bin, const char *url, int port,
                     up_started *started, char *token, size_t cap)
{
    char daemon[UP_PATH], portarg[32], checkpoints[UP_PATH + 16];
    pathf(daemon, sizeof(daemon), "%s/gpupoold", bin);
    snprintf(portarg, sizeof(portarg), "127.0.0.1:%d", port);
    /* The nodes of a local pool share this machine: one checkpoint directory per job serves
     * every placement. */
    pathf(checkpoints, sizeof(checkpoints), "%s/checkpoints", abs);
    char *dargv[] = {daemon,      "--data-dir", (char *)abs,
                     "--listen",  portarg,      "--jobs-checkpoint-root",
                     checkpoints, NULL};
    snprintf(started->name[0], sizeof(started->name[0]), "gpupoold");
    if (spawn(abs, "gpupoold", dargv, NULL, &started->pid[0]) < 0) {
        return -1;
    }
    started->n = 1;
    return wait_ready(abs, started, url, NULL, "/readyz", 0) < 0 ||
                   read_token(abs, "admin.token", token, cap) < 0
               ? -1
               : 0;
}

/* A failed `up`: what went wrong, then every process of the pool stopped. */
static int up_failed(const char *abs, const char *what)
{
    fprintf(stderr, "gpupool up: %s; see %s/logs/\n", what, abs);
    int stopped = gp_pool_stop(abs, "gpupool up", 20000, NULL);
    fprintf(stderr, "gpupool up: stopped the %d process%s of the pool it had started\n", stopped,
            stopped == 1 ? "" : "es");
    return GP_EXIT_FAILURE;
}

/* The options of up: the data directory, the port and the nodes. 0, or an exit status. */
static int up_options(const gp_cli_args *a, const char **dir, int *port, up_node *nodes, int *n)
{
    *dir = gp_cli_arg(a, "data-dir") ? gp_cli_arg(a, "data-dir") : "gpupool-pool";
    int64_t p = 7070;
    if (gp_cli_arg(a, "port") && gp_cli_parse_int(gp_cli_arg(a, "port"), 1, 65535, &p) < 0) {
        return gp_cli_usage_error(&up_spec, "--port: must be 1..65535");
    }
    *port = (int)p;
    const char *spec = gp_cli_arg(a, "nodes");
    if (!spec && real_nvml()) {
        *n = 1;
        snprintf(nodes[0].name, sizeof(nodes[0].name), "local-gpus");
        nodes[0].inventory[0] = 0;
        return 0;
    }
    return parse_nodes(spec ? spec : "dgx-a100:2,pcie-t4:1", nodes, n);
}

/* Refuses a pool whose processes already run in abs (they are named). */
static int check_not_running(const char *abs)
{
    pid_t pids[16];
    int n = pool_pids(abs, pids, 16);
    if (n == 0) {
        return 0;
    }
    fprintf(stderr, "gpupool up: a pool is already running in %s (pid", abs);
    for (int i = 0; i < n; i++) {
        fprintf(stderr, "%s %ld", i ? "," : "", (long)pids[i]);
    }
    fprintf(stderr, "); stop it with gpupool down --data-dir %s\n", abs);
    return GP_EXIT_FAILURE;
}

int gp_cli_up(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&up_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    const char *dir;
    int port = 0, n = 0;
    up_node nodes[UP_MAX_NODES];
    char abs[UP_PATH], bin[UP_PATH - 64], url[64], token[256];
    rc = up_options(&a, &dir, &port, nodes, &n);
    if (rc == 0 && (make_dirs(dir) < 0 || !realpath(dir, abs))) {
        rc = GP_EXIT_FAILURE;
    }
    gp_cli_args_fini(&a);
    if (rc != 0 || (rc = check_not_running(abs)) != 0) {
        return rc;
    }
    self_dir(bin, sizeof(bin));
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    up_started started = {.n = 0};
    if (start_ctl(abs, bin, url, port, &started, token, sizeof(token)) < 0) {
        return up_failed(abs, "gpupoold did not start");
    }
    if (scrape_token(abs, url, token) < 0) {
        return up_failed(abs, "no metrics token");
    }
    for (int i = 0; i < n; i++) {
        if (start_agent(abs, bin, url, &nodes[i], &started) < 0) {
            char what[128];
            pathf(what, sizeof(what), "agent %s did not start", nodes[i].name);
            return up_failed(abs, what);
        }
    }
    if (wait_ready(abs, &started, url, token, "/v1/nodes", n) < 0) {
        return up_failed(abs, "not every agent registered");
    }
    printf("gpupool: a pool of %d node%s is up\n"
           "  server:  %s\n"
           "  token:   %s/admin.token\n"
           "  metrics: %s/scrape.token (Prometheus: the controller's /metrics and the agents')\n"
           "  logs:    %s/logs/\n"
           "next steps:\n"
           "  export GPUPOOL_SERVER=%s GPUPOOL_TOKEN=$(cat %s/admin.token)\n"
           "  gpupool get nodes\n"
           "  gpupool tenant create demo\n"
           "  gpupool submit --tenant demo --name hello --gpus 2 -- nvidia-smi -L\n"
           "  gpupool down --data-dir %s\n",
           n, n == 1 ? "" : "s", url, abs, abs, abs, url, abs, abs);
    return 0;
}

int gp_cli_down(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&down_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    const char *dir = gp_cli_arg(&a, "data-dir") ? gp_cli_arg(&a, "data-dir") : "gpupool-pool";
    char abs[UP_PATH], pids[UP_PATH];
    pathf(pids, sizeof(pids), "%s/pids", dir);
    struct stat sb;
    if (!realpath(dir, abs) || stat(pids, &sb) != 0) {
        fprintf(stderr, "gpupool down: %s: no pool there (%s)\n", dir, strerror(errno));
        gp_cli_args_fini(&a);
        return GP_EXIT_FAILURE;
    }
    bool failed = false;
    int stopped = gp_pool_stop(abs, "gpupool down", 20000, &failed);
    printf("gpupool: stopped %d process%s of the pool in %s\n", stopped, stopped == 1 ? "" : "es",
           dir);
    gp_cli_args_fini(&a);
    return failed ? GP_EXIT_FAILURE : 0;
}
