/*
 * The data directory's lock: one gpupoold per data directory.
 *
 * Two controllers on one data directory would both schedule from the same store and place work
 * twice on the same GPUs. So gpupoold takes an exclusive flock(2) on DATA_DIR/gpupoold.lock
 * before it opens the store, and holds it for the life of the process (the kernel drops it when
 * the process ends, however it ends: a kill -9 leaves no stale lock). The holder writes its pid
 * to the file ("PID\n"), so a second instance, and `gpupool down`, can name it.
 *
 * Contract of the file for readers: the pid in it is meaningful only while the lock is held;
 * after the holder exits the file stays with its last pid. Readers that must know whether a
 * holder lives test the lock (flock LOCK_NB), not the pid.
 */
#ifndef GP_CTL_DATALOCK_H
#define GP_CTL_DATALOCK_H

#include "gpupool/error.h"

#define CTL_DATALOCK_FILE "gpupoold.lock"

/* Takes the lock of data_dir (an existing directory) for this process and writes its pid into
 * the lock file. On success *fd is the lock's descriptor (close-on-exec; the caller keeps it open
 * while it runs and closes it at the end, which releases the lock). GP_ESTATE when another
 * process holds it (d names the holder's pid), GP_EIO when the file cannot be opened or
 * written; *fd is -1 on failure. */
int ctl_datalock_take(const char *data_dir, int *fd, gp_diag *d);

/* Releases the lock taken by ctl_datalock_take (fd -1: nothing to do). */
void ctl_datalock_release(int fd);

#endif
