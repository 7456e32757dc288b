/* The sandbox's layout and podman command line (sandbox.h), read back argument by argument: what
 * the job sees, who it runs as, what it is denied; the container's name; the runtime's choice
 * for each cgroup mode (runtime.h) and the cgroup mode from a directory laid out like one. */
#include "agent/cgroup.h"
#include "agent/runtime.h"
#include "agent/sandbox.h"
#include "agent/seccomp.h"
#include "tests/unit/harness.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *cmd_echo[] = {"sh", "-c", "echo hi", NULL};

/* The index of the argument equal to a (from index from), -1 when absent. */
static int arg_at(char **argv, const char *a, int from)
{
    for (int i = from; argv[i]; i++) {
        if (strcmp(argv[i], a) == 0) {
            return i;
        }
    }
    return -1;
}

static bool has(char **argv, const char *a)
{
    return arg_at(argv, a, 0) >= 0;
}

/* Whether argv has flag immediately followed by value. */
static bool has_pair(char **argv, const char *flag, const char *value)
{
    for (int i = arg_at(argv, flag, 0); i >= 0; i = arg_at(argv, flag, i + 1)) {
        if (argv[i + 1] && strcmp(argv[i + 1], value) == 0) {
            return true;
        }
    }
    return false;
}

static bool any_contains(char **argv, const char *text)
{
    for (int i = 0; argv[i]; i++) {
        if (strstr(argv[i], text)) {
            return true;
        }
    }
    return false;
}

static gp_sandbox_node node(void)
{
    static const char *const masks[] = {"/var/lib/gpupool-agent", "/etc/gpupool/join.token"};
    return (gp_sandbox_node){.podman = "/usr/bin/podman",
                             .oci_runtime = "/usr/sbin/runc",
                             .cgroup_manager = "cgroupfs",
                             .init_path = "/usr/libexec/podman/catatonit",
                             .hostname = "gpu-07",
                             .nofile = {1024, 4096},
                             .nproc = {-1, -1},
                             .pids_limit = 4096,
                             .masks = masks,
                             .nmasks = 2};
}

static gp_sandbox_job job(void)
{
    return (gp_sandbox_job){.name = "gpupool-7-0-1-deadbeef",
                            .state_dir = "/var/lib/gpupool-agent/replicas/7-0-1",
                            .cgroup_parent = "/gpupool/job7-r0-e1-p42",
                            .env_file = "/var/lib/gpupool-agent/replicas/7-0-1/env",
                            .uid = 65534,
                            .gid = 65534,
                            .grace_s = 10};
}

static gp_run_spec spec(void)
{
    return (gp_run_spec){.job = 7, .replica = 0, .epoch = 1, .world_size = 1, .argv = cmd_echo};
}

static const gp_sandbox_host host = {.workdir = "/var/lib/gpupool-agent/replicas/7-0-1/work"};

static char **build(const gp_sandbox_node *n, const gp_sandbox_job *j, const gp_run_spec *s,
                    gp_sandbox_layout *l)
{
    gp_diag d;
    gp_diag_clear(&d);
    assert_int_equal(gp_sandbox_layout_make(s, &host, l, &d), 0);
    char **argv = NULL;
    assert_int_equal(gp_sandbox_argv(n, j, s, l, &argv, &d), 0);
    return argv;
}

/* The confinement every job gets, over the host root: a read-only overlay with fresh tmpfs, the
 * agent's files masked, the command after the rootfs. */
