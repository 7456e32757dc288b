/*
 * gpupool submit: sends a job spec to POST /v1/jobs, from a file (-f FILE, YAML or JSON, "-"
 * for stdin; sent as is with its Content-Type, so the server's validator names the line of a
 * bad field) or built from flags and the command after them. Prints the job's id alone, so
 * that `id=$(gpupool submit ...)` works; -o json|yaml prints the server's job document instead.
 * Without --name a job built from flags gets a generated name (jobname.h); the server refuses a
 * name an active job has, and another is drawn then, so a submit is one request.
 *
 * The flags' values are checked here for their syntax only (numbers, sizes, durations); what
 * goes together (whole GPUs or a fraction or MIG) and the limits are the server's to say.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/jobname.h"
#include "cli/output.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define MAX_SPEC_BYTES (4 << 20)
#define NAME_TRIES     8 /* generated names drawn before a clash is reported */

static const gp_cli_opt submit_opts[] = {
    {"file", 'f', "FILE", "the job spec, YAML or JSON ('-': stdin); no spec flags then"},
    {"name", 0, "NAME",
     "job name ([a-z0-9-]; default: the command's name and a random suffix, e.g. python3-x7k2q)"},
    {"gpus", 0, "N", "whole GPUs per replica"},
    {"gpu-model", 0, "MODEL", "allowed GPU model, e.g. A100-80GB, H100, T4 (repeatable)"},
    {"gpu-milli", 0, "M", "a fraction of one GPU's compute, in thousandths (1..1000)"},
    {"gpu-memory", 0, "SIZE", "GPU memory of a fraction: 10Gi, 512Mi, 1024 (MiB)"},
    {"cores", 0, "PCT", "compute cap of a fraction, percent of the GPU (1..100)"},
    {"compute-policy", 0, "P",
     "when a fraction's cap applies: shared (while others are busy) or "
     "strict (always); default: the pool's"},
    {"mig", 0, "PROFILE", "one MIG instance, e.g. 1g.10gb"},
    {"replicas", 0, "N", "replicas, placed all or none (default 1)"},
    {"queue", 0, "Q", "queue (default: the cluster's default queue)"},
    {"priority", 0, "CLASS", "priority class (default: the cluster's default)"},
    {"tenant", 0, "T", "tenant (default: the token's; required for admins)"},
    {"cpu", 0, "CORES", "CPU cores per replica, e.g. 8 or 0.5"},
    {"cpu-milli", 0, "M", "CPU per replica in thousandths of a core"},
    {"memory", 0, "SIZE", "memory per replica: 32Gi, 512Mi, 1024 (MiB)"},
    {"preemptible", 0, NULL, "the job may be preempted by higher priorities"},
    {"topology", 0, "T", "any, prefer-nvlink or require-nvlink"},
    {"max-runtime", 0, "DURATION", "stop the job after 3600, 90s, 30m, 2h or 1d"},
    {"restart", 0, "POLICY", "never, on-failure or always"},
    {"max-restarts", 0, "N", "restarts allowed (0..1000)"},
    {"env", 0, "K=V", "environment variable (repeatable)"},
    {"secret-env", 0, "K[=V]",
     "secret environment variable: stored encrypted, never shown; K alone takes the value of K "
     "in this environment, so it stays out of the process list (repeatable)"},
    {"workdir", 0, "DIR", "working directory (absolute)"},
    {"volume", 0, "NAME[:ro|:rw]", "mount a registered volume at /data/NAME (repeatable)"},
    {"image", 0, "REF",
     "run from this OCI image, e.g. registry:5000/team/pytorch:2.1 (default: the host's root "
     "filesystem, read-only)"},
    {"image-pull-policy", 0, "POLICY", "Always, IfNotPresent or Never (needs --image)"},
    {"network", 0, "NET", "host (the node's network, the default) or private"},
    {"kind", 0, "KIND",
     "batch (the default), notebook (reached through the controller: gpupool notebook open) "
     "or service; a notebook may leave out the command (the pool's default notebook)"},
    {"port", 0, "N", "the port a notebook or service listens on (1..65535)"},
    {"allow-unschedulable", 0, NULL,
     "accept the job even if no node or limit could run it yet; it waits (else refused)"},
    {"array", 0, "SPEC",
     "a job array, one child job per index: START-END[:STEP][,...][%MAX], e.g. 0-99%10 "
     "(at most MAX run at once; each child sees GPUPOOL_ARRAY_INDEX)"},
    {"after-ok", 0, "JOB[,JOB...]",
     "start only after these jobs (names or ids) succeeded; cancelled if one fails "
     "(repeatable)"},
    {"shm-size", 0, "SIZE", "size of the job's /dev/shm: 8Gi, 512Mi, 1024 (MiB)"},
    {"idempotency-key", 0, "KEY", "a retry with the same key returns the same job"},
    {"update", 0, NULL,
     "a service: roll the active service of that name to this spec (created when there is "
     "none)"},
    {NULL, 0, NULL, NULL},
};

