/*
 * gpupoold's state: what the controller knows, in memory, written through to the store.
 *
 * The store is the truth; memory is a copy that answers reads quickly and feeds the scheduler.
 * At start the controller loads everything from the store (ctl_state_load). Every change runs
 * on one thread, the committer (commit.c), which groups the changes that arrive together into
 * one store transaction (one fsync): for each change it takes a savepoint, checks the change
 * against memory, writes it to the store and applies it to memory; a change that fails rolls
 * back to its savepoint and leaves memory alone. When the commit itself fails, memory is
 * reloaded from the store, so it never holds anything the store lost. The committer holds the
 * state lock from the start of a group until its commit, so readers never see uncommitted
 * changes; readers take the lock for as long as they copy what they answer.
 *
 * The scheduler's cluster model (gp_cluster) lives here too: one node per registered node, with
 * the assignments of every Scheduled and Running job applied.
 */
#ifndef GP_CTL_CTL_H
#define GP_CTL_CTL_H

#include "ctl/config.h"
#include "ctl/faults.h"
#include "gpupool/imageref.h"
#include "gpupool/jobspec.h"
#include "gpupool/model.h"
#include "gpupool/sched.h"
#include "net/wire.h"
#include "store/store.h"

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- roles and the caller of a request ---- */

typedef enum ctl_role {
    CTL_ROLE_NONE = 0,
    CTL_ROLE_ADMIN,
    CTL_ROLE_OPERATOR,
    CTL_ROLE_USER,
    CTL_ROLE_JOIN,    /* may register nodes only */
    CTL_ROLE_AGENT,   /* one node's agent: heartbeats and status of that node */
    CTL_ROLE_METRICS, /* may only scrape: /metrics and /v1/sd/prometheus (and the agents') */
} ctl_role;

const char *ctl_role_name(ctl_role r);
/* GP_EINVAL for an unknown name. */
int ctl_role_parse(const char *s, ctl_role *out);

typedef struct ctl_principal {
    ctl_role role;
    int64_t token_id;
    int64_t tenant_id; /* users */
    int64_t node_id;   /* agents */
    char name[64];     /* the token's name, for events */
    char tenant[64];   /* users: their tenant's name */
} ctl_principal;

/* ---- objects ---- */

/* What a tenant's users may submit with (ctl_tenant_granted). */
typedef enum ctl_grant { CTL_GRANT_CLASS = 0, CTL_GRANT_QUEUE, CTL_NGRANTS } ctl_grant;

typedef struct ctl_tenant {
    int64_t id;
    gp_sched_tenant lim;  /* name and quotas; per-model quotas by model name in quota_models */
    json_t *quota_models; /* {"A100-80GB": milli, ...} as given; owned (ctl_tenant_limits) */
    /* The priority classes and queues granted to its users: arrays of distinct names, owned;
     * NULL: not set, only the configured default (jobs.default_priority_class,
     * jobs.default_queue). */
    json_t *grants[CTL_NGRANTS];
    /* Its users may submit privileged jobs (only an admin writes a tenant); a job already
     * stored keeps running when it is withdrawn. */
    bool allow_privileged;
} ctl_tenant;

typedef struct ctl_queue {
    int64_t id;
    gp_sched_queue q;
} ctl_queue;

typedef struct ctl_pclass {
    int64_t id;
    char name[GP_NAME_MAX];
    int32_t value;
    bool preempt; /* PreemptLowerPriority */
    char description[256];
} ctl_pclass;

/* A named host directory jobs may mount (at /data/NAME). The path is the same on every node
 * (shared storage, or a copy on each). */
typedef struct ctl_volume {
    int64_t id;
    char name[GP_NAME_MAX];
    char path[1024]; /* absolute, normalised */
    bool read_only;  /* jobs may only mount it read-only */
    char description[256];
} ctl_volume;

/* A GPU instance on a GPU in MIG mode, as the node's agent last reported it (stored with the
 * node; see node_mig.c). */