static void test_host_root(void **state)
{
    (void)state;
    gp_sandbox_node n = node();
    gp_sandbox_job j = job();
    gp_run_spec s = spec();
    gp_sandbox_layout l;
    char **a = build(&n, &j, &s, &l);
    assert_string_equal(a[0], "/usr/bin/podman");
    assert_true(has_pair(a, "--runtime", "/usr/sbin/runc"));
    assert_true(has_pair(a, "--cgroup-manager", "cgroupfs"));
    assert_true(arg_at(a, "run", 0) > arg_at(a, "--cgroup-manager", 0));
    assert_true(has(a, "--user=65534:65534"));
    assert_true(has_pair(a, "--cap-drop", "all"));
    assert_true(has_pair(a, "--security-opt", "no-new-privileges"));
    assert_true(has_pair(a, "--pid", "private"));
    assert_true(has_pair(a, "--ipc", "private"));
    assert_true(has_pair(a, "--uts", "private"));
    assert_true(has_pair(a, "--network", "host"));
    assert_true(has_pair(a, "--hostname", "gpu-07"));
    assert_true(has_pair(a, "--ulimit", "nofile=1024:4096"));
    assert_true(has_pair(a, "--ulimit", "nproc=-1:-1"));
    assert_true(has(a, "--pids-limit=4096"));
    assert_true(has(a, "--shm-size=1024m")); /* no memory limit */
    assert_true(has_pair(a, "--cgroup-parent", "/gpupool/job7-r0-e1-p42"));
    assert_true(has_pair(a, "--name", "gpupool-7-0-1-deadbeef"));
    assert_true(has(a, "--rm"));
    assert_true(has_pair(a, "--pull", "never"));
    assert_true(has_pair(a, "--log-driver", "passthrough"));
    assert_true(has(a, "--stop-timeout=10"));
    assert_true(has(a, "--init"));
    assert_true(has_pair(a, "--init-path", "/usr/libexec/podman/catatonit"));
    assert_true(has(a, "--label=gpupool.job=7"));
    assert_true(has(a, "--label=gpupool.epoch=1"));
    assert_true(has(a, "--label=gpupool.state-dir=/var/lib/gpupool-agent/replicas/7-0-1"));
    assert_true(has_pair(a, "--env-file", "/var/lib/gpupool-agent/replicas/7-0-1/env"));
    /* not a fraction: its environment as it asked */
    assert_false(has(a, "--unsetenv"));
    assert_true(gp_sandbox_env_kept(&l, "LD_AUDIT=/opt/audit.so"));
    /* the host's root, read-only, with its own temporary directories */
    assert_true(has(a, "--read-only"));
    assert_true(has(a, "--read-only-tmpfs=false"));
    assert_true(has(a, "--mount=type=tmpfs,destination=/tmp,notmpcopyup"));
    assert_true(has(a, "--mount=type=tmpfs,destination=/run,notmpcopyup"));
    assert_true(
        has_pair(a, "--security-opt", "mask=/var/lib/gpupool-agent:/etc/gpupool/join.token"));
    assert_true(has(a, "--mount=type=bind,source=/var/lib/gpupool-agent/replicas/7-0-1/work,"
                       "destination=/gpupool/work"));
    assert_true(has_pair(a, "--workdir", "/gpupool/work"));
    int rootfs = arg_at(a, "--rootfs", 0);
    assert_true(rootfs > 0);
    assert_string_equal(a[rootfs + 1], "/:O");
    assert_string_equal(a[rootfs + 2], "sh");
    assert_string_equal(a[rootfs + 4], "echo hi");
    assert_null(a[rootfs + 5]);
    /* nothing that would loosen it */
    assert_false(any_contains(a, "privileged"));
    assert_false(any_contains(a, "unconfined"));
    assert_false(any_contains(a, "--cap-add"));
    assert_false(any_contains(a, "--userns=host"));
    assert_false(any_contains(a, "--pid=host"));
    gp_sandbox_argv_free(a);
}

/* An image job: the image's root (writable layer, no masks, no --read-only), its own working
 * directory in the image, the private network, limits from the request. */
