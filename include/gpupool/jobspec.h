/*
 * The job spec: what a user submits, in JSON or YAML (the same fields in both).
 *
 *   name: train-bert            # [a-z0-9-], 1..63, starts and ends alphanumeric; required
 *   tenant: team-a              # default: the submitter's tenant
 *   queue: default
 *   priority_class: normal      # default: the cluster default
 *   replicas: 4                 # a gang: all or nothing; 1..4096 (a service: independent
 *                               #   replicas; a notebook: 1)
 *   resources:
 *     gpus: 2                   # whole GPUs per replica, 1..32; or
 *     gpu_milli: 500            #   a fraction: compute reserved (1..1000) and/or
 *     gpu_memory_mib: 10240     #   GPU memory and/or
 *     cores_percent: 50         #   a compute cap (1..100; see gp_jobspec_enforcement);
 *     compute_policy: strict    #   shared | strict (a fraction; default: jobs.compute_policy); or
 *     mig_profile: 1g.10gb      #   one MIG instance
 *     gpu_models: [A100-80GB]   # allowed models (default any): NVML's names or short names
 *                               #   (gpupool/modelname.h)
 *     cpu_milli: 8000
 *     memory_mib: 32768
 *   topology: any               # any | prefer-nvlink | require-nvlink
 *   gpu_policy: packing         # packing | spread | topology | fragmentation; default: the
 *                               #   cluster's (scheduler.gpu_policy)
 *   preemptible: false
 *   image: registry:5000/team/pytorch:2.1  # an OCI reference (gpupool/imageref.h), kept in
 *                               #   its normal form; absent: the host's root filesystem,
 *                               #   read-only (operators may refuse that: jobs.allow_host_rootfs)
 *   image_pull_policy: IfNotPresent  # Always | IfNotPresent | Never; only with image; default
 *                               #   Always for a latest (or no) tag without digest, else
 *                               #   IfNotPresent
 *   network: host               # host | private (its own network namespace)
 *   privileged: false           # true: podman --privileged (every device of the node, so GPU
 *                               #   limits do not hold); gpupoold refuses it unless an admin
 *                               #   allowed the job's tenant (allow_privileged); default false
 *   command: [python, train.py] # required, non-empty
 *   args: [--epochs, "3"]
 *   env: {HF_HOME: /data/hf}    # names [A-Za-z_][A-Za-z0-9_]*; gpupool's own are refused;
 *                               #   a value is a string, or {value: S, secret: BOOL} (a secret
 *                               #   value: stored sealed, never shown), or the stored form of a
 *                               #   secret, {secret: true, sealed: TEXT} (net/seal.h; only
 *                               #   gpupoold writes it)
 *   working_dir: /workspace     # absolute
 *   volumes:                    # registered volumes, seen at /data/NAME: NAME (the volume's
 *     - imagenet                #   own mode: read-only if the volume is), NAME:ro, NAME:rw,
 *     - ckpt:rw                 #   or {name: NAME, read_only: BOOL}; at most 16, no repeats
 *   max_runtime: 2h             # seconds, or a number with s, m, h or d
 *   hang_timeout: 30m           # a replica with no output and no GPU use for this long is
 *                               #   hung: an event, and a restart unless restart_policy is never
 *   idle_timeout: 30m           # every replica's GPU utilisation below idle_utilization for this
 *   idle_utilization: 5         #   long: the job is stopped (Cancelled, event IdleStopped) and
 *                               #   its GPUs freed; percent, default 5; needs idle_timeout
 *   restart_policy: on-failure  # never | on-failure | always
 *   max_restarts: 3             # 0..1000; default 3 with a restart policy, else 0
 *   allow_unschedulable: false  # true: a job no registered node or no limit could ever admit
 *                               #   is accepted and waits ("unschedulable: ..."); false: it is
 *                               #   refused at submission (the controller's check)
 *
 * Arrays, dependencies and shared memory (jobspec_batch.c):
 *
 *   array: "0-99%10"            # batch: a job array (gpupool/array.h): one child job per
 *                               #   index, named NAME-INDEX, with GPUPOOL_ARRAY_INDEX (and
 *                               #   SLURM_ARRAY_TASK_ID, SLURM_ARRAY_JOB_ID) in its environment;
 *                               #   %MAX: at most MAX children active at once; the count is
 *                               #   bounded by jobs.max_array_size at submission
 *   after_ok: [prep, "42"]      # jobs (names, or ids, of the job's own tenant; at most 64) that
 *                               #   must have Succeeded before this one starts (an array:
 *                               #   every child); one that ends otherwise cancels this one
 *   shm_size_mib: 8192          # the size of /dev/shm, 1..1048576 MiB (default: the runtime's)
 *
 * What kind of work it is, and the fields of the interactive kinds (jobspec_serve.c):
 *
 *   kind: batch                 # batch (default: runs to completion) | notebook (interactive,
 *                               #   reached through the controller) | service (replicas kept
 *                               #   up by probes, balanced, scaled)
 *   port: 8888                  # notebook, service: the port it serves on inside its own
 *                               #   network namespace, 1..65535; required for them, refused
 *                               #   for batch. Their network is always private: network: host
 *                               #   is refused.
 *   command: [...]              # notebook: may be left out (the controller's default notebook
 *                               #   command, with its default image when image is left out too)
 *   idle_action: suspend        # notebook: stop | suspend (default for a notebook: its replica
 *                               #   stops, its GPUs are freed, it resumes on demand); batch:
 *                               #   stop only; needs idle_timeout
 *   readiness_probe:            # notebook, service: a replica takes traffic while it passes
 *     http_get: {path: /healthz, port: 8080}  # one of http_get (path absolute; port default:
 *     # tcp_socket: {port: 8080}              #   the job's port), tcp_socket, exec (command
 *     # exec: {command: [cat, /tmp/ready]}    #   run in the replica: exit 0 passes)
 *     initial_delay: 5s         # 0s..1h (default 0s)
 *     period: 10s               # 1s..1h (default 10s)
 *     timeout: 1s               # 1s..1h, at most period (default 1s)
 *     failure_threshold: 3      # 1..100 (default 3)
 *     success_threshold: 1      # 1..100 (default 1; liveness: 1 only)
 *   liveness_probe: {...}       # service: the same fields; a replica failing it is restarted
 *   autoscale:                  # service: replicas follow a metric between the bounds; the
 *     min_replicas: 2           #   service starts with replicas (at most max_replicas; raised
 *     max_replicas: 10          #   to min_replicas); 1..4096, min <= max
 *     metric: gpu_utilization   # gpu_utilization | gpu_memory_utilization (percent, mean over
 *                               #   replicas) | prometheus (a gauge the service exposes)
 *     target: 70                # the metric's wanted value per replica, > 0 (percent: <= 100)
 *     prometheus: {name: inference_requests_per_second, path: /metrics, port: 8080}
 *                               # prometheus only (and required for it): the metric's name
 *                               #   ([a-zA-Z_:][a-zA-Z0-9_:]*), path (default /metrics), port
 *                               #   (default the job's port)
 *     scale_up_window: 0s       # stabilisation windows, 0s..1h (defaults 0s and 5m)
 *     scale_down_window: 5m
 *   update:                     # service: how a new spec rolls out
 *     max_surge: 1              # replicas started above the count during it, 0..4096 (default 1)
 *     max_unavailable: 0        # replicas below the count, 0..4096 (default 0); not both 0
 *
 * Labels, annotations, and where the replicas may go (jobspec_place.c; gpupool/constraint.h says
 * what the placement fields mean):
 *
 *   labels: {app: web, team.example.com/tier: frontend}
 *                               # keys [prefix/]name (prefix: a DNS subdomain, <= 253; name: <= 63,
 *                               #   [A-Za-z0-9][-_.A-Za-z0-9]*, alphanumeric at both ends);
 *                               #   values <= 63 of the name's characters, or ""; at most 64;
 *                               #   selectable: GET /v1/jobs?selector=, gpupool get jobs -l
 *   annotations: {owner: "Ann <ann@example.com>"}
 *                               # keys as labels; values any text up to 4096 bytes; at most 64
 *   node_selector: {gpu-type: a100}   # only nodes with every pair (at most 32)
 *   tolerations:                # at most 32
 *     - {key: dedicated, operator: Equal, value: ml, effect: NoSchedule}
 *     - {operator: Exists}      # key left out (Exists only): every taint; effect left out:
 *                               #   every effect; operator default Equal (value default "")
 *   spread:                     # at most 8, topology keys distinct
 *     - {topology_key: zone, max_skew: 1}   # max_skew 1..4096
 *   anti_affinity: true         # at most one replica per node
 *
 * Unknown fields and bad values are refused with the field's path named:
 * `replicas: must be between 1 and 4096`, `resources.gpu_mili: unknown field`. Syntax errors
 * name the line and column. Parsing is all or nothing: on failure *out is untouched.
 */
