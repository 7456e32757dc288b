/*
 * The shared region without the library: creation and permissions, validation of every field of
 * the limits file and of the usage header that open() relies on, the trust rules (owner, mode,
 * symbolic links, a usage file of another owner or region), slots, exact-limit reservations,
 * saturation, usage the job zeroes, a wedged lock, and reclaiming the slots of dead processes
 * (killed, zombie, pid reused) and a lock whose owner died holding it.
 *
 * Run as root (a region is trusted when root owns it; CI runs as root); as another user, the
 * program first enters a user namespace of its own in which it is root, where it can.
 */
#define _GNU_SOURCE
#include "base/procstat.h"
#include "shim/region.h"
#include "tests/unit/harness.h"
#include "userns.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1ULL << 20)

typedef struct fixture {
    char dir[64];
    char path[128];
    char lpath[140]; /* path.limits */
} fixture;

/* gp_proc_stat_read's start time and state. */
static int proc_stat(pid_t pid, uint64_t *start, char *state)
{
    gp_proc_stat ps;
    int rc = gp_proc_stat_read(pid, &ps);
    if (rc == 0) {
        *start = ps.start_time;
        *state = ps.state;
    }
    return rc;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f) {
        return -1;
    }
    snprintf(f->dir, sizeof(f->dir), "/tmp/gp-test-region.XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof(f->path), "%s/region", f->dir);
    snprintf(f->lpath, sizeof(f->lpath), "%s" GP_SHARE_LIMITS_SUFFIX, f->path);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    static const char *const names[] = {"region",      "region.limits", "link",
                                        "link.limits", "other",         "other.limits"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char p[160];
        snprintf(p, sizeof(p), "%s/%s", f->dir, names[i]);
        unlink(p);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

static gp_share_limits limits(uint64_t l0, uint32_t nslots)
{
    gp_share_limits lim;
    memset(&lim, 0, sizeof(lim));
    lim.ndevices = 2;
    lim.mem_bytes[0] = l0;
    lim.mem_bytes[1] = GP_SHARE_UNLIMITED;
    lim.core_percent = 30;
    lim.core_policy = GP_SHARE_CORE_STRICT;
    lim.on_error = GP_SHARE_FAIL_CLOSED;
    lim.nslots = nslots;
    return lim;
}

static gp_share_region *make(fixture *f, uint64_t l0, uint32_t nslots)
{
    gp_share_limits lim = limits(l0, nslots);
    assert_int_equal(gp_share_region_create(f->path, &lim, (uid_t)-1, (gid_t)-1), 0);
    gp_share_region *r = NULL;
    assert_int_equal(gp_share_region_open(f->path, &r), 0);
    assert_non_null(r);
    return r;
}

/* A child that waits to be killed. */
static pid_t sleeper(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (;;) {
            pause();
        }
    }
    return pid;
}

static uint64_t start_of(pid_t pid)
{
    uint64_t start = 0;
    char state;
    assert_int_equal(proc_stat(pid, &start, &state), 0);
    return start;
}

static uint64_t usage(gp_share_region *r, int dev)
{
    uint64_t u = 12345;
    assert_int_equal(gp_share_region_usage(r, dev, &u), 0);
    return u;
}

/* ---- tests ---- */

static void test_create_open(void **state)
{
    fixture *f = *state;
    gp_share_region *r = make(f, 8 * MIB, 0);
    const gp_share_limits *lim = gp_share_region_limits(r);
    assert_int_equal(lim->ndevices, 2);
    assert_int_equal(lim->mem_bytes[0], 8 * MIB);
    assert_true(lim->mem_bytes[1] == GP_SHARE_UNLIMITED);
    assert_int_equal(lim->core_percent, 30);
    assert_int_equal(lim->core_policy, GP_SHARE_CORE_STRICT);
    assert_int_equal(lim->on_error, GP_SHARE_FAIL_CLOSED);
    assert_int_equal(lim->nslots, GP_SHARE_DEFAULT_SLOTS);
    /* Devices past ndevices were not given: limit 0. */
    assert_int_equal(gp_share_region_limit(r, 2), 0);
    assert_int_equal(gp_share_region_limit(r, -1), 0);
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0660);
    assert_int_equal(stat(f->lpath, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_false(gp_share_region_is_private(r));
    gp_share_region_free(r);
    gp_share_region_free(NULL);
}

static void test_create_invalid(void **state)
{
    fixture *f = *state;
    gp_share_limits lim = limits(MIB, 0);
    lim.ndevices = GP_SHARE_MAX_DEVICES + 1;
    assert_int_equal(gp_share_region_create(f->path, &lim, (uid_t)-1, (gid_t)-1), GP_EINVAL);
    lim = limits(MIB, 0);
    lim.core_percent = 101;
    assert_int_equal(gp_share_region_create(f->path, &lim, (uid_t)-1, (gid_t)-1), GP_EINVAL);
    lim = limits(MIB, GP_SHARE_MAX_SLOTS + 1);
    assert_int_equal(gp_share_region_create(f->path, &lim, (uid_t)-1, (gid_t)-1), GP_EINVAL);
    lim = limits(MIB, 0);
    assert_int_equal(gp_share_region_create("/nonexistent-dir/region", &lim, (uid_t)-1, (gid_t)-1),
                     GP_EIO);
    assert_int_equal(gp_share_region_create("", &lim, (uid_t)-1, (gid_t)-1), GP_EINVAL);
    /* Nothing left behind. */
    assert_int_equal(access(f->path, F_OK), -1);
}

static void patch(const char *path, long offset, const void *v, size_t n)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, v, n, offset), (ssize_t)n);
    close(fd);
}