typedef struct ctl_mig_inst {
    char profile[32]; /* the driver's name for its profile: "1g.10gb", "1g.10gb+me" */
    int start;        /* its first memory slice */
    bool idle;        /* no replica holds it and no process runs on it */
    bool held;        /* a replica the agent runs has its MIG slice there */
} ctl_mig_inst;

typedef struct ctl_gpu_info {
    char uuid[96];
    char model[GP_NAME_MAX];
    int64_t mem_mib;
    int numa;
    uint32_t nvlink;
    bool mig;
    double util;      /* last reported utilisation, percent; -1 unknown */
    json_t *readings; /* the last readings the agent sent (memory, temperature, power, clocks,
                         ECC); owned; NULL = none. Memory only. */
    int64_t xids;     /* XID events reported since the controller started */
    int last_xid;     /* 0 = none */
    /* Out of service (stored with the node): nothing new is placed on a drained GPU. */
    bool drained;
    bool drain_auto;        /* returns once a health check asked for after the drain passes */
    bool retired;           /* returns only by an operator's undrain */
    char drain_reason[200]; /* why */
    int64_t drained_ms;
    int64_t check_seq;     /* auto: the node's health check that must pass (0 = not asked yet) */
    ctl_gpu_faults faults; /* recurring faults seen lately (stored) */
    bool spare;            /* memory: held back for restarts after a fault */
    int nmig;              /* GPU instances on it (mig), by start (stored) */
    ctl_mig_inst migs[GP_MIG_MEMORY_SLICES];
} ctl_gpu_info;

typedef struct ctl_node {
    int64_t id;
    char name[GP_NAME_MAX];
    int cl; /* index in the cluster model */
    int64_t cpu_milli, memory_mib;
    char address[128];
    char control_token[64]; /* the agent accepts the controller's calls with it (logs) */
    json_t *labels;         /* object; owned */
    int ngpus;
    ctl_gpu_info gpus[GP_MAX_GPUS_PER_NODE];
    bool cordoned;
    bool draining;
    bool ready;
    int64_t drain_deadline_ms; /* maintenance: drained at this time (stored); 0 = none */
    int64_t check_seq;         /* the latest health check asked of its agent (stored) */
    json_t *health;            /* memory: the agent's latest health check result; owned */
    int64_t health_seq;        /* memory: the request it answered (health.seq) */
    char unhealthy[200];       /* memory: a node-wide fatal finding of it; "" = none */
    /* memory: its replicas were moved off it while it was lost; it gets no new work until its
     * agent reports none of them running */
    bool fenced;
    int64_t registered_ms;
    int64_t heartbeat_ms; /* memory only: not worth a write per heartbeat */
    /* The version of the node's desired document (ctl_node_desired_version); memory only, 0
     * until first given out. */
    int64_t desired_version;
    /* The container runtime its agent registered, {"engine", "version", "oci_runtime",
     * "cgroups"} (stored); owned; NULL: none, the node runs no job from an image
     * (GP_CAP_IMAGES on the model). */
    json_t *runtime;
    /* memory: the image cache its agent last reported, [{"ref", "id", "size_bytes",
     * "last_used_ms"}]; owned; NULL until reported (node_images.c) */
    json_t *images;
    int64_t images_bytes; /* memory: their total size */
    /* memory (derived from the tokens): the node's newest agent token, and whether an older one
     * is still live — kept after a re-registration by the node's own agent until the agent
     * heartbeats with the new one, so an agent that dies before saving its new credential can
     * still come back with the old one */
    int64_t agent_token_id;
    bool older_agent_tokens;
    /* Its taints (stored; set by operators, node_taints.c); owned; NULL when none. */
    struct gp_taint *taints;
    int ntaints;
} ctl_node;

/* The long-poll waiters of desired documents (api_nodes.c). */
typedef struct ctl_desired_waiters ctl_desired_waiters;

typedef enum ctl_job_state {
    CTL_PENDING = 0,
    CTL_SCHEDULED,
    CTL_RUNNING,
    CTL_SUCCEEDED,
    CTL_FAILED,
    CTL_CANCELLED,
    CTL_PREEMPTED,
    CTL_SUSPENDED, /* a notebook stopped for idleness: no replicas, resumed on demand (idle.h) */
    CTL_NSTATES,
} ctl_job_state;

