/* Volumes of a replica: mounted in a private namespace, or linked (see volumes.h). */
#define _GNU_SOURCE /* unshare */

#include "agent/volumes.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

bool gp_volumes_mount_mode(void)
{
    return geteuid() == 0;
}

void gp_volumes_data_dir(bool mount_mode, const char *workdir, char *out, size_t cap)
{
    if (mount_mode) {
        snprintf(out, cap, "%s", GP_VOLUMES_MOUNT_DIR);
    } else {
        snprintf(out, cap, "%s/data", workdir);
    }
}

/* -1 with *failed = which, keeping errno. */
static int fail(int *failed, int which)
{
    *failed = which;
    return -1;
}

/* Whether path is a directory; errno says why not (ENOENT, ENOTDIR, ...). */
static bool is_dir(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) < 0) {
        return false;
    }
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return false;
    }
    return true;
}

int gp_volumes_mount(const gp_run_spec *s, int *failed)
{
    const char *top = GP_VOLUMES_MOUNT_DIR;
    const unsigned long safe = MS_NOSUID | MS_NODEV;
    if ((mkdir(top, 0755) < 0 && errno != EEXIST) || unshare(CLONE_NEWNS) < 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("gpupool-data", top, "tmpfs", safe | MS_NOEXEC, "mode=0755,size=64k") < 0) {
        return fail(failed, -1);
    }
    for (int i = 0; i < s->nvolumes; i++) {
        const gp_run_volume *v = &s->volumes[i];
        char at[300];
        snprintf(at, sizeof(at), "%s/%s", top, v->name);
        if (!is_dir(v->path)) {
            return fail(failed, i);
        }
        if (mkdir(at, 0755) < 0 || mount(v->path, at, NULL, MS_BIND | MS_REC, NULL) < 0 ||
            (v->read_only &&
             mount(NULL, at, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | safe, NULL) < 0)) {
            return fail(failed, i);
        }
    }
    /* Nothing else goes into /data. */
    if (mount(NULL, top, NULL, MS_REMOUNT | MS_RDONLY | safe | MS_NOEXEC, NULL) < 0) {
        return fail(failed, -1);
    }
    return 0;
}

int gp_volumes_link(const gp_run_spec *s, const char *data_dir, int *failed)
{
    if (mkdir(data_dir, 0755) < 0 && errno != EEXIST) {
        return fail(failed, -1);
    }
    for (int i = 0; i < s->nvolumes; i++) {
        const gp_run_volume *v = &s->volumes[i];
        char at[4400];
        snprintf(at, sizeof(at), "%s/%s", data_dir, v->name);
        if (!is_dir(v->path)) {
            return fail(failed, i);
        }
        if ((unlink(at) < 0 && errno != ENOENT) || symlink(v->path, at) < 0) {
            return fail(failed, i);
        }
    }
    return 0;
}
