/*
 * Detection of the node's container runtime (contract in runtime.h).
 */
#define _GNU_SOURCE /* gethostname */

#include "agent/runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent/cmd.h"

const char *gp_cgroup_mode_name(gp_cgroup_mode m)
{
    return m == GP_CGMODE_V1       ? "v1"
           : m == GP_CGMODE_HYBRID ? "hybrid"
           : m == GP_CGMODE_V2     ? "v2"
                                   : "none";
}

static bool file_at(const char *root, const char *name)
{
    char p[1200];
    snprintf(p, sizeof(p), "%s/%s", root, name);
    return access(p, F_OK) == 0;
}

gp_cgroup_mode gp_runtime_cgroup_mode(const char *root)
{
    if (file_at(root, "cgroup.controllers")) {
        return GP_CGMODE_V2;
    }
    bool v1 = file_at(root, "memory/cgroup.procs") || file_at(root, "cpu/cgroup.procs") ||
              file_at(root, "pids/cgroup.procs");
    if (v1 && file_at(root, "unified/cgroup.controllers")) {
        return GP_CGMODE_HYBRID;
    }
    return v1 ? GP_CGMODE_V1 : GP_CGMODE_NONE;
}

int gp_runtime_choose(gp_cgroup_mode m, bool has_runc, bool has_crun, const char **oci,
                      const char **manager, char *why, size_t cap)
{
    *oci = NULL;
    *manager = "cgroupfs";
    if (m == GP_CGMODE_NONE) {
        snprintf(why, cap, "no cgroup filesystem found");
        return GP_ENOENT;
    }
    if (m == GP_CGMODE_V2) {
        *oci = has_crun ? "crun" : has_runc ? "runc" : NULL;
    } else {
        *oci = has_runc ? "runc" : NULL; /* crun refuses hybrid and v1 hosts */
    }
    if (!*oci) {
        snprintf(why, cap, "%s",
                 m == GP_CGMODE_V2 ? "no OCI runtime (crun or runc) found"
                                   : "runc not found (crun does not run on v1 or "
                                     "hybrid cgroup hosts)");
        return GP_ENOENT;
    }
    return 0;
}

/* The path of program name (a path already, or looked up in PATH and the usual directories)
 * into buf; false when there is none that can be executed. */
static bool find_program(const char *name, char *buf, size_t cap)
{
    if (strchr(name, '/')) {
        snprintf(buf, cap, "%s", name);
        return access(buf, X_OK) == 0;
    }
    const char *env = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof(dirs), "%s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
             env ? env : "");
    char *save = NULL;
    for (char *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        snprintf(buf, cap, "%s/%s", dir, name);
        if (dir[0] == '/' && access(buf, X_OK) == 0) {
            return true;
        }
    }
    buf[0] = '\0';
    return false;
}

static gp_sandbox_rlimit own_limit(int resource)
{
    struct rlimit r;
    if (getrlimit(resource, &r) != 0) {
        return (gp_sandbox_rlimit){1024, 1024};
    }
    return (gp_sandbox_rlimit){r.rlim_cur == RLIM_INFINITY ? -1 : (int64_t)r.rlim_cur,
                               r.rlim_max == RLIM_INFINITY ? -1 : (int64_t)r.rlim_max};
}

/* podman lowers its own process limit to the kernel's pid_max, and a container cannot get more
 * than podman has: the nproc a container can be given is ours, at most pid_max. */
static gp_sandbox_rlimit nproc_limit(void)
{
    gp_sandbox_rlimit r = own_limit(RLIMIT_NPROC);
    long long max = 0;
    FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
    if (f && fscanf(f, "%lld", &max) == 1 && max > 0) {
        r.hard = r.hard < 0 || r.hard > max ? max : r.hard;
        r.soft = r.soft < 0 || r.soft > r.hard ? r.hard : r.soft;
    }
    if (f) {
        fclose(f);
    }
    return r;
}