#ifndef GPUPOOL_JOBSPEC_H
#define GPUPOOL_JOBSPEC_H

#include "gpupool/constraint.h"
#include "gpupool/array.h"
#include "gpupool/error.h"
#include "gpupool/imageref.h"
#include "gpupool/model.h"
#include "gpupool/sched.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_JOB_NAME_MAX         64
#define GP_JOB_MAX_REPLICAS     4096
#define GP_JOB_MAX_MODELS       8
#define GP_JOB_DEFAULT_RESTARTS 3
/* idle_utilization of a job that gives only idle_timeout, in percent. */
#define GP_JOB_DEFAULT_IDLE_UTIL 5.0
#define GP_JOB_MAX_VOLUMES       16
#define GP_JOB_MAX_AFTER_OK      64
#define GP_JOB_MAX_SHM_MIB       ((int64_t)1 << 20)

typedef enum gp_restart_policy {
    GP_RESTART_NEVER = 0,
    GP_RESTART_ON_FAILURE = 1,
    GP_RESTART_ALWAYS = 2,
} gp_restart_policy;

/* When a fraction's compute cap applies (libgpushare's core policy). */
typedef enum gp_compute_policy {
    GP_COMPUTE_DEFAULT = -1, /* not given: the operator's (jobs.compute_policy) */
    GP_COMPUTE_SHARED = 0,   /* while another tenant is busy on the GPU */
    GP_COMPUTE_STRICT = 1,   /* always, a lone tenant too */
} gp_compute_policy;

