/*
 * The typed wire between the agents and the controller: the heartbeat an agent sends
 * (POST /v1/nodes/NAME/heartbeat), its replica reports, GPU readings and XID events, as C
 * structs with one codec. Decoding is strict: every member known, every value of the right
 * type, finite and in its physical range, and an error names the JSON path of the first bad
 * value ("gpus[3].utilization: must be a number between 0 and 100"). What only the receiver can
 * judge (GPU indices against the registered node, memory against each GPU's total) is checked by
 * gp_wire_heartbeat_check_node. Encoding writes the same JSON members, so the wire is unchanged.
 *
 * Ranges and why:
 *   - utilization 0..100 (percent); memory_used_mib 0..GP_WIRE_MAX_MEMORY_MIB, and at most the
 *     GPU's total plus 1 MiB of rounding on the node;
 *   - temperature_c -40..150 (GPUs shut down near 100 °C; colder than -40 °C no sensor in a
 *     data centre reads); power_w 0..5000 (a GB200 superchip draws about 2,700 W);
 *   - clocks 0..100000 MHz; counts (ecc_uncorrected, idle_ms, pull bytes) non-negative;
 *   - a replica's gpu_mem_mib 0..GP_WIRE_MAX_MEMORY_MIB;
 *   - XID 1..GP_WIRE_XID_MAX: NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors) numbers
 *     Xids from 1 and lists none above 200 today; 999 leaves room for new ones without an update;
 *   - every integer must be a JSON integer (1e308 is not), every number finite.
 *
 *   - mig_instances: at most GP_MIG_MEMORY_SLICES, each a profile name (1..31 bytes) and a start
 *     slice 0..GP_MIG_MEMORY_SLICES-1 (the profile and layout against the GPU's model are the
 *     controller's to judge: node_mig.c);
 *   - health: seq and at_ms non-negative, at most GP_WIRE_MAX_CONDITIONS conditions, each with
 *     a check name (1..63 bytes), gpu -1 (the node) or a GPU index, severity fatal or warning
 *     and a message of at most GP_WIRE_MESSAGE_MAX - 1 bytes;
 *   - images: at most GP_WIRE_MAX_IMAGES, each with a ref or an id, size_bytes 0..2^50 (1 PiB),
 *     last_used_ms 0..INT64_MAX/2.
 *
 * Ownership: gp_wire_heartbeat_decode fills a caller's struct that gp_wire_heartbeat_fini
 * empties (it owns its arrays). On failure the struct is left empty.
 */
#ifndef GP_NET_WIRE_H
#define GP_NET_WIRE_H

#include "gpupool/error.h"
#include "gpupool/imageref.h"
#include "gpupool/mig.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_WIRE_XID_MAX        999
#define GP_WIRE_MAX_MEMORY_MIB (16 * 1024 * 1024) /* 16 TiB */
#define GP_WIRE_MAX_GPUS       64                 /* GP_MAX_GPUS_PER_NODE */
#define GP_WIRE_MAX_REPORTS    4096               /* replicas in one heartbeat */
#define GP_WIRE_MAX_EVENTS     4096               /* XIDs in one heartbeat */
#define GP_WIRE_MAX_CONDITIONS 1024               /* findings of one health check */
#define GP_WIRE_MAX_IMAGES     4096               /* entries of a reported image cache */
#define GP_WIRE_MESSAGE_MAX    200                /* a finding's message (GP_CHECK_MSG_MAX) */
#define GP_WIRE_IMAGE_ID_MAX   160
#define GP_WIRE_IMAGE_SIZE_MAX (INT64_C(1) << 50)

typedef enum gp_wire_replica_state {
    GP_WIRE_RUNNING,
    GP_WIRE_SUCCEEDED,
    GP_WIRE_FAILED,
} gp_wire_replica_state;

/* One replica's report. Optional numbers are -1 when absent. */
typedef struct gp_wire_replica {
    int64_t job;
    int replica;
    int64_t epoch;
    gp_wire_replica_state state;
    int exit_code;    /* 0 when absent */
    char reason[512]; /* "" when absent */
    int64_t idle_ms;  /* -1: absent */
    int util;         /* percent; -1: absent */
    int64_t mem_mib;  /* "gpu_mem_mib": GPU memory its processes hold, MiB; -1: absent */
    bool pulling;     /* "phase": "Pulling", with "pull" */
    char pull_image[512];
    int64_t pull_done_bytes, pull_total_bytes;
    /* A service's replica (probe.h): "ready", whether its readiness probe passes (-1: absent,
     * a replica without probes or not a service's), and "metric", the value of the service's
     * Prometheus metric the agent last scraped from it (absent when has_metric is false; a
     * finite number of magnitude at most GP_WIRE_METRIC_MAX). */
    int ready;
    bool has_metric;
    double metric;
} gp_wire_replica;

