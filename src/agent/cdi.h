/*
 * GPUs for containers through CDI (the Container Device Interface): the spec that tells podman
 * what giving a container one GPU means, and the podman options that give a replica exactly its
 * GPUs. Pure: nothing here reads or writes a file, runs a program or reads the clock (cdi_host.h
 * does the I/O: the driver's files, the MIG minors, writing the spec).
 *
 * The spec (gp_cdi_spec), JSON, cdiVersion GP_CDI_VERSION, kind GP_CDI_KIND:
 *
 *   containerEdits (every device of the spec shares them; podman applies them once when a
 *   container gets any of its devices):
 *     deviceNodes  /dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidia-uvm-tools
 *     mounts       the driver's user-space files, read-only (ro, nosuid, nodev, bind), each at
 *                  the path the host loads it from (see cdi_host.h for which files and how they
 *                  are found; none on the mock NVML)
 *     env          NVIDIA_VISIBLE_DEVICES=void: a legacy nvidia-container-runtime hook, if one is
 *                  installed on the node, adds no device of its own
 *   devices: one per GPU, named by its UUID ("GPU-…"), with its node /dev/nvidia<minor>; one per
 *   MIG device, named by its UUID ("MIG-…"), with its parent GPU's node and the two MIG
 *   capability nodes of its GPU instance and compute instance:
 *   /dev/nvidia-caps/nvidia-cap<minor of "gpu<G>/gi<I>/access"> and
 *   /dev/nvidia-caps/nvidia-cap<minor of "gpu<G>/gi<I>/ci<C>/access"> (G the parent's minor, I and
 *   C the instance ids, the minors from the driver's table /proc/driver/nvidia-caps/mig-minors).
 *
 * Every device node has "path" (where the container sees it: always under /dev) and "hostPath"
 * (where it is on the host: under dev_root, "/dev" on a real node; tests point dev_root at fake
 * nodes made with mknod). podman (through runc) takes the node's type and numbers from hostPath
 * and allows exactly those in the container's device cgroup. Note: with a user namespace, runc
 * bind-mounts device nodes from "path" on the host rather than "hostPath", so a dev_root other
 * than /dev is only honoured for containers without one.
 *
 * A device whose nodes cannot be named is left out (and listed in skipped, with the reason): a
 * GPU whose minor NVML does not tell, a MIG device without its ids or capability minors. A
 * container asking for it is then refused by podman ("unresolvable CDI devices"): never given
 * more than it asked for.
 */
#ifndef GP_AGENT_CDI_H
#define GP_AGENT_CDI_H

#include "agent/nvml.h"
#include "gpupool/error.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define GP_CDI_VERSION "0.5.0"
#define GP_CDI_KIND    "nvidia.com/gpu"
/* The spec's file name, in the agent's STATE/cdi and in a directory it publishes to. */
#define GP_CDI_FILE     "gpupool.json"
#define GP_CDI_PATH_MAX 1024
/* Driver files mounted, at most. */
#define GP_CDI_MAX_MOUNTS 64

/* MIG capability minors, from the driver's mig-minors table, for GPU minors below
 * GP_CDI_CAP_GPUS: -1 where the table has none. */
#define GP_CDI_CAP_GPUS 32
#define GP_CDI_CAP_GIS  15
#define GP_CDI_CAP_CIS  8
typedef struct gp_cdi_mig_caps {
    int gi[GP_CDI_CAP_GPUS][GP_CDI_CAP_GIS];                 /* "gpuG/giI/access N" */
    int ci[GP_CDI_CAP_GPUS][GP_CDI_CAP_GIS][GP_CDI_CAP_CIS]; /* "gpuG/giI/ciC/access N" */
} gp_cdi_mig_caps;

/*
 * Parses the text of /proc/driver/nvidia-caps/mig-minors: lines "config 1", "monitor 2",
 * "gpu0/gi0/access 3", "gpu0/gi0/ci0/access 4", ... (the driver's own table). Lines of another
 * shape, and numbers beyond the table's bounds, are ignored. Fills *out (every other entry -1);
 * returns how many access entries it took.
 */