/* The network a job's processes see. */
typedef enum gp_network {
    GP_NETWORK_HOST = 0,    /* the node's (NCCL, RDMA and gangs need it) */
    GP_NETWORK_PRIVATE = 1, /* a namespace of its own */
} gp_network;

/* What kind of work a job is (kind). */
typedef enum gp_job_kind {
    GP_JOB_BATCH = 0,
    GP_JOB_NOTEBOOK = 1,
    GP_JOB_SERVICE = 2,
} gp_job_kind;

/* What an idle timeout does (idle_action). */
typedef enum gp_idle_action {
    GP_IDLE_STOP = 0,    /* the job ends (Cancelled, event IdleStopped) */
    GP_IDLE_SUSPEND = 1, /* its replicas stop and its GPUs are freed; it resumes on demand */
} gp_idle_action;

typedef enum gp_probe_type {
    GP_PROBE_NONE = 0,
    GP_PROBE_HTTP = 1, /* GET path on port: a 2xx or 3xx answer passes */
    GP_PROBE_TCP = 2,  /* a connection to port passes */
    GP_PROBE_EXEC = 3, /* command in the replica: exit status 0 passes */
} gp_probe_type;

/* A readiness or liveness probe; type GP_PROBE_NONE = none. port is resolved (the job's port
 * when not given) for HTTP and TCP, 0 for exec. */
typedef struct gp_probe {
    gp_probe_type type;
    char *path;     /* HTTP: absolute path (with its query), NULL otherwise */
    int port;       /* HTTP, TCP */
    char **command; /* exec: NULL-terminated, non-empty; NULL otherwise */
    int64_t initial_delay_s;
    int64_t period_s;
    int64_t timeout_s;
    int failure_threshold;
    int success_threshold;
} gp_probe;

typedef enum gp_scale_metric {
    GP_SCALE_GPU_UTIL = 0,     /* mean GPU utilisation of the replicas, percent */
    GP_SCALE_GPU_MEM_UTIL = 1, /* mean GPU memory used of what the replicas may use, percent */
    GP_SCALE_PROMETHEUS = 2,   /* a gauge the service exposes, per replica */
} gp_scale_metric;

#define GP_METRIC_NAME_MAX 128

/* A service's autoscaling; enabled false = a fixed replica count. */
typedef struct gp_autoscale {
    bool enabled;
    int min_replicas;
    int max_replicas;
    gp_scale_metric metric;
    double target;
    char metric_name[GP_METRIC_NAME_MAX]; /* prometheus */
    char *metric_path;                    /* prometheus: absolute path; NULL otherwise */
    int metric_port;                      /* prometheus: resolved (the job's port by default) */
    int64_t scale_up_window_s;
    int64_t scale_down_window_s;
} gp_autoscale;

/* A service's rolling update. */
typedef struct gp_update {
    int max_surge;
    int max_unavailable;
} gp_update;

typedef struct gp_env_var {
    char *name;
    char *value; /* sealed: the sealed text, else the value */
    bool secret; /* never shown; stored sealed */
    bool sealed; /* value is the sealed text ({secret: true, sealed: TEXT}) */
} gp_env_var;

/* A volume a job mounts. Whether the name is registered, and whether a read-write use of a
 * read-only volume is refused, the controller checks at submission. */
