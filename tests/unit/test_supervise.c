/*
 * gpupool-run's parts without a running job: the state directory (atomic records, PID reuse
 * detection), the spec and the job's environment (gpupool's variables win, gang variables only
 * for gangs), capped logs, and cgroup files written into a directory laid out like cgroupfs.
 * tests/integ/run_supervise.sh runs the program itself.
 */
#include "agent/cgroup.h"
#include "agent/logcap.h"
#include "agent/replica_dir.h"
#include "agent/run_spec.h"
#include "agent/supervise.h"
#include "tests/unit/harness.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ---- */

static void remove_tree(const char *path)
{
    DIR *dir = opendir(path);
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        char sub[4096];
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
            remove_tree(sub);
        } else {
            unlink(sub);
        }
    }
    if (dir) {
        closedir(dir);
    }
    rmdir(path);
}

static int setup_dir(void **state)
{
    char *t = strdup("/tmp/gp-test-supervise.XXXXXX");
    if (!t || !mkdtemp(t)) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int teardown_dir(void **state)
{
    remove_tree(*state);
    free(*state);
    return 0;
}

static char *slurp(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    if (len) {
        *len = n;
    }
    return buf;
}

static void assert_file(const char *dir, const char *name, const char *want)
{
    char *got = slurp(dir, name, NULL);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static int count_entries(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        n += e->d_name[0] != '.' || strstr(e->d_name, ".tmp.") != NULL;
    }
    if (d) {
        closedir(d);
    }
    return n;
}

/* ---- replica_dir ---- */

static void test_atomic_write(void **state)
{
    const char *dir = *state;
    gp_diag d;
    assert_int_equal(gp_rdir_write_atomic(dir, "f", "first", 5, &d), 0);
    assert_file(dir, "f", "first");
    assert_int_equal(gp_rdir_write_atomic(dir, "f", "2nd", 3, &d), 0);
    assert_file(dir, "f", "2nd");
    assert_int_equal(count_entries(dir), 1); /* no temporary file left behind */
    assert_int_equal(gp_rdir_write_atomic("/nonexistent/dir", "f", "x", 1, &d), GP_EIO);
    assert_non_null(strstr(d.msg, "/nonexistent/dir"));
}

static void test_status_roundtrip(void **state)
{
    const char *dir = *state;
    gp_diag d;
    gp_rdir_status s = {.state = GP_RDIR_KILLED,
                        .job = 42,
                        .replica = 3,
                        .epoch = 9,
                        .supervisor_pid = 100,
                        .child = {101, 123456789},
                        .start_ms = 1700000000000,
                        .end_ms = 1700000005000,
                        .exit_code = 137,
                        .signal = 9,
                        .escalated = true};
    snprintf(s.reason, sizeof(s.reason), "stopped \"quoted\"");
    snprintf(s.cgroup, sizeof(s.cgroup), "/sys/fs/cgroup/gpupool/x");
    gp_rdir_status r;
    assert_int_equal(gp_rdir_read_status(dir, &r, &d), GP_ENOENT);
    assert_int_equal(gp_rdir_write_status(dir, &s, &d), 0);
    assert_int_equal(gp_rdir_read_status(dir, &r, &d), 0);
    assert_int_equal(r.state, GP_RDIR_KILLED);
    assert_int_equal(r.job, 42);
    assert_int_equal(r.replica, 3);
    assert_int_equal(r.epoch, 9);
    assert_int_equal(r.child.pid, 101);
    assert_int_equal(r.child.start, 123456789);
    assert_int_equal(r.end_ms, 1700000005000);
    assert_int_equal(r.exit_code, 137);
    assert_int_equal(r.signal, 9);
    assert_true(r.escalated);
    assert_string_equal(r.reason, "stopped \"quoted\"");
    assert_string_equal(r.cgroup, "/sys/fs/cgroup/gpupool/x");

    assert_int_equal(gp_rdir_write_atomic(dir, GP_RDIR_STATUS, "{\"state\": \"odd\"}", 16, &d), 0);
    assert_int_equal(gp_rdir_read_status(dir, &r, &d), GP_EPARSE);
    assert_int_equal(gp_rdir_write_atomic(dir, GP_RDIR_STATUS, "{", 1, &d), 0);
    assert_int_equal(gp_rdir_read_status(dir, &r, &d), GP_EPARSE);
    assert_non_null(strstr(d.msg, GP_RDIR_STATUS));
}

static void test_pid_reuse(void **state)
{
    const char *dir = *state;
    gp_diag d;
    gp_rdir_pid p;
    assert_int_equal(gp_rdir_read_pid(dir, "x.pid", &p, &d), GP_ENOENT);
    assert_int_equal(gp_rdir_write_pid(dir, "x.pid", getpid(), &d), 0);
    assert_int_equal(gp_rdir_read_pid(dir, "x.pid", &p, &d), 0);
    assert_int_equal(p.pid, getpid());
    assert_true(gp_rdir_pid_alive(&p));

    /* The same PID with another start time is another process (the PID was reused). */
    gp_rdir_pid reused = {p.pid, p.start + 1};
    assert_false(gp_rdir_pid_alive(&reused));

    /* A process that exited (and was reaped) is not alive; as a zombie it is not either. */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        _exit(0);
    }
    uint64_t start;
    bool zombie = false;
    for (int i = 0; i < 500 && !zombie; i++) {
        assert_int_equal(gp_rdir_proc_start(child, &start, &zombie), 0);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    assert_true(zombie);
    gp_rdir_pid zp = {child, start};
    assert_false(gp_rdir_pid_alive(&zp));
    waitpid(child, NULL, 0);
    assert_false(gp_rdir_pid_alive(&zp));

    assert_int_equal(gp_rdir_write_atomic(dir, "bad.pid", "garbage\n", 8, &d), 0);
    assert_int_equal(gp_rdir_read_pid(dir, "bad.pid", &p, &d), GP_EPARSE);
}

/* A process whose command line has "--state-dir DIR", as a supervisor's has, leading a process
 * group of its own; the caller kills the group and reaps it. */
static pid_t spawn_supervisor_like(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", "sleep 60; :", "sh", "--state-dir", dir, (char *)NULL);
        _exit(127);
    }
    assert_true(pid > 0);
    gp_rdir_pid found = {0, 0};
    for (int i = 0; i < 1000 && found.pid != pid; i++) { /* until it has exec'd */
        if (gp_rdir_find_supervisor(dir, &found) < 0) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    assert_int_equal(found.pid, pid);
    return pid;
}

static void test_probe(void **state)
{
    const char *dir = *state;
    gp_diag d;
    gp_rdir_view v;
    assert_int_equal(gp_rdir_probe(dir, &v, &d), 0);
    assert_int_equal(v.status.state, GP_RDIR_NONE);
    assert_false(v.supervisor_alive);

    /* A "running" record whose supervisor is gone: the agent sees it lost. */
    gp_rdir_status s = {.state = GP_RDIR_RUNNING, .job = 1};
    assert_int_equal(gp_rdir_write_status(dir, &s, &d), 0);
    assert_int_equal(gp_rdir_write_atomic(dir, GP_RDIR_SUPERVISOR_PID, "999999999 1\n", 12, &d), 0);
    assert_int_equal(gp_rdir_probe(dir, &v, &d), 0);
    assert_int_equal(v.status.state, GP_RDIR_RUNNING);
    assert_false(v.supervisor_alive);
    assert_int_equal(v.supervisor.pid, 999999999);

    /* A live process that is not a supervisor of dir (a forged record): not believed. */
    assert_int_equal(gp_rdir_write_pid(dir, GP_RDIR_SUPERVISOR_PID, getpid(), &d), 0);
    assert_int_equal(gp_rdir_probe(dir, &v, &d), 0);
    assert_false(v.supervisor_alive);

    pid_t sup = spawn_supervisor_like(dir);
    assert_int_equal(gp_rdir_write_pid(dir, GP_RDIR_SUPERVISOR_PID, sup, &d), 0);
    assert_int_equal(gp_rdir_probe(dir, &v, &d), 0);
    assert_true(v.supervisor_alive);
    assert_int_equal(v.supervisor.pid, sup);
    assert_false(v.status_unreadable);

    /* Records a job garbled: the state is unknown, the supervisor is still found. */
    assert_int_equal(gp_rdir_write_atomic(dir, GP_RDIR_STATUS, "{not json", 9, &d), 0);
    assert_int_equal(gp_rdir_write_atomic(dir, GP_RDIR_SUPERVISOR_PID, "garbage\n", 8, &d), 0);
    assert_int_equal(gp_rdir_probe(dir, &v, &d), 0);
    assert_true(v.status_unreadable);
    assert_int_equal(v.status.state, GP_RDIR_NONE);
    assert_true(v.supervisor_alive);
    assert_int_equal(v.supervisor.pid, sup);
    /* ... also when supervisor.pid names init, or is gone. */
    char init[64];
    gp_rdir_pid one = {1, 0};
    assert_int_equal(gp_rdir_proc_start(1, &one.start, NULL), 0);
    int len = snprintf(init, sizeof(init), "1 %llu\n", (unsigned long long)one.start);
    assert_int_equal(gp_rdir_write_atomic(dir, GP_RDIR_SUPERVISOR_PID, init, (size_t)len, &d), 0);
    assert_int_equal(gp_rdir_probe(dir, &v, &d), 0);
    assert_int_equal(v.supervisor.pid, sup);
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, GP_RDIR_SUPERVISOR_PID);
    unlink(path);
    assert_int_equal(gp_rdir_probe(dir, &v, &d), 0);
    assert_int_equal(v.supervisor.pid, sup);

    /* A FIFO for status.json is refused at once, not waited on. */
    snprintf(path, sizeof(path), "%s/%s", dir, GP_RDIR_STATUS);
    unlink(path);
    assert_int_equal(mkfifo(path, 0644), 0);
    gp_rdir_status st;
    assert_int_equal(gp_rdir_read_status(dir, &st, &d), GP_EIO);
    assert_int_equal(gp_rdir_probe(dir, &v, &d), 0);
    assert_true(v.status_unreadable && v.supervisor_alive);

    kill(-sup, SIGKILL);
    waitpid(sup, NULL, 0);
    assert_int_equal(gp_rdir_probe(dir, &v, &d), 0);
    assert_false(v.supervisor_alive);
}

