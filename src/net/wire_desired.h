/*
 * The typed wire of the desired replicas: the document the controller answers a node's
 * heartbeat and its long-poll (GET /v1/nodes/NAME/desired) with, and the agent converges on.
 * One codec: the controller builds a gp_wire_desired_replica and encodes it; the agent decodes
 * the answer into gp_wire_desired and reads only the structs.
 *
 *   {"node", "version", "cordoned", "check_seq", "desired": [REPLICA, ...]}
 *   REPLICA: job, replica, epoch (required); name, world_size, restart_count, cpu_milli,
 *     memory_mib, gpus [{index, uuid, milli, memory_mib, mig_start}], spec (the job spec as this
 *     node is shown it: secret env values opened only for the node's own agent, see
 *     ctl/secrets.h), tenant, tenant_id, queue, gpu_share {memory_mib, core_percent,
 *     core_policy}, network, privileged (true only: false is absent), image, image_pull_policy,
 *     registry_auth {registry, username, password}, volumes [{name, path, read_only}],
 *     checkpoint_dir, kind ("batch", "notebook", "service"), port, readiness_probe,
 *     liveness_probe (gp_probe_to_json), and for gangs rank, nproc_per_node, master_addr,
 *     master_port, hostfile ["HOST slots=N", ...]; for a job array's child array_index and
 *     array_job (the array's id); shm_size_mib (/dev/shm).
 *
 * Decoding judges every member it knows (type, range, enumerations) and names the JSON path of
 * the first bad one ("desired[2].gpus[0].milli: must be an integer between 0 and 1000"); a bad
 * replica refuses the whole answer (the agent keeps what it runs and asks again). Members it
 * does not know are ignored, unlike the heartbeat's: an agent cannot tell a newer controller
 * what it refuses, and a rolling upgrade updates controllers first (docs/DECISIONS.md).
 * Optional members are absent in the struct as stated per field, and encoding leaves absent
 * ones out, so encode(decode(x)) keeps every member it knows and an older agent reads what a
 * newer controller sends.
 *
 * gpupool-run's spec.json (agent/run_spec.h) is the encoded replica plus members the agent adds
 * after encoding; of those the codec carries only gpus[].mig_uuid (the MIG device the agent made).
 *
 * Ownership: a decoded struct owns its heap strings, lists and the reference to spec;
 * gp_wire_desired_fini (and gp_wire_desired_replica_fini) release them. A replica filled by hand
 * for encoding may hold borrowed pointers: encoding only reads, and such a struct is never passed
 * to fini.
 */
#ifndef GP_NET_WIRE_DESIRED_H
#define GP_NET_WIRE_DESIRED_H

#include "gpupool/error.h"
#include "gpupool/imageref.h"
#include "gpupool/jobspec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_WIRE_MAX_DESIRED    4096 /* replicas on one node */
#define GP_WIRE_MAX_HOSTS      4096 /* hosts of a gang (GP_JOB_MAX_REPLICAS) */
#define GP_WIRE_MAX_VOLUMES    64
#define GP_WIRE_MAX_SECRET_LEN 16384 /* a registry password (a cloud token is a few KiB) */
#define GP_WIRE_MAX_PATH_LEN   4096

/* One GPU (or share of one) the replica holds. */
typedef struct gp_wire_desired_gpu {
    int index;          /* -1: absent */
    char uuid[96];      /* "" absent */
    int milli;          /* thousandths; -1: absent */
    int64_t memory_mib; /* -1: absent */
    int mig_start;      /* first memory slice of its MIG instance; -1: not a slice (or absent) */
    char mig_uuid[96];  /* the agent's: the MIG device it made; "" none */
} gp_wire_desired_gpu;

/* A fraction's limits inside the job's processes (gp_jobspec_enforcement). */
typedef struct gp_wire_gpu_share {
    bool given;
    int64_t memory_mib;       /* -1: absent */
    int core_percent;         /* 1..100; -1: absent */
    gp_compute_policy policy; /* GP_COMPUTE_DEFAULT: absent */
} gp_wire_gpu_share;