typedef enum gp_volume_mode {
    GP_VOLUME_DEFAULT = 0, /* the volume's own: read-only if it is registered read-only */
    GP_VOLUME_RO = 1,
    GP_VOLUME_RW = 2,
} gp_volume_mode;

typedef struct gp_volume_ref {
    char name[GP_JOB_NAME_MAX];
    gp_volume_mode mode;
} gp_volume_ref;

typedef struct gp_jobspec {
    char name[GP_JOB_NAME_MAX];
    char tenant[GP_JOB_NAME_MAX];         /* "" = the submitter's */
    char queue[GP_JOB_NAME_MAX];          /* "default" unless given */
    char priority_class[GP_JOB_NAME_MAX]; /* "" = the cluster default */
    int replicas;
    /* per replica */
    gp_gpu_kind kind;
    int gpus;
    int gpu_milli; /* as given, else 10 x cores_percent when only that is (the reservation) */
    int64_t gpu_memory_mib;
    int cores_percent;                /* 0 = not given */
    gp_compute_policy compute_policy; /* GP_COMPUTE_DEFAULT = not given */
    char mig_profile[16];
    int ngpu_models;
    char gpu_models[GP_JOB_MAX_MODELS][GP_NAME_MAX];
    int64_t cpu_milli;
    int64_t memory_mib;
    gp_topology_pref topology;
    gp_gpu_policy gpu_policy; /* GP_GPU_DEFAULT = the cluster's */
    bool preemptible;
    char **command; /* NULL-terminated */
    char **args;    /* NULL-terminated; may be empty */
    gp_env_var *env;
    int nenv;
    char *working_dir;       /* NULL = the agent's default */
    int64_t max_runtime_s;   /* 0 = unlimited */
    int64_t hang_timeout_s;  /* 0 = no hang detection */
    int64_t idle_timeout_s;  /* 0 = never stopped for being idle */
    double idle_utilization; /* percent; below it a replica's GPUs count as idle; -1 = not given
                                (5 once parsed with an idle_timeout) */
    gp_restart_policy restart_policy;
    int max_restarts;
    int nvolumes;
    gp_volume_ref volumes[GP_JOB_MAX_VOLUMES];
    bool allow_unschedulable;         /* may wait for capacity or limits that are not there yet */
    char *image;                      /* normal form; NULL = the host's root filesystem */
    gp_pull_policy image_pull_policy; /* resolved with an image; GP_PULL_DEFAULT without */
    gp_network network;
    bool privileged; /* may run privileged (see above); only a tenant an admin allows */
    /* the kind of work (see the kind fields above) */
    gp_job_kind job_kind;
    int port; /* 0 = none (batch) */
    gp_idle_action idle_action;
    gp_probe readiness;
    gp_probe liveness;
    gp_autoscale autoscale;
    gp_update update; /* services; zero otherwise */
    /* labels, annotations and where replicas may go (see the placement fields above) */
    gp_kv *labels; /* sorted by key */
    int nlabels;
    gp_kv *annotations; /* sorted by key */
    int nannotations;
    gp_constraints place; /* node_selector, tolerations, spread, anti_affinity */
    /* arrays, dependencies, shared memory (see above) */
    gp_job_array array;   /* nitems 0: not an array */
    char **after_ok;      /* NULL-terminated names or ids; NULL: none */
    int64_t shm_size_mib; /* 0: the runtime's default */
} gp_jobspec;

/* Parses and validates a JSON job spec of len bytes. 0, or GP_EPARSE (syntax: line and column
 * in d) or GP_EINVAL (d names the field). On success *out owns heap strings: free with
 * gp_jobspec_fini. */
int gp_jobspec_parse_json(const char *text, size_t len, gp_jobspec *out, gp_diag *d);
/* The same for YAML (one document). */
int gp_jobspec_parse_yaml(const char *text, size_t len, gp_jobspec *out, gp_diag *d);
void gp_jobspec_fini(gp_jobspec *s);

/*
 * The canonical form of a parsed spec: a new JSON object a user can submit back unchanged
 * (gp_jobspec_parse_json of its text gives a spec gp_jobspec_equal to s, and encoding that gives
 * the same text). Every effective value is explicit: queue, replicas, resources.cpu_milli and
 * memory_mib, topology, preemptible, network, command, args, env, volumes, restart_policy,
 * max_restarts, allow_unschedulable always; a fraction's gpu_milli as reserved; the image's
 * resolved pull policy; idle_utilization with idle_timeout. What the spec leaves to the
 * cluster is left out: tenant and priority_class when "" (gpupoold fills them in at submission),
 * gpu_policy when GP_GPU_DEFAULT, compute_policy when GP_COMPUTE_DEFAULT, limits that are 0
 * (none). One form per value: durations as a string in the largest exact unit ("2h", "90m",
 * "45s", "1d"); volumes as "NAME", "NAME:ro" or "NAME:rw"; env values as strings, a secret as
 * {"value", "secret": true} until sealed and {"secret": true, "sealed"} after (the caller hides
 * or opens it: ctl_secrets_show). Members in a fixed order. NULL when out of memory.
 * array (canonical text, gpupool/array.h), after_ok and shm_size_mib appear only when set;
 * privileged only when true.
 */