static void expect_open(const char *path, int want, const char *what)
{
    gp_share_region *r = (gp_share_region *)1;
    int rc = gp_share_region_open(path, &r);
    if (rc != want) {
        fail_msg("%s: got %d, want %d", what, rc, want);
    }
    assert_null(r);
}

/* Each field open() relies on is checked (offsets: the version-2 layouts), in the limits file and
 * in the usage file's header. */
static void test_validation(void **state)
{
    fixture *f = *state;
    static const struct {
        int usage; /* 0: the limits file; 1: the usage file */
        long offset;
        uint32_t value;
        int want;
    } bad[] = {
        {0, 0, 0x52535047u, GP_EPARSE},  /* limits magic (the usage file's) */
        {0, 4, 1, GP_ENOTSUP},           /* version 1, a single file of old */
        {0, 8, 100, GP_EPARSE},          /* size */
        {0, 12, 0, GP_EPARSE},           /* no slots */
        {0, 12, 129, GP_EPARSE},         /* more slots than the usage file holds */
        {0, 12, 1u << 30, GP_EPARSE},    /* absurd slot count */
        {0, 16, 17, GP_EPARSE},          /* devices */
        {0, 20, 101, GP_EPARSE},         /* core percent */
        {0, 24, 2, GP_EPARSE},           /* core policy */
        {0, 28, 2, GP_EPARSE},           /* on error */
        {0, 32, 0x12345678u, GP_EPARSE}, /* region id */
        {1, 0, 0x4c535047u, GP_EPARSE},  /* usage magic (the limits file's) */
        {1, 4, 3, GP_ENOTSUP},           /* version */
        {1, 8, 100, GP_EPARSE},          /* header size */
        {1, 12, 8, GP_EPARSE},           /* slot size */
        {1, 16, 24, GP_EPARSE},          /* lock size */
        {1, 20, 64, GP_EPARSE},          /* slot count other than the limits' */
        {1, 24, 0x12345678u, GP_EPARSE}, /* region id */
        {1, 40, 8, GP_EPARSE},           /* lock offset */
        {1, 48, 8, GP_EPARSE},           /* slots offset */
        {1, 56, 8, GP_EPARSE},           /* file size */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        gp_share_region_free(make(f, MIB, 0));
        patch(bad[i].usage ? f->path : f->lpath, bad[i].offset, &bad[i].value,
              sizeof(bad[i].value));
        char what[64];
        snprintf(what, sizeof(what), "%s field at %ld = %u", bad[i].usage ? "usage" : "limits",
                 bad[i].offset, bad[i].value);
        expect_open(f->path, bad[i].want, what);
    }
    /* Too short for its slots; a limits file of another size. */
    gp_share_region_free(make(f, MIB, 0));
    assert_int_equal(truncate(f->path, 4096), 0);
    expect_open(f->path, GP_EPARSE, "usage truncated");
    gp_share_region_free(make(f, MIB, 0));
    assert_int_equal(truncate(f->lpath, 100), 0);
    expect_open(f->path, GP_EPARSE, "limits truncated");
    /* Either file missing. */
    gp_share_region_free(make(f, MIB, 0));
    assert_int_equal(unlink(f->lpath), 0);
    expect_open(f->path, GP_ENOENT, "limits missing");
    gp_share_region_free(make(f, MIB, 0));
    assert_int_equal(unlink(f->path), 0);
    expect_open(f->path, GP_ENOENT, "usage missing");
    assert_int_not_equal(gp_share_region_open(f->dir, &(gp_share_region *){NULL}), 0);
    expect_open("/nonexistent-region", GP_ENOENT, "nothing");
}

