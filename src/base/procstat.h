/*
 * The fields of /proc/PID/stat gpupool uses: a process's state, parent, session and start time
 * (with the pid, the start time names a process for good: pids are reused, start times are not).
 *
 * Plain libc and no allocation: libgpushare compiles this file into itself.
 */
#ifndef GP_BASE_PROCSTAT_H
#define GP_BASE_PROCSTAT_H

#include <stdint.h>
#include <sys/types.h>

typedef struct gp_proc_stat {
    char state;          /* field 3: R, S, D, Z (zombie), X (dead), ... */
    pid_t ppid;          /* field 4 */
    pid_t session;       /* field 6 */
    uint64_t start_time; /* field 22: clock ticks since boot */
} gp_proc_stat;

/* Reads pid's line. 0, GP_ENOENT (no such process, or no /proc) or GP_EPARSE. */
int gp_proc_stat_read(pid_t pid, gp_proc_stat *out);

#endif