const char *ctl_job_state_name(ctl_job_state s);
/* GP_EINVAL for an unknown name. */
int ctl_job_state_parse(const char *s, ctl_job_state *out);
/* Whether the state holds resources (Scheduled, Running). */
bool ctl_job_state_holds(ctl_job_state s);
/* Whether the job waits for a placement (Pending, Preempted). */
bool ctl_job_state_waits(ctl_job_state s);
/* Whether the job has ended (Succeeded, Failed, Cancelled). */
bool ctl_job_state_final(ctl_job_state s);

typedef struct ctl_replica {
    int64_t node_id;
    int64_t epoch;
    gp_assignment a; /* in the cluster model */
    char state[16];  /* what the agent last reported: "", "Running", "Succeeded", "Failed" */
    int exit_code;
    bool hung; /* memory: reported hung (once per placement) */
    /* memory: when the agent first reported the replica's GPU utilisation below the job's
     * idle_utilization, with every report since below it too; 0 = not idle (idle.h) */
    int64_t idle_since_ms;
    /* memory: the pull of its image the agent reports (pull.c): when the first report of it
     * came (0: none under way), when its last event was recorded and the tenth of the total it
     * named (-1: the total is unknown) */
    int64_t pull_start_ms;
    int64_t pull_event_ms;
    int pull_step;
    /* memory: a service's replica (service.h) as its agent last reported it: whether its
     * readiness probe passes and the service's metric scraped from it */
    bool ready;
    bool has_metric;
    double metric;
    /* memory: its latest readings for the job's history (history.h): utilisation (percent, -1
     * unknown), GPU memory used and the most it may use (MiB, -1 unknown), and when (0: none) */
    int hist_util;
    int64_t hist_mem_mib, hist_limit_mib, hist_ms;
} ctl_replica;

/* Restarts after faults remembered per job (faults.restart_limit cannot exceed it). */
#define CTL_FAULT_RESTARTS_KEEP 64

/* The reason of a job no scheduling cycle has looked at yet. */
#define CTL_REASON_NEW "waiting for the next scheduling cycle"

typedef struct ctl_job {
    int64_t id;
    int64_t tenant_id;
    char name[GP_NAME_MAX];
    ctl_job_state state;
    gp_jobspec spec;
    char idempotency_key[128];
    char reason[256]; /* why it waits (Pending) or why it ended */
    int64_t submit_ms, start_ms, end_ms;
    int restarts;
    bool spare_ok; /* restarting after a fault: may use hot spares (stored) */
    int64_t fault_ms[CTL_FAULT_RESTARTS_KEEP]; /* its latest restarts after faults, newest
                                                  first (stored) */
    int exit_code;         /* of a Failed job's first failed replica; 0 otherwise */
    ctl_replica *replicas; /* spec.replicas entries while it holds resources; else NULL */
    int64_t *ran_on;       /* per replica, the node of the last placement that ended; owned;
                              NULL = never placed (kept so logs can be found afterwards) */
    int64_t ran_epoch;     /* that placement's epoch */
    gp_sched_job sj;       /* the scheduler's view, cached (valid while sj_gen == st->gen) */
    uint64_t sj_gen;       /* 0 = not computed */
    /* Services (service.h), stored in the status document. A replica job: its service's id
     * (owner; 0: not a service's) and the revision of the service's spec it runs. A service:
     * its spec's revision (1 at submission, one more per update), the replicas it should have
     * now (the autoscaler moves it), the number the next replica job's name takes, and when the
     * revision's rollout began (ms; 0: none under way). */
    int64_t owner;
    int revision;
    int svc_replicas;
    int svc_next;
    int64_t svc_rollout_ms;
    /* Arrays and dependencies (array.h), stored in the status document: the jobs after_ok
     * named, resolved to ids at submission (owned; NULL: none); an array's child: in_array and
     * its index (owner: the array); an array: how many children it has made. */
    int64_t *after_ids;
    int nafter;
    bool in_array;
    int array_index;
    int array_made;
} ctl_job;

/* ---- the state ---- */