int gp_cdi_mig_caps_parse(const char *text, gp_cdi_mig_caps *out);

/* A driver file mounted read-only into containers: the file itself (host, resolved) and where the
 * container sees it (container: the path the host loads it by, e.g. ".../libcuda.so.1"). */
typedef struct gp_cdi_mount {
    char host[GP_CDI_PATH_MAX];
    char container[GP_CDI_PATH_MAX];
} gp_cdi_mount;

/* What the spec needs of the host beyond the NVML inventory. All borrowed. */
typedef struct gp_cdi_host {
    const char *dev_root;        /* absolute: where the device nodes are ("/dev") */
    const gp_cdi_mig_caps *caps; /* NULL: no table (MIG devices are skipped) */
    const gp_cdi_mount *mounts;  /* the driver's files; nmounts of them */
    int nmounts;
} gp_cdi_host;

/*
 * The spec above for inventory inv on host. *spec is a new reference; *skipped (when skipped is
 * not NULL) a new array of {"device": UUID or "GPU <index>", "reason": text}, one per device left
 * out. Errors: GP_EINVAL (dev_root not absolute, a mount path not absolute; the message names
 * it), GP_ENOMEM; *spec and *skipped are NULL then.
 */
int gp_cdi_spec(const gp_nvml_inv *inv, const gp_cdi_host *host, json_t **spec, json_t **skipped,
                gp_diag *d);

/* True when name may name a CDI device: a letter or digit, then letters, digits, '_', '-', '.'
 * and ':', ending in a letter or digit; at most 256 bytes (GPU and MIG UUIDs are). */
bool gp_cdi_name_valid(const char *name);

/* True when the MIG devices of GPU g (as the spec was made) are exactly those of now[] (n of them,
 * as gp_nvml_sample_mig reads them this round), in any order. */
bool gp_cdi_mig_same(const gp_nvml_gpu *g, const gp_nvml_mig_reading *now, int n);

/* ---- podman ---- */

/* Options to add to a podman command line; each a NULL-terminated array of new strings. */
typedef struct gp_cdi_args {
    char **global; /* global options: before the command ("podman GLOBAL... run ...") */
    char **run;    /* options of `podman run` / `podman create` */
} gp_cdi_args;

/*
 * The podman options that give a container exactly the CDI devices names[0..n) (a replica's
 * gpu_uuids: GPU UUIDs, and MIG UUIDs for MIG slices): run gets "--device", "nvidia.com/gpu=NAME"
 * for each (a name given twice, once). spec_dir is the directory holding the agent's spec
 * (STATE/cdi; the agent puts it into the run spec as "cdi_spec_dir") when podman takes the
 * global option --cdi-spec-dir (gp_cdi_podman_takes_spec_dir): global then gets "--cdi-spec-dir",
 * spec_dir. podman 4.3 (Debian 12) does not take it and reads specs only from /etc/cdi and
 * /var/run/cdi: pass NULL, and rely on the agent publishing its spec there (cdi_host.h).
 * With n == 0 both lists are empty: a replica without GPUs gets no device.
 *
 * For gpupool-run (the sandbox): podman --runtime R ... <global> run <run> ... IMAGE.
 * Errors: GP_EINVAL (a name that is not a CDI device name, naming it and its position; spec_dir
 * not absolute), GP_ENOMEM; *out is empty ({NULL, NULL}) then. Free with gp_cdi_args_fini.
 */
int gp_cdi_podman_args(const char *spec_dir, const char *const *names, int n, gp_cdi_args *out,
                       gp_diag *d);
void gp_cdi_args_fini(gp_cdi_args *a);

/* True when dir is one of the directories podman 4.3 reads CDI specs from (/etc/cdi,
 * /var/run/cdi and its target /run/cdi; a trailing '/' allowed): a spec published there names
 * devices podman resolves. */
bool gp_cdi_podman_reads(const char *dir);

/* True when podman's `podman --help` text lists the global option --cdi-spec-dir. */
bool gp_cdi_podman_takes_spec_dir(const char *help_text);

#endif
