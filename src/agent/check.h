/*
 * The node health check: what NVML says about the driver and each GPU (gp_check_readings), and
 * what the agent expects (gp_check_expect), turned into findings.
 *
 * Pure: no NVML, no clock, no files. src/agent/nvml.c fills the readings (gp_nvml_health);
 * `gpupool-agent check` prints the result and the agent sends its findings in every heartbeat
 * (`health.conditions`, docs/api.md). Unit-tested with hand-made readings
 * (tests/unit/test_check.c).
 *
 * The checks, in report order, and what makes them fail ("fatal" findings make the node unfit
 * for work; "warning" ones ask for care, e.g. a reset when the GPU is idle):
 *
 *   driver           NVML did not load or initialise (fatal); the driver is older than the
 *                    required version (fatal); its version cannot be read while one is required
 *                    (warning); it changed since the agent started (warning: restart the agent)
 *   gpu_count        NVML cannot count the GPUs, or counts other than the expected number (fatal)
 *   gpu_visible      a GPU does not answer nvmlDeviceGetHandleByIndex_v2 or nvmlDeviceGetUUID, or
 *                    any of its readings says it fell off the bus (fatal)
 *   nvlink           a link that was active before is down (fatal); a GPU with some links active
 *                    has others inactive (warning: a link that never came up, or a partial bridge)
 *   mig_mode         the pending MIG mode differs from the current one (warning: reset needed)
 *   ecc_mode         the pending ECC mode differs from the current one (warning: reset needed)
 *   ecc_errors       uncorrected (double-bit) ECC errors since the driver loaded (fatal), else over
 *                    the GPU's life (warning)
 *   remapped_rows    a row remapping failed (fatal); a remap is pending (warning: reset needed)
 *   retired_pages    a page retirement is pending (warning: reset needed)
 *   recovery_action  NVML's recovery action for the GPU is not "none": reset the GPU, reboot the
 *                    node, drain peer-to-peer traffic, drain and reset (fatal)
 *
 * Status of each check: "fail" with at least one finding; else "unknown" when a GPU it applies
 * to could not be read (the library lacks the function, as older drivers and the mock may, or
 * the call failed), or NVML did not load; else "pass" when at least one GPU was read; else
 * "skipped" (no GPU has the feature, e.g. NVLink on PCIe cards, MIG on a T4). A GPU that is not
 * visible or fell off the bus counts only for gpu_visible. A check that cannot be read is never
 * a finding.
 *
 * Ownership: every struct is plain data, owned by the caller; the JSON functions return new
 * references.
 */
#ifndef GP_AGENT_CHECK_H
#define GP_AGENT_CHECK_H

#include "gpupool/model.h"

#include <jansson.h>
#include <stdint.h>

#define GP_CHECK_MAX_GPUS GP_MAX_GPUS_PER_NODE
#define GP_CHECK_MSG_MAX  200
/* At most one finding per check and GPU, and two node-wide ones per node-wide check. */
#define GP_CHECK_MAX_FINDINGS (8 * GP_CHECK_MAX_GPUS + 6)

/* X(ID, name): the checks, in report order. */
#define GP_CHECK_LIST(X)                                                                           \
    X(DRIVER, "driver")                                                                            \
    X(GPU_COUNT, "gpu_count")                                                                      \
    X(GPU_VISIBLE, "gpu_visible")                                                                  \
    X(NVLINK, "nvlink")                                                                            \
    X(MIG_MODE, "mig_mode")                                                                        \
    X(ECC_MODE, "ecc_mode")                                                                        \
    X(ECC_ERRORS, "ecc_errors")                                                                    \
    X(REMAPPED_ROWS, "remapped_rows")                                                              \
    X(RETIRED_PAGES, "retired_pages")                                                              \
    X(RECOVERY_ACTION, "recovery_action")

typedef enum gp_check_id {
#define GP_CHECK_ENUM(id, name) GP_CHECK_##id,
    GP_CHECK_LIST(GP_CHECK_ENUM)
#undef GP_CHECK_ENUM
        GP_CHECK_COUNT
} gp_check_id;

/* How one reading of one GPU came back. */
typedef enum gp_check_avail {
    GP_AVAIL_READ = 0,      /* read: its values are valid */
    GP_AVAIL_NOT_SUPPORTED, /* the GPU has no such feature (NVML NOT_SUPPORTED): nothing to check */
    GP_AVAIL_MISSING,       /* the library lacks the function or the field (an older driver) */
    GP_AVAIL_FAILED,        /* the call failed otherwise (no permission, ...) */
} gp_check_avail;

/* NVML's recovery actions (nvmlDeviceGpuRecoveryAction_t). */
enum {
    GP_CHECK_RECOVERY_NONE = 0,
    GP_CHECK_RECOVERY_GPU_RESET = 1,
    GP_CHECK_RECOVERY_NODE_REBOOT = 2,
    GP_CHECK_RECOVERY_DRAIN_P2P = 3,
    GP_CHECK_RECOVERY_DRAIN_AND_RESET = 4,
};