static const gp_cli_spec submit_spec = {
    "submit",
    "submit -f FILE | submit [--name NAME] [FLAGS] -- COMMAND [ARGS...]",
    "Submits a job and prints its id. With -f the spec comes from FILE (YAML or JSON, '-' for\n"
    "stdin); else from the flags, with the command and its arguments after them.",
    submit_opts,
    GP_CLI_CONN | GP_CLI_OUTPUT | GP_CLI_IN_ORDER,
    0,
    -1,
};

/* ---- the spec from flags ---- */

typedef int setter(json_t *spec, json_t *res, const char *v);

static int set_int(json_t *obj, const char *key, const char *v, int64_t lo, int64_t hi)
{
    int64_t n;
    if (gp_cli_parse_int(v, lo, hi, &n) < 0) {
        return -1;
    }
    return json_object_set_new(obj, key, json_integer(n));
}

static int s_name(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "name", json_string(v));
}

static int s_gpus(json_t *s, json_t *r, const char *v)
{
    (void)s;
    return set_int(r, "gpus", v, 1, 1024);
}

/* Appends v to the list obj[key] (made on first use): repeatable flags. */
static int append(json_t *obj, const char *key, const char *v)
{
    json_t *list = json_object_get(obj, key);
    if (!list) {
        list = json_array();
        json_object_set_new(obj, key, list);
    }
    return json_array_append_new(list, json_string(v));
}

static int s_model(json_t *s, json_t *r, const char *v)
{
    (void)s;
    return append(r, "gpu_models", v);
}

static int s_milli(json_t *s, json_t *r, const char *v)
{
    (void)s;
    return set_int(r, "gpu_milli", v, 1, 1000);
}

static int s_gpu_mem(json_t *s, json_t *r, const char *v)
{
    (void)s;
    int64_t mib;
    return gp_cli_parse_mib(v, &mib) < 0
               ? -1
               : json_object_set_new(r, "gpu_memory_mib", json_integer(mib));
}

static int s_cores(json_t *s, json_t *r, const char *v)
{
    (void)s;
    return set_int(r, "cores_percent", v, 1, 100);
}

static int s_compute_policy(json_t *s, json_t *r, const char *v)
{
    (void)s;
    return json_object_set_new(r, "compute_policy", json_string(v));
}

static int s_mig(json_t *s, json_t *r, const char *v)
{
    (void)s;
    return json_object_set_new(r, "mig_profile", json_string(v));
}

static int s_replicas(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return set_int(s, "replicas", v, 1, 1 << 20);
}

static int s_queue(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "queue", json_string(v));
}

static int s_priority(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "priority_class", json_string(v));
}

static int s_tenant(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "tenant", json_string(v));
}

static int s_cpu(json_t *s, json_t *r, const char *v)
{
    (void)s;
    int64_t milli;
    return gp_cli_parse_milli(v, (int64_t)1 << 40, &milli) < 0
               ? -1
               : json_object_set_new(r, "cpu_milli", json_integer(milli));
}

static int s_cpu_milli(json_t *s, json_t *r, const char *v)
{
    (void)s;
    return set_int(r, "cpu_milli", v, 0, (int64_t)1 << 40);
}

static int s_memory(json_t *s, json_t *r, const char *v)
{
    (void)s;
    int64_t mib;
    return gp_cli_parse_mib(v, &mib) < 0 ? -1
                                         : json_object_set_new(r, "memory_mib", json_integer(mib));
}