typedef struct gp_wire_volume {
    char name[GP_JOB_NAME_MAX];
    char *path;
    bool read_only;
} gp_wire_volume;

/* One line of a gang's hostfile: "HOST slots=N". */
typedef struct gp_wire_host {
    char name[256];
    int slots;
} gp_wire_host;

typedef struct gp_wire_desired_replica {
    int64_t job;
    int replica;
    int64_t epoch;
    char name[GP_JOB_NAME_MAX]; /* "" absent */
    int world_size;             /* 0: absent (1) */
    int restart_count;          /* -1: absent */
    int64_t cpu_milli;          /* -1: absent */
    int64_t memory_mib;         /* -1: absent */
    gp_wire_desired_gpu *gpus;
    size_t ngpus;
    json_t *spec;         /* object; NULL: absent */
    char mig_profile[16]; /* spec.resources.mig_profile, "" none (read from spec, not encoded) */
    char tenant[GP_JOB_NAME_MAX]; /* "" absent */
    int64_t tenant_id;            /* -1: absent */
    char queue[GP_JOB_NAME_MAX];  /* "" absent */
    gp_wire_gpu_share share;
    int network;                                         /* gp_network; -1: absent (host) */
    bool privileged;                                     /* false: absent */
    char *image;                                         /* NULL: absent */
    gp_pull_policy pull_policy;                          /* GP_PULL_DEFAULT: absent */
    char *auth_registry, *auth_username, *auth_password; /* registry_auth; NULL: absent */
    gp_wire_volume *volumes;
    size_t nvolumes;
    char *checkpoint_dir; /* NULL: absent */
    int rank;             /* gangs; -1: absent */
    int nproc_per_node;   /* -1: absent */
    char *master_addr;    /* NULL: absent */
    int master_port;      /* -1: absent */
    gp_wire_host *hosts;  /* NULL: no hostfile */
    size_t nhosts;
    int kind;                     /* gp_job_kind; -1: absent (batch) */
    int port;                     /* the port a notebook or service serves on; -1: absent */
    gp_probe readiness, liveness; /* type GP_PROBE_NONE: absent */
    int array_index;              /* a job array's child: its index; -1: absent */
    int64_t array_job;            /* its array's job id; -1: absent */
    int64_t shm_size_mib;         /* /dev/shm's size; -1: absent (the runtime's default) */
} gp_wire_desired_replica;

typedef struct gp_wire_desired {
    char node[GP_JOB_NAME_MAX * 2]; /* "" absent */
    int64_t version;                /* 0: absent (a controller without versions) */
    bool cordoned;
    int64_t check_seq; /* 0: absent */
    gp_wire_desired_replica *replicas;
    size_t nreplicas;
} gp_wire_desired;

/* A replica with every optional member absent, ready to be filled. */
void gp_wire_desired_replica_init(gp_wire_desired_replica *r);

/* Decodes one replica (path names it in errors: "desired[3]"). On failure *out is empty. */
int gp_wire_desired_replica_decode(json_t *v, const char *path, gp_wire_desired_replica *out,
                                   gp_diag *d);
void gp_wire_desired_replica_fini(gp_wire_desired_replica *r);

/* Decodes a whole answer. 0, or GP_EINVAL naming the path, or GP_ENOMEM; on failure *out is
 * empty. */
int gp_wire_desired_decode(json_t *doc, gp_wire_desired *out, gp_diag *d);
void gp_wire_desired_fini(gp_wire_desired *dd);

/* Encoders: new JSON objects, absent members left out; NULL when out of memory. */
json_t *gp_wire_desired_replica_encode(const gp_wire_desired_replica *r);
/* The registry_auth member alone ({registry, username, password}); NULL when absent. */
json_t *gp_wire_desired_auth_encode(const gp_wire_desired_replica *r);
/* An answer: the header of dd with replicas, a list of encoded replicas (its reference is
 * stolen, also on failure), or with dd's own replicas encoded when replicas is NULL. */
json_t *gp_wire_desired_encode(const gp_wire_desired *dd, json_t *replicas);

#endif