/* ---- spec and environment ---- */

static const char *const base_env[] = {"PATH=/opt/bin:/usr/bin", "HOME=/home/u", NULL};

static gp_run_spec *parse_ok(const char *text)
{
    gp_run_spec *s = NULL;
    gp_diag d;
    gp_diag_clear(&d);
    int rc = gp_run_spec_parse(text, &s, &d);
    if (rc != 0) {
        fprintf(stderr, "parse failed: %s\n", d.msg);
    }
    assert_int_equal(rc, 0);
    return s;
}

static void assert_parse_error(const char *text, const char *field)
{
    gp_run_spec *s = (gp_run_spec *)1;
    gp_diag d;
    gp_diag_clear(&d);
    assert_true(gp_run_spec_parse(text, &s, &d) < 0);
    assert_null(s);
    if (!strstr(d.msg, field)) {
        fprintf(stderr, "error \"%s\" does not name \"%s\"\n", d.msg, field);
    }
    assert_non_null(strstr(d.msg, field));
}

static void test_spec_errors(void **state)
{
    (void)state;
    assert_parse_error("{", "line 1");
    assert_parse_error("[]", "object");
    assert_parse_error("{\"replica\":0,\"epoch\":1,\"spec\":{\"command\":[\"a\"]}}", "job");
    assert_parse_error("{\"job\":1,\"replica\":0,\"epoch\":1,\"spec\":{}}", "spec.command");
    assert_parse_error("{\"job\":1,\"replica\":0,\"epoch\":1,\"spec\":{\"command\":[\"a\",3]}}",
                       "spec.command[1]");
    assert_parse_error("{\"job\":1,\"replica\":0,\"epoch\":1,\"gpus\":[{\"uuid\":\"GPU-1\"},"
                       "{\"uuid\":\"a,b\"}],\"spec\":{\"command\":[\"a\"]}}",
                       "gpus[1].uuid");
    assert_parse_error("{\"job\":1,\"replica\":0,\"epoch\":1,\"spec\":{\"command\":[\"a\"],"
                       "\"working_dir\":\"rel\"}}",
                       "spec.working_dir");
    assert_parse_error("{\"job\":1,\"replica\":0,\"epoch\":1,\"cpu_milli\":-5,"
                       "\"spec\":{\"command\":[\"a\"]}}",
                       "cpu_milli");
    assert_parse_error("{\"job\":1,\"replica\":2,\"epoch\":1,\"world_size\":2,"
                       "\"spec\":{\"command\":[\"a\"]}}",
                       "replica");
    assert_parse_error("{\"job\":1,\"replica\":0,\"epoch\":1,\"world_size\":2,\"master_port\":1,"
                       "\"hostfile\":[\"h slots=1\"],\"spec\":{\"command\":[\"a\"]}}",
                       "master_addr");
    assert_parse_error("{\"job\":1,\"replica\":0,\"epoch\":1,\"world_size\":2,\"master_port\":1,"
                       "\"master_addr\":\"h\",\"spec\":{\"command\":[\"a\"]}}",
                       "hostfile");
    assert_parse_error("{\"job\":1,\"replica\":0,\"epoch\":1,\"world_size\":2,\"master_port\":1,"
                       "\"master_addr\":\"h\",\"hostfile\":[\"h slots=1\"],\"nproc_per_node\":0,"
                       "\"spec\":{\"command\":[\"a\"]}}",
                       "nproc_per_node");
    assert_parse_error("{\"job\":1,\"replica\":0,\"epoch\":1,\"env_extra\":{\"1X\":\"v\"},"
                       "\"spec\":{\"command\":[\"a\"]}}",
                       "env_extra.1X");
}