static int s_preemptible(json_t *s, json_t *r, const char *v)
{
    (void)r;
    (void)v;
    return json_object_set_new(s, "preemptible", json_true());
}

static int s_topology(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "topology", json_string(v));
}

static int s_runtime(json_t *s, json_t *r, const char *v)
{
    (void)r;
    int64_t sec;
    return gp_cli_parse_seconds(v, &sec) < 0
               ? -1
               : json_object_set_new(s, "max_runtime", json_integer(sec));
}

static int s_restart(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "restart_policy", json_string(v));
}

static int s_max_restarts(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return set_int(s, "max_restarts", v, 0, 1000);
}

static int s_env(json_t *s, json_t *r, const char *v)
{
    (void)r;
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || (size_t)(eq - v) > 255) {
        return -1;
    }
    char name[256];
    memcpy(name, v, (size_t)(eq - v));
    name[eq - v] = '\0';
    json_t *env = json_object_get(s, "env");
    if (!env) {
        env = json_object();
        json_object_set_new(s, "env", env);
    }
    return json_object_set_new(env, name, json_string(eq + 1));
}

/* --secret-env K=V, or K: the value of K in the caller's environment. */
static int s_secret_env(json_t *s, json_t *r, const char *v)
{
    (void)r;
    const char *eq = strchr(v, '=');
    size_t n = eq ? (size_t)(eq - v) : strlen(v);
    if (n == 0 || n > 255) {
        return -1;
    }
    char name[256];
    memcpy(name, v, n);
    name[n] = '\0';
    const char *value = eq ? eq + 1 : getenv(name);
    if (!value) {
        return -1;
    }
    json_t *env = json_object_get(s, "env");
    if (!env) {
        env = json_object();
        json_object_set_new(s, "env", env);
    }
    return json_object_set_new(env, name, json_pack("{s:s, s:b}", "value", value, "secret", 1));
}

static int s_workdir(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "working_dir", json_string(v));
}

static int s_volume(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return append(s, "volumes", v);
}

static int s_image(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "image", json_string(v));
}

static int s_pull_policy(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "image_pull_policy", json_string(v));
}

static int s_network(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "network", json_string(v));
}

static int s_kind(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "kind", json_string(v));
}

static int s_port(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return set_int(s, "port", v, 1, 65535);
}

static int s_allow_unschedulable(json_t *s, json_t *r, const char *v)
{
    (void)r;
    (void)v;
    return json_object_set_new(s, "allow_unschedulable", json_true());
}

static int s_array(json_t *s, json_t *r, const char *v)
{
    (void)r;
    return json_object_set_new(s, "array", json_string(v));
}

/* A comma list, or the flag repeated. */
static int s_after_ok(json_t *s, json_t *r, const char *v)
{
    (void)r;
    char buf[1024];
    if (!*v || strlen(v) >= sizeof(buf)) {
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s", v);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (append(s, "after_ok", t) < 0) {
            return -1;
        }
    }
    return 0;
}

static int s_shm_size(json_t *s, json_t *r, const char *v)
{
    (void)r;
    int64_t mib;
    return gp_cli_parse_mib(v, &mib) < 0 || mib < 1
               ? -1
               : json_object_set_new(s, "shm_size_mib", json_integer(mib));
}

/* The spec flag of each option (same order as submit_opts; NULL: not a spec field). */
static setter *const setters[] = {
    NULL,
    s_name,
    s_gpus,
    s_model,
    s_milli,
    s_gpu_mem,
    s_cores,
    s_compute_policy,
    s_mig,
    s_replicas,
    s_queue,
    s_priority,
    s_tenant,
    s_cpu,
    s_cpu_milli,
    s_memory,
    s_preemptible,
    s_topology,
    s_runtime,
    s_restart,
    s_max_restarts,
    s_env,
    s_secret_env,
    s_workdir,
    s_volume,
    s_image,
    s_pull_policy,
    s_network,
    s_kind,
    s_port,
    s_allow_unschedulable,
    s_array,
    s_after_ok,
    s_shm_size,
    NULL,
    NULL,
    NULL,
};

_Static_assert(sizeof(setters) / sizeof(setters[0]) == sizeof(submit_opts) / sizeof(submit_opts[0]),
               "one setter (or NULL) per option of submit_opts");

