/*
 * The sandbox's layout and podman command line (contract in sandbox.h). Pure: no I/O, no clock,
 * no globals; every decision is in the output, so the unit tests read it back.
 */
#include "agent/sandbox.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- layout ---- */

static int add_mount(gp_sandbox_layout *l, const char *src, const char *dst, bool ro,
                     const char *field, gp_diag *d)
{
    if (strchr(src, ',') || strchr(dst, ',')) {
        return gp_diag_set(d, GP_EINVAL, "%s: %.300s: a path with ',' cannot be mounted", field,
                           strchr(src, ',') ? src : dst);
    }
    if (l->nmounts == GP_SANDBOX_MAX_MOUNTS) {
        return gp_diag_set(d, GP_EINVAL, "%s: too many mounts", field);
    }
    gp_sandbox_mount *m = &l->mounts[l->nmounts++];
    m->src = src;
    m->ro = ro;
    snprintf(m->dst, sizeof(m->dst), "%s", dst);
    return 0;
}

int gp_sandbox_layout_make(const gp_run_spec *s, const gp_sandbox_host *h, gp_sandbox_layout *out,
                           gp_diag *d)
{
    memset(out, 0, sizeof(*out));
    bool host_root = s->image == NULL;
    int rc = add_mount(out, h->workdir, GP_SANDBOX_WORK, false, "work directory", d);
    if (rc == 0 && host_root && s->working_dir) {
        rc = add_mount(out, s->working_dir, s->working_dir, false, "spec.working_dir", d);
    }
    out->workdir = s->working_dir ? s->working_dir : host_root ? GP_SANDBOX_WORK : NULL;
    if (rc == 0 && h->checkpoint) {
        rc = add_mount(out, h->checkpoint, GP_SANDBOX_CHECKPOINT, false, "checkpoint_dir", d);
        out->paths.checkpoint_dir = GP_SANDBOX_CHECKPOINT;
    }
    if (rc == 0 && h->hostfile) {
        rc = add_mount(out, h->hostfile, GP_SANDBOX_HOSTFILE, true, "hostfile", d);
        out->paths.hostfile = GP_SANDBOX_HOSTFILE;
    }
    if (rc == 0 && h->share_region && h->share_limits) {
        rc = add_mount(out, h->share_region, GP_SANDBOX_SHARE_REGION, false, "share region", d);
        rc = rc ? rc
                : add_mount(out, h->share_limits, GP_SANDBOX_SHARE_LIMITS, true, "share limits", d);
        out->paths.share_region = GP_SANDBOX_SHARE_REGION;
    }
    if (rc == 0 && h->share_library && h->preload) {
        rc = add_mount(out, h->share_library, GP_SANDBOX_SHARE_LIBRARY, true, "share library", d);
        rc = rc ? rc : add_mount(out, h->preload, GP_SANDBOX_PRELOAD, true, "ld.so.preload", d);
        out->paths.share_library = GP_SANDBOX_SHARE_LIBRARY;
    }
    for (int i = 0; rc == 0 && i < s->nvolumes; i++) {
        char dst[1100], field[48];
        snprintf(dst, sizeof(dst), "%s/%s", GP_SANDBOX_DATA, s->volumes[i].name);
        snprintf(field, sizeof(field), "volumes[%d].path", i);
        rc = add_mount(out, s->volumes[i].path, dst, s->volumes[i].read_only, field, d);
    }
    if (s->nvolumes > 0) {
        snprintf(out->data_dir, sizeof(out->data_dir), "%s", GP_SANDBOX_DATA);
        out->paths.data_dir = out->data_dir;
    }
    return rc;
}

/* ---- the command line ---- */

/* A growing NULL-terminated argv; ok turns false on the first allocation failure. */
typedef struct args {
    char **v;
    int n, cap;
    bool ok;
} args;

static void push(args *a, const char *s)
{
    if (!a->ok) {
        return;
    }
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? a->cap * 2 : 128;
        char **grown = realloc(a->v, (size_t)cap * sizeof(char *));
        if (!grown) {
            a->ok = false;
            return;
        }
        a->v = grown;
        a->cap = cap;
    }
    if (!(a->v[a->n] = strdup(s))) {
        a->ok = false;
        return;
    }
    a->v[++a->n] = NULL;
}

__attribute__((format(printf, 2, 3))) static void pushf(args *a, const char *fmt, ...)
{
    char buf[4200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf)) {
        a->ok = false; /* never a cut argument */
        return;
    }
    push(a, buf);
}

