/*
 * Runtime control and readings over time.
 *
 * The control file (GPUPOOL_NVML_MOCK_CONTROL, else `control:` in the inventory) holds commands,
 * one per line, that the mock runs once each, in order, when it notices them: every NVML call
 * (and nvmlEventSetWait_v2 while it waits) stats the file and runs the complete lines added since
 * the last look. Append to the file; a file replaced (new inode) or truncated is read from its
 * start again. Commands:
 *
 *   xid GPU CODE               an XID event on GPU (delivered through the NVML event API)
 *   fall-off GPU               the GPU falls off the bus: XID 79, then every call on it (and on
 *                              its MIG devices) answers NVML_ERROR_GPU_IS_LOST
 *   temp GPU CELSIUS [SECONDS] the temperature reads CELSIUS (for SECONDS, else until replaced)
 *   util GPU PERCENT [SECONDS] likewise for utilisation
 *   power GPU WATTS [SECONDS]  likewise for power draw
 *   mig-busy GPU START [PID]   a process (PID, else 4242) runs on the GPU instance of GPU that
 *                              starts at memory slice START: NVML lists it, and destroying the
 *                              instance (or its compute instances) answers NVML_ERROR_IN_USE
 *   mig-idle GPU START         that process ends
 *   mig-destroy GPU START      another tool (nvidia-smi mig -dci, -dgi) destroys the GPU instance
 *                              of GPU starting at memory slice START and its compute instances:
 *                              their MIG devices are gone (refused while a process runs there)
 *   proc GPU PID MIB           a compute process PID runs on GPU using MIB MiB of its memory
 *                              (- for MIB: NVML cannot tell, NVML_VALUE_NOT_AVAILABLE): NVML
 *                              lists it on the GPU (not on its MIG devices) until proc-gone; a
 *                              second proc for the same PID changes its memory. At most
 *                              MOCK_MAX_PROCS per GPU
 *   proc-gone GPU PID          that process ends
 *   proc-util GPU PID PERCENT  process PID uses PERCENT of the GPU's SMs (and half as much of its
 *                              memory bandwidth): nvmlDeviceGetProcessUtilization samples it
 *                              (not on a GPU in MIG mode); 0 ends it. At most MOCK_MAX_PROCS per
 *                              GPU
 *   encoder GPU PERCENT [SECONDS]   likewise as temp, for the video encoder's utilisation
 *   decoder GPU PERCENT [SECONDS]   and the decoder's
 *
 * Counters that only grow (since nvmlInit_v2), and what depends on them:
 *
 *   throttle GPU MICROSECONDS  the GPU was held down for thermal reasons that long: adds to its
 *                              thermal violation time (nvmlDeviceGetViolationStatus), and the
 *                              clock reasons show a hardware thermal slowdown for as long from now
 *   pcie-replay GPU COUNT      adds COUNT to the GPU's PCIe replay counter
 *   nvlink-errors GPU LINK COUNT [KIND]   adds COUNT to error counter KIND of NVLink link LINK:
 *                              replay, recovery, crc-flit or crc-data (default crc-data)
 *
 * Faults the health check reads (`gpupool-agent check`, src/agent/check.h):
 *
 *   ecc GPU COUNT              the GPU's count of uncorrected (double-bit) ECC errors since the
 *                              driver loaded becomes COUNT (its lifetime count grows by as much
 *                              as it rose; 0 is a driver reload)
 *   remap GPU PENDING FAILED   row remapping: a remap pending (1 or 0), a remap that failed (1
 *                              or 0); either makes one uncorrectable row remapped
 *   nvlink GPU LINK up|down    NVLink link LINK of the GPU goes up or down (inactive)
 *   mig-pending GPU 0|1        1: a MIG mode change is pending (the mode flips at the next reset)
 *   ecc-pending GPU 0|1        1: an ECC mode change is pending (ECC turns off at the next reset)
 *   retire-pending GPU 0|1     1: a page retirement is pending
 *   recovery GPU ACTION        NVML's recovery action for the GPU (field
 *                              NVML_FI_DEV_GET_GPU_RECOVERY_ACTION): 0 none, 1 reset the GPU,
 *                              2 reboot the node, 3 drain peer-to-peer traffic, 4 drain and reset
 *   driver VERSION             the driver version NVML reports becomes VERSION ("550.54.15")
 *
 * A fall-off GPU also fails nvmlDeviceGetHandleByIndex_v2 (GPU_IS_LOST), as the real library does.
 *
 * Blank lines and lines starting with # are skipped. A bad line is reported on stderr once, as
 * "gpupool-nvml-mock: FILE:LINE: problem", and ignored.
 */