/* Builds the spec from the flags and the command into *out. 0, or an exit status. */
static int spec_from_flags(const gp_cli_args *a, json_t **out)
{
    *out = NULL;
    const char *kind = gp_cli_arg(a, "kind");
    bool notebook = kind && strcmp(kind, "notebook") == 0;
    if (a->npos == 0 && !notebook) {
        return gp_cli_usage_error(a->spec, "missing the command: ... -- COMMAND [ARGS...]");
    }
    json_t *spec = json_object(), *res = json_object();
    for (int i = 0; submit_opts[i].name; i++) {
        gp_cli_vals vals = gp_cli_arg_all(a, submit_opts[i].name);
        for (int k = 0; setters[i] && k < vals.n; k++) {
            if (setters[i](spec, res, vals.v[k]) < 0) {
                json_decref(spec);
                json_decref(res);
                /* a secret's value is never echoed: its name only */
                int shown = strcmp(submit_opts[i].name, "secret-env") == 0
                                ? (int)strcspn(vals.v[k], "=")
                                : (int)strlen(vals.v[k]);
                return gp_cli_usage_error(a->spec, "--%s: bad value \"%.*s\" (%s)",
                                          submit_opts[i].name, shown, vals.v[k],
                                          submit_opts[i].help);
            }
        }
    }
    if (a->npos > 0) { /* a notebook without one gets the pool's default */
        json_t *args = json_array();
        for (int i = 1; i < a->npos; i++) {
            json_array_append_new(args, json_string(a->pos[i]));
        }
        json_object_set_new(spec, "command", json_pack("[s]", a->pos[0]));
        json_object_set_new(spec, "args", args);
    }
    if (json_object_size(res) > 0) {
        json_object_set_new(spec, "resources", res);
    } else {
        json_decref(res);
    }
    *out = spec;
    return 0;
}

/* ---- the spec from a file ---- */

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || cap >= MAX_SPEC_BYTES) {
            break;
        }
        char *grown = realloc(buf, cap * 2 + 1);
        if (!grown) {
            free(buf);
            return NULL;
        }
        buf = grown;
        cap *= 2;
    }
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* Whether the file holds JSON: by its name, else by its first non-blank character. */
/* POST /v1/jobs, with ?update=true for --update (a service's new spec). */
static const char *submit_path(const gp_cli_args *a)
{
    return gp_cli_arg(a, "update") ? "/v1/jobs?update=true" : "/v1/jobs";
}

static int is_json(const char *path, const char *text)
{
    size_t n = strlen(path);
    if (n > 5 && strcmp(path + n - 5, ".json") == 0) {
        return 1;
    }
    if ((n > 5 && strcmp(path + n - 5, ".yaml") == 0) ||
        (n > 4 && strcmp(path + n - 4, ".yml") == 0)) {
        return 0;
    }
    return text[strspn(text, " \t\r\n")] == '{';
}

/* The Idempotency-Key of this submit into buf: --idempotency-key, else a fresh random one, so
 * that a submit sent again to another controller after a lost connection (net/servers.h) makes
 * one job, not two. */
static const char *submit_key(const gp_cli_args *a, char *buf, size_t cap)
{
    const char *given = gp_cli_arg(a, "idempotency-key");
    unsigned char r[16];
    if (given) {
        return given;
    }
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r) || cap < 2 * sizeof(r) + 5) {
        return NULL; /* no key: a lost connection is then not retried */
    }
    size_t n = (size_t)snprintf(buf, cap, "cli-");
    for (size_t i = 0; i < sizeof(r); i++) {
        n += (size_t)snprintf(buf + n, cap - n, "%02x", r[i]);
    }
    return buf;
}

static int submit_file(gp_cli_conn *c, const gp_cli_args *a, json_t **job)
{
    const char *path = gp_cli_arg(a, "file");
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gpupool submit: %s: %s\n", path, strerror(errno));
        return GP_EXIT_USAGE;
    }
    size_t len = 0;
    char *text = read_all(f, &len);
    int bad = ferror(f);
    if (f != stdin) {
        fclose(f);
    }
    if (!text || bad || len >= MAX_SPEC_BYTES) {
        fprintf(stderr, "gpupool submit: %s: %s\n", path,
                !text ? "out of memory"
                : bad ? "read error"
                      : "larger than 4 MiB");
        free(text);
        return bad || text ? GP_EXIT_USAGE : GP_EXIT_FAILURE;
    }
    char key[64];
    int rc = gp_cli_call_raw(c, "POST", submit_path(a), text, len,
                             is_json(path, text) ? "application/json" : "application/yaml",
                             submit_key(a, key, sizeof(key)), job);
    free(text);
    return rc;
}