/* privileged: read from the replica (top level), false when absent; not a boolean refused. */
static void test_spec_privileged(void **state)
{
    (void)state;
    gp_run_spec *s = parse_ok("{\"job\":5,\"replica\":0,\"epoch\":1,\"privileged\":true,"
                              "\"spec\":{\"command\":[\"x\"]}}");
    assert_true(s->privileged);
    gp_run_spec_free(s);
    s = parse_ok("{\"job\":5,\"replica\":0,\"epoch\":1,\"spec\":{\"command\":[\"x\"],"
                 "\"privileged\":true}}"); /* the spec's copy is not what decides */
    assert_false(s->privileged);
    gp_run_spec_free(s);
    assert_parse_error("{\"job\":1,\"replica\":0,\"epoch\":1,\"privileged\":1,"
                       "\"spec\":{\"command\":[\"a\"]}}",
                       "privileged: must be true or false");
}

/* A job array's child sees its index and array (Slurm's names too, over the spec's own), and
 * shm_size_mib; a job outside an array sees none of them. */
static void test_env_array(void **state)
{
    (void)state;
    gp_run_spec *s =
        parse_ok("{\"job\":41,\"name\":\"sweep-7\",\"replica\":0,\"epoch\":1,\"array_index\":7,"
                 "\"array_job\":40,\"shm_size_mib\":2048,"
                 "\"spec\":{\"command\":[\"x\"],\"env\":{\"SLURM_ARRAY_TASK_ID\":\"99\"}}}");
    char **env = NULL;
    assert_int_equal(gp_run_env_build(s, base_env, NULL, &env), 0);
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_ARRAY_INDEX"), "7");
    assert_string_equal(gp_run_env_get(env, "SLURM_ARRAY_TASK_ID"), "7");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_ARRAY_JOB_ID"), "40");
    assert_string_equal(gp_run_env_get(env, "SLURM_ARRAY_JOB_ID"), "40");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_SHM_SIZE_MIB"), "2048");
    gp_run_env_free(env);
    gp_run_spec_free(s);
    s = parse_ok("{\"job\":5,\"replica\":0,\"epoch\":1,\"spec\":{\"command\":[\"x\"]}}");
    assert_int_equal(gp_run_env_build(s, base_env, NULL, &env), 0);
    assert_null(gp_run_env_get(env, "GPUPOOL_ARRAY_INDEX"));
    assert_null(gp_run_env_get(env, "SLURM_ARRAY_TASK_ID"));
    assert_null(gp_run_env_get(env, "GPUPOOL_SHM_SIZE_MIB"));
    gp_run_env_free(env);
    gp_run_spec_free(s);
}