#include "nvml-mock/mock.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_LINE 512
#define TWO_PI   6.283185307179586

typedef enum cmd_kind {
    CMD_XID,
    CMD_FALL_OFF,
    CMD_SET,
    CMD_BUSY,
    CMD_IDLE,
    CMD_DESTROY,
    CMD_PROC,
    CMD_PROC_GONE,
    CMD_ECC,
    CMD_REMAP,
    CMD_NVLINK,
    CMD_MIG_PENDING,
    CMD_ECC_PENDING,
    CMD_RETIRE_PENDING,
    CMD_RECOVERY,
    CMD_DRIVER,
    CMD_PROC_UTIL,
    CMD_THROTTLE,
    CMD_PCIE_REPLAY,
    CMD_NVLINK_ERRORS
} cmd_kind;

#define DEFAULT_PID  4242
#define MAX_PROC_MIB (1 << 24) /* 16 TiB: more than any GPU has */

typedef struct cmd {
    const char *name;
    cmd_kind kind;
    int nargs_min, nargs_max; /* counting GPU */
    mock_reading reading;     /* CMD_SET */
    double min, max;          /* of the value argument */
} cmd;

static const cmd cmds[] = {
    {"xid", CMD_XID, 2, 2, MOCK_UTIL, 1, 999},
    {"fall-off", CMD_FALL_OFF, 1, 1, MOCK_UTIL, 0, 0},
    {"temp", CMD_SET, 2, 3, MOCK_TEMPERATURE, 0, 150},
    {"util", CMD_SET, 2, 3, MOCK_UTIL, 0, 100},
    {"power", CMD_SET, 2, 3, MOCK_POWER, 0, 5000},
    {"mig-busy", CMD_BUSY, 2, 3, MOCK_UTIL, 0, GP_MIG_MEMORY_SLICES - 1},
    {"mig-idle", CMD_IDLE, 2, 2, MOCK_UTIL, 0, GP_MIG_MEMORY_SLICES - 1},
    {"mig-destroy", CMD_DESTROY, 2, 2, MOCK_UTIL, 0, GP_MIG_MEMORY_SLICES - 1},
    {"proc", CMD_PROC, 3, 3, MOCK_UTIL, 0, 0},           /* checked in run_proc */
    {"proc-gone", CMD_PROC_GONE, 2, 2, MOCK_UTIL, 0, 0}, /* likewise */
    {"ecc", CMD_ECC, 2, 2, MOCK_UTIL, 0, 1e12},
    {"remap", CMD_REMAP, 3, 3, MOCK_UTIL, 0, 1},
    {"nvlink", CMD_NVLINK, 3, 3, MOCK_UTIL, 0, NVML_NVLINK_MAX_LINKS - 1},
    {"mig-pending", CMD_MIG_PENDING, 2, 2, MOCK_UTIL, 0, 1},
    {"ecc-pending", CMD_ECC_PENDING, 2, 2, MOCK_UTIL, 0, 1},
    {"retire-pending", CMD_RETIRE_PENDING, 2, 2, MOCK_UTIL, 0, 1},
    {"recovery", CMD_RECOVERY, 2, 2, MOCK_UTIL, 0, NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET},
    {"driver", CMD_DRIVER, 1, 1, MOCK_UTIL, 0, 0}, /* VERSION, not a GPU */
    {"proc-util", CMD_PROC_UTIL, 3, 3, MOCK_UTIL, 0, 100},
    {"encoder", CMD_SET, 2, 3, MOCK_ENC_UTIL, 0, 100},
    {"decoder", CMD_SET, 2, 3, MOCK_DEC_UTIL, 0, 100},
    {"throttle", CMD_THROTTLE, 2, 2, MOCK_UTIL, 0, 1e12},
    {"pcie-replay", CMD_PCIE_REPLAY, 2, 2, MOCK_UTIL, 0, 1e9},
    {"nvlink-errors", CMD_NVLINK_ERRORS, 3, 4, MOCK_UTIL, 0, 1e12},
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

double mock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double mock_value(struct nvmlDevice_st *g, mock_reading r)
{
    double now = mock_now();
    mock_override *o = &g->override[r];
    if (o->active && o->until > 0 && now >= o->until) {
        o->active = 0;
    }
    if (o->active) {
        return o->value;
    }
    const mock_pattern *p = &g->pattern[r];
    switch (p->kind) {
    case MOCK_SINE:
        return p->min + (p->max - p->min) * (1 + sin(TWO_PI * now / p->period_s)) / 2;
    case MOCK_STEP:
        return p->values[(long long)(now / p->period_s) % p->nvalues];
    default:
        return p->values[0];
    }
}

void mock_post_xid(mock_state *st, int gpu, unsigned long long xid)
{
    for (struct nvmlEventSet_st *s = st->sets; s; s = s->next) {
        if (!(s->mask[gpu] & nvmlEventTypeXidCriticalError)) {
            continue;
        }
        if (s->n == MOCK_QUEUE) { /* full: the oldest event is lost */
            s->head = (s->head + 1) % MOCK_QUEUE;
            s->n--;
        }
        nvmlEventData_t *e = &s->queue[(s->head + s->n++) % MOCK_QUEUE];
        e->device = &st->inv->gpus[gpu];
        e->eventType = nvmlEventTypeXidCriticalError;
        e->eventData = xid;
        e->gpuInstanceId = ~0u;
        e->computeInstanceId = ~0u;
    }
}

/* Strict number: the whole word, finite. */
static int number(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return end != s && *end == '\0' && errno == 0 && isfinite(*out);
}

/* proc GPU PID MIB (argv[3] may be "-") and proc-gone GPU PID, GPU checked already. */
static const char *run_proc(mock_state *st, const cmd *c, char **argv, const double *v, char *why,
                            size_t len)
{
    int gpu = (int)v[0];
    if (v[1] != floor(v[1]) || v[1] < 1 || v[1] > 4e9) {
        snprintf(why, len, "%s: PID %s must be a positive integer", c->name, argv[2]);
        return why;
    }
    unsigned int pid = (unsigned int)v[1];
    mock_inv *inv = st->inv;
    mock_proc *procs = inv->procs[gpu];
    int k = 0;
    while (k < inv->nprocs[gpu] && procs[k].pid != pid) {
        k++;
    }
    if (c->kind == CMD_PROC_GONE) {
        if (k == inv->nprocs[gpu]) {
            snprintf(why, len, "proc-gone: GPU %d runs no process %u (proc GPU PID MIB starts one)",
                     gpu, pid);
            return why;
        }
        memmove(&procs[k], &procs[k + 1], sizeof(procs[0]) * (size_t)(inv->nprocs[gpu] - k - 1));
        inv->nprocs[gpu]--;
        return NULL;
    }
    bool na = strcmp(argv[3], "-") == 0;
    if (!na && (v[2] != floor(v[2]) || v[2] < 0 || v[2] > MAX_PROC_MIB)) {
        snprintf(why, len, "proc: MIB %s must be a whole number 0..%d, or - (NVML cannot tell)",
                 argv[3], MAX_PROC_MIB);
        return why;
    }
    if (k == MOCK_MAX_PROCS) {
        snprintf(why, len, "proc: GPU %d already runs %d processes (the mock's limit)", gpu,
                 MOCK_MAX_PROCS);
        return why;
    }
    inv->nprocs[gpu] += k == inv->nprocs[gpu];
    procs[k].pid = pid;
    procs[k].bytes = na ? NVML_VALUE_NOT_AVAILABLE : (unsigned long long)v[2] << 20;
    return NULL;
}

/* One command line, split and checked: its command, words and numbers (v[i] is argv[i + 1]). */
typedef struct line_args {
    const cmd *c; /* NULL: a blank line or a comment */
    char *argv[5];
    int n; /* arguments after the command's name */
    double v[3];
} line_args;

/* proc-util GPU PID PERCENT, GPU checked already. */
static const char *run_proc_util(mock_state *st, char **argv, const double *v, char *why,
                                 size_t len)
{
    int gpu = (int)v[0];
    if (v[1] != floor(v[1]) || v[1] < 1 || v[1] > 4e9) {
        snprintf(why, len, "proc-util: PID %s must be a positive integer", argv[2]);
        return why;
    }
    if (v[2] != floor(v[2]) || v[2] < 0 || v[2] > 100) {
        snprintf(why, len, "proc-util: PERCENT %s must be a whole number 0..100", argv[3]);
        return why;
    }
    mock_inv *inv = st->inv;
    mock_proc_util *pu = inv->putil[gpu];
    unsigned int pid = (unsigned int)v[1];
    int k = 0;
    while (k < inv->nputil[gpu] && pu[k].pid != pid) {
        k++;
    }
    if (v[2] == 0 && k < inv->nputil[gpu]) {
        memmove(&pu[k], &pu[k + 1], sizeof(pu[0]) * (size_t)(inv->nputil[gpu] - k - 1));
        inv->nputil[gpu]--;
    } else if (v[2] > 0 && k == MOCK_MAX_PROCS) {
        snprintf(why, len, "proc-util: GPU %d already has %d processes (the mock's limit)", gpu,
                 MOCK_MAX_PROCS);
        return why;
    } else if (v[2] > 0) {
        inv->nputil[gpu] += k == inv->nputil[gpu];
        pu[k] = (mock_proc_util){pid, (unsigned int)v[2]};
    }
    return NULL;
}

/* The counters: throttle, pcie-replay and nvlink-errors, GPU checked already. */
static const char *run_counter(mock_state *st, const line_args *a, char *why, size_t len)
{
    const cmd *c = a->c;
    struct nvmlDevice_st *g = &st->inv->gpus[(int)a->v[0]];
    int last = c->kind == CMD_NVLINK_ERRORS ? 2 : 1; /* the count */
    for (int i = 1; i <= last; i++) {
        double x = a->v[i];
        if (x < c->min || x > c->max || x != floor(x)) {
            snprintf(why, len, "%s: %s must be a whole number %.0f..%.0f", c->name, a->argv[i + 1],
                     c->min, c->max);
            return why;
        }
    }
    if (c->kind == CMD_THROTTLE) {
        g->thermal_ns += (unsigned long long)a->v[1] * 1000;
        g->throttled_until = mock_now() + a->v[1] / 1e6;
        return NULL;
    }
    if (c->kind == CMD_PCIE_REPLAY) {
        g->pcie_replays += (unsigned long long)a->v[1];
        return NULL;
    }
    static const char *const kinds[] = {"replay", "recovery", "crc-flit", "crc-data"};
    int k = 3;
    if (a->n == 4) {
        for (k = 0; k < 4 && strcmp(kinds[k], a->argv[4]) != 0; k++) {
        }
    }
    if (k == 4) {
        snprintf(why, len, "nvlink-errors: '%s' must be replay, recovery, crc-flit or crc-data",
                 a->argv[4]);
        return why;
    }
    if ((int)a->v[1] >= g->nlinks) {
        snprintf(why, len, "nvlink-errors: GPU %s has no link %s (it has %d)", a->argv[1],
                 a->argv[2], g->nlinks);
        return why;
    }
    g->nvlink_errors[(int)a->v[1]][k] += (unsigned long long)a->v[2];
    return NULL;
}

/* driver VERSION: a word of digits and dots that fits NVML's buffer. */
static const char *run_driver(mock_state *st, const char *version, char *why, size_t len)
{
    size_t n = strlen(version);
    if (n == 0 || n >= sizeof(st->inv->driver) || strspn(version, "0123456789.") != n) {
        snprintf(why, len, "driver: '%s' must be a version of digits and dots (550.54.15)",
                 version);
        return why;
    }
    memcpy(st->inv->driver, version, n + 1);
    return NULL;
}

/* The commands of the health check's faults, arguments checked against the table already but
 * for the words (nvlink's up|down) and what depends on the GPU. */
static const char *run_health(mock_state *st, const cmd *c, char **argv, const double *v, char *why,
                              size_t len)
{
    struct nvmlDevice_st *g = &st->inv->gpus[(int)v[0]];
    int flag = v[1] != 0;
    switch (c->kind) {
    case CMD_ECC: {
        int64_t count = (int64_t)v[1];
        if (count > g->ecc_uncorrected) {
            g->ecc_uncorrected_aggregate += count - g->ecc_uncorrected;
        }
        g->ecc_uncorrected = count;
        break;
    }
    case CMD_REMAP:
        g->remap_pending = flag;
        g->remap_failed = v[2] != 0;
        break;
    case CMD_NVLINK: {
        int up = strcmp(argv[3], "up") == 0;
        if (!up && strcmp(argv[3], "down") != 0) {
            snprintf(why, len, "nvlink: '%s' must be up or down", argv[3]);
            return why;
        }
        if ((int)v[1] >= g->nlinks) {
            snprintf(why, len, "nvlink: GPU %s has no link %s (it has %d)", argv[1], argv[2],
                     g->nlinks);
            return why;
        }
        uint32_t bit = UINT32_C(1) << (int)v[1];
        g->links_down = up ? g->links_down & ~bit : g->links_down | bit;
        break;
    }
    case CMD_MIG_PENDING:
        if (!g->mig_capable) {
            snprintf(why, len, "mig-pending: GPU %s has no MIG", argv[1]);
            return why;
        }
        g->mig_pending_change = flag;
        break;
    case CMD_ECC_PENDING:
    case CMD_RETIRE_PENDING:
        if (!g->ecc) {
            snprintf(why, len, "%s: GPU %s has no ECC", c->name, argv[1]);
            return why;
        }
        *(c->kind == CMD_ECC_PENDING ? &g->ecc_pending_change : &g->retire_pending) = flag;
        break;
    default: /* CMD_RECOVERY */
        g->recovery = (unsigned int)v[1];
        break;
    }
    return NULL;
}

static int is_health(cmd_kind k)
{
    return k >= CMD_ECC && k <= CMD_RECOVERY;
}

/* "unknown command 'X' (xid, fall-off, ...)": the table's names. */
static const char *unknown(const char *name, char *why, size_t len)
{
    size_t k = (size_t)snprintf(why, len, "unknown command '%.64s' (", name);
    for (size_t i = 0; i < NCMDS && k < len; i++) {
        k += (size_t)snprintf(why + k, len - k, "%s%s", cmds[i].name, i + 1 < NCMDS ? ", " : ")");
    }
    return why;
}

/* Splits line into a, finds its command and reads its numbers (not the words: proc's "-",
 * nvlink's up|down, driver's VERSION), checks the count of arguments and, but for driver, the
 * GPU. NULL, or what is wrong (in why). */
static const char *parse(const mock_state *st, char *line, line_args *a, char *why, size_t len)
{
    char *save = NULL;
    int argc = 0;
    memset(a, 0, sizeof(*a));
    line += strspn(line, " \t\r");
    if (line[0] == '#') {
        return NULL;
    }
    for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        if (argc == 5) {
            return "too many words";
        }
        a->argv[argc++] = t;
    }
    for (size_t i = 0; argc > 0 && i < NCMDS && !a->c; i++) {
        a->c = strcmp(cmds[i].name, a->argv[0]) == 0 ? &cmds[i] : NULL;
    }
    if (argc == 0 || !a->c) {
        return argc == 0 ? NULL : unknown(a->argv[0], why, len);
    }
    const cmd *c = a->c;
    int n = a->n = argc - 1;
    for (int i = 0; i < n && i < 3 && c->kind != CMD_DRIVER; i++) {
        if ((c->kind == CMD_PROC && i == 2 && strcmp(a->argv[i + 1], "-") == 0) ||
            (c->kind == CMD_NVLINK && i == 2)) {
            continue; /* MIB: NVML cannot tell; up|down */
        }
        if (!number(a->argv[i + 1], &a->v[i])) {
            snprintf(why, len, "%s: '%s' is not a number", c->name, a->argv[i + 1]);
            return why;
        }
    }
    if (n < c->nargs_min || n > c->nargs_max) {
        if (c->nargs_min == c->nargs_max) {
            snprintf(why, len, "%s: takes %d argument%s, got %d", c->name, c->nargs_min,
                     c->nargs_min == 1 ? "" : "s", n);
        } else {
            snprintf(why, len, "%s: takes %d or %d arguments, got %d", c->name, c->nargs_min,
                     c->nargs_max, n);
        }
        return why;
    }
    double gpu = a->v[0];
    if (c->kind != CMD_DRIVER && (gpu != floor(gpu) || gpu < 0 || gpu >= st->inv->ngpus)) {
        snprintf(why, len, "%s: no GPU %s (the inventory has %d)", c->name, a->argv[1],
                 st->inv->ngpus);
        return why;
    }
    return NULL;
}