void gp_runtime_find(const char *podman, const char *cgroup_root, gp_runtime *out)
{
    memset(out, 0, sizeof(*out));
    out->nofile = own_limit(RLIMIT_NOFILE);
    out->nproc = nproc_limit();
    out->cgroups = gp_runtime_cgroup_mode(cgroup_root ? cgroup_root : "/sys/fs/cgroup");
    static const char *const inits[] = {"/usr/libexec/podman/catatonit", "/usr/bin/catatonit",
                                        "/usr/libexec/catatonit/catatonit"};
    for (size_t i = 0; i < sizeof(inits) / sizeof(inits[0]) && !out->init_path[0]; i++) {
        if (access(inits[i], X_OK) == 0) {
            snprintf(out->init_path, sizeof(out->init_path), "%s", inits[i]);
        }
    }
    if (!find_program(podman ? podman : "podman", out->podman, sizeof(out->podman))) {
        snprintf(out->why, sizeof(out->why), "podman not found (%s)", podman ? podman : "PATH");
        return;
    }
    char runc[1024], crun[1024];
    bool has_runc = find_program("runc", runc, sizeof(runc));
    bool has_crun = find_program("crun", crun, sizeof(crun));
    const char *oci = NULL, *manager = NULL;
    if (gp_runtime_choose(out->cgroups, has_runc, has_crun, &oci, &manager, out->why,
                          sizeof(out->why)) < 0) {
        return;
    }
    snprintf(out->oci_runtime, sizeof(out->oci_runtime), "%s", oci);
    snprintf(out->oci_path, sizeof(out->oci_path), "%s", strcmp(oci, "runc") == 0 ? runc : crun);
    snprintf(out->cgroup_manager, sizeof(out->cgroup_manager), "%s", manager);
    out->ok = true;
}

/* podman's version and storage directories. */
static int ask_podman(gp_runtime *rt)
{
    char *argv[] = {rt->podman, "info", "--format",
                    "{{.Version.Version}}\n{{.Store.GraphRoot}}\n{{.Store.RunRoot}}", NULL};
    gp_cmd_result r;
    gp_diag d;
    if (gp_cmd_run(argv, NULL, 60000, 8192, &r, &d) < 0) {
        snprintf(rt->why, sizeof(rt->why), "podman info: %.400s", d.msg);
        return -1;
    }
    char line[512];
    gp_cmd_last_line(r.err, line, sizeof(line));
    int ok = r.status == 0 && r.out &&
             sscanf(r.out, "%31[^\n]\n%1023[^\n]\n%1023[^\n]", rt->version, rt->graph_root,
                    rt->run_root) >= 1;
    if (!ok) {
        snprintf(rt->why, sizeof(rt->why), "podman info failed (exit %d): %.400s", r.status,
                 line[0] ? line : "no output");
    }
    gp_cmd_result_fini(&r);
    return ok ? 0 : -1;
}

/* One container over the host root, as a job would get it. */
static int probe_container(gp_runtime *rt)
{
    char *argv[] = {"true", NULL}, name[GP_SANDBOX_NAME_MAX], dir[64], host[256] = "";
    snprintf(dir, sizeof(dir), "probe-%ld", (long)getpid());
    gp_sandbox_name(0, 0, 0, dir, name);
    gethostname(host, sizeof(host) - 1);
    gp_run_spec s = {.argv = argv};
    gp_sandbox_node n;
    gp_runtime_node(rt, &n);
    n.hostname = host;
    gp_sandbox_job j = {.name = name, .state_dir = dir, .uid = 65534, .gid = 65534};
    gp_sandbox_layout l = {0};
    char **cmd = NULL;
    gp_diag d;
    if (gp_sandbox_argv(&n, &j, &s, &l, &cmd, &d) < 0) {
        snprintf(rt->why, sizeof(rt->why), "%.500s", d.msg);
        return -1;
    }
    gp_cmd_result r;
    int rc = gp_cmd_run(cmd, NULL, 60000, 0, &r, &d);
    gp_sandbox_argv_free(cmd);
    if (rc == 0 && r.status != 0) {
        char line[400];
        gp_cmd_last_line(r.err, line, sizeof(line));
        snprintf(rt->why, sizeof(rt->why), "a test container failed (exit %d): %s", r.status,
                 line[0] ? line : "no message");
        rc = -1;
    } else if (rc < 0) {
        snprintf(rt->why, sizeof(rt->why), "a test container: %.400s", d.msg);
    }
    gp_cmd_result_fini(&r);
    return rc;
}

void gp_runtime_probe(const char *podman, const char *cgroup_root, gp_runtime *out)
{
    gp_runtime_find(podman, cgroup_root, out);
    if (out->ok && (ask_podman(out) < 0 || probe_container(out) < 0)) {
        out->ok = false;
    }
}

json_t *gp_runtime_json(const gp_runtime *rt)
{
    if (!rt || !rt->ok) {
        return json_null();
    }
    return json_pack("{s:s, s:s, s:s, s:s}", "engine", "podman", "version", rt->version,
                     "oci_runtime", rt->oci_runtime, "cgroups", gp_cgroup_mode_name(rt->cgroups));
}

void gp_runtime_node(const gp_runtime *rt, gp_sandbox_node *out)
{
    memset(out, 0, sizeof(*out));
    out->podman = rt->podman;
    out->oci_runtime = rt->oci_path[0] ? rt->oci_path : rt->oci_runtime;
    out->cgroup_manager = rt->cgroup_manager;
    out->init_path = rt->init_path[0] ? rt->init_path : NULL;
    out->nofile = rt->nofile;
    out->nproc = rt->nproc;
}