static void test_env_single(void **state)
{
    (void)state;
    gp_run_spec *s = parse_ok(
        "{\"job\":5,\"name\":\"n\",\"replica\":0,\"epoch\":2,\"restart_count\":1,"
        "\"gpus\":[{\"uuid\":\"GPU-a\"},{\"uuid\":\"GPU-b\",\"mig_uuid\":\"MIG-c\"}],"
        "\"spec\":{\"command\":[\"x\"],\"env\":{\"CUDA_VISIBLE_DEVICES\":\"0\","
        "\"GPUPOOL_JOB_ID\":\"9\",\"LD_PRELOAD\":\"evil.so\",\"RANK\":\"7\",\"MINE\":\"1\","
        "\"PATH\":\"/job/bin\"}},"
        "\"env_extra\":{\"CUDA_DEVICE_MEMORY_LIMIT_0\":\"1g\",\"NVIDIA_VISIBLE_DEVICES\":\"all\"}"
        "}");
    char **env = NULL;
    assert_int_equal(gp_run_env_build(s, base_env, NULL, &env), 0);
    assert_string_equal(gp_run_env_get(env, "CUDA_VISIBLE_DEVICES"), "GPU-a,MIG-c");
    assert_string_equal(gp_run_env_get(env, "NVIDIA_VISIBLE_DEVICES"), "GPU-a,MIG-c");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_JOB_ID"), "5");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_REPLICA"), "0");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_RESTART_COUNT"), "1");
    assert_null(gp_run_env_get(env, "LD_PRELOAD"));
    assert_null(gp_run_env_get(env, "GPUPOOL_SHARE_REGION"));
    assert_null(gp_run_env_get(env, "GPUPOOL_DATA_DIR"));
    assert_string_equal(gp_run_env_get(env, "CUDA_DEVICE_MEMORY_LIMIT_0"), "1g");
    /* Not a gang: RANK is the job's own, and no gang variable is set; the replica level is
     * one node of one process per GPU. */
    assert_string_equal(gp_run_env_get(env, "RANK"), "7");
    assert_null(gp_run_env_get(env, "WORLD_SIZE"));
    assert_null(gp_run_env_get(env, "PET_NNODES"));
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_NNODES"), "1");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_NODE_RANK"), "0");
    assert_string_equal(gp_run_env_get(env, "GPUPOOL_NPROC_PER_NODE"), "2");
    assert_null(gp_run_env_get(env, "MASTER_ADDR"));
    assert_null(gp_run_env_get(env, "GPUPOOL_HOSTFILE"));
    assert_string_equal(gp_run_env_get(env, "MINE"), "1");
    assert_string_equal(gp_run_env_get(env, "PATH"), "/job/bin");
    assert_string_equal(gp_run_env_get(env, "HOME"), "/home/u");
    /* Every name once. */
    for (int i = 0; env[i]; i++) {
        for (int k = i + 1; env[k]; k++) {
            size_t len = (size_t)(strchr(env[i], '=') - env[i]);
            assert_false(strncmp(env[i], env[k], len + 1) == 0);
        }
    }
    gp_run_env_free(env);
    gp_run_spec_free(s);
}