json_t *gp_jobspec_to_json(const gp_jobspec *s);
/* Whether a and b are the same spec (a NULL list and an empty one are the same). */
bool gp_jobspec_equal(const gp_jobspec *a, const gp_jobspec *b);

/* The placement request of one replica: allowed models resolved against c's model table by
 * gp_cluster_models_named ("A100-80GB" allows "NVIDIA A100-SXM4-80GB"); when none of the names
 * matches a model of c the request is unplaceable. A job from an image needs GP_CAP_IMAGES. The
 * request's place points into s (NULL when s has no placement fields): s must outlive it. */
void gp_jobspec_request(const gp_jobspec *s, const gp_cluster *c, gp_request *out);

/*
 * How a replica's GPU is held to its request inside the job's processes: the one place that
 * decides it, for every shape of request (the controller hands the result to the agent in the
 * desired replica's gpu_share; gpupool-run enforces exactly that).
 *
 * A fraction (gpu_milli, gpu_memory_mib, cores_percent in any combination) runs with libgpushare
 * preloaded and a share region holding:
 *   memory_mib    gpu_memory_mib; 0 (no in-process limit) when only compute was asked for;
 *   core_percent  the compute cap: cores_percent when given; else gpu_milli / 10 rounded up;
 *                 else (memory only) the memory's share of the GPU it runs on,
 *                 100 x gpu_memory_mib / gpu_memory_mib_total rounded up: a job that reserved no
 *                 compute gets, while others are busy, compute in proportion to its memory;
 *   policy        compute_policy; GP_COMPUTE_SHARED when not given (jobs stored before it existed).
 * gpu_milli is the compute the scheduler reserves (10 x cores_percent when only the cap is
 * given); a cap above the reservation would take what others reserved, so gpupoold refuses it at
 * submission (gp_jobspec_cap_check; the parser accepts it, so a job stored earlier still loads).
 * Whole GPUs and MIG slices are isolated by the device itself: fraction is false, nothing else
 * set.
 */
typedef struct gp_share_enforcement {
    bool fraction;            /* libgpushare and a share region */
    int64_t memory_mib;       /* per GPU; 0: none */
    int core_percent;         /* 1..100 (100: no cap) */
    gp_compute_policy policy; /* GP_COMPUTE_SHARED or GP_COMPUTE_STRICT */
} gp_share_enforcement;

/* The enforcement of one replica of s placed on a GPU of gpu_memory_mib (its total memory; <= 0
 * when unknown: a memory-only fraction then gets no compute cap). Pure. */
void gp_jobspec_enforcement(const gp_jobspec *s, int64_t gpu_memory_mib, gp_share_enforcement *out);

/* 0, or GP_EINVAL naming resources.cores_percent when it is above the share gpu_milli reserves
 * (gpu_milli / 10 rounded up). */
int gp_jobspec_cap_check(const gp_jobspec *s, gp_diag *d);

/* The wire names of gp_compute_policy ("shared", "strict"); NULL for GP_COMPUTE_DEFAULT. */
const char *gp_compute_policy_name(gp_compute_policy p);
/* The wire names of gp_network ("host", "private"). */
const char *gp_network_name(gp_network n);
/* The wire names of gp_job_kind ("batch", "notebook", "service"). */
const char *gp_job_kind_name(gp_job_kind k);
/* The wire names of gp_scale_metric ("gpu_utilization", "gpu_memory_utilization",
 * "prometheus"). */
const char *gp_scale_metric_name(gp_scale_metric m);
/* The canonical JSON of one probe ({"http_get": {...}, "initial_delay": ...}, as in a spec), or
 * NULL for GP_PROBE_NONE or when out of memory. The agent's desired document carries it. */
json_t *gp_probe_to_json(const gp_probe *p);
/* Parses a probe as gp_probe_to_json writes it (path names it in errors; default_port stands for
 * a port left out). 0, or GP_EINVAL / GP_ENOMEM; on success *out owns heap strings:
 * gp_probe_fini. */
int gp_probe_parse(json_t *v, const char *path, int default_port, gp_probe *out, gp_diag *d);
void gp_probe_fini(gp_probe *p);

#endif