static void test_image(void **state)
{
    (void)state;
    gp_sandbox_node n = node();
    n.init_path = NULL;
    gp_sandbox_job j = job();
    gp_run_spec s = spec();
    s.image = "registry.local:5000/team/pytorch:2.1";
    s.working_dir = "/workspace";
    s.network_private = 1;
    s.memory_mib = 4096;
    s.cpu_milli = 1500;
    gp_sandbox_layout l;
    char **a = build(&n, &j, &s, &l);
    assert_null(l.paths.checkpoint_dir);
    assert_string_equal(l.workdir, "/workspace");
    assert_true(has_pair(a, "--workdir", "/workspace"));
    assert_false(any_contains(a, "destination=/workspace")); /* a directory of the image */
    assert_true(has_pair(a, "--network", "slirp4netns:allow_host_loopback=false"));
    assert_false(has(a, "--hostname"));
    assert_true(has(a, "--memory=4096m"));
    assert_true(has(a, "--cpus=1.500"));
    assert_true(has(a, "--shm-size=2048m"));
    assert_false(has(a, "--read-only"));
    assert_false(has(a, "--rootfs"));
    assert_false(any_contains(a, "mask="));
    assert_false(has(a, "--init"));
    int img = arg_at(a, "registry.local:5000/team/pytorch:2.1", 0);
    assert_true(img > arg_at(a, "--workdir", 0));
    assert_string_equal(a[img + 1], "sh");
    gp_sandbox_argv_free(a);
    /* without a working_dir: the image's */
    s.working_dir = NULL;
    a = build(&n, &j, &s, &l);
    assert_null(l.workdir);
    assert_false(has(a, "--workdir"));
    gp_sandbox_argv_free(a);
    /* the spec's shm_size_mib sizes /dev/shm, whatever the memory limit */
    s.shm_size_mib = 8192;
    a = build(&n, &j, &s, &l);
    assert_true(has(a, "--shm-size=8192m"));
    assert_false(has(a, "--shm-size=2048m"));
    gp_sandbox_argv_free(a);
}

/* What a job sees: its work directory, checkpoint, volumes (read-only where asked), a gang's
 * hostfile, a fraction's region and library with a read-only ld.so.preload. */
static void test_mounts(void **state)
{
    (void)state;
    gp_run_volume vols[] = {{"imagenet", "/srv/imagenet", 1}, {"ckpt", "/srv/ckpt", 0}};
    gp_run_spec s = spec();
    s.working_dir = "/home/alice/project";
    s.volumes = vols;
    s.nvolumes = 2;
    gp_sandbox_host h = {.workdir = "/st/r/work",
                         .checkpoint = "/st/checkpoints/7",
                         .hostfile = "/st/r/hostfile",
                         .share_region = "/st/r/share.region",
                         .share_limits = "/st/r/share.region.limits",
                         .share_library = "/usr/lib/gpupool/libgpushare.so",
                         .preload = "/st/r/ld.so.preload"};
    gp_sandbox_layout l;
    gp_diag d;
    assert_int_equal(gp_sandbox_layout_make(&s, &h, &l, &d), 0);
    gp_sandbox_node n = node();
    gp_sandbox_job j = job();
    char **a = NULL;
    assert_int_equal(gp_sandbox_argv(&n, &j, &s, &l, &a, &d), 0);
    const char *want[] = {
        "--mount=type=bind,source=/st/r/work,destination=/gpupool/work",
        "--mount=type=bind,source=/home/alice/project,destination=/home/alice/project",
        "--mount=type=bind,source=/st/checkpoints/7,destination=/gpupool/checkpoint",
        "--mount=type=bind,source=/st/r/hostfile,destination=/gpupool/hostfile,ro=true",
        "--mount=type=bind,source=/st/r/share.region,destination=/run/gpupool/share.region",
        ("--mount=type=bind,source=/st/r/share.region.limits,"
         "destination=/run/gpupool/share.region.limits,ro=true"),
        ("--mount=type=bind,source=/usr/lib/gpupool/libgpushare.so,"
         "destination=/gpupool/lib/libgpushare.so,ro=true"),
        "--mount=type=bind,source=/st/r/ld.so.preload,destination=/etc/ld.so.preload,ro=true",
        "--mount=type=bind,source=/srv/imagenet,destination=/data/imagenet,ro=true",
        "--mount=type=bind,source=/srv/ckpt,destination=/data/ckpt",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (!has(a, want[i])) {
            fail_msg("missing %s", want[i]);
        }
    }
    assert_true(has_pair(a, "--workdir", "/home/alice/project"));
    assert_string_equal(l.paths.checkpoint_dir, "/gpupool/checkpoint");
    assert_string_equal(l.paths.hostfile, "/gpupool/hostfile");
    /* Where libgpushare looks whatever the environment says (a process started with env -i). */
    assert_string_equal(l.paths.share_region, GP_SHARE_REGION_DEFAULT);
    assert_true(has_pair(a, "--unsetenv", "LD_AUDIT"));
    assert_false(gp_sandbox_env_kept(&l, "LD_AUDIT=/tmp/evil.so"));
    assert_true(gp_sandbox_env_kept(&l, "LD_AUDITX=1"));
    assert_true(gp_sandbox_env_kept(&l, "PATH=/bin"));
    assert_string_equal(l.paths.share_library, "/gpupool/lib/libgpushare.so");
    assert_string_equal(l.paths.data_dir, "/data");
    gp_sandbox_argv_free(a);
}