/* A tenant's credentials for one image registry (registries.c). */
typedef struct ctl_registry_cred {
    int64_t tenant_id;
    char registry[GP_IMAGE_REGISTRY_MAX]; /* normal form (gpupool/imageref.h) */
    char username[256];
    char *password; /* owned; never shown by the API, logged or written where a job reads */
    int64_t updated_ms;
} ctl_registry_cred;

/* One replica placed on a node (the index of ctl_state_held_on). */
typedef struct ctl_held {
    int64_t node_id;
    ctl_job *job;
    int replica;
} ctl_held;

/* A set of positions (job_states.c): a bit per position, and a summary bit per word that is not
 * zero, so the next member after a position costs the members passed and one summary word per
 * 4,096 positions without one. */
typedef struct ctl_posset {
    uint64_t *w;   /* bit p % 64 of w[p / 64]: p is a member */
    uint64_t *sum; /* bit k % 64 of sum[k / 64]: w[k] != 0 */
    int nw;        /* words in w: a multiple of 64 (nw / 64 in sum) */
} ctl_posset;

typedef struct ctl_state {
    pthread_mutex_t lock;
    int lock_wanted; /* threads waiting in ctl_state_lock (atomic builtins); the committer lets
                        them in before its next group (commit.c) */
    gp_cluster *cluster;
    ctl_tenant *tenants;
    int ntenants, captenants;
    ctl_queue *queues;
    int nqueues, capqueues;
    ctl_pclass *pclasses;
    int npclasses, cappclasses;
    ctl_volume *volumes;
    int nvolumes, capvolumes;
    ctl_registry_cred *creds; /* by tenant, then registry */
    int ncreds, capcreds;
    ctl_node *nodes;
    int nnodes, capnodes;
    /* Node lookups by name and by id: open-addressing tables of a node's index + 1 (0: empty),
     * exact while nodes_indexed == nnodes; rebuilt on demand otherwise. Whoever removes or moves
     * a node in nodes calls ctl_state_nodes_moved. */
    int *node_name_slots, *node_id_slots;
    int node_slots_cap, nodes_indexed;
    int *node_cls; /* node i's cluster index, while the tables are exact (ctl_pool_nodes) */
    /* While the tables are exact: the GPU models the registered nodes have (bit m of
     * gp_node.models; ctl_pool_view), added to as nodes are appended, counted anew when the
     * tables are rebuilt (a node removed or replaced). */
    uint64_t node_models;
    ctl_job **jobs; /* by id, ascending (ids only grow) */
    int njobs, capjobs;
    /* The jobs by state (job_states.c): the positions in jobs of each state's jobs, kept by
     * ctl_state_add_job and ctl_job_set_state; lost after an allocation failed (until the next
     * load), when lists walk every job instead. */
    ctl_posset by_state[CTL_NSTATES];
    bool by_state_lost;
    gp_token_rec *tokens;
    int ntokens, captokens;
    /* Token lookups by name and by node (tokens are only appended): open-addressing tables of a
     * token's index + 1 (0: empty) over tokens[0, tokens_indexed), extended on demand. */
    int *token_name_slots, *token_node_slots;
    int token_slots_cap, tokens_indexed;
    int npending;      /* jobs waiting: Pending or Preempted */
    uint64_t gen;      /* bumped when tenants, queues, classes or GPU models change (starts at 1) */
    uint64_t auth_gen; /* bumped when tokens or tenants change */
    /* The changes of auth_gen the authentication table can follow in steps (auth.h): how many
     * bumps since it last caught up were logged, and the tokens revoked since (indexes). */
    uint64_t auth_logged;
    int *auth_revoked;
    int nauth_revoked, capauth_revoked;
    /* Which replicas each node holds, sorted by node: rebuilt on demand when placements have
     * changed (held_gen != held_built), so a heartbeat costs its node's replicas, not a scan of
     * every job. */
    ctl_held *held;
    int nheld, capheld;
    uint64_t held_gen, held_built;
    /* Desired-document versions: the highest given out (kept by ctl_state_clear, so a reload
     * never repeats one); whether one moved (or the state was reloaded) since the last
     * ctl_desired_publish. */
    int64_t desired_max;
    bool desired_moved;
    /* Not state, but woken by its changes: kept by ctl_state_clear. */
    ctl_desired_waiters *waiters;
    /* jobs.checkpoint_root (desired documents name each job's directory under it); kept by
     * ctl_state_clear */
    const char *checkpoint_root;
    /* The key that seals jobs' secret env values (secrets.h); kept by ctl_state_clear */
    const unsigned char *secret_key;
} ctl_state;