#define GP_WIRE_METRIC_MAX 1e15

/* One GPU instance of a GPU in MIG mode: "mig_instances": [{"profile": "1g.10gb", "start": 6,
 * "idle": true, "held": false}]. idle defaults to true, held to false. */
typedef struct gp_wire_mig {
    char profile[32];
    int start;
    bool idle, held;
} gp_wire_mig;

/* The mig_instances member of gpu (path: the GPU's own, "gpus[0]"): *given false when absent or
 * null; otherwise up to GP_MIG_MEMORY_SLICES entries in out[], their number in *n. The one
 * reader of this list (registrations and heartbeats alike). 0 or GP_EINVAL naming the path. */
int gp_wire_mig_decode(json_t *gpu, const char *path, gp_wire_mig *out, int *n, bool *given,
                       gp_diag *d);
json_t *gp_wire_mig_encode(const gp_wire_mig *list, int n);

/* One GPU's reading this round. Optional values are -1 when absent. */
typedef struct gp_wire_gpu {
    int index;
    double utilization;
    int64_t memory_used_mib;
    int temperature_c; /* -1000: absent (a temperature may be negative) */
    double power_w;
    int sm_clock_mhz, memory_clock_mhz;
    int64_t ecc_uncorrected;
    bool has_mig; /* mig_instances sent (possibly empty) */
    int nmig;
    gp_wire_mig mig[GP_MIG_MEMORY_SLICES];
} gp_wire_gpu;

#define GP_WIRE_NO_TEMP (-1000)

/* One XID event. */
typedef struct gp_wire_xid {
    int gpu;
    int xid;
} gp_wire_xid;

typedef enum gp_wire_severity { GP_WIRE_WARNING, GP_WIRE_FATAL } gp_wire_severity;

/* One finding of the agent's latest health check; gpu -1: the node as a whole. */
typedef struct gp_wire_condition {
    char check[64];
    int gpu;
    gp_wire_severity severity;
    char message[GP_WIRE_MESSAGE_MAX];
} gp_wire_condition;

/* The latest health check: the check sequence it answers, when it ran (-1: not said) and its
 * findings. */
typedef struct gp_wire_health {
    int64_t seq, at_ms;
    gp_wire_condition *conditions;
    size_t nconditions;
} gp_wire_health;

/* One image of the node's cache. */
typedef struct gp_wire_image {
    char ref[GP_IMAGE_REF_MAX];
    char id[GP_WIRE_IMAGE_ID_MAX];
    int64_t size_bytes, last_used_ms;
} gp_wire_image;

typedef struct gp_wire_heartbeat {
    gp_wire_replica *replicas;
    size_t nreplicas;
    gp_wire_gpu *gpus;
    size_t ngpus;
    gp_wire_xid *events;
    size_t nevents;
    bool has_health; /* health sent */
    gp_wire_health health;
    bool has_images; /* images sent (possibly empty) */
    gp_wire_image *images;
    size_t nimages;
} gp_wire_heartbeat;

/* Decodes and validates a heartbeat document. 0, or GP_EINVAL naming the path, or GP_ENOMEM. */
int gp_wire_heartbeat_decode(json_t *doc, gp_wire_heartbeat *out, gp_diag *d);
void gp_wire_heartbeat_fini(gp_wire_heartbeat *hb);

/* What the receiver knows of the node: its GPU count and each GPU's memory. */
typedef struct gp_wire_node_gpus {
    int ngpus;
    const int64_t *memory_mib; /* ngpus entries */
} gp_wire_node_gpus;

/* Checks GPU indices (readings, MIG lists, XIDs, health findings) and memory against the node.
 * 0 or GP_EINVAL naming the path. */
int gp_wire_heartbeat_check_node(const gp_wire_heartbeat *hb, const gp_wire_node_gpus *node,
                                 gp_diag *d);

/* Encoders: new JSON objects with the members above (absent values left out); NULL when out
 * of memory. */
json_t *gp_wire_gpu_encode(const gp_wire_gpu *g);
json_t *gp_wire_xid_encode(const gp_wire_xid *x);
json_t *gp_wire_replica_encode(const gp_wire_replica *r);
json_t *gp_wire_heartbeat_encode(const gp_wire_heartbeat *hb);
json_t *gp_wire_health_encode(const gp_wire_health *h);
json_t *gp_wire_image_encode(const gp_wire_image *im);

/* Internal to the codec (wire_node.c): the health and images members of the heartbeat into hb
 * (whose fini releases what they took). */
int gp__wire_health_decode(json_t *doc, gp_wire_heartbeat *hb, gp_diag *d);
int gp__wire_images_decode(json_t *doc, gp_wire_heartbeat *hb, gp_diag *d);

const char *gp_wire_state_name(gp_wire_replica_state s);
const char *gp_wire_severity_name(gp_wire_severity s);

#endif
