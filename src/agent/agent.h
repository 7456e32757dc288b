/*
 * gpupool-agent: one per GPU server. It discovers the GPUs (NVML), registers the node with the
 * controller using a join token, then runs a level-triggered loop: each round it reads what its
 * replica directories say, sends a heartbeat (replica states, GPU readings), receives the
 * node's desired replicas, and starts and stops gpupool-run supervisors to converge
 * (converge.h). A thread of its own checks every memory_interval_ms, through NVML, that no
 * fractional replica's processes (by cgroup, else session and ancestry) hold more GPU memory
 * than its limit for longer than a grace period (memwatch_run.h, memwatch.h); one that does is
 * stopped and reported Failed with the reason. Between rounds it long-polls the desired replicas
 * (gp_agent_watch), so a replica placed on the node starts within milliseconds, not at the next
 * heartbeat. Nothing of a running job depends on the agent process: supervisors run in sessions of
 * their own, so a restarted agent (even after kill -9) finds them through their directories
 * (replica_dir.h) and reports what happened meanwhile.
 *
 * Node health: the agent runs the health check (check.h, through gp_nvml_health) at start, every
 * check_interval_s, and at once when an answer of the controller carries a check_seq above the
 * last one it ran for; every heartbeat then carries the latest result as "health": {"seq": the
 * last check_seq run for (0: none asked), "at_ms": wall-clock ms of the check, "conditions":
 * [findings]}. What it expects: the GPU count and driver version it started with, and every
 * NVLink link that was active at an earlier check. Each running replica's report carries
 * "idle_ms": how long since it last wrote to its stdout.log or stderr.log, or one of its GPUs
 * showed utilisation above 0 (as sampled each round), whichever is later, counted from its
 * start when it did neither yet (absent when its directory says nothing; a GPU shared by
 * fractional replicas counts as used by each of them; a GPU in MIG mode reports no utilisation,
 * so only output counts there), and "util": the mean utilisation of its GPUs this round, an
 * integer percent 0..100 (usage.h: a whole GPU's own; a fraction's from its processes'
 * utilisation when NVML gives it per process, else the GPU's; a MIG slice's only when NVML gives
 * one for the MIG device; GPUs without a reading are left out of the mean, and util is absent when
 * none has one), and "gpu_mem_mib": the GPU memory its processes hold on its GPUs, summed (usage.h;
 * absent when none of them could be measured); the controller keeps both in the job's history.
 *
 * Metrics: the agent serves GET /metrics on the port of its address (logserve.h): each round's
 * GPU readings under dcgm-exporter's names, per-replica slice figures and its own (metrics.h,
 * docs/metrics.md). A round takes them whether or not the controller answers.
 *
 * The address: its port is where the agent serves /metrics and the replicas' logs; port 0 binds
 * a free port at start, and the node registers (and re-registers) with the port bound.
 *
 * The sandbox: with --runtime podman (the default) the agent detects podman at start and runs
 * one throw-away container (runtime.h); a node where that fails does not start (the log says
 * why), since every replica runs in a podman sandbox (sandbox.h). It registers with "runtime":
 * {engine, version, oci_runtime, cgroups}, and heartbeats carry "images" (images.h, the cache
 * capped at image_cache_max bytes). A replica pulling its image is reported Running with
 * "phase": "Pulling" and "pull": {image, done_bytes, total_bytes}; one whose pull failed is
 * Failed with exit_code 125 and the reason "ImagePullFailed: ...". With --runtime none the node
 * registers "runtime": null and runs jobs as host processes, as before containers (no image
 * jobs: they fail with exit 125).
 *
 * State directory layout:
 *   agent.token                 the node's agent token (0600), from the last registration; the
 *                               agent registers again with it (a join token registers only a
 *                               node the controller does not know), and with the join token
 *                               only when the controller refuses it (401)
 *   images.json                 when each image was last used by a replica here (images.h)
 *   replicas/J-R-E/             one directory per placement (job J, replica R, epoch E): the
 *                               supervisor's files, plus spec.json and supervisor.log
 *   finished/J-R-E/             directories of replicas that are over and no longer desired
 *                               (kept for logs; the oldest are removed past a limit)
 *   cdi/gpupool.json            the CDI spec of the node's GPUs and MIG devices (cdi_host.h;
 *                               0755 directory, 0644 file), written at start and again whenever
 *                               the MIG devices change, before a replica on a new one starts
 *
 * The spec given to gpupool-run carries "cdi_spec_dir": STATE/cdi, for a replica with GPUs once
 * the spec is written (for podman's --cdi-spec-dir, see gp_cdi_podman_args).
 */
#ifndef GP_AGENT_AGENT_H
#define GP_AGENT_AGENT_H

#include "gpupool/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define GP_AGENT_PATH_MAX 1024