/* Empties and frees everything in st (the lock is kept). */
void ctl_state_clear(ctl_state *st);
/* Loads st from the store (after clearing it). GP_EIO, GP_ENOMEM. */
int ctl_state_load(ctl_state *st, gp_store *store, gp_diag *d);

ctl_tenant *ctl_tenant_by_name(ctl_state *st, const char *name);
ctl_tenant *ctl_tenant_by_id(ctl_state *st, int64_t id);
ctl_queue *ctl_queue_by_name(ctl_state *st, const char *name);
ctl_pclass *ctl_pclass_by_name(ctl_state *st, const char *name);
ctl_volume *ctl_volume_by_name(ctl_state *st, const char *name);
ctl_node *ctl_node_by_name(ctl_state *st, const char *name);
ctl_node *ctl_node_by_id(ctl_state *st, int64_t id);
/* The token named name, or NULL. */
gp_token_rec *ctl_token_by_name(ctl_state *st, const char *name);
/* The indexes in st->tokens of the tokens bound to node_id (agent tokens), ascending, in *out
 * (caller frees; NULL when none): their count, or GP_ENOMEM. */
int ctl_tokens_of_node(ctl_state *st, int64_t node_id, int **out);
/* After a node is removed from st->nodes or moved within it: the lookups rebuild their index. */
void ctl_state_nodes_moved(ctl_state *st);
/* After a node is appended to st->nodes: the lookups' index takes it in without a rebuild. */
void ctl_state_node_appended(ctl_state *st);
ctl_job *ctl_job_by_id(ctl_state *st, int64_t id);
/* A job by id ("42") or by name among the tenant's jobs (tenant_id 0: any tenant): the active
 * one, else the newest. NULL when none. */
ctl_job *ctl_job_find(ctl_state *st, const char *ref, int64_t tenant_id);

/* ---- arrays and dependencies (job_deps.c; the changes they make: array.h) ---- */
/* Whether j is a job array (spec.array; a controller object, never scheduled itself). */
bool ctl_job_is_array(const ctl_job *j);
/* The verdict over j's dependencies (gpupool/array.h); *which: the job it is about (NULL when
 * gone or READY). An array counts as succeeded when every child did. Under the lock. */
gp_dep_verdict ctl_job_deps(ctl_state *st, const ctl_job *j, const ctl_job **which);
/* Resolves spec->after_ok in tenant_id's jobs (ctl_job_find: an id or a name) into *ids (a new
 * array of n = the list's length; NULL when empty). GP_ENOENT naming after_ok[i] for one that is
 * not the tenant's (the message is the same whether another tenant has it or nobody). */
int ctl_deps_resolve(ctl_state *st, const gp_jobspec *spec, int64_t tenant_id, int64_t **ids,
                     int *n, gp_diag *d);

/* Appends a job (ids must ascend); takes ownership. GP_ENOMEM. */
int ctl_state_add_job(ctl_state *st, ctl_job *j);
void ctl_job_free(ctl_job *j);
/* Adds a node to st and the cluster model from its stored document. GP_EINVAL naming the
 * field when the document is malformed. */
int ctl_state_add_node(ctl_state *st, int64_t id, const char *name, json_t *doc, gp_diag *d);
/* Frees what n owns (labels, readings, health, runtime, images); n itself is the caller's. */
void ctl_node_fini(ctl_node *n);
/* The host part of the node's address ("10.0.0.1:7071" -> "10.0.0.1"), or its name when it
 * registered no reachable address (none, or port 0). Returns whether the address is reachable
 * (the agent serves its logs on it). */