static void push2(args *a, const char *flag, const char *value)
{
    push(a, flag);
    push(a, value);
}

void gp_sandbox_name(int64_t job, int replica, int64_t epoch, const char *state_dir, char *buf)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)state_dir; *p; p++) {
        h = (h ^ *p) * 16777619u;
    }
    snprintf(buf, GP_SANDBOX_NAME_MAX, "gpupool-%lld-%d-%lld-%08" PRIx32, (long long)job, replica,
             (long long)epoch, h);
}

static void rlimit_text(char *buf, size_t cap, const char *name, gp_sandbox_rlimit r)
{
    snprintf(buf, cap, "%s=%lld:%lld", name, (long long)(r.soft < 0 ? -1 : r.soft),
             (long long)(r.hard < 0 ? -1 : r.hard));
}

/* The identity and confinement of every job (sandbox.h). */
static void confinement(args *a, const gp_sandbox_node *n, const gp_sandbox_job *j,
                        const gp_run_spec *s)
{
    char buf[128];
    if (j->userns.size > 0) {
        pushf(a, "--uidmap=0:%lld:%lld", (long long)j->userns.base, (long long)j->userns.size);
        pushf(a, "--gidmap=0:%lld:%lld", (long long)j->userns.base, (long long)j->userns.size);
    }
    pushf(a, "--user=%lu:%lu", (unsigned long)j->uid, (unsigned long)j->gid);
    if (s->privileged) {
        /* What the spec asks for, and nothing that would take it back: no --cap-drop, no
         * no-new-privileges, no seccomp profile. The user namespace, the user and the
         * namespaces and limits below still hold. */
        push(a, "--privileged");
    } else {
        push2(a, "--cap-drop", "all");
        push2(a, "--security-opt", "no-new-privileges");
        if (n->seccomp) {
            pushf(a, "--security-opt=seccomp=%s", n->seccomp);
        }
    }
    push2(a, "--pid", "private");
    push2(a, "--ipc", "private");
    push2(a, "--uts", "private");
    if (s->own_netns || s->network_private) {
        /* A namespace of its own with outbound access through slirp4netns: unlike podman's
         * bridge, no other container (another tenant's) can reach it, and neither can it reach
         * the node's loopback. A notebook or service is reached through the agent's tunnel. */
        push2(a, "--network", "slirp4netns:allow_host_loopback=false");
    } else {
        push2(a, "--network", "host");
        if (n->hostname && n->hostname[0]) {
            push2(a, "--hostname", n->hostname);
        }
    }
    rlimit_text(buf, sizeof(buf), "nofile", n->nofile);
    push2(a, "--ulimit", buf);
    rlimit_text(buf, sizeof(buf), "nproc", n->nproc);
    push2(a, "--ulimit", buf);
    if (n->pids_limit > 0) {
        pushf(a, "--pids-limit=%lld", (long long)n->pids_limit);
    }
    if (s->memory_mib > 0) {
        pushf(a, "--memory=%lldm", (long long)s->memory_mib);
    }
    if (s->cpu_milli > 0) {
        pushf(a, "--cpus=%lld.%03lld", (long long)(s->cpu_milli / 1000),
              (long long)(s->cpu_milli % 1000));
    }
    /* the spec's shm_size_mib, else half the memory limit (tmpfs pages count against it) */
    int64_t shm = s->shm_size_mib > 0 ? s->shm_size_mib
                  : s->memory_mib > 1 ? s->memory_mib / 2
                                      : 1024;
    pushf(a, "--shm-size=%lldm", (long long)shm);
    if (j->cgroup_parent) {
        push2(a, "--cgroup-parent", j->cgroup_parent);
    }
}

/* The host's root, read-only, with fresh temporary directories and the agent's files hidden. */
static int host_root(args *a, const gp_sandbox_node *n, gp_diag *d)
{
    push(a, "--read-only");
    push(a, "--read-only-tmpfs=false");
    static const char *const tmp[] = {"/tmp", "/var/tmp", "/run"};
    for (size_t i = 0; i < sizeof(tmp) / sizeof(tmp[0]); i++) {
        pushf(a, "--mount=type=tmpfs,destination=%s,notmpcopyup", tmp[i]);
    }
    size_t len = 0;
    for (int i = 0; i < n->nmasks; i++) {
        if (n->masks[i][0] != '/' || strchr(n->masks[i], ':')) {
            return gp_diag_set(d, GP_EINVAL, "mask %.300s: must be an absolute path without ':'",
                               n->masks[i]);
        }
        len += strlen(n->masks[i]) + 1;
    }
    if (n->nmasks > 0) {
        char *masks = calloc(1, len + 8);
        if (!masks) {
            a->ok = false;
            return 0;
        }
        strcpy(masks, "mask=");
        for (int i = 0; i < n->nmasks; i++) {
            strcat(i ? strcat(masks, ":") : masks, n->masks[i]);
        }
        push2(a, "--security-opt", masks);
        free(masks);
    }
    return 0;
}