typedef struct gp_agent_config {
    char server[1024];    /* controller URL(s), e.g. http://127.0.0.1:7070 or "URL,URL": the agent
                           * follows the leader among them (net/http_client.h) */
    char join_token[128]; /* the join token's secret */
    char cacert[GP_AGENT_PATH_MAX];       /* CA certificates (PEM) for an https controller; "" = the
                                           * system's */
    char state_dir[GP_AGENT_PATH_MAX];    /* the agent's own files */
    char name[64];                        /* node name; default: the host name */
    char address[128];                    /* host:port others reach this node at (gangs) */
    char nvml_library[GP_AGENT_PATH_MAX]; /* "" = libnvidia-ml.so.1 */
    char run_binary[GP_AGENT_PATH_MAX];   /* gpupool-run */
    char user[64];                        /* run jobs as this user; "" = as the agent */
    int64_t heartbeat_ms;                 /* time between rounds */
    int64_t cpu_milli, memory_mib;        /* 0 = the host's */
    int grace_s;                          /* SIGTERM to SIGKILL */
    int64_t log_max;                      /* bytes per log file */
    int finished_keep;                    /* finished directories kept */
    int memory_grace_s; /* GPU memory watch (memwatch.h): seconds a fractional replica may stay
                           above its GPU memory limit before it is stopped; 0 = no watch */
    int64_t memory_interval_ms; /* ... and how often it measures (memwatch_run.h), > 0 */
    int check_interval_s; /* node health check (check.h): at start and this often; 0 = only when
                             the controller asks (check_seq) */
    /* The CDI spec (cdi_host.h): where the device nodes are ("" = /dev), the MIG capability
     * table ("" = /proc/driver/nvidia-caps/mig-minors), the ld cache ("" = /etc/ld.so.cache),
     * and where the spec is published: "auto" (""), "none" or a directory. */
    char dev_root[GP_AGENT_PATH_MAX];
    char mig_minors[GP_AGENT_PATH_MAX];
    char ld_cache[GP_AGENT_PATH_MAX];
    char cdi_publish[GP_AGENT_PATH_MAX];
    /* Who reads /metrics besides the controller (logserve.h): who carries metrics_token ("" =
     * no one), or anyone when metrics_open. */
    char metrics_token[128];
    bool metrics_open;
    /* The sandbox (sandbox.h, runtime.h) */
    char runtime[16];                           /* "podman" (default) or "none": host processes */
    char podman[GP_AGENT_PATH_MAX];             /* "" = podman in PATH */
    char join_token_file[GP_AGENT_PATH_MAX];    /* hidden from jobs, like the state directory */
    char metrics_token_file[GP_AGENT_PATH_MAX]; /* hidden too ("" = none) */
    char masks[4096];        /* more host paths hidden from jobs over the host root, ':' between */
    int64_t image_cache_max; /* bytes of images kept (images.h); 0 = no cap */
    int64_t pids_limit;      /* processes and threads per replica; 0 = podman's default */
    int64_t tenant_uids;     /* where tenants' host id ranges start (idmap.h) */
    /* The node's labels, "KEY=VALUE,KEY=VALUE" (gp_agent_labels), sent when it registers; jobs
     * select nodes by them (node_selector, spread). "" = none. */
    char labels[2048];
} gp_agent_config;

/* The labels of text ("zone=a,gpu-type=a100"; "" none) as a new JSON object into *out. GP_EINVAL
 * naming the label whose key ([prefix/]name) or value (label syntax, gpupool/constraint.h) is
 * wrong, or that repeats a key; GP_ENOMEM. */
int gp_agent_labels(const char *text, json_t **out, gp_diag *d);

typedef struct gp_agent gp_agent;

/* Discovers the GPUs and registers the node. GP_EIO (NVML, controller unreachable), GP_EAUTH
 * (join token refused) with d set. */
int gp_agent_new(const gp_agent_config *cfg, gp_agent **out, gp_diag *d);
void gp_agent_free(gp_agent *a);

/* One round: probe, sample, heartbeat, converge (the GPU memory watch runs on its own thread,
 * also while the controller is away).
 * A controller that cannot be reached is not an error of the round (the replicas keep running;
 * the next round retries); d then says why. */
int gp_agent_round(gp_agent *a, gp_diag *d);

/* Between rounds: waits up to wait_ms for the node's desired replicas to change (a long-poll of
 * GET /v1/nodes/NAME/desired with the version of the last answer) and converges on them at once
 * when they did; an answer asking for a health check (check_seq) runs it at once. The call
 * itself may last up to wait_ms plus 1 s (then it gives up). Returns 2 when it ran a requested
 * check (the caller should heartbeat now, to send the result), else 1 after converging on a
 * change, 0 when the wait ended without one, or a negative GP_E* code with d set when it could
 * not ask (no heartbeat answered yet, a controller without the endpoint, unreachable): the
 * caller then waits for the next round instead. */
int gp_agent_watch(gp_agent *a, int64_t wait_ms, gp_diag *d);

/* After a round or a watch started replicas (starts.h): 1 when one of them has come up (or
 * ended) since, so that a round now reports it Running at once instead of at the next
 * heartbeat; 0 while they all still start (the caller looks again a few milliseconds later);
 * -1 when no start is watched. Reads the replica directories. */
int gp_agent_starts_due(gp_agent *a);

#endif