bool ctl_node_host(const ctl_node *n, char *buf, size_t cap);
/* The stored document of a node. New reference. */
json_t *ctl_node_doc(const ctl_node *n);
/* Whether the node may take new work (ready, not cordoned, draining, fenced or unhealthy), set
 * on the cluster model. */
void ctl_node_update_schedulable(ctl_state *st, ctl_node *n);
/* After a (re)load: every node gets a grace period (Ready, heard from at now) for its agent to
 * report. */
void ctl_nodes_grace(ctl_state *st, int64_t now);
/* Sets each GPU's availability on the cluster model from its drain and spare flags, and the MIG
 * layout of each GPU in MIG mode from its GPU instances. */
void ctl_node_update_gpus(ctl_state *st, ctl_node *n);

/* ---- node taints (node_taints.c) ---- */

#define CTL_MAX_TAINTS 32

/* Reads a list of taints ([{"key", "value", "effect"}], absent or null: none) into *out (owned,
 * NULL when none) and *n. GP_EINVAL naming path[i].field; one taint per key and effect. */
int ctl_taints_read(json_t *list, const char *path, struct gp_taint **out, int *n, gp_diag *d);
/* The list's document. New reference. */
json_t *ctl_taints_doc(const struct gp_taint *t, int n);
/* "key=value:Effect" (or "key:Effect" with an empty value) into buf. */
void ctl_taint_text(const struct gp_taint *t, char *buf, size_t cap);

/* ---- container runtime and image cache of nodes (node_images.c) ----
 * Registration may carry "runtime": {"engine", "version", "oci_runtime": "runc"|"crun",
 * "cgroups": "v1"|"hybrid"|"v2"}, or null when the node cannot run containers; jobs from images
 * go only to nodes with one. Heartbeats may carry "images": the node's image cache, kept in
 * memory and shown with the node (to users only its count and total size). */
/* Reads doc's "runtime" into *out: a new reference to its normal form, NULL when absent or null.
 * GP_EINVAL naming the field. */
int ctl_runtime_read(json_t *doc, json_t **out, gp_diag *d);
/* Sets n's runtime (a reference is taken; NULL: none) and its capability on the model. */
void ctl_node_set_runtime(ctl_state *st, ctl_node *n, json_t *runtime);
/* A heartbeat's image cache (decoded by the wire codec, net/wire.h) as the list shown with the
 * node, into *out (new), and *bytes (their total size). GP_ENOMEM. */
int ctl_images_read(const gp_wire_image *images, size_t n, json_t **out, int64_t *bytes,
                    gp_diag *d);
/* The node's runtime and image cache as the API shows them: "runtime" (null when none) and
 * "images": {"count", "size_bytes", "items" (staff only: list the refs)} set in doc. */
void ctl_images_show(const ctl_node *n, bool staff, json_t *doc);

/* ---- registry credentials (registries.c) ---- */
/* Adds a credential to st (a copy of r); GP_ENOMEM. Under the state lock. */
int ctl_registry_add(ctl_state *st, const gp_registry_cred_rec *r);
/* The tenant's credentials for the registry of image (a normal form), or NULL. */
const ctl_registry_cred *ctl_registry_for_image(const ctl_state *st, int64_t tenant_id,
                                                const char *image);
/* Forgets the credentials of a tenant (deleted; the store drops them with it). */
void ctl_registry_drop_tenant(ctl_state *st, int64_t tenant_id);
/* Frees every credential of st. */
void ctl_registry_clear(ctl_state *st);

/* ---- the GPU instances of GPUs in MIG mode (node_mig.c) ----
 * Reported by the agent at registration and in heartbeats as gpus[i].mig_instances: a list of
 * {"profile", "start", "idle", "held"}, stored with the node and shown with it. On the cluster
 * model they are the GPU's layout (gp_cluster_set_mig_layout): an instance neither idle nor held
 * (something outside gpupool runs there), or of a profile variant ("1g.10gb+me"), is blocked. */
