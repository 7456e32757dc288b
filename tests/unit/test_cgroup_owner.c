/*
 * Which replica a process belongs to by its cgroup (cgroup.h): the replica's group names as the
 * supervisor writes them, the paths of /proc/PID/cgroup in cgroup v1, v2 and hybrid form, below
 * a container's namespace root and with the container's own groups under the replica's, a group
 * the job made below its own that looks like another replica's (never taken), and names that are
 * almost a replica's. Also this process's own file, and a process that is gone.
 */
#include "agent/cgroup.h"
#include "tests/unit/harness.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void expect_owner(const char *text, int64_t job, int replica, int64_t epoch,
                         const char *path)
{
    gp_cgroup_replica r = {-1, -1, -1};
    char got[256] = "";
    if (gp_cgroup_parse_owner(text, &r, got, sizeof(got)) != 1) {
        fail_msg("no owner in: %s", text);
    }
    assert_int_equal(r.job, job);
    assert_int_equal(r.replica, replica);
    assert_int_equal(r.epoch, epoch);
    assert_string_equal(got, path);
}

static void expect_none(const char *text)
{
    gp_cgroup_replica r;
    if (gp_cgroup_parse_owner(text, &r, NULL, 0) != 0) {
        fail_msg("an owner in: %s", text);
    }
}

static void test_name(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(gp_cgroup_name(buf, sizeof(buf), 12, 3, 45, 6789), 0);
    assert_string_equal(buf, "job12-r3-e45-p6789");
    assert_int_equal(gp_cgroup_name(buf, 8, 12, 3, 45, 6789), GP_ERANGE);
    /* What gp_cgroup_name writes is what the parser reads. */
    char line[128];
    assert_int_equal(gp_cgroup_name(buf, sizeof(buf), 900000000001LL, 0, 7, 1), 0);
    snprintf(line, sizeof(line), "0::/gpupool/%s\n", buf);
    expect_owner(line, 900000000001LL, 0, 7, "/gpupool/job900000000001-r0-e7-p1");
}

static void test_forms(void **state)
{
    (void)state;
    /* cgroup v2: the supervisor's group, and a container's below it (podman --cgroup-parent). */
    expect_owner("0::/gpupool/job5-r0-e2-p100\n", 5, 0, 2, "/gpupool/job5-r0-e2-p100");
    expect_owner("0::/gpupool/job5-r1-e2-p100/libpod-0123abcd/container\n", 5, 1, 2,
                 "/gpupool/job5-r1-e2-p100/libpod-0123abcd/container");
    /* v1: controllers without a group first; the first line that names one counts. */
    expect_owner("12:pids:/\n"
                 "9:name=systemd:/user.slice\n"
                 "4:memory:/gpupool/job7-r0-e9-p55/libpod-ff\n"
                 "1:cpu,cpuacct:/gpupool/job7-r0-e9-p55/libpod-ff\n",
                 7, 0, 9, "/gpupool/job7-r0-e9-p55/libpod-ff");
    /* Below the agent's namespace root (a containerised agent, hybrid hierarchy). */
    expect_owner("4:memory:/process_api/a7e7/gpupool/job8-r2-e1-p77\n0::/\n", 8, 2, 1,
                 "/process_api/a7e7/gpupool/job8-r2-e1-p77");
    /* Without a final newline. */
    expect_owner("0::/gpupool/job1-r0-e1-p1", 1, 0, 1, "/gpupool/job1-r0-e1-p1");
}

/* A job that can make groups below its own (a delegated subtree) makes one named like another
 * replica's: the outer, real one counts. */
static void test_nested(void **state)
{
    (void)state;
    expect_owner("0::/gpupool/job5-r0-e2-p100/gpupool/job6-r0-e1-p1\n", 5, 0, 2,
                 "/gpupool/job5-r0-e2-p100/gpupool/job6-r0-e1-p1");
}

static void test_not_a_replica(void **state)
{
    (void)state;
    expect_none("");
    expect_none("0::/\n");
    expect_none("0::/user.slice/user-0.slice/session-1.scope\n");
    expect_none("0::/gpupool\n");                                 /* the parent itself */
    expect_none("0::/gpupool/\n");                                /* no name */
    expect_none("0::/job5-r0-e2-p100\n");                         /* not under gpupool */
    expect_none("0::/notgpupool/job5-r0-e2-p100\n");              /* another parent */
    expect_none("0::/gpupool/job5-r0-e2\n");                      /* no supervisor pid */
    expect_none("0::/gpupool/job5-r0-e2-p\n");                    /* empty number */
    expect_none("0::/gpupool/job5-r0-e2-p100x\n");                /* trailing garbage */
    expect_none("0::/gpupool/job-5-r0-e2-p100\n");                /* a sign */
    expect_none("0::/gpupool/jobx-r0-e2-p100\n");                 /* not a number */
    expect_none("0::/gpupool/job5-r99999999999-e2-p1\n");         /* replica out of range */
    expect_none("0::/gpupool/job1234567890123456789-r0-e2-p1\n"); /* 19 digits */
    /* found by the fuzzer: a number too long to hold */
    expect_none("0::/gpupool/job7-r9999999999999999999999999999990-e1-p1\n");
    expect_none("no colons at all /gpupool/job5-r0-e2-p100\n");
    expect_none("0:/gpupool/job5-r0-e2-p100\n"); /* one colon: no path field */
}

/* This process's own file: no replica's (the test does not run in one). A process that is gone. */
static void test_live(void **state)
{
    (void)state;
    gp_cgroup_replica r;
    char path[64];
    int rc = gp_cgroup_owner_of(getpid(), &r, path, sizeof(path));
    assert_true(rc == 0 || rc == 1);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        _exit(0);
    }
    waitpid(child, NULL, 0);
    assert_int_equal(gp_cgroup_owner_of(child, &r, path, sizeof(path)), GP_ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name),   cmocka_unit_test(test_forms),
        cmocka_unit_test(test_nested), cmocka_unit_test(test_not_a_replica),
        cmocka_unit_test(test_live),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