/* Permissions: a usage file writable by others (HAMi-core's 0666), a limits file writable by
 * anyone but its owner, a symbolic link to either, a directory: refused. */
static void test_permissions(void **state)
{
    fixture *f = *state;
    gp_share_region_free(make(f, MIB, 0));
    assert_int_equal(chmod(f->path, 0666), 0);
    expect_open(f->path, GP_EPERM, "usage 0666");
    assert_int_equal(chmod(f->path, 0660), 0);
    assert_int_equal(chmod(f->lpath, 0660), 0);
    expect_open(f->path, GP_EPERM, "limits 0660");
    assert_int_equal(chmod(f->lpath, 0642), 0);
    expect_open(f->path, GP_EPERM, "limits 0642");
    assert_int_equal(chmod(f->lpath, 0640), 0);
    gp_share_region *r;
    assert_int_equal(gp_share_region_open(f->path, &r), 0);
    gp_share_region_free(r);
    /* Symbolic links: to the pair, and a real usage file beside a linked limits file. */
    char lnk[160], llnk[170];
    snprintf(lnk, sizeof(lnk), "%s/link", f->dir);
    snprintf(llnk, sizeof(llnk), "%s" GP_SHARE_LIMITS_SUFFIX, lnk);
    assert_int_equal(symlink(f->path, lnk), 0);
    assert_int_equal(link(f->lpath, llnk), 0); /* the same limits file, under the link's name */
    expect_open(lnk, GP_EPERM, "usage a symbolic link");
    assert_int_equal(unlink(llnk), 0);
    assert_int_equal(symlink(f->lpath, llnk), 0);
    expect_open(lnk, GP_EPERM, "both symbolic links");
    assert_int_equal(unlink(lnk), 0);
    assert_int_equal(link(f->path, lnk), 0);
    expect_open(lnk, GP_EPERM, "limits a symbolic link");
    /* A directory in the limits file's place. */
    assert_int_equal(unlink(f->lpath), 0);
    assert_int_equal(mkdir(f->lpath, 0700), 0);
    expect_open(f->path, GP_EPERM, "limits a directory");
    assert_int_equal(rmdir(f->lpath), 0);
}

/* Trust: a limits file the caller's own (non-root) user owns could have been written by it; a
 * usage file owned by another user than the limits file was put there by someone else. Needs
 * root, to own files as other users. */
static void test_owners(void **state)
{
    fixture *f = *state;
    if (!gp_t_can_be_others()) {
        skip(); /* not root, or root of a user namespace with one uid: no other user to be */
    }
    assert_int_equal(chmod(f->dir, 0711), 0);
    gp_share_region_free(make(f, MIB, 0));
    /* Owned by root: trusted by anyone. Another user's pair: trusted by root. */
    assert_int_equal(chown(f->lpath, 4242, 4242), 0);
    assert_int_equal(chown(f->path, 4242, 4242), 0);
    gp_share_region *r;
    assert_int_equal(gp_share_region_open(f->path, &r), 0);
    gp_share_region_free(r);
    /* The usage file of another owner than the limits file: refused. */
    assert_int_equal(chown(f->path, 4343, 4242), 0);
    expect_open(f->path, GP_EPERM, "usage owned by another user");
    assert_int_equal(chown(f->path, 4242, 4242), 0);
    /* As user 4242 (a child): its own limits file is refused; root's is trusted. */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setgid(4242) != 0 || setuid(4242) != 0) {
            _exit(10);
        }
        gp_share_region *c = NULL;
        int own = gp_share_region_open(f->path, &c);
        _exit(own == GP_EPERM && c == NULL ? 0 : 11);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(chown(f->lpath, 0, 4242), 0);
    assert_int_equal(chown(f->path, 0, 4242), 0);
    child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setgid(4242) != 0 || setuid(4242) != 0) {
            _exit(10);
        }
        gp_share_region *c = NULL;
        _exit(gp_share_region_open(f->path, &c) == 0 ? 0 : 12);
    }
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* A usage file of another region (another creation) beside these limits: refused. */
static void test_other_region(void **state)
{
    fixture *f = *state;
    gp_share_region_free(make(f, MIB, 0));
    char other[160];
    snprintf(other, sizeof(other), "%s/other", f->dir);
    gp_share_limits lim = limits(MIB, 0);
    assert_int_equal(gp_share_region_create(other, &lim, (uid_t)-1, (gid_t)-1), 0);
    assert_int_equal(rename(other, f->path), 0);
    expect_open(f->path, GP_EPARSE, "usage of another region");
}

