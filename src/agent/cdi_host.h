/*
 * The agent's CDI spec on the host (the pure spec is cdi.h): finds the driver's files, reads the
 * MIG capability table, and writes the spec where podman reads it.
 *
 * Files: STATE/cdi/gpupool.json (STATE the agent's state directory, 0700; cdi/ 0755 and the spec
 * 0644, both owned by the agent: jobs never see the state directory, and could not write there).
 * It is replaced atomically (a temporary file, fsync, rename, fsync of the directory), at start
 * and whenever the MIG devices change (an instance the agent made for a job, or one made or
 * destroyed by another tool), before a replica that needs a new MIG device starts.
 *
 * Publishing: podman 4.3 (Debian 12) reads CDI specs only from /etc/cdi and /var/run/cdi (newer
 * podman also takes --cdi-spec-dir, see gp_cdi_podman_args). The agent therefore also writes the
 * same spec, the same way, as gpupool.json into a publish directory: by default ("auto")
 * /var/run/cdi when the NVML library loaded is the driver's own (a real GPU node), never on the
 * mock NVML (so test pools never touch the host's CDI directories); "none" never; or a directory
 * given by the operator. Another spec of kind nvidia.com/gpu naming the same UUIDs in the same
 * directory (nvidia-ctk's, say) would conflict there: podman refuses both.
 *
 * The driver's files (cdi_driver.h says which): only when the NVML library the agent loaded is
 * the driver's own — its real file is libnvidia-ml.so.<driver version> — which also means none on
 * the mock. Found from that file (mounted where the agent loaded it from), from the ld cache
 * (the entries `ldconfig -p -C LD_CACHE` lists: each mounted at the entry's path, the file behind
 * it resolved on the host) and, for the programs, from the directories of the agent's PATH
 * (/usr/bin:/usr/sbin:/bin:/sbin when it has none). MIG capability minors come from
 * /proc/driver/nvidia-caps/mig-minors, read again at each update.
 *
 * Threads: a gp_cdi_writer is used from the agent's loop thread only.
 */
#ifndef GP_AGENT_CDI_HOST_H
#define GP_AGENT_CDI_HOST_H

#include "agent/cdi.h"
#include "agent/nvml.h"

#include <stdbool.h>
#include <stdio.h>

#define GP_CDI_DEV_ROOT    "/dev"
#define GP_CDI_MIG_MINORS  "/proc/driver/nvidia-caps/mig-minors"
#define GP_CDI_LD_CACHE    "/etc/ld.so.cache"
#define GP_CDI_PUBLISH_DIR "/var/run/cdi"

/* Where the writer looks; NULL or "" takes the default above. All borrowed for the call. */
typedef struct gp_cdi_options {
    const char *dev_root;   /* GP_CDI_DEV_ROOT */
    const char *mig_minors; /* GP_CDI_MIG_MINORS */
    const char *ld_cache;   /* GP_CDI_LD_CACHE */
    const char *publish;    /* "auto" (the default), "none", or an absolute directory */
} gp_cdi_options;

/*
 * The driver's files containers get (see above), up to cap into out[], *n how many. When the NVML
 * library loaded is not the driver's own, *n is 0 and why says so (why may be NULL). Never
 * fails for a file it cannot use (it is left out); errors: GP_ERANGE when more than cap files
 * qualify (out[] then holds the first cap).
 */
int gp_cdi_driver_mounts(const gp_nvml *h, const char *driver_version, const char *ld_cache,
                         gp_cdi_mount *out, int cap, int *n, char *why, size_t why_cap, gp_diag *d);

/* Replaces DIR/GP_CDI_FILE with text (mode 0644), making DIR (0755) when missing; an existing DIR
 * must be a directory (not a link) owned by the agent's user, and loses group and other write
 * permission. 0, or GP_EIO naming the path. */
int gp_cdi_write(const char *dir, const char *text, gp_diag *d);

typedef struct gp_cdi_writer gp_cdi_writer;

/*
 * A writer for the agent with state directory state_dir and NVML handle h (borrowed; must outlive
 * the writer), whose inventory says the driver version. Finds the driver's files once, here.
 * Writes nothing yet. Errors: GP_EINVAL (a dev_root or publish directory that is not absolute),
 * GP_ENOMEM; *out is NULL then.
 */
int gp_cdi_writer_new(const gp_cdi_options *o, const char *state_dir, const gp_nvml *h,
                      const gp_nvml_inv *inv, gp_cdi_writer **out, gp_diag *d);
void gp_cdi_writer_free(gp_cdi_writer *w);

/*
 * Makes the spec of inv and writes it (and publishes it) unless the same text is already there;
 * logs the devices it had to leave out when they change. A node without any device has no spec:
 * the files are removed. Keeps a copy of inv (gp_cdi_writer_inventory). 0, or GP_EIO (a file
 * could not be written; d names it; the next call tries again), GP_ENOMEM.
 */
int gp_cdi_writer_update(gp_cdi_writer *w, const gp_nvml_inv *inv, gp_diag *d);

/* True when the spec last written has a device named name. */
bool gp_cdi_writer_has(const gp_cdi_writer *w, const char *name);

/* The inventory of the last successful update; NULL before one. Owned by w. */
const gp_nvml_inv *gp_cdi_writer_inventory(const gp_cdi_writer *w);

/* STATE/cdi, the directory of the agent's spec (what podman's --cdi-spec-dir takes), absolute
 * (the state directory resolved when the writer was made). Owned by w. */
const char *gp_cdi_writer_dir(const gp_cdi_writer *w);

/* The directory the spec is published to; "" when none. Owned by w. */
const char *gp_cdi_writer_published(const gp_cdi_writer *w);

/*
 * `gpupool-agent cdi`: opens NVML at nvml_library (NULL: the driver's), makes the spec the agent
 * would write (o->publish is not used) and writes it atomically as out_dir/gpupool.json, or, with
 * out_dir NULL, prints it to out. Devices left out, and why no driver file is mounted, go to
 * stderr. Errors: GP_EINVAL (a dev root or out_dir that is not absolute), NVML's (gp_nvml_open,
 * gp_nvml_inventory), GP_EIO, GP_ENOMEM.
 */
int gp_cdi_generate(const gp_cdi_options *o, const char *nvml_library, const char *out_dir,
                    FILE *out, gp_diag *d);

#endif
