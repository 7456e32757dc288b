/*
 * The spec file of gpupool-run, and the job's environment built from it.
 *
 * The spec is the desired-replica object the controller hands the agent (desired_doc in
 * src/ctl/api_nodes.c) plus fields the agent adds:
 *
 *   job, replica, epoch          integers, required
 *   name                         the job's name (optional)
 *   tenant, queue                the job's tenant and queue (optional; the agent labels the
 *                                job's metrics with them, gpupool-run does not read them)
 *   world_size                   replicas in the job (default 1); > 1 makes it a gang
 *   restart_count                default 0
 *   cpu_milli, memory_mib        limits (0 or absent: none)
 *   gpus: [{uuid, mig_uuid?, index?, milli?, memory_mib?, mig_start?}]   mig_uuid, when given,
 *                                is what the job sees instead of uuid (a MIG slice)
 *   gpu_share: {memory_mib?, core_percent?, core_policy?}   a fraction of a GPU, as the
 *                                controller decided it (gp_jobspec_enforcement): the job gets
 *                                libgpushare and a share region with memory_mib as each GPU's
 *                                memory limit (0 or absent: none), core_percent as the compute
 *                                cap (1..100, absent: 100, none) and core_policy shared (absent)
 *                                or strict; absent: not a fraction, no library
 *   spec: {command: [..], args: [..], env: {NAME: VALUE}, working_dir: "/abs", ...}
 *   rank                         gangs: the replica's rank among the replicas (default replica)
 *   nproc_per_node               gangs: the processes a launcher starts per replica, 1 to
 *                                GP_RUN_NPROC_MAX (default: the number of gpus, at least 1)
 *   master_addr, master_port     gangs: required
 *   hostfile: ["HOST slots=N", ..] or [{host, slots}, ..]   gangs: required
 *   env_extra: {NAME: VALUE}     set by the agent (fractional-GPU enforcement, LD_PRELOAD ...)
 *   volumes: [{name, path, read_only}]   host directories the job sees at /data/NAME
 *                                (see volumes.h); name [a-z0-9-], path absolute
 *   checkpoint_dir               absolute: the job's checkpoint directory, the same for every
 *                                placement of the job (made if missing, owned by the job's user)
 *   image                        an OCI reference the job runs from (absent: the host's root,
 *                                read-only); spec.image when the top level has none
 *   image_pull_policy            Always | IfNotPresent | Never (absent: Always for a tag
 *                                "latest" or none without a digest, else IfNotPresent)
 *   network                      host (default) | private
 *   kind                         batch (default) | notebook | service: a notebook or service
 *                                runs in a network namespace of its own (netns.h; under podman
 *                                slirp4netns), reached only through the agent's tunnel
 *   port                         the port a notebook or service serves on (0..65535, 0: none)
 *   cdi_devices                  true when the node's CDI spec (cdi.h) names every GPU of gpus
 *                                and is where podman reads it: a sandboxed job then gets exactly
 *                                those devices (`--device nvidia.com/gpu=UUID`, the MIG UUID for
 *                                a slice); absent or false: no GPU device node in the container
 *                                (set by the agent; gp_cdi_podman_reads)
 *   cdi_spec_dir                 the agent's STATE/cdi (informative; podman 4.3 cannot take it)
 *   userns: {uid_base, size}     the tenant's host ids (idmap.h): a sandboxed job's ids 0..size-1
 *                                are uid_base.. on the host; files made for the job belong to
 *                                uid_base + its uid (set by the agent; absent: no user namespace)
 *   registry_auth: {registry, username, password}   credentials for pulling the image (never
 *                                logged; the agent keeps them out of spec.json: replica_dir.h)
 *
 * Unknown fields are ignored, so the controller and the agent may add some.
 *
 * The job's environment, lowest precedence first:
 *   1. the base: PATH, LANG, LC_ALL, TZ, TMPDIR from gpupool-run's environment, HOME, USER,
 *      LOGNAME, SHELL of the user the job runs as (the caller passes them in);
 *   2. spec.env, without gpupool's own variables (the controller refuses them already; they are
 *      dropped again here with a warning): CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES,
 *      LD_PRELOAD, CUDA_DISABLE_CONTROL, GPUPOOL_*, CUDA_DEVICE_MEMORY_LIMIT*,
 *      CUDA_DEVICE_SM_LIMIT*, and for gangs the launchers' variables below;
 *   3. env_extra from the agent;
 *   4. gpupool's own, which nothing overrides: CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES
 *      (the GPU UUIDs, comma-separated; "" and "none" without GPUs), GPUPOOL_JOB_ID,
 *      GPUPOOL_JOB_NAME, GPUPOOL_REPLICA, GPUPOOL_RESTART_COUNT, GPUPOOL_DATA_DIR (where the
 *      volumes are, with volumes only), GPUPOOL_CHECKPOINT_DIR (when it has one), for a
 *      fraction LD_PRELOAD and GPUPOOL_SHARE_REGION (when prepared) and its limits
 *      GPUPOOL_GPU_MEMORY_LIMIT_MIB (0: none), GPUPOOL_GPU_CORE_LIMIT, GPUPOOL_GPU_CORE_POLICY
 *      (what the region holds; libgpushare's variables, so a process that loses the region
 *      still has them), GPUPOOL_NNODES, GPUPOOL_NODE_RANK and GPUPOOL_NPROC_PER_NODE (1, 0 and
 *      the GPUs outside gangs), and for gangs the launchers' variables (gp_env_gang_reserved's
 *      list); for a notebook or service with a port, GPUPOOL_PORT (the port to listen on, on
 *      127.0.0.1 or any address of its own namespace) and GPUPOOL_BASE_URL
 *      (/v1/jobs/JOB/proxy/: the path the controller's proxy serves it under, unchanged);
 *      for a job array's child GPUPOOL_ARRAY_INDEX, GPUPOOL_ARRAY_JOB_ID and Slurm's
 *      SLURM_ARRAY_TASK_ID (the index) and SLURM_ARRAY_JOB_ID (the array's id), which override
 *      spec.env's; with shm_size_mib GPUPOOL_SHM_SIZE_MIB (podman sizes /dev/shm to it; a host
 *      process, --runtime none, shares the host's /dev/shm and is not held to it).
 *
 * A gang of N replicas with P processes per replica is one job of N x P processes, as torchrun
 * and mpirun see it: GPUPOOL_NNODES=N, GPUPOOL_NODE_RANK=rank, GPUPOOL_NPROC_PER_NODE=P; the
 * same as PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE with PET_MASTER_ADDR and PET_MASTER_PORT
 * (torchrun's flags); WORLD_SIZE=N*P, RANK=rank*P, LOCAL_RANK=0, LOCAL_WORLD_SIZE=P (the values
 * torchrun gives the replica's first process), MASTER_ADDR, MASTER_PORT; GPUPOOL_HOSTFILE.
 */