/* The job can write the usage file: zeroing it (totals and slots) after allocating does not let
 * this process pass its limit, and releases still count. */
static void test_usage_zeroed(void **state)
{
    fixture *f = *state;
    gp_share_region *r = make(f, 8 * MIB, 0);
    int s;
    assert_int_equal(gp_share_region_attach(r, &s), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 6 * MIB), 0);
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    size_t size = (size_t)st.st_size;
    char *zero = calloc(1, size);
    assert_non_null(zero);
    /* Everything after the lock (the totals and the slots), as a job could. */
    long from = 64 + (long)sizeof(pthread_mutex_t);
    patch(f->path, from, zero, size - (size_t)from);
    free(zero);
    assert_int_equal(usage(r, 0), 6 * MIB);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 4 * MIB), GP_ESTATE); /* slot freed */
    assert_int_equal(gp_share_region_attach(r, &s), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 4 * MIB), GP_ENOSPC);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 2 * MIB), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 1), GP_ENOSPC);
    assert_int_equal(gp_share_region_release(r, s, 0, 6 * MIB), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 6 * MIB), 0);
    gp_share_region_free(r);
}

/* A lock the job wedged (its bytes written to look held by a live thread): an error after the
 * time-out, not a hang. */
static void test_wedged_lock(void **state)
{
    fixture *f = *state;
    gp_share_region *r = make(f, 8 * MIB, 0);
    int s;
    assert_int_equal(gp_share_region_attach(r, &s), 0);
    pid_t holder = fork();
    assert_true(holder >= 0);
    if (holder == 0) {
        /* Holds the lock and stays alive: no EOWNERDEAD to recover from. */
        gp_share_region *c = NULL;
        if (gp_share_region_open(f->path, &c) != 0) {
            _exit(2);
        }
        int fd = open(f->path, O_RDWR);
        void *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (fd < 0 || p == MAP_FAILED) {
            _exit(3);
        }
        pthread_mutex_lock((pthread_mutex_t *)(void *)((char *)p + 64));
        for (;;) {
            pause();
        }
    }
    /* Until the holder has it: then the reservation waits GP_SHARE_LOCK_TIMEOUT_S and fails. */
    int rc;
    for (int tries = 0; (rc = gp_share_region_reserve(r, s, 0, 1)) == 0 && tries < 5000; tries++) {
        assert_int_equal(gp_share_region_release(r, s, 0, 1), 0);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(rc, GP_EIO);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 1), 0); /* the owner died: recovered */
    gp_share_region_free(r);
}

static void test_reserve_exact(void **state)
{
    fixture *f = *state;
    gp_share_region *r = make(f, 8 * MIB, 0);
    int s;
    assert_int_equal(gp_share_region_attach(r, &s), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 8 * MIB + 1), GP_ENOSPC);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 8 * MIB), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 1), GP_ENOSPC);
    assert_int_equal(usage(r, 0), 8 * MIB);
    assert_int_equal(gp_share_region_release(r, s, 0, 8 * MIB), 0);
    assert_int_equal(usage(r, 0), 0);
    /* Unlimited device 1; device 2 was not given (limit 0); out of range. */
    assert_int_equal(gp_share_region_reserve(r, s, 1, UINT64_MAX), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 2, 1), GP_ENOSPC);
    assert_int_equal(gp_share_region_reserve(r, s, GP_SHARE_MAX_DEVICES, 1), GP_EINVAL);
    assert_int_equal(gp_share_region_reserve(r, -1, 0, 1), GP_EINVAL);
    assert_int_equal(gp_share_region_reserve(r, 100000, 0, 1), GP_EINVAL);
    assert_int_equal(gp_share_region_detach(r, s), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 1), GP_ESTATE);
    gp_share_region_free(r);
}