/* What NVML says about one GPU. Mode fields are 0 (off) or 1 (on). */
typedef struct gp_check_gpu {
    int visible;     /* 1: nvmlDeviceGetHandleByIndex_v2 and nvmlDeviceGetUUID answered */
    int lost;        /* 1: a call answered GPU_IS_LOST (the GPU fell off the bus) */
    char uuid[96];   /* when visible */
    char error[160]; /* when not visible: "nvmlDeviceGetUUID: GPU is lost (NVML 15)" */

    gp_check_avail nvlink; /* nvmlDeviceGetNvLinkState, links 0.. until the GPU has no more */
    int nlinks;            /* links the GPU has */
    uint32_t links_up;     /* bit l: link l is active */

    gp_check_avail mig; /* nvmlDeviceGetMigMode */
    int mig_current, mig_pending;

    gp_check_avail ecc_mode; /* nvmlDeviceGetEccMode */
    int ecc_current, ecc_pending;

    gp_check_avail ecc;    /* nvmlDeviceGetTotalEccErrors, uncorrected, volatile */
    int64_t dbe_volatile;  /* since the driver loaded */
    int64_t dbe_aggregate; /* over the GPU's life; -1 when that counter cannot be read */

    gp_check_avail remap; /* nvmlDeviceGetRemappedRows */
    int64_t remap_correctable, remap_uncorrectable;
    int remap_pending, remap_failed;

    gp_check_avail retired; /* nvmlDeviceGetRetiredPagesPendingStatus */
    int retired_pending;

    gp_check_avail recovery; /* nvmlDeviceGetFieldValues, NVML_FI_DEV_GET_GPU_RECOVERY_ACTION */
    int recovery_action;     /* GP_CHECK_RECOVERY_* (or a newer driver's value) */
} gp_check_gpu;

typedef struct gp_check_readings {
    int driver_loaded;       /* NVML was loaded and initialised */
    char driver_error[512];  /* when not: why (the library's path and dlerror, or NVML's message) */
    char driver_version[80]; /* "" when nvmlSystemGetDriverVersion failed */
    int count;               /* nvmlDeviceGetCount_v2; -1 when it failed */
    char count_error[160];   /* when it failed: NVML's message */
    int ngpus;               /* entries of gpus[] filled (count, at most GP_CHECK_MAX_GPUS) */
    gp_check_gpu gpus[GP_CHECK_MAX_GPUS];
} gp_check_readings;

/* What the caller expects. gp_check_expect_init sets "nothing expected". */
typedef struct gp_check_expect {
    int gpus;             /* GPUs NVML must count; -1: any number */
    char driver_min[80];  /* lowest acceptable driver version ("535.104.05"); "": any */
    char driver_seen[80]; /* the version seen earlier (at the agent's start); "": none */
    uint32_t links_up[GP_CHECK_MAX_GPUS]; /* per GPU, links seen active earlier */
} gp_check_expect;

typedef enum gp_check_status {
    GP_CHECK_PASS = 0,
    GP_CHECK_FAIL,
    GP_CHECK_UNKNOWN,
    GP_CHECK_SKIPPED,
} gp_check_status;

typedef enum gp_check_severity { GP_CHECK_WARNING = 0, GP_CHECK_FATAL } gp_check_severity;

typedef struct gp_check_finding {
    gp_check_id check;
    int gpu; /* index; -1 for the node as a whole */
    gp_check_severity severity;
    char message[GP_CHECK_MSG_MAX]; /* one line for people, with what to do */
} gp_check_finding;

typedef struct gp_check_result {
    gp_check_status status[GP_CHECK_COUNT];
    char detail[GP_CHECK_COUNT][128]; /* one line: "550.54.15", "8 GPUs", why it is unknown */
    int nfindings;
    int fatal; /* how many findings are fatal */
    gp_check_finding findings[GP_CHECK_MAX_FINDINGS];
} gp_check_result;

/* Zeroes r: NVML not loaded, count -1, no GPUs. */
void gp_check_readings_init(gp_check_readings *r);
/* Nothing expected: gpus -1, no versions, no links. */
void gp_check_expect_init(gp_check_expect *e);

/* Evaluates readings r against expectations e (NULL: none) into *out (overwritten). */
void gp_check_evaluate(const gp_check_readings *r, const gp_check_expect *e, gp_check_result *out);

/* Adds to e->links_up the links r shows active (the agent's memory of links that were up). */
void gp_check_remember_links(const gp_check_readings *r, gp_check_expect *e);

/*
 * Compares dotted numeric versions ("550.54.15" with "535.104"): each part as a number, a
 * missing part as 0. *cmp is <0, 0 or >0. GP_EINVAL (*cmp untouched) when either is not
 * DIGITS(.DIGITS)*.
 */
int gp_check_version_cmp(const char *a, const char *b, int *cmp);

/* "driver", ...; "pass", "fail", "unknown", "skipped"; "fatal", "warning". Static storage. */
const char *gp_check_name(gp_check_id id);
const char *gp_check_status_name(gp_check_status s);
const char *gp_check_severity_name(gp_check_severity s);

/* The findings as the heartbeat's health.conditions:
 * [{"check": name, "gpu": index or -1, "severity": "fatal"|"warning", "message": text}]. */
json_t *gp_check_findings_json(const gp_check_result *res);

/*
 * The whole report (`gpupool-agent check -o json`):
 *   {"ok": no fatal finding, "fatal": n, "warnings": n, "driver_version", "gpu_count",
 *    "checks": [{"check", "status", "detail"}] (every check, in order),
 *    "findings": [...as gp_check_findings_json]}
 * driver_version and gpu_count come from r ("" and -1 when unknown).
 */
json_t *gp_check_result_json(const gp_check_result *res, const gp_check_readings *r);

#endif
