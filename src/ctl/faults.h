/*
 * GPU faults: what the controller does about an XID (the table of faults the driver reports),
 * given what the GPU has shown lately.
 *
 * The actions, per XID (XIDs not listed are logged and counted only):
 *
 *   13 31 68 69   application fault      fail the jobs on the GPU (their restart policy applies);
 *                                        drain the GPU at the 3rd within 24 h
 *   43 45         follows another error  nothing (the companion XID is acted on)
 *   8 46          GPU stopped/timed out  restart its jobs elsewhere, drain the GPU
 *   48            double-bit ECC         restart its jobs elsewhere, drain; retire at the 2nd
 *   62            micro-controller halt  restart its jobs elsewhere, drain
 *   63            row remapped           keep the jobs; out of service until a check passes
 *   64            row remap failed       restart its jobs elsewhere, drain and retire
 *   74            NVLink error           restart its multi-GPU jobs elsewhere, drain
 *   79            fell off the bus       restart every job of the node elsewhere, drain the node
 *   92            single-bit ECC rate    count; drain (keeping the jobs) at the 3rd within 24 h
 *   94            contained ECC          fail the jobs on the GPU, drain (keeping the others)
 *   95            uncontained ECC        restart its jobs elsewhere, drain
 *   109           context-switch timeout fail the jobs on the GPU; drain at the 2nd within 24 h
 *   119 120       GSP timeout/error      restart its jobs elsewhere, drain
 *   140 143       unrecovered ECC/init   restart its jobs elsewhere, drain
 *   154           recovery action        out of service until a check passes (jobs kept)
 *
 * "Drain" takes the GPU out of service: nothing new is placed on it. A drained GPU returns after
 * an operator's undrain, or (unless retired) once a health check of its node asked for after
 * the drain passes. "Restart elsewhere" stops the job's replicas (the whole gang) and puts the
 * job back in its queue as a restart after a fault (see ctl_job_fault).
 *
 * Pure: no I/O, no clock (times are passed in).
 */
#ifndef GP_CTL_FAULTS_H
#define GP_CTL_FAULTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define CTL_FAULT_KEEP 3                           /* recent times kept per kind */
#define CTL_FAULT_DAY  (24 * 3600 * INT64_C(1000)) /* the window of "within 24 h" */

/* What a GPU has shown lately, per kind of recurring fault: the latest times (ms, 0 = none),
 * newest first; and the double-bit ECC errors seen. Kept with the node. */
typedef struct ctl_gpu_faults {
    int64_t app_ms[CTL_FAULT_KEEP]; /* application faults (13, 31, 68, 69) */
    int64_t ctx_ms[CTL_FAULT_KEEP]; /* context-switch timeouts (109) */
    int64_t sbe_ms[CTL_FAULT_KEEP]; /* single-bit ECC rate (92) */
    int dbe;                        /* double-bit ECC (48) */
} ctl_gpu_faults;

typedef enum ctl_fault_jobs {
    CTL_JOBS_KEEP = 0,      /* the jobs on the GPU keep running */
    CTL_JOBS_FAIL,          /* they fail, as if they had exited with an error */
    CTL_JOBS_RESTART,       /* they are stopped and restarted elsewhere */
    CTL_JOBS_RESTART_MULTI, /* those holding more than one GPU are restarted elsewhere */
} ctl_fault_jobs;

typedef struct ctl_fault_action {
    ctl_fault_jobs jobs;
    bool drain_gpu;   /* take the GPU out of service */
    bool drain_node;  /* take the whole node out of service, restarting all its jobs */
    bool retire;      /* the GPU does not return by a health check, only by an operator */
    bool known;       /* the XID is in the table */
    const char *what; /* what the XID means, e.g. "double-bit ECC error" */
} ctl_fault_action;

/* What to do about xid on a GPU with history h at time now; records the fault in h. */
void ctl_fault_decide(int xid, ctl_gpu_faults *h, int64_t now, ctl_fault_action *out);

/* The history as stored: {"app_ms": [...], "ctx_ms": [...], "sbe_ms": [...], "dbe": n}; NULL
 * when there is nothing to keep. New reference. */
json_t *ctl_gpu_faults_doc(const ctl_gpu_faults *h);
/* Reads a stored history (missing fields: none); malformed values are ignored. */
void ctl_gpu_faults_read(json_t *doc, ctl_gpu_faults *h);

#endif
