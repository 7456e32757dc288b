/*
 * The container runtime of this node: podman, the OCI runtime and the cgroup manager it should
 * use, the limits it must be given. Detected, never assumed:
 *
 *   cgroups  unified v2 (ROOT/cgroup.controllers), hybrid (v1 controllers with v2 mounted at
 *            ROOT/unified) or v1, from the files under the cgroup root;
 *   OCI runtime  v2: crun, else runc; hybrid and v1: runc (crun refuses hybrid hosts), found in
 *            PATH and the usual sbin/bin directories; none of them: no runtime;
 *   cgroup manager  cgroupfs on every host: a replica's processes go under the cgroup path
 *            cgroup.h names (--cgroup-parent), which the systemd manager would turn into a unit;
 *   init     catatonit where podman's packages put it (--init): PID 1 that forwards SIGTERM;
 *   ulimits  nofile and nproc are the caller's own (getrlimit), nproc at most the kernel's
 *            pid_max (podman lowers its own to that): without CAP_SYS_RESOURCE a container
 *            cannot get more than podman has, and podman's defaults ask for more.
 * gp_runtime_probe (the agent, at start) also asks podman for its version and storage and runs
 * one throw-away container over the host root through the same command line jobs get
 * (sandbox.h): a node whose podman cannot run one has no runtime, and says why.
 */
#ifndef GP_AGENT_RUNTIME_H
#define GP_AGENT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "agent/sandbox.h"
#include "gpupool/error.h"

typedef enum gp_cgroup_mode {
    GP_CGMODE_NONE = 0,
    GP_CGMODE_V1,
    GP_CGMODE_HYBRID,
    GP_CGMODE_V2,
} gp_cgroup_mode;

/* "v1", "hybrid", "v2"; "none". Static storage. */
const char *gp_cgroup_mode_name(gp_cgroup_mode m);

/* The mode of the cgroup filesystem under root (e.g. /sys/fs/cgroup), from its files. */
gp_cgroup_mode gp_runtime_cgroup_mode(const char *root);

/* The OCI runtime and cgroup manager for a host in mode m with the runtimes found. Pure. 0 with
 * *oci and *manager set (static strings), or GP_ENOENT with why (cap bytes) saying what is
 * missing. */
int gp_runtime_choose(gp_cgroup_mode m, bool has_runc, bool has_crun, const char **oci,
                      const char **manager, char *why, size_t cap);

typedef struct gp_runtime {
    bool ok;              /* containers can run here */
    char why[512];        /* when not: what is missing or what podman said */
    char podman[1024];    /* the program */
    char version[32];     /* gp_runtime_probe: podman's version */
    char oci_runtime[16]; /* runc | crun */
    char oci_path[1024];  /* the runtime's program */
    char cgroup_manager[16];
    gp_cgroup_mode cgroups;
    char init_path[1024];  /* "" when there is none */
    char graph_root[1024]; /* gp_runtime_probe: podman's storage ("" unknown) */
    char run_root[1024];
    gp_sandbox_rlimit nofile, nproc;
} gp_runtime;

/* What this node has, without running anything (gpupool-run): podman, the cgroup mode under
 * cgroup_root, the OCI runtime and manager, catatonit, our limits. podman may name the program
 * (NULL: "podman" in PATH). Fills out; out->ok false with out->why when something is missing. */
void gp_runtime_find(const char *podman, const char *cgroup_root, gp_runtime *out);

/* gp_runtime_find, then podman's version and storage, and a container over the host root (the
 * agent, at start; about a second). out->ok false with why when podman cannot run one. */
void gp_runtime_probe(const char *podman, const char *cgroup_root, gp_runtime *out);

/* The registration's "runtime" ({engine, version, oci_runtime, cgroups}), or JSON null when the
 * node has none. A new reference. */
json_t *gp_runtime_json(const gp_runtime *rt);

/* rt as the sandbox's node settings (sandbox.h; strings borrowed from rt). */
void gp_runtime_node(const gp_runtime *rt, gp_sandbox_node *out);

#endif
