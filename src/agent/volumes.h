/*
 * How a replica sees its volumes (gp_run_spec.volumes): each at DATA_DIR/NAME, where DATA_DIR
 * is also in the job's environment as GPUPOOL_DATA_DIR.
 *
 *   mount mode (gpupool-run runs as root): the job gets a private mount namespace in which
 *     /data is a small tmpfs holding one bind mount per volume, remounted read-only where the
 *     volume is read-only (the kernel enforces it; the job cannot remount it once it runs as
 *     an unprivileged user). /data itself is then read-only. Nothing of this is visible to the
 *     host; /data is created there, empty, when missing, as the mount point. DATA_DIR is /data.
 *   link mode (otherwise): WORKDIR/data/NAME are symbolic links to the host directories, and
 *     read-only is advisory (the directories' own permissions apply). DATA_DIR is WORKDIR/data.
 *
 * Both run in the job's process between fork and exec (before it drops privileges), so a
 * failure is reported like any failed start: errno and the index of the volume (-1: the
 * namespace or /data itself).
 */
#ifndef GP_AGENT_VOLUMES_H
#define GP_AGENT_VOLUMES_H

#include "agent/run_spec.h"

#include <stdbool.h>
#include <stddef.h>

#define GP_VOLUMES_MOUNT_DIR "/data"

/* Whether volumes are mounted (true: running as root) or linked. */
bool gp_volumes_mount_mode(void);

/* The directory the job finds its volumes in (see above), into out (cap bytes). */
void gp_volumes_data_dir(bool mount_mode, const char *workdir, char *out, size_t cap);

/* Mount mode: unshares the mount namespace and builds /data. 0, or -1 with errno set and
 * *failed the volume's index (-1 for the namespace or /data). */
int gp_volumes_mount(const gp_run_spec *s, int *failed);

/* Link mode: makes data_dir and a link per volume in it (replacing links of an earlier run). A
 * volume whose path is not a directory fails with ENOENT or ENOTDIR. 0, or -1 as above. */
int gp_volumes_link(const gp_run_spec *s, const char *data_dir, int *failed);

#endif
