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
 *   - XID 1..GP_WIRE_XID_MAX: NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors) numbers
 *     Xids from 1 and lists none above 200 today; 999 leaves room for new ones without an update;
 *   - every integer must be a JSON integer (1e308 is not), every number finite.
 *
 * Ownership: gp_wire_heartbeat_decode fills a caller's struct that gp_wire_heartbeat_fini
 * empties; the JSON values kept (health, images, each GPU's mig_instances) are references the
 * struct holds. On failure the struct is left empty.
 */
#ifndef GP_NET_WIRE_H
#define GP_NET_WIRE_H

#include "gpupool/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP_WIRE_XID_MAX        999
#define GP_WIRE_MAX_MEMORY_MIB (16 * 1024 * 1024) /* 16 TiB */
#define GP_WIRE_MAX_GPUS       64                 /* GP_MAX_GPUS_PER_NODE */
#define GP_WIRE_MAX_REPORTS    4096               /* replicas in one heartbeat */
#define GP_WIRE_MAX_EVENTS     4096               /* XIDs in one heartbeat */

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
    bool pulling;     /* "phase": "Pulling", with "pull" */
    char pull_image[512];
    int64_t pull_done_bytes, pull_total_bytes;
} gp_wire_replica;

/* One GPU's reading this round. Optional values are -1 when absent. */
typedef struct gp_wire_gpu {
    int index;
    double utilization;
    int64_t memory_used_mib;
    int temperature_c; /* -1000: absent (a temperature may be negative) */
    double power_w;
    int sm_clock_mhz, memory_clock_mhz;
    int64_t ecc_uncorrected;
    json_t *mig_instances; /* as sent (read by the controller's MIG code); NULL: absent */
} gp_wire_gpu;

#define GP_WIRE_NO_TEMP (-1000)

/* One XID event. */
typedef struct gp_wire_xid {
    int gpu;
    int xid;
} gp_wire_xid;

typedef struct gp_wire_heartbeat {
    gp_wire_replica *replicas;
    size_t nreplicas;
    gp_wire_gpu *gpus;
    size_t ngpus;
    gp_wire_xid *events;
    size_t nevents;
    json_t *health; /* object or NULL */
    json_t *images; /* as sent, or NULL (absent or null) */
} gp_wire_heartbeat;

/* Decodes and validates a heartbeat document. 0, or GP_EINVAL naming the path, or GP_ENOMEM. */
int gp_wire_heartbeat_decode(json_t *doc, gp_wire_heartbeat *out, gp_diag *d);
void gp_wire_heartbeat_fini(gp_wire_heartbeat *hb);

/* What the receiver knows of the node: its GPU count and each GPU's memory. */
typedef struct gp_wire_node_gpus {
    int ngpus;
    const int64_t *memory_mib; /* ngpus entries */
} gp_wire_node_gpus;

/* Checks GPU indices (readings and XIDs) and memory against the node. 0 or GP_EINVAL. */
int gp_wire_heartbeat_check_node(const gp_wire_heartbeat *hb, const gp_wire_node_gpus *node,
                                 gp_diag *d);

/* Encoders: new JSON objects with the members above (absent values left out); NULL when out
 * of memory. */
json_t *gp_wire_gpu_encode(const gp_wire_gpu *g);
json_t *gp_wire_xid_encode(const gp_wire_xid *x);
json_t *gp_wire_replica_encode(const gp_wire_replica *r);
json_t *gp_wire_heartbeat_encode(const gp_wire_heartbeat *hb);

const char *gp_wire_state_name(gp_wire_replica_state s);

#endif