#ifndef GP_AGENT_RUN_SPEC_H
#define GP_AGENT_RUN_SPEC_H

#include <stdint.h>

#include "agent/idmap.h"
#include "gpupool/error.h"

/* The most processes per replica a gang's spec may give (nproc_per_node). */
#define GP_RUN_NPROC_MAX 1024

typedef struct gp_run_var {
    char *name, *value;
} gp_run_var;

typedef enum gp_run_pull {
    GP_RUN_PULL_ALWAYS = 0,
    GP_RUN_PULL_IF_NOT_PRESENT,
    GP_RUN_PULL_NEVER,
} gp_run_pull;

typedef struct gp_run_volume {
    char *name, *path;
    int read_only;
} gp_run_volume;

typedef struct gp_run_spec {
    int64_t job, epoch;
    int replica, world_size, restart_count;
    char *name;
    int64_t cpu_milli, memory_mib;
    char **gpu_uuids; /* what the job sees (mig_uuid or uuid); ngpus entries */
    int ngpus;
    /* A fraction (gpu_share given): each GPU's memory limit (0: none), the compute cap
     * (1..100) and whether it is strict. fractional = 0: none of it applies. */
    int fractional;
    int64_t share_mem_mib;
    int share_core_percent;
    int share_core_strict;
    char **argv; /* command + args, NULL-terminated */
    gp_run_var *env, *env_extra;
    int nenv, nenv_extra;
    char *working_dir;                     /* NULL: the state directory's work/ */
    int rank, nproc_per_node, master_port; /* gangs */
    char *master_addr;
    char **hostfile; /* lines, nhosts entries */
    int nhosts;
    gp_run_volume *volumes;
    int nvolumes;
    char *checkpoint_dir; /* NULL: none named */
    char *image;          /* NULL: the host's root filesystem, read-only */
    gp_run_pull pull_policy;
    int network_private;  /* network: private */
    int own_netns;        /* kind notebook or service: a network namespace of its own */
    int port;             /* the port it serves on (0: none) */
    int cdi_devices;      /* cdi_devices: true: podman resolves the GPUs through CDI */
    int privileged;       /* privileged: true: podman --privileged (sandbox.h); nothing more for
                             a host process (--runtime none: the node's job user already) */
    char *tenant;         /* NULL: not given */
    gp_idmap userns;      /* userns: the tenant's host ids; size 0: none */
    int array_index;      /* array_index: a job array's child's index; -1: not one */
    int64_t array_job;    /* array_job: its array's job id */
    int64_t shm_size_mib; /* shm_size_mib: /dev/shm's size; 0: the runtime's default */
    /* registry_auth (all NULL when not given) */
    char *auth_registry, *auth_username, *auth_password;
} gp_run_spec;