/* What cannot be passed to podman safely is refused, naming it. */
/* A tenant's range (idmap.h): the container's ids 0..size-1 are the tenant's host ids, given
 * before the image; without one, no user namespace. */
static void test_userns(void **state)
{
    (void)state;
    gp_sandbox_node n = node();
    gp_sandbox_job j = job();
    gp_run_spec s = spec();
    s.image = "reg/x:1";
    gp_sandbox_layout l;
    char **a = build(&n, &j, &s, &l);
    for (int i = 0; a[i]; i++) {
        assert_null(strstr(a[i], "map="));
    }
    gp_sandbox_argv_free(a);
    j.userns = (gp_idmap){1073807360, 65536};
    a = build(&n, &j, &s, &l);
    int u = arg_at(a, "--uidmap=0:1073807360:65536", 0);
    int g = arg_at(a, "--gidmap=0:1073807360:65536", 0);
    assert_true(u > 0 && g > 0 && has(a, "--user=65534:65534"));
    assert_true(u < arg_at(a, "reg/x:1", 0) && g < arg_at(a, "reg/x:1", 0));
    gp_sandbox_argv_free(a);
}

/* A privileged job: --privileged and nothing that takes it back (no --cap-drop, no
 * no-new-privileges, no seccomp profile); its user namespace, user, namespaces and limits stay.
 * Any other job never gets --privileged. */
static void test_privileged(void **state)
{
    (void)state;
    gp_sandbox_node n = node();
    n.seccomp = "/var/lib/gpupool-agent/seccomp.json";
    gp_sandbox_job j = job();
    j.userns = (gp_idmap){1073807360, 65536};
    gp_run_spec s = spec();
    s.image = "reg/x:1";
    gp_sandbox_layout l;
    char **a = build(&n, &j, &s, &l);
    assert_false(has(a, "--privileged"));
    assert_true(has_pair(a, "--cap-drop", "all"));
    assert_true(any_contains(a, "seccomp="));
    gp_sandbox_argv_free(a);
    s.privileged = 1;
    a = build(&n, &j, &s, &l);
    assert_true(has(a, "--privileged"));
    assert_true(arg_at(a, "--privileged", 0) < arg_at(a, "reg/x:1", 0));
    assert_false(has(a, "--cap-drop"));
    assert_false(has_pair(a, "--security-opt", "no-new-privileges"));
    assert_false(any_contains(a, "seccomp"));
    assert_true(has(a, "--uidmap=0:1073807360:65536") && has(a, "--user=65534:65534"));
    assert_true(has_pair(a, "--pid", "private") && has_pair(a, "--ipc", "private"));
    assert_true(has(a, "--pids-limit=4096"));
    assert_true(has_pair(a, "--cgroup-parent", "/gpupool/job7-r0-e1-p42"));
    gp_sandbox_argv_free(a);
}