/* The health check's faults: whole numbers in the table's range, then run_health. */
static const char *run_checked(mock_state *st, line_args *a, char *why, size_t len)
{
    const cmd *c = a->c;
    int last = c->kind == CMD_REMAP ? 2 : 1; /* numeric arguments after GPU */
    for (int i = 1; i <= last; i++) {
        double x = a->v[i];
        if (x < c->min || x > c->max || x != floor(x)) {
            snprintf(why, len, "%s: %s must be a whole number %.0f..%.0f", c->name, a->argv[i + 1],
                     c->min, c->max);
            return why;
        }
    }
    return run_health(st, c, a->argv, a->v, why, len);
}

/* Destroys gi of GPU g and its compute instances, as another tool would; refused while busy. */
static const char *destroy_gi(struct nvmlDevice_st *g, struct nvmlGpuInstance_st *gi,
                              const char *name, char *why, size_t len)
{
    if (gi->busy_pid) {
        snprintf(why, len, "%s: process %u runs on that GPU instance", name, gi->busy_pid);
        return why;
    }
    for (int k = 0; k < MOCK_MAX_MIG; k++) {
        if (g->cis[k].gi == gi) {
            memset(&g->cis[k], 0, sizeof(g->cis[k]));
        }
    }
    memset(gi, 0, sizeof(*gi));
    return NULL;
}