/* Usage saturates instead of wrapping; releases never go below zero. */
static void test_saturation(void **state)
{
    fixture *f = *state;
    gp_share_region *r = make(f, 8 * MIB, 0);
    int a, b;
    assert_int_equal(gp_share_region_attach(r, &a), 0);
    assert_int_equal(gp_share_region_attach_pid(r, getppid(), start_of(getppid()), &b), 0);
    assert_int_equal(gp_share_region_charge(r, a, 0, UINT64_MAX - 1), 0);
    assert_int_equal(gp_share_region_charge(r, b, 0, 10), 0);
    assert_true(usage(r, 0) == UINT64_MAX);
    assert_int_equal(gp_share_region_reserve(r, a, 0, 1), GP_ENOSPC);
    assert_int_equal(gp_share_region_charge(r, a, 0, 10), 0);
    assert_int_equal(gp_share_region_release(r, a, 0, UINT64_MAX), 0);
    assert_int_equal(gp_share_region_release(r, b, 0, 100), 0);
    assert_int_equal(usage(r, 0), 0);
    gp_share_region_free(r);
}

/* Two processes share the limit; a killed one's usage comes back. */
static void test_killed(void **state)
{
    fixture *f = *state;
    gp_share_region *r = make(f, 8 * MIB, 0);
    pid_t child = sleeper();
    int me, other;
    assert_int_equal(gp_share_region_attach(r, &me), 0);
    assert_int_equal(gp_share_region_attach_pid(r, child, start_of(child), &other), 0);
    assert_int_not_equal(me, other);
    assert_int_equal(gp_share_region_reserve(r, other, 0, 6 * MIB), 0);
    assert_int_equal(gp_share_region_reserve(r, me, 0, 4 * MIB), GP_ENOSPC);
    assert_int_equal(usage(r, 0), 6 * MIB);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_int_equal(gp_share_region_reserve(r, me, 0, 8 * MIB), 0);
    assert_int_equal(usage(r, 0), 8 * MIB);
    gp_share_region_free(r);
}