static void test_refused(void **state)
{
    (void)state;
    gp_run_volume vols[] = {{"x", "/srv/a,ro=false", 0}};
    gp_run_spec s = spec();
    s.volumes = vols;
    s.nvolumes = 1;
    gp_sandbox_layout l;
    gp_diag d;
    assert_int_equal(gp_sandbox_layout_make(&s, &host, &l, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "volumes[0].path"));
    s = spec();
    s.image = "--privileged";
    gp_sandbox_node n = node();
    gp_sandbox_job j = job();
    char **a = NULL;
    assert_int_equal(gp_sandbox_layout_make(&s, &host, &l, &d), 0);
    assert_int_equal(gp_sandbox_argv(&n, &j, &s, &l, &a, &d), GP_EINVAL);
    assert_null(a);
    assert_non_null(strstr(d.msg, "image"));
    s.image = NULL;
    static const char *const bad[] = {"/a:b"};
    n.masks = bad;
    n.nmasks = 1;
    assert_int_equal(gp_sandbox_argv(&n, &j, &s, &l, &a, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "mask"));
}

/* Variables that the env file cannot carry go on the command line; device arguments (CDI) are
 * passed through. */
static void test_env_and_devices(void **state)
{
    (void)state;
    assert_true(gp_sandbox_env_file_ok("A=plain value = with = signs"));
    assert_false(gp_sandbox_env_file_ok("PEM=line1\nline2"));
    assert_false(gp_sandbox_env_file_ok("CR=ends\r"));
    char *extra[] = {"PEM=line1\nline2", NULL};
    const char *devices[] = {"--device", "nvidia.com/gpu=GPU-1", NULL};
    gp_sandbox_node n = node();
    gp_sandbox_job j = job();
    j.env_args = extra;
    j.device_args = devices;
    gp_run_spec s = spec();
    gp_sandbox_layout l;
    char **a = build(&n, &j, &s, &l);
    assert_true(has_pair(a, "--env", "PEM=line1\nline2"));
    assert_true(has_pair(a, "--device", "nvidia.com/gpu=GPU-1"));
    gp_sandbox_argv_free(a);
}

static void test_name(void **state)
{
    (void)state;
    char a[GP_SANDBOX_NAME_MAX], b[GP_SANDBOX_NAME_MAX], c[GP_SANDBOX_NAME_MAX];
    gp_sandbox_name(12, 3, 45, "/var/lib/a/replicas/12-3-45", a);
    gp_sandbox_name(12, 3, 45, "/var/lib/a/replicas/12-3-45", b);
    gp_sandbox_name(12, 3, 45, "/var/lib/b/replicas/12-3-45", c);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c); /* two agents on one machine */
    assert_int_equal(strncmp(a, "gpupool-12-3-45-", 16), 0);
    assert_int_equal(strlen(a), 16 + 8);
}

/* The OCI runtime and manager for each cgroup mode. */
static void test_choose(void **state)
{
    (void)state;
    const char *oci, *mgr;
    char why[200];
    assert_int_equal(gp_runtime_choose(GP_CGMODE_V2, true, true, &oci, &mgr, why, sizeof(why)), 0);
    assert_string_equal(oci, "crun");
    assert_string_equal(mgr, "cgroupfs");
    assert_int_equal(gp_runtime_choose(GP_CGMODE_V2, true, false, &oci, &mgr, why, sizeof(why)), 0);
    assert_string_equal(oci, "runc");
    assert_int_equal(gp_runtime_choose(GP_CGMODE_HYBRID, true, true, &oci, &mgr, why, sizeof(why)),
                     0);
    assert_string_equal(oci, "runc");
    assert_int_equal(gp_runtime_choose(GP_CGMODE_V1, true, false, &oci, &mgr, why, sizeof(why)), 0);
    assert_string_equal(oci, "runc");
    assert_int_equal(gp_runtime_choose(GP_CGMODE_HYBRID, false, true, &oci, &mgr, why, sizeof(why)),
                     GP_ENOENT);
    assert_non_null(strstr(why, "runc not found"));
    assert_int_equal(gp_runtime_choose(GP_CGMODE_V2, false, false, &oci, &mgr, why, sizeof(why)),
                     GP_ENOENT);
    assert_int_equal(gp_runtime_choose(GP_CGMODE_NONE, true, true, &oci, &mgr, why, sizeof(why)),
                     GP_ENOENT);
}