static void test_env_gang(void **state)
{
    (void)state;
    /* Replica 1 of a 2 x 8-GPU gang, as the controller describes it. */
    char text[2048];
    int len = snprintf(text, sizeof(text), "%s",
                       "{\"job\":6,\"replica\":1,\"epoch\":1,\"world_size\":2,\"rank\":1,"
                       "\"nproc_per_node\":8,\"master_addr\":\"10.1.1.1\",\"master_port\":29506,"
                       "\"hostfile\":[\"10.1.1.1 slots=8\",{\"host\":\"10.1.1.2\",\"slots\":8}],"
                       "\"gpus\":[");
    for (int g = 0; g < 8; g++) {
        len += snprintf(text + len, sizeof(text) - (size_t)len, "%s{\"uuid\":\"GPU-%d\"}",
                        g ? "," : "", g);
    }
    snprintf(text + len, sizeof(text) - (size_t)len, "%s",
             "],\"spec\":{\"command\":[\"x\"],\"env\":{\"WORLD_SIZE\":\"1\","
             "\"MASTER_PORT\":\"1\",\"PET_NNODES\":\"5\",\"PET_RDZV_BACKEND\":\"c10d\"}},"
             "\"env_extra\":{\"RANK\":\"0\"}}");
    gp_run_spec *s = parse_ok(text);
    char **env = NULL;
    assert_int_equal(gp_run_env_build(s, base_env,
                                      &(gp_run_paths){.hostfile = "/s/hostfile",
                                                      .data_dir = "/data",
                                                      .share_library = "/lib/libgpushare.so",
                                                      .share_region = "/s/share.region"},
                                      &env),
                     0);
    static const char *const want[][2] = {
        /* the replica level */
        {"GPUPOOL_NNODES", "2"},
        {"GPUPOOL_NODE_RANK", "1"},
        {"GPUPOOL_NPROC_PER_NODE", "8"},
        /* torchrun's flags: a plain `torchrun train.py` joins the 16-process job */
        {"PET_NNODES", "2"},
        {"PET_NODE_RANK", "1"},
        {"PET_NPROC_PER_NODE", "8"},
        {"PET_MASTER_ADDR", "10.1.1.1"},
        {"PET_MASTER_PORT", "29506"},
        /* the process level, as torchrun sets it for the replica's first process */
        {"WORLD_SIZE", "16"},
        {"RANK", "8"},
        {"LOCAL_RANK", "0"},
        {"LOCAL_WORLD_SIZE", "8"},
        {"MASTER_ADDR", "10.1.1.1"},
        {"MASTER_PORT", "29506"},
        {"GPUPOOL_HOSTFILE", "/s/hostfile"},
        {"PET_RDZV_BACKEND", "c10d"}, /* not gpupool's: the job's own */
        {"GPUPOOL_DATA_DIR", "/data"},
        {"LD_PRELOAD", "/lib/libgpushare.so"},
        {"GPUPOOL_SHARE_REGION", "/s/share.region"},
        {"CUDA_VISIBLE_DEVICES", "GPU-0,GPU-1,GPU-2,GPU-3,GPU-4,GPU-5,GPU-6,GPU-7"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const char *got = gp_run_env_get(env, want[i][0]);
        if (!got || strcmp(got, want[i][1]) != 0) {
            fail_msg("%s=%s, want %s", want[i][0], got ? got : "(unset)", want[i][1]);
        }
    }
    char *hf = gp_run_hostfile_text(s);
    assert_string_equal(hf, "10.1.1.1 slots=8\n10.1.1.2 slots=8\n");
    free(hf);
    gp_run_env_free(env);
    gp_run_spec_free(s);

    /* Without nproc_per_node (an older controller): one process per GPU, at least one. */
    s = parse_ok("{\"job\":6,\"replica\":0,\"epoch\":1,\"world_size\":3,"
                 "\"master_addr\":\"h\",\"master_port\":2,\"hostfile\":[\"h slots=3\"],"
                 "\"spec\":{\"command\":[\"x\"]}}");
    assert_int_equal(gp_run_env_build(s, base_env, NULL, &env), 0);
    assert_string_equal(gp_run_env_get(env, "PET_NPROC_PER_NODE"), "1");
    assert_string_equal(gp_run_env_get(env, "WORLD_SIZE"), "3");
    assert_string_equal(gp_run_env_get(env, "RANK"), "0");
    gp_run_env_free(env);
    gp_run_spec_free(s);
}

static void test_env_base(void **state)
{
    (void)state;
    char *const environ_[] = {"PATH=/p", "SECRET_TOKEN=x", "LANG=C.UTF-8", "HOME=/root", NULL};
    char **base = NULL;
    assert_int_equal(gp_run_env_base(environ_, "alice", "/home/alice", "/bin/sh", &base), 0);
    assert_string_equal(gp_run_env_get(base, "PATH"), "/p");
    assert_string_equal(gp_run_env_get(base, "LANG"), "C.UTF-8");
    assert_string_equal(gp_run_env_get(base, "HOME"), "/home/alice");
    assert_string_equal(gp_run_env_get(base, "USER"), "alice");
    assert_null(gp_run_env_get(base, "SECRET_TOKEN")); /* the agent's secrets stay out */
    gp_run_env_free(base);
}

static void test_user(void **state)
{
    (void)state;
    gp_sup_user u;
    gp_diag d;
    assert_int_equal(gp_sup_user_resolve(NULL, &u, &d), 0);
    assert_false(u.change);
    assert_int_equal(u.uid, geteuid());
    assert_int_equal(gp_sup_user_resolve("no-such-user-gp", &u, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "--user no-such-user-gp"));
}

/* ---- logcap ---- */

static void touch(const char *dir, const char *name);

static void test_logcap(void **state)
{
    const char *dir = *state;
    char path[4096], input[1000];
    snprintf(path, sizeof(path), "%s/out.log", dir);
    for (size_t i = 0; i < sizeof(input); i++) {
        input[i] = (char)('a' + i % 26);
    }
    gp_logcap lc;
    gp_diag d;
    assert_int_equal(gp_logcap_open(&lc, path, 100, &d), 0);
    for (size_t off = 0; off < sizeof(input); off += 7) {
        size_t n = sizeof(input) - off < 7 ? sizeof(input) - off : 7;
        assert_int_equal(gp_logcap_write(&lc, input + off, n, 1000 + (int64_t)off, &d), 0);
    }
    gp_logcap_close(&lc);
    size_t cur, old;
    char *c = slurp(dir, "out.log", &cur), *o = slurp(dir, "out.log.1", &old);
    assert_non_null(c);
    assert_non_null(o);
    assert_true(cur <= 100 && old == 100);
    /* .1 then the current file are the last old + cur bytes written. */
    assert_memory_equal(o, input + sizeof(input) - cur - old, old);
    assert_memory_equal(c, input + sizeof(input) - cur, cur);
    free(c);
    free(o);

    /* A write larger than the cap, into a file that already holds some: still capped. */
    assert_int_equal(gp_logcap_open(&lc, path, 100, &d), 0);
    assert_int_equal(lc.size, (int64_t)cur);
    assert_int_equal(gp_logcap_write(&lc, input, 350, 5000, &d), 0);
    gp_logcap_close(&lc);
    c = slurp(dir, "out.log", &cur);
    assert_true(cur <= 100);
    free(c);

    /* No cap. */
    snprintf(path, sizeof(path), "%s/free.log", dir);
    assert_int_equal(gp_logcap_open(&lc, path, 0, &d), 0);
    assert_int_equal(gp_logcap_write(&lc, input, sizeof(input), 6000, &d), 0);
    gp_logcap_close(&lc);
    free(slurp(dir, "free.log", &cur));
    assert_int_equal(cur, sizeof(input));

    /* The times of lines: one record per write that starts a line, at that line's offset. */
    snprintf(path, sizeof(path), "%s/t.log", dir);
    assert_int_equal(gp_logcap_open(&lc, path, 0, &d), 0);
    assert_int_equal(gp_logcap_write(&lc, "ab\ncd", 5, 1000, &d), 0);
    assert_int_equal(gp_logcap_write(&lc, "e\nf\n", 4, 2000, &d), 0);
    assert_int_equal(gp_logcap_write(&lc, "g", 1, 3000, &d), 0);
    assert_int_equal(gp_logcap_write(&lc, "h", 1, 4000, &d), 0);
    gp_logcap_close(&lc);
    c = slurp(dir, "t.log.times", &cur);
    assert_non_null(c);
    assert_string_equal(c, GP_LOGCAP_TIMES_MAGIC "0 1000\n7 2000\n9 3000\n");
    free(c);
    /* reopened mid-line: the next line starts after the next newline */
    assert_int_equal(gp_logcap_open(&lc, path, 0, &d), 0);
    assert_int_equal(gp_logcap_write(&lc, "i\nj", 3, 5000, &d), 0);
    gp_logcap_close(&lc);
    c = slurp(dir, "t.log.times", &cur);
    assert_string_equal(c, GP_LOGCAP_TIMES_MAGIC "0 1000\n7 2000\n9 3000\n13 5000\n");
    free(c);

    /* a times file replaced by a link (a job of --runtime none can write its replica
     * directory) is not followed: the output is kept, its times are not */
    char target[4096], link[4096];
    snprintf(target, sizeof(target), "%s/elsewhere", dir);
    snprintf(link, sizeof(link), "%s/l.log.times", dir);
    touch(dir, "elsewhere");
    assert_int_equal(symlink(target, link), 0);
    snprintf(path, sizeof(path), "%s/l.log", dir);
    assert_int_equal(gp_logcap_open(&lc, path, 0, &d), 0);
    assert_int_equal(gp_logcap_write(&lc, "x\n", 2, 1000, &d), 0);
    gp_logcap_close(&lc);
    c = slurp(dir, "elsewhere", &cur);
    assert_int_equal(cur, 0);
    free(c);
    free(slurp(dir, "l.log", &cur));
    assert_int_equal(cur, 2);
}

/* ---- cgroup, on a directory laid out like cgroupfs ---- */

static void touch(const char *dir, const char *name)
{
    char p[8192];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static void test_cgroup_v2(void **state)
{
    const char *root = *state;
    gp_cgroup cg;
    gp_diag d;
    assert_int_equal(gp_cgroup_create(&cg, root, "r1", 500, 256, &d), GP_ENOTSUP);
    assert_int_equal(cg.version, GP_CGROUP_NONE);
    touch(root, "cgroup.controllers");
    assert_int_equal(gp_cgroup_detect(root), GP_CGROUP_V2);
    assert_int_equal(gp_cgroup_create(&cg, root, "r1", 0, 0, &d), 0);
    assert_int_equal(cg.version, GP_CGROUP_NONE);
    assert_int_equal(gp_cgroup_create(&cg, root, "r1", 1500, 256, &d), 0);
    assert_int_equal(cg.version, GP_CGROUP_V2);
    assert_int_equal(cg.ndirs, 1);
    char leaf[4096];
    snprintf(leaf, sizeof(leaf), "%s/gpupool/r1", root);
    assert_string_equal(cg.dirs[0], leaf);
    assert_file(leaf, "cpu.max", "150000 100000");
    assert_file(leaf, "memory.max", "268435456");
    assert_int_equal(gp_cgroup_add(&cg, 4242, &d), 0);
    assert_file(leaf, "cgroup.procs", "4242");
    /* The same name again fails (the directory exists) and leaves the first alone. */
    gp_cgroup again;
    assert_int_equal(gp_cgroup_create(&again, root, "r1", 100, 0, &d), GP_EIO);
    assert_file(leaf, "cpu.max", "150000 100000");
}

static void test_cgroup_v1(void **state)
{
    const char *root = *state;
    char p[4096];
    snprintf(p, sizeof(p), "%s/memory", root);
    assert_int_equal(mkdir(p, 0755), 0);
    touch(p, "cgroup.procs");
    snprintf(p, sizeof(p), "%s/cpu", root);
    assert_int_equal(mkdir(p, 0755), 0);
    touch(p, "cgroup.procs");
    assert_int_equal(gp_cgroup_detect(root), GP_CGROUP_V1);
    gp_cgroup cg;
    gp_diag d;
    assert_int_equal(gp_cgroup_create(&cg, root, "r2", 250, 0, &d), 0); /* CPU only */
    assert_int_equal(cg.ndirs, 1);
    snprintf(p, sizeof(p), "%s/cpu/gpupool/r2", root);
    assert_file(p, "cpu.cfs_quota_us", "25000");
    assert_file(p, "cpu.cfs_period_us", "100000");
    assert_int_equal(gp_cgroup_create(&cg, root, "r3", 250, 64, &d), 0);
    assert_int_equal(cg.ndirs, 2);
    snprintf(p, sizeof(p), "%s/memory/gpupool/r3", root);
    assert_file(p, "memory.limit_in_bytes", "67108864");
    char desc[4096];
    gp_cgroup_describe(&cg, desc, sizeof(desc));
    assert_non_null(strstr(desc, "/cpu/gpupool/r3,"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_atomic_write, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_status_roundtrip, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_pid_reuse, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_probe, setup_dir, teardown_dir),
        cmocka_unit_test(test_spec_errors),
        cmocka_unit_test(test_spec_privileged),
        cmocka_unit_test(test_env_single),
        cmocka_unit_test(test_env_array),
        cmocka_unit_test(test_env_gang),
        cmocka_unit_test(test_env_base),
        cmocka_unit_test(test_user),
        cmocka_unit_test_setup_teardown(test_logcap, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_cgroup_v2, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_cgroup_v1, setup_dir, teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