/* A zombie holds no GPU memory: its slot is reclaimed before it is reaped. */
static void test_zombie(void **state)
{
    fixture *f = *state;
    gp_share_region *r = make(f, 8 * MIB, 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        _exit(0);
    }
    char st = 0;
    uint64_t start = 0;
    for (int i = 0; i < 1000 && st != 'Z'; i++) {
        assert_int_equal(proc_stat(child, &start, &st), 0);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(st, 'Z');
    int s;
    assert_int_equal(gp_share_region_attach_pid(r, child, start, &s), 0);
    assert_int_equal(gp_share_region_charge(r, s, 0, MIB), 0);
    assert_int_equal(usage(r, 0), 0);
    waitpid(child, NULL, 0);
    gp_share_region_free(r);
}

/* A recycled pid: same pid, other start time. */
static void test_pid_reuse(void **state)
{
    fixture *f = *state;
    gp_share_region *r = make(f, 8 * MIB, 0);
    int s, again;
    uint64_t start = start_of(getpid());
    assert_int_equal(gp_share_region_attach_pid(r, getpid(), start + 1, &s), 0);
    assert_int_equal(gp_share_region_charge(r, s, 0, MIB), 0);
    assert_int_equal(usage(r, 0), 0);
    /* The same pid and start time: an earlier image (exec) of this process, which had its own
     * handle, taken over by the new image's. */
    assert_int_equal(gp_share_region_attach(r, &s), 0);
    assert_int_equal(gp_share_region_charge(r, s, 0, MIB), 0);
    gp_share_region *image;
    assert_int_equal(gp_share_region_open(f->path, &image), 0);
    assert_int_equal(gp_share_region_attach(image, &again), 0);
    assert_int_equal(again, s);
    assert_int_equal(usage(image, 0), 0);
    gp_share_region_free(image);
    gp_share_region_free(r);
}

static void test_slots_full(void **state)
{
    fixture *f = *state;
    gp_share_region *r = make(f, 8 * MIB, 2);
    pid_t a = sleeper(), b = sleeper();
    int me, sa, sb;
    assert_int_equal(gp_share_region_attach(r, &me), 0);
    assert_int_equal(gp_share_region_attach_pid(r, a, start_of(a), &sa), 0);
    assert_int_equal(gp_share_region_attach_pid(r, b, start_of(b), &sb), GP_ENOSPC);
    kill(a, SIGKILL);
    waitpid(a, NULL, 0);
    assert_int_equal(gp_share_region_attach_pid(r, b, start_of(b), &sb), 0);
    assert_int_equal(sb, sa);
    kill(b, SIGKILL);
    waitpid(b, NULL, 0);
    assert_int_equal(gp_share_region_detach(r, me), 0);
    gp_share_region_free(r);
}

/* A process that dies holding the lock does not wedge the region (EOWNERDEAD). */
static void test_owner_dead(void **state)
{
    fixture *f = *state;
    gp_share_region *r = make(f, 8 * MIB, 0);
    int s;
    assert_int_equal(gp_share_region_attach(r, &s), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int fd = open(f->path, O_RDWR);
        uint64_t lock_offset = 0;
        if (fd < 0 || pread(fd, &lock_offset, sizeof(lock_offset), 40) != sizeof(lock_offset)) {
            _exit(2);
        }
        void *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            _exit(3);
        }
        pthread_mutex_lock((pthread_mutex_t *)(void *)((char *)p + lock_offset));
        _exit(0); /* holding it */
    }
    int status;
    waitpid(child, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, MIB), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, MIB), 0);
    assert_int_equal(usage(r, 0), 2 * MIB);
    gp_share_region_free(r);
}

static void test_private(void **state)
{
    (void)state;
    gp_share_limits lim = limits(4 * MIB, 4);
    gp_share_region *r;
    assert_int_equal(gp_share_region_new_private(&lim, &r), 0);
    assert_true(gp_share_region_is_private(r));
    int s;
    assert_int_equal(gp_share_region_attach(r, &s), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 4 * MIB), 0);
    assert_int_equal(gp_share_region_reserve(r, s, 0, 1), GP_ENOSPC);
    gp_share_region_reset_private(r);
    assert_int_equal(usage(r, 0), 0);
    gp_share_region_free(r);
    lim.ndevices = 99;
    assert_int_equal(gp_share_region_new_private(&lim, &r), GP_EINVAL);
    assert_null(r);
}

/* /proc/PID/stat is parsed from the last ')': a process name may hold ") " and digits. */
static void test_proc_stat(void **state)
{
    (void)state;
    uint64_t start = 0;
    char st = 0;
    assert_int_equal(proc_stat(getpid(), &start, &st), 0);
    assert_true(start > 0);
    gp_proc_stat ps;
    assert_int_equal(gp_proc_stat_read(getpid(), &ps), 0);
    assert_int_equal(ps.ppid, getppid());
    assert_int_equal(ps.session, getsid(0));
    assert_true(st == 'R' || st == 'S');
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        prctl(PR_SET_NAME, "x) Z 1 2 3 4", 0, 0, 0);
        char c = 'r';
        if (write(fds[1], &c, 1) != 1) {
            _exit(1);
        }
        pause();
        _exit(0);
    }
    char c;
    assert_int_equal(read(fds[0], &c, 1), 1);
    uint64_t child_start;
    assert_int_equal(proc_stat(child, &child_start, &st), 0);
    assert_true(st == 'S' || st == 'R');
    assert_true(child_start >= start);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(fds[0]);
    close(fds[1]);
    assert_int_equal(proc_stat(child, &start, &st), GP_ENOENT);
}

int main(void)
{
    gp_t_become_root();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_validation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permissions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owners, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_region, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_zeroed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wedged_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserve_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_saturation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zombie, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pid_reuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slots_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owner_dead, setup, teardown),
        cmocka_unit_test(test_private),
        cmocka_unit_test(test_proc_stat),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