static void touch(const char *root, const char *rel)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
    assert_int_equal(system(cmd), 0);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

/* The cgroup mode from the files of a directory laid out like /sys/fs/cgroup. */
static void test_cgroup_mode(void **state)
{
    (void)state;
    char root[] = "/tmp/gpupool-cgmode.XXXXXX";
    assert_non_null(mkdtemp(root));
    assert_int_equal(gp_runtime_cgroup_mode(root), GP_CGMODE_NONE);
    touch(root, "memory/cgroup.procs");
    assert_int_equal(gp_runtime_cgroup_mode(root), GP_CGMODE_V1);
    touch(root, "unified/cgroup.controllers");
    assert_int_equal(gp_runtime_cgroup_mode(root), GP_CGMODE_HYBRID);
    touch(root, "cgroup.controllers");
    assert_int_equal(gp_runtime_cgroup_mode(root), GP_CGMODE_V2);
    assert_string_equal(gp_cgroup_mode_name(GP_CGMODE_HYBRID), "hybrid");
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static bool dir_exists(const char *root, const char *rel)
{
    char path[512];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* What podman's runtime leaves of a replica's cgroup in every hierarchy goes, deepest first;
 * another replica's stays. */
static void test_cgroup_remove_named(void **state)
{
    (void)state;
    char root[] = "/tmp/gpupool-cgnamed.XXXXXX";
    assert_non_null(mkdtemp(root));
    touch(root, "cpu/gpupool/job1-r0-e1-p9/libpod-abc/x");
    touch(root, "memory/gpupool/job1-r0-e1-p9/conmon/x");
    touch(root, "unified/gpupool/job1-r0-e1-p9/libpod-abc/x");
    touch(root, "memory/gpupool/job2-r0-e1-p7/x");
    char cmd[600]; /* cgroupfs has no files to delete: here only the directories are left */
    snprintf(cmd, sizeof(cmd), "find '%s' -type f -delete", root);
    assert_int_equal(system(cmd), 0);
    char desc[512];
    gp_cgroup_describe_named(root, "job1-r0-e1-p9", desc, sizeof(desc));
    char want[600];
    snprintf(want, sizeof(want), "%s/cpu/gpupool/job1-r0-e1-p9,%s/memory/gpupool/job1-r0-e1-p9",
             root, root);
    assert_string_equal(desc, want);
    gp_cgroup_remove_named(root, "job1-r0-e1-p9");
    assert_false(dir_exists(root, "cpu/gpupool/job1-r0-e1-p9"));
    assert_false(dir_exists(root, "memory/gpupool/job1-r0-e1-p9"));
    assert_false(dir_exists(root, "unified/gpupool/job1-r0-e1-p9"));
    assert_true(dir_exists(root, "memory/gpupool/job2-r0-e1-p7"));
    assert_true(dir_exists(root, "cpu/gpupool"));
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* The registration's runtime: null without one. */
/* The sandbox's seccomp profile: podman's default less unshare, setns, the mount family and
 * clone with namespace flags; clone3 answered ENOSYS; anything else as it was. */
static void test_seccomp(void **state)
{
    (void)state;
    const char *in = "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": ["
                     "{\"names\": [\"read\", \"clone\", \"clone3\", \"unshare\", \"mount\","
                     " \"setns\", \"write\"], \"action\": \"SCMP_ACT_ALLOW\"}]}";
    char *out = NULL;
    gp_diag d;
    assert_int_equal(gp_seccomp_confine(in, strlen(in), &out, &d), 0);
    json_t *p = json_loads(out, 0, NULL);
    assert_non_null(p);
    json_t *rules = json_object_get(p, "syscalls");
    assert_int_equal(json_array_size(rules), 3);
    json_t *names = json_object_get(json_array_get(rules, 0), "names");
    assert_int_equal(json_array_size(names), 2); /* read, write */
    assert_string_equal(json_string_value(json_array_get(names, 0)), "read");
    assert_string_equal(json_string_value(json_array_get(names, 1)), "write");
    json_t *clone = json_array_get(rules, 1),
           *arg = json_array_get(json_object_get(clone, "args"), 0);
    assert_string_equal(json_string_value(json_array_get(json_object_get(clone, "names"), 0)),
                        "clone");
    assert_string_equal(json_string_value(json_object_get(clone, "action")), "SCMP_ACT_ALLOW");
    assert_int_equal(json_integer_value(json_object_get(arg, "value")), 0x7E020000);
    assert_int_equal(json_integer_value(json_object_get(arg, "valueTwo")), 0);
    assert_string_equal(json_string_value(json_object_get(arg, "op")), "SCMP_CMP_MASKED_EQ");
    json_t *clone3 = json_array_get(rules, 2);
    assert_string_equal(json_string_value(json_object_get(clone3, "action")), "SCMP_ACT_ERRNO");
    assert_int_equal(json_integer_value(json_object_get(clone3, "errnoRet")), 38);
    json_decref(p);
    free(out);
    /* not a profile that refuses by default: refused, never passed on */
    const char *lax = "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": []}";
    assert_int_equal(gp_seccomp_confine(lax, strlen(lax), &out, &d), GP_EINVAL);
    assert_null(out);
    assert_int_equal(gp_seccomp_confine("{", 1, &out, &d), GP_EINVAL);
    /* podman's own, where it is installed, still parses and gets the rules */
    if (access(GP_SECCOMP_DEFAULT, R_OK) == 0) {
        char path[] = "/tmp/gpupool-seccomp-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(gp_seccomp_write(NULL, path, &d), 0);
        json_t *mine = json_load_file(path, 0, NULL);
        assert_non_null(mine);
        char *text = json_dumps(mine, JSON_COMPACT);
        assert_null(strstr(text, "\"unshare\""));
        assert_non_null(strstr(text, "SCMP_CMP_MASKED_EQ"));
        free(text);
        json_decref(mine);
        unlink(path);
    }
}

static void test_runtime_json(void **state)
{
    (void)state;
    gp_runtime rt;
    memset(&rt, 0, sizeof(rt));
    json_t *j = gp_runtime_json(&rt);
    assert_true(json_is_null(j));
    json_decref(j);
    rt.ok = true;
    snprintf(rt.version, sizeof(rt.version), "4.3.1");
    snprintf(rt.oci_runtime, sizeof(rt.oci_runtime), "runc");
    rt.cgroups = GP_CGMODE_HYBRID;
    j = gp_runtime_json(&rt);
    char *text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(text, "{\"cgroups\":\"hybrid\",\"engine\":\"podman\",\"oci_runtime\":"
                              "\"runc\",\"version\":\"4.3.1\"}");
    free(text);
    json_decref(j);
}

/* A notebook (or service) gets a network namespace of its own through slirp4netns, never the
 * host network nor podman's bridge, and the node's loopback stays out of its reach. */
static void test_notebook_network(void **state)
{
    (void)state;
    gp_sandbox_node n = node();
    gp_sandbox_job j = job();
    gp_run_spec s = spec();
    s.own_netns = 1;
    s.port = 8888;
    gp_sandbox_layout l;
    char **a = build(&n, &j, &s, &l);
    assert_true(has_pair(a, "--network", "slirp4netns:allow_host_loopback=false"));
    assert_false(has_pair(a, "--network", "host"));
    assert_false(has(a, "--hostname"));
    gp_sandbox_argv_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_root),
        cmocka_unit_test(test_image),
        cmocka_unit_test(test_notebook_network),
        cmocka_unit_test(test_mounts),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_env_and_devices),
        cmocka_unit_test(test_name),
        cmocka_unit_test(test_choose),
        cmocka_unit_test(test_cgroup_mode),
        cmocka_unit_test(test_runtime_json),
        cmocka_unit_test(test_cgroup_remove_named),
        cmocka_unit_test(test_seccomp),
        cmocka_unit_test(test_userns),
        cmocka_unit_test(test_privileged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