/* Parses the spec text. On success *out is a new spec (free with gp_run_spec_free); on failure
 * *out is NULL and d names the field (e.g. "spec.command: required"). GP_EINVAL, GP_EPARSE,
 * GP_ENOMEM. */
int gp_run_spec_parse(const char *text, gp_run_spec **out, gp_diag *d);
/* Reads and parses FILE; errors name the file too. */
int gp_run_spec_load(const char *path, gp_run_spec **out, gp_diag *d);
void gp_run_spec_free(gp_run_spec *s);

/* The pull policy Kubernetes gives an image without one: Always for the tag "latest" or no tag
 * (and no digest), else IfNotPresent. */
gp_run_pull gp_run_pull_default(const char *image);
/* "Always", "IfNotPresent", "Never". Static storage. */
const char *gp_run_pull_name(gp_run_pull p);

/* Reads registry_auth from the JSON text of an object {registry, username, password} into s
 * (replacing what it has). GP_EINVAL naming the field, GP_EPARSE, GP_ENOMEM. */
int gp_run_spec_auth_parse(const char *text, gp_run_spec *s, gp_diag *d);

/* True for a gang member (world_size > 1). */
int gp_run_spec_is_gang(const gp_run_spec *s);

/* True when the job may not set NAME itself (layer 2 above). */
int gp_run_env_reserved(const gp_run_spec *s, const char *name);

/* The base layer: PATH, LANG, LC_ALL, TZ, TMPDIR copied from environ_ (gpupool-run's own), and
 * USER, LOGNAME, HOME, SHELL from the arguments (each may be NULL). On success *out is a new
 * NULL-terminated list (gp_run_env_free). GP_ENOMEM. */
int gp_run_env_base(char *const *environ_, const char *user, const char *home, const char *shell,
                    char ***out);

/* Paths gpupool-run prepared for the job; each NULL when it does not apply. */
typedef struct gp_run_paths {
    const char *hostfile;       /* gangs: GPUPOOL_HOSTFILE */
    const char *data_dir;       /* volumes: GPUPOOL_DATA_DIR */
    const char *share_library;  /* fractional GPUs: LD_PRELOAD */
    const char *share_region;   /* fractional GPUs: GPUPOOL_SHARE_REGION */
    const char *checkpoint_dir; /* GPUPOOL_CHECKPOINT_DIR */
} gp_run_paths;

/* Builds the job's environment (layers above). base is a NULL-terminated list of "NAME=VALUE"
 * (borrowed); paths (may be NULL: none) what gpupool-run prepared. On success
 * *out is a new NULL-terminated array of new strings (free with gp_run_env_free). Dropped
 * variables are logged. GP_ENOMEM. */
int gp_run_env_build(const gp_run_spec *s, const char *const *base, const gp_run_paths *paths,
                     char ***out);
void gp_run_env_free(char **env);
/* The value of NAME in env (borrowed), or NULL. */
const char *gp_run_env_get(char *const *env, const char *name);

/* The hostfile's text (one line per host, each ending in "\n"). New string; NULL when out of
 * memory. */
char *gp_run_hostfile_text(const gp_run_spec *s);

#endif