static void mounts(args *a, const gp_sandbox_layout *l)
{
    for (int i = 0; i < l->nmounts; i++) {
        const gp_sandbox_mount *m = &l->mounts[i];
        pushf(a, "--mount=type=bind,source=%s,destination=%s%s", m->src, m->dst,
              m->ro ? ",ro=true" : "");
    }
}

static void labels(args *a, const gp_sandbox_job *j, const gp_run_spec *s)
{
    pushf(a, "--label=gpupool.job=%lld", (long long)s->job);
    pushf(a, "--label=gpupool.replica=%d", s->replica);
    pushf(a, "--label=gpupool.epoch=%lld", (long long)s->epoch);
    pushf(a, "--label=gpupool.state-dir=%s", j->state_dir);
}

/* An image reference podman takes as one: not an option, no spaces or control characters. */
static bool image_ok(const char *image)
{
    if (!image[0] || image[0] == '-') {
        return false;
    }
    for (const char *p = image; *p; p++) {
        if ((unsigned char)*p <= ' ' || *p == 0x7f) {
            return false;
        }
    }
    return true;
}

int gp_sandbox_argv(const gp_sandbox_node *n, const gp_sandbox_job *j, const gp_run_spec *s,
                    const gp_sandbox_layout *l, char ***out, gp_diag *d)
{
    *out = NULL;
    if (s->image && !image_ok(s->image)) {
        return gp_diag_set(d, GP_EINVAL, "image: %.200s: not an image reference", s->image);
    }
    args a = {.ok = true};
    push(&a, n->podman);
    push2(&a, "--runtime", n->oci_runtime);
    push2(&a, "--cgroup-manager", n->cgroup_manager);
    push(&a, "run");
    push2(&a, "--name", j->name);
    push(&a, "--rm");
    push2(&a, "--pull", "never");
    push2(&a, "--log-driver", "passthrough");
    push2(&a, "--stop-signal", "TERM");
    pushf(&a, "--stop-timeout=%d", j->grace_s);
    if (n->init_path) {
        push(&a, "--init");
        push2(&a, "--init-path", n->init_path);
    }
    labels(&a, j, s);
    confinement(&a, n, j, s);
    int rc = s->image ? 0 : host_root(&a, n, d);
    mounts(&a, l);
    for (int i = 0; j->device_args && j->device_args[i]; i++) {
        push(&a, j->device_args[i]);
    }
    if (l->paths.share_region) {
        push2(&a, "--unsetenv", "LD_AUDIT");
    }
    if (j->env_file) {
        push2(&a, "--env-file", j->env_file);
    }
    for (int i = 0; j->env_args && j->env_args[i]; i++) {
        push2(&a, "--env", j->env_args[i]);
    }
    if (l->workdir) {
        push2(&a, "--workdir", l->workdir);
    }
    if (s->image) {
        push(&a, s->image);
    } else {
        push(&a, "--rootfs");
        push(&a, "/:O");
    }
    for (int i = 0; s->argv[i]; i++) {
        push(&a, s->argv[i]);
    }
    if (rc < 0 || !a.ok) {
        gp_sandbox_argv_free(a.v);
        return rc < 0 ? rc
                      : gp_diag_set(d, GP_ENOMEM,
                                    "the podman command line: out of memory or an argument "
                                    "too long");
    }
    *out = a.v;
    return 0;
}

void gp_sandbox_argv_free(char **argv)
{
    for (int i = 0; argv && argv[i]; i++) {
        free(argv[i]);
    }
    free(argv);
}

bool gp_sandbox_env_kept(const gp_sandbox_layout *l, const char *entry)
{
    static const char audit[] = "LD_AUDIT=";
    return !l->paths.share_region || strncmp(entry, audit, sizeof(audit) - 1) != 0;
}

bool gp_sandbox_env_file_ok(const char *entry)
{
    size_t len = strlen(entry);
    return !strchr(entry, '\n') && !(len > 0 && entry[len - 1] == '\r');
}