/* POSTs the spec built from flags. Without a name in it, it gets a generated one; a refusal
 * naming the field "name" (409: an active job has it) draws another, NAME_TRIES names in all,
 * the last refusal printed. */
static int post_spec(gp_cli_conn *c, const gp_cli_args *a, json_t *spec, json_t **job)
{
    bool generated = !json_object_get(spec, "name");
    char key[64];
    const char *idem = submit_key(a, key, sizeof(key));
    int rc = GP_EXIT_FAILURE;
    for (int i = 0; i < NAME_TRIES; i++) {
        bool last = !generated || i == NAME_TRIES - 1;
        if (generated) {
            char name[64];
            gp_cli_job_name_new(a->npos ? a->pos[0] : "notebook", name, sizeof(name));
            json_object_set_new(spec, "name", json_string(name));
        }
        char *text = json_dumps(spec, JSON_COMPACT);
        if (!text) {
            fprintf(stderr, "gpupool: out of memory\n");
            return GP_EXIT_FAILURE;
        }
        gp_cli_quiet_status(c, last ? 0 : 409);
        rc = gp_cli_call_raw(c, "POST", submit_path(a), text, strlen(text), "application/json",
                             idem, job);
        free(text);
        if (rc == 0 || last || gp_cli_last_status(c) != 409) {
            break;
        }
        if (strncmp(gp_cli_last_refusal(c), "name:", 5) != 0) {
            gp_cli_print_refusal(c); /* another conflict: not ours to retry */
            break;
        }
    }
    gp_cli_quiet_status(c, 0);
    return rc;
}

/* With -f, only -f, the idempotency key and the common options. */
static int check_file_flags(const gp_cli_args *a)
{
    for (int i = 0; submit_opts[i].name; i++) {
        if (setters[i] && gp_cli_arg(a, submit_opts[i].name)) {
            return gp_cli_usage_error(a->spec, "--%s does not go with -f (put it in the file)",
                                      submit_opts[i].name);
        }
    }
    if (a->npos > 0) {
        return gp_cli_usage_error(a->spec, "unexpected argument \"%s\" with -f", a->pos[0]);
    }
    return 0;
}

static int run(const gp_cli_args *a)
{
    gp_out_format format;
    if (gp_out_format_parse(gp_cli_arg(a, "output"), &format) < 0) {
        return gp_cli_usage_error(a->spec, "-o: must be table, wide, json or yaml");
    }
    json_t *spec = NULL;
    int rc = gp_cli_arg(a, "file") ? check_file_flags(a) : spec_from_flags(a, &spec);
    gp_cli_conn *c = NULL;
    if (rc == 0) {
        rc = gp_cli_connect(a, &c);
    }
    if (rc == 0) { /* the id is all that is printed unless the document is asked for */
        gp_cli_prefer_minimal(c, format != GP_OUT_JSON && format != GP_OUT_YAML);
    }
    json_t *job = NULL;
    if (rc == 0 && spec) {
        rc = post_spec(c, a, spec, &job);
    } else if (rc == 0) {
        rc = submit_file(c, a, &job);
    }
    if (rc == 0 && (format == GP_OUT_JSON || format == GP_OUT_YAML)) {
        rc = gp_out_doc(stdout, format, job) < 0 ? GP_EXIT_FAILURE : 0;
    } else if (rc == 0) {
        printf("%lld\n", (long long)gp_out_int(job, "id"));
    }
    json_decref(job);
    json_decref(spec);
    gp_cli_conn_free(c);
    return rc;
}

int gp_cli_submit(int argc, char **argv)
{
    gp_cli_args a;
    int rc = gp_cli_parse(&submit_spec, argc, argv, &a);
    if (rc != GP_CLI_CONTINUE) {
        return rc;
    }
    rc = run(&a);
    gp_cli_args_fini(&a);
    return rc;
}