/* Runs one command line; returns NULL, or what is wrong with it (in why). */
static const char *run(mock_state *st, char *line, char *why, size_t len)
{
    line_args a;
    const char *bad = parse(st, line, &a, why, len);
    const cmd *c = a.c;
    if (bad || !c) {
        return bad;
    }
    int n = a.n;
    const double *v = a.v;
    if (c->kind == CMD_DRIVER) {
        return run_driver(st, a.argv[1], why, len);
    }
    if (c->kind == CMD_PROC || c->kind == CMD_PROC_GONE) {
        return run_proc(st, c, a.argv, v, why, len);
    }
    if (c->kind == CMD_PROC_UTIL) {
        return run_proc_util(st, a.argv, v, why, len);
    }
    if (c->kind >= CMD_THROTTLE) {
        return run_counter(st, &a, why, len);
    }
    if (is_health(c->kind)) {
        return run_checked(st, &a, why, len);
    }
    int whole =
        c->kind == CMD_XID || c->kind == CMD_BUSY || c->kind == CMD_IDLE || c->kind == CMD_DESTROY;
    if (n >= 2 && (v[1] < c->min || v[1] > c->max || (whole && v[1] != floor(v[1])))) {
        snprintf(why, len, "%s: %s out of range %g..%g", c->name, a.argv[2], c->min, c->max);
        return why;
    }
    if (n == 3 && (v[2] <= 0 || (c->kind == CMD_BUSY && (v[2] != floor(v[2]) || v[2] > 4e9)))) {
        snprintf(why, len, "%s: %s must be a positive %s", c->name,
                 c->kind == CMD_BUSY ? "PID" : "SECONDS",
                 c->kind == CMD_BUSY ? "integer" : "number");
        return why;
    }
    struct nvmlDevice_st *g = &st->inv->gpus[(int)v[0]];
    if (c->kind == CMD_BUSY || c->kind == CMD_IDLE || c->kind == CMD_DESTROY) {
        struct nvmlGpuInstance_st *gi = mock_gi_at(st->inv, (int)v[0], (unsigned int)v[1]);
        if (!gi) {
            snprintf(why, len, "%s: GPU %s has no GPU instance starting at memory slice %s",
                     c->name, a.argv[1], a.argv[2]);
            return why;
        }
        if (c->kind == CMD_DESTROY) {
            return destroy_gi(g, gi, c->name, why, len);
        }
        gi->busy_pid = c->kind == CMD_IDLE ? 0 : n == 3 ? (unsigned int)v[2] : DEFAULT_PID;
    } else if (c->kind == CMD_XID) {
        mock_post_xid(st, (int)v[0], (unsigned long long)v[1]);
    } else if (c->kind == CMD_FALL_OFF) {
        if (!g->lost) {
            mock_post_xid(st, (int)v[0], 79);
        }
        g->lost = 1;
    } else {
        g->override[c->reading] = (mock_override){1, v[1], n == 3 ? mock_now() + v[2] : 0};
    }
    return NULL;
}