/* Reads g's "mig_instances" (gp_wire_mig_decode; g is the document of GPU out at path "gpus[i]";
 * out's model and mig already read) into out. Absent or null: out keeps its instances. GP_EINVAL
 * naming the field: a malformed entry, instances on a GPU not in MIG mode, or (for a model gpupool
 * partitions) a layout its geometry does not allow (gp_mig_layout_encode). */
int ctl_mig_read(json_t *g, const char *path, ctl_gpu_info *out, gp_diag *d);
/* The list of g's instances. New reference. */
json_t *ctl_mig_doc(const ctl_gpu_info *g);
/* Sets GPU gpu of n's layout on the cluster model (nothing for a GPU the model does not hold
 * partitioned by an operator). */
void ctl_mig_apply(ctl_state *st, const ctl_node *n, int gpu);
/* Applies (take=true) or releases the assignments of a job's replicas on the cluster model. */
int ctl_job_hold(ctl_state *st, ctl_job *j, bool take);
/* Ends the job's hold on its placement in memory: records where it ran (ran_on, ran_epoch) and
 * frees the replicas. Does not touch the cluster model (see ctl_job_hold). */
void ctl_job_drop_replicas(ctl_state *st, ctl_job *j);
/* Records that some job's replicas changed (placed, dropped): the held index is stale. */
void ctl_state_placements_changed(ctl_state *st);
/* The replicas node_id holds: *out points into the index (valid until placements change);
 * returns their number, or GP_ENOMEM. */
int ctl_state_held_on(ctl_state *st, int64_t node_id, const ctl_held **out);
/* Whether j is a service (service.h): Running while it is up, with no replicas of its own (its
 * replica jobs hold them). */
bool ctl_job_is_service(const ctl_job *j);
/* Sets the job's state, keeping the Pending count and the jobs by state. */
void ctl_job_set_state(ctl_state *st, ctl_job *j, ctl_job_state s);
/* The position in st->jobs of the first job from position from on (step 1: ascending; -1:
 * descending) whose state is in states (bit per state; 0: any), or -1 when none is. Costs the
 * jobs of those states it passes, not every job (the jobs by state), but for states 0. */
int ctl_jobs_next(const ctl_state *st, unsigned states, int from, int step);
/* For job_states.c's callers in state.c: position pos (st->jobs[pos]) put in its state's set;
 * a job moved between states' sets; every set freed. */
void ctl_jobs_index_add(ctl_state *st, int pos);
void ctl_jobs_index_move(ctl_state *st, const ctl_job *j, ctl_job_state from, ctl_job_state to);
void ctl_jobs_index_fini(ctl_state *st);

/* ---- desired documents: versions and long-poll waiters ----
 * A node's desired document (what the heartbeat and GET /v1/nodes/{node}/desired answer: its
 * placed replicas, its cordon, its gangs' hosts, their volumes) has a version that moves on
 * whenever the document may have changed. Versions change under the state lock, so a reader
 * sees a version with the document it describes; they only grow and never repeat, across
 * reloads too. Not stored: a node's first version is max(wall clock in ms * 1000, the highest
 * given out + 1), so after a restart every node starts above anything the old controller gave
 * out (unless the clock went back, or a node moved 1000 times a millisecond). All under the
 * state lock. */
/* The node's current version (given out now if it has none). */
int64_t ctl_node_desired_version(ctl_state *st, ctl_node *n);
/* The node's document may have changed: its version moves on (n may be NULL: nothing). */
void ctl_node_desired_changed(ctl_state *st, ctl_node *n);
/* The same for every node holding one of j's replicas (its gang's documents name them all). */
void ctl_job_desired_changed(ctl_state *st, const ctl_job *j);
/* Wakes the long-poll waiters of every node whose version moved. The committer calls it once
 * its changes are committed, before it releases the state lock (api_nodes.c). Also moves the
 * versions of nodes holding jobs with volumes when objects changed (st->gen: volumes are shown
 * as registered now). */
void ctl_desired_publish(ctl_state *st);
/* Starts the waiters' thread (answers waits that end and waiters woken by publish); stop
 * answers every waiter left 503 and frees them (api_nodes.c). GP_ENOMEM, GP_EIO. */
