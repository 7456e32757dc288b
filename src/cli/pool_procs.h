/*
 * The processes of a local pool (`gpupool up`), found in /proc rather than in pid files, so that
 * a process restarted by hand, or a pid file that names a recycled pid, changes nothing.
 *
 * A live process (not a zombie) belongs to the pool in DIR (an absolute, resolved path) when
 *   - its program (the file name of /proc/PID/exe, else its comm) is gpupoold, gpupool-agent or
 *     gpupool-run, and
 *   - one of its arguments (the whole argument, or the value of a --flag=VALUE), or its
 *     GPUPOOL_DATA_DIR, GPUPOOL_STATE_DIR or GPUPOOL_JOIN_TOKEN_FILE environment variable,
 *     names a path (relative ones taken from the process's working directory) that is:
 *       gpupoold:       DIR itself;
 *       gpupool-agent:  DIR/join.token, or inside DIR/agents/ (its state directory);
 *       gpupool-run:    inside DIR/agents/ (a replica's state directory);
 * and, for gpupoold only, also when it holds DIR's lock (DIR/gpupoold.lock, src/ctl/datalock.h:
 * a held flock; the file names the holder's pid), however it was given its data directory.
 *
 * A job's own processes are stopped by their supervisor (gpupool-run); a job whose supervisor
 * is gone is found by its replica directory's child.pid ("PID STARTTIME", see
 * src/agent/replica_dir.h) and its process group killed, when that process is still the one
 * recorded (same start time).
 */
#ifndef GP_CLI_POOL_PROCS_H
#define GP_CLI_POOL_PROCS_H

#include <stdbool.h>
#include <sys/types.h>

typedef enum gp_pool_kind {
    GP_POOL_AGENT, /* gpupool-agent */
    GP_POOL_RUN,   /* gpupool-run, the supervisors */
    GP_POOL_CTL,   /* gpupoold */
    GP_POOL_NKINDS
} gp_pool_kind;

/* The most processes of one kind that the functions below handle in one pass. */
#define GP_POOL_MAX_PROCS 4096

/* Whether pid names a live process (a zombie is not). */
bool gp_pool_alive(pid_t pid);

/* The processes of kind in the pool at dir: up to cap pids into pids (without duplicates);
 * returns how many. */
int gp_pool_find(const char *dir, gp_pool_kind kind, pid_t *pids, int cap);

/* Stops every process of the pool at dir, in order: the agents (so that none restarts a job),
 * the supervisors (each stops its job's processes) and the jobs left without a supervisor, then
 * gpupoold. Each group gets SIGTERM, then SIGKILL for those still alive after grace_ms; a
 * process that cannot be signalled (another user's) is named on stderr, prefixed with who.
 * Returns how many processes were stopped; *failed (may be NULL) is set when one could not be. */
int gp_pool_stop(const char *dir, const char *who, long grace_ms, bool *failed);

#endif