/* Runs the complete lines of f from st->ctl.done on. */
static void run_lines(mock_state *st, FILE *f)
{
    char line[MAX_LINE + 2], why[512];
    while (fgets(line, sizeof(line), f)) {
        size_t len = strlen(line);
        if (line[len - 1] != '\n') {
            if (len > MAX_LINE && !feof(f)) {
                fprintf(stderr, "gpupool-nvml-mock: %s:%ld: line longer than %d bytes\n",
                        st->ctl.path, st->ctl.line + 1, MAX_LINE);
                st->ctl.done = (off_t)-1; /* stop reading this file */
            }
            return; /* incomplete: run it once its end is written */
        }
        st->ctl.done += (off_t)len;
        st->ctl.line++;
        line[len - 1] = '\0';
        const char *bad = run(st, line, why, sizeof(why));
        if (bad) {
            fprintf(stderr, "gpupool-nvml-mock: %s:%ld: %s\n", st->ctl.path, st->ctl.line, bad);
        }
    }
}

void mock_control_poll(mock_state *st)
{
    mock_control *c = &st->ctl;
    struct stat sb;
    if (!c->path[0] || stat(c->path, &sb) != 0) {
        return;
    }
    if (sb.st_dev != c->dev || sb.st_ino != c->ino || (c->done >= 0 && sb.st_size < c->done)) {
        c->dev = sb.st_dev;
        c->ino = sb.st_ino;
        c->done = 0;
        c->line = 0;
    }
    if (c->done < 0 || sb.st_size == c->done) {
        return;
    }
    FILE *f = fopen(c->path, "r");
    if (f && fseeko(f, c->done, SEEK_SET) == 0) {
        run_lines(st, f);
    }
    if (f) {
        fclose(f);
    }
}