int ctl_desired_waiters_start(ctl_state *st, gp_diag *d);
void ctl_desired_waiters_stop(ctl_state *st);

/* The status document stored beside a job (reason, times, restarts, replicas). New ref. */
json_t *ctl_job_status_doc(const ctl_job *j);

/* Object documents (the JSON the store keeps and the API shows). New references. */
json_t *ctl_tenant_doc(const ctl_state *st, const ctl_tenant *t);
json_t *ctl_queue_doc(const ctl_queue *q);
json_t *ctl_pclass_doc(const ctl_pclass *p);
/* {"path", "read_only", "description"} */
json_t *ctl_volume_doc(const ctl_volume *v);
/* Parse object documents; GP_EINVAL naming the field. */
int ctl_tenant_from_doc(const char *name, json_t *doc, ctl_tenant *out, gp_diag *d);
int ctl_queue_from_doc(const char *name, json_t *doc, ctl_queue *out, gp_diag *d);
int ctl_pclass_from_doc(const char *name, json_t *doc, ctl_pclass *out, gp_diag *d);
int ctl_volume_from_doc(const char *name, json_t *doc, ctl_volume *out, gp_diag *d);
/* Checks the job's volumes against the registered ones: each must exist ("volumes[1]: no
 * volume named x") and a read-write use of a read-only volume is refused. GP_EINVAL. */
int ctl_volumes_check(ctl_state *st, const gp_jobspec *spec, gp_diag *d);
/* The volumes a replica of the job mounts: [{"name", "path", "read_only"}] as registered now.
 * New reference. */
json_t *ctl_volumes_doc(ctl_state *st, const gp_jobspec *spec);
void ctl_tenant_fini(ctl_tenant *t);
/* The document field of a grant ("priority_classes", "queues") and what it names ("priority
 * class", "queue"). */
const char *ctl_grant_field(ctl_grant k);
const char *ctl_grant_kind(ctl_grant k);
/* Whether t grants name (a priority class or a queue): listed in its grants, or, where it has
 * none of that kind, name is dflt (the configured default). */
bool ctl_tenant_granted(const ctl_tenant *t, ctl_grant k, const char *name, const char *dflt);
/* Whether t lists name among its explicit grants of kind k. */
bool ctl_tenant_lists(const ctl_tenant *t, ctl_grant k, const char *name);
/* Checks that every name t lists exists in st (before it is stored): GP_EINVAL naming the field
 * ("priority_classes[1]: no priority class named x"). */
int ctl_tenant_grants_check(ctl_state *st, const ctl_tenant *t, gp_diag *d);
/* The tenant's limits as the scheduler takes them: its quotas, with each per-model quota
 * resolved against the cluster's models (gpupool/modelname.h: "A100-80GB" limits "NVIDIA
 * A100-SXM4-80GB"). A model named by several keys takes the most specific one's quota; of
 * equally specific ones, the smallest. A key naming several models ("V100") limits each of
 * them on its own. */
void ctl_tenant_limits(const ctl_state *st, const ctl_tenant *t, gp_sched_tenant *out);
/* The cluster indexes of the registered nodes (what "every node of the pool" means when
 * judging whether a job could ever run), into out (st->nnodes entries); returns their number. */
int ctl_pool_nodes(ctl_state *st, int *out);
/* The same without a copy, with the GPU models the registered nodes have (bit m: model m of the
 * cluster), both kept in the node index as nodes are added, replaced or removed: *nodes is
 * borrowed, valid until the nodes change. Returns the number of nodes, or GP_ENOMEM when the
 * index cannot be built (ctl_pool_nodes still answers). O(1) while the index is exact. */
int ctl_pool_view(ctl_state *st, const int **nodes, uint64_t *models);

/* A replica's assignment as stored: {"cpu_milli", "memory_mib", "shares": [{"gpu", "milli",
 * "memory_mib", "mig_start", "mig_memory_slices", "mig_compute_slices"}]}; node is the cluster
 * index to put in a. */
json_t *ctl_assignment_doc(const gp_assignment *a);
int ctl_assignment_from_doc(json_t *doc, int node, gp_assignment *a, gp_diag *d);

#endif
