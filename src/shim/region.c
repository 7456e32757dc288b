/*
 * The shared region (see region.h): file layout, creation, validation, slots and usage.
 *
 * Invariants: the layout of a region is a function of the limits file's slot count alone
 * (compute_layout), and open() refuses a usage file whose recorded layout or region id differs
 * from it, so no offset read from the job-writable file is ever trusted; everything after open()
 * uses the copy of the limits taken then. Slots are read and written only under the lock.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "shim/region.h"

#include "base/procstat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ID_BYTES 16

/* PATH.limits, version 2: read only by the job. */
typedef struct share_limits_file {
    uint32_t magic; /* GP_SHARE_LIMITS_MAGIC */
    uint32_t version;
    uint32_t size; /* sizeof(share_limits_file) */
    uint32_t nslots;
    uint32_t ndevices;
    uint32_t core_percent;
    uint32_t core_policy;
    uint32_t on_error;
    uint8_t id[ID_BYTES];
    uint64_t mem_bytes[GP_SHARE_MAX_DEVICES];
} share_limits_file;

/* The header of PATH, version 2. Fixed-width fields only; the mutex lives outside it. */
typedef struct share_header {
    uint32_t magic; /* GP_SHARE_MAGIC */
    uint32_t version;
    uint32_t header_size; /* sizeof(share_header) */
    uint32_t slot_size;   /* sizeof(share_slot) */
    uint32_t lock_size;   /* sizeof(pthread_mutex_t) of the creator */
    uint32_t nslots;
    uint8_t id[ID_BYTES];
    uint64_t lock_offset;
    uint64_t slots_offset;
    uint64_t file_size;
} share_header;

typedef struct share_slot {
    int32_t pid; /* 0: free */
    uint32_t reserved;
    uint64_t start_time;
    uint64_t usage[GP_SHARE_MAX_DEVICES];
} share_slot;

/* At lock_offset: the lock and, under it, the sum of the slots' usage per device (so that an
 * admission costs O(1), not a walk over the slots). */
typedef struct share_sync {
    pthread_mutex_t lock;
    uint64_t totals[GP_SHARE_MAX_DEVICES];
} share_sync;

struct gp_share_region {
    unsigned char *base;
    size_t size;
    int is_private;
    gp_share_limits lim;
    share_sync *sync;
    share_slot *slots;
    uint32_t nslots;
    /* The slot gp_share_region_attach claimed for this process (-1: none), and what this process
     * charged to it and has not released: kept here, out of the job's reach through the file. */
    int self_slot;
    uint64_t own[GP_SHARE_MAX_DEVICES];
};

typedef struct layout {
    uint64_t lock_offset, slots_offset, file_size;
} layout;

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static layout compute_layout(uint32_t nslots)
{
    layout l;
    l.lock_offset = round_up(sizeof(share_header), 64);
    l.slots_offset = round_up(l.lock_offset + sizeof(share_sync), 64);
    l.file_size = l.slots_offset + (uint64_t)nslots * sizeof(share_slot);
    return l;
}

static int limits_valid(const gp_share_limits *lim)
{
    return lim && lim->ndevices <= GP_SHARE_MAX_DEVICES && lim->core_percent <= 100 &&
           lim->core_policy <= GP_SHARE_CORE_STRICT && lim->on_error <= GP_SHARE_FAIL_CLOSED &&
           lim->nslots <= GP_SHARE_MAX_SLOTS;
}

static uint32_t slots_of(const gp_share_limits *lim)
{
    return lim->nslots ? lim->nslots : GP_SHARE_DEFAULT_SLOTS;
}

static int init_lock(pthread_mutex_t *m)
{
    pthread_mutexattr_t a;
    if (pthread_mutexattr_init(&a) != 0) {
        return GP_EIO;
    }
    int rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (rc == 0) {
        rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    }
    if (rc == 0) {
        rc = pthread_mutex_init(m, &a);
    }
    pthread_mutexattr_destroy(&a);
    return rc == 0 ? 0 : GP_EIO;
}

/* Writes the usage header, the lock and empty slots into a zeroed mapping of the computed size. */
static int format(unsigned char *base, uint32_t nslots, const uint8_t id[ID_BYTES])
{
    layout l = compute_layout(nslots);
    share_header h;
    memset(&h, 0, sizeof(h));
    h.magic = GP_SHARE_MAGIC;
    h.version = GP_SHARE_VERSION;
    h.header_size = sizeof(share_header);
    h.slot_size = sizeof(share_slot);
    h.lock_size = sizeof(pthread_mutex_t);
    h.nslots = nslots;
    memcpy(h.id, id, ID_BYTES);
    h.lock_offset = l.lock_offset;
    h.slots_offset = l.slots_offset;
    h.file_size = l.file_size;
    memcpy(base, &h, sizeof(h));
    return init_lock(&((share_sync *)(void *)(base + l.lock_offset))->lock);
}

static void limits_to_file(const gp_share_limits *lim, const uint8_t id[ID_BYTES],
                           share_limits_file *f)
{
    memset(f, 0, sizeof(*f));
    f->magic = GP_SHARE_LIMITS_MAGIC;
    f->version = GP_SHARE_VERSION;
    f->size = sizeof(*f);
    f->nslots = slots_of(lim);
    f->ndevices = lim->ndevices;
    f->core_percent = lim->core_percent;
    f->core_policy = lim->core_policy;
    f->on_error = lim->on_error;
    memcpy(f->id, id, ID_BYTES);
    for (uint32_t i = 0; i < GP_SHARE_MAX_DEVICES; i++) {
        f->mem_bytes[i] = i < lim->ndevices ? lim->mem_bytes[i] : 0;
    }
}

static void limits_from_file(const share_limits_file *f, gp_share_limits *lim)
{
    memset(lim, 0, sizeof(*lim));
    lim->ndevices = f->ndevices;
    for (uint32_t i = 0; i < GP_SHARE_MAX_DEVICES; i++) {
        lim->mem_bytes[i] = i < f->ndevices ? f->mem_bytes[i] : 0;
    }
    lim->core_percent = f->core_percent;
    lim->core_policy = f->core_policy;
    lim->on_error = f->on_error;
    lim->nslots = f->nslots;
}

static void fill_handle(gp_share_region *r, const gp_share_limits *lim)
{
    layout l = compute_layout(lim->nslots);
    r->lim = *lim;
    r->nslots = lim->nslots;
    r->sync = (share_sync *)(void *)(r->base + l.lock_offset);
    r->slots = (share_slot *)(void *)(r->base + l.slots_offset);
    r->self_slot = -1;
    memset(r->own, 0, sizeof(r->own));
}

/* ---- creation ---- */

/* A region id: random, else (no entropy at all) the time and pid, which still tells one
 * creation from the next. */
static void new_id(uint8_t id[ID_BYTES])
{
    if (getrandom(id, ID_BYTES, GRND_NONBLOCK) == ID_BYTES) {
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t a = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, b = (uint64_t)getpid();
    memcpy(id, &a, 8);
    memcpy(id + 8, &b, 8);
}

/* Creates path.XXXXXX with the owner, group and mode, fills it with fill(base, ctx) over size
 * bytes of a shared mapping, and renames it to path. */
static int write_file(const char *path, uid_t owner, gid_t group, mode_t mode, uint64_t size,
                      int (*fill)(unsigned char *base, const void *ctx), const void *ctx)
{
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        return GP_EINVAL;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        return GP_EIO;
    }
    int rc = 0;
    if ((owner != (uid_t)-1 || group != (gid_t)-1) && fchown(fd, owner, group) != 0) {
        rc = errno == EPERM ? GP_EPERM : GP_EIO;
    } else if (fchmod(fd, mode) != 0 || ftruncate(fd, (off_t)size) != 0) {
        rc = GP_EIO;
    }
    if (rc == 0) {
        void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            rc = GP_EIO;
        } else {
            rc = fill(p, ctx);
            if (rc == 0 && msync(p, (size_t)size, MS_SYNC) != 0) {
                rc = GP_EIO;
            }
            munmap(p, (size_t)size);
        }
    }
    if (close(fd) != 0 && rc == 0) {
        rc = GP_EIO;
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = GP_EIO;
    }
    if (rc != 0) {
        unlink(tmp);
    }
    return rc;
}

static int fill_limits(unsigned char *base, const void *ctx)
{
    memcpy(base, ctx, sizeof(share_limits_file));
    return 0;
}

static int fill_usage(unsigned char *base, const void *ctx)
{
    const share_limits_file *f = ctx;
    return format(base, f->nslots, f->id);
}

static int limits_path(const char *path, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s%s", path, GP_SHARE_LIMITS_SUFFIX);
    return n < 0 || (size_t)n >= cap ? GP_EINVAL : 0;
}

int gp_share_region_create(const char *path, const gp_share_limits *lim, uid_t owner, gid_t group)
{
    char lpath[PATH_MAX];
    if (!path || !*path || !limits_valid(lim) || limits_path(path, lpath, sizeof(lpath)) != 0) {
        return GP_EINVAL;
    }
    uint8_t id[ID_BYTES];
    new_id(id);
    share_limits_file f;
    limits_to_file(lim, id, &f);
    /* The usage first: a job that starts between the two renames finds the ids differ (an old
     * limits file) and refuses, rather than pairing new usage with old limits. */
    int rc =
        write_file(path, owner, group, 0660, compute_layout(f.nslots).file_size, fill_usage, &f);
    if (rc == 0) {
        rc = write_file(lpath, owner, group, 0640, sizeof(f), fill_limits, &f);
    }
    return rc;
}

/* ---- opening ---- */

static int open_errno(int e)
{
    return e == ENOENT ? GP_ENOENT : e == EACCES || e == ELOOP || e == EPERM ? GP_EPERM : GP_EIO;
}

/* Whether a file owned by owner can be trusted not to have been written by the caller: owned by
 * root (a caller running as root could write anything: nothing to gain by refusing it) or by a
 * user the caller is not. */
static int owner_trusted(uid_t owner)
{
    return owner == 0 || (owner != getuid() && owner != geteuid());
}

/* Reads and checks the limits file; *owner its owner. */
static int read_limits(const char *lpath, gp_share_limits *lim, uint8_t id[ID_BYTES], uid_t *owner)
{
    int fd = open(lpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        return open_errno(errno);
    }
    struct stat st;
    share_limits_file f;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = GP_EIO;
    } else if (!S_ISREG(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
               !owner_trusted(st.st_uid)) {
        rc = GP_EPERM;
    } else if (st.st_size != (off_t)sizeof(f) || pread(fd, &f, sizeof(f), 0) != sizeof(f)) {
        rc = GP_EPARSE;
    } else if (f.magic != GP_SHARE_LIMITS_MAGIC) {
        rc = GP_EPARSE;
    } else if (f.version != GP_SHARE_VERSION) {
        rc = GP_ENOTSUP;
    } else if (f.size != sizeof(f) || f.nslots == 0 || f.nslots > GP_SHARE_MAX_SLOTS ||
               f.ndevices > GP_SHARE_MAX_DEVICES || f.core_percent > 100 ||
               f.core_policy > GP_SHARE_CORE_STRICT || f.on_error > GP_SHARE_FAIL_CLOSED) {
        rc = GP_EPARSE;
    }
    close(fd);
    if (rc == 0) {
        limits_from_file(&f, lim);
        memcpy(id, f.id, ID_BYTES);
        *owner = st.st_uid;
    }
    return rc;
}

/* Checks the usage file's header against the trusted limits. */
static int usage_valid(const share_header *h, const gp_share_limits *lim,
                       const uint8_t id[ID_BYTES], uint64_t st_size)
{
    if (h->magic != GP_SHARE_MAGIC) {
        return GP_EPARSE;
    }
    if (h->version != GP_SHARE_VERSION) {
        return GP_ENOTSUP;
    }
    layout l = compute_layout(lim->nslots);
    if (h->header_size != sizeof(share_header) || h->slot_size != sizeof(share_slot) ||
        h->lock_size != sizeof(pthread_mutex_t) || h->nslots != lim->nslots ||
        memcmp(h->id, id, ID_BYTES) != 0 || h->lock_offset != l.lock_offset ||
        h->slots_offset != l.slots_offset || h->file_size != l.file_size || st_size < l.file_size) {
        return GP_EPARSE;
    }
    return 0;
}

/* Opens, checks and maps the usage file into r (whose limits are set). */
static int map_usage(const char *path, uid_t owner, const uint8_t id[ID_BYTES], gp_share_region *r)
{
    int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        return open_errno(errno);
    }
    struct stat st;
    share_header h;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = GP_EIO;
    } else if (!S_ISREG(st.st_mode) || (st.st_mode & S_IWOTH) || st.st_uid != owner) {
        rc = GP_EPERM;
    } else if ((size_t)st.st_size < sizeof(h) || pread(fd, &h, sizeof(h), 0) != sizeof(h)) {
        rc = GP_EPARSE;
    } else {
        rc = usage_valid(&h, &r->lim, id, (uint64_t)st.st_size);
    }
    if (rc == 0) {
        size_t size = (size_t)compute_layout(r->lim.nslots).file_size;
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            rc = GP_EIO;
        } else {
            r->base = p;
            r->size = size;
        }
    }
    close(fd);
    return rc;
}

int gp_share_region_open(const char *path, gp_share_region **out)
{
    *out = NULL;
    char lpath[PATH_MAX];
    if (!path || !*path || limits_path(path, lpath, sizeof(lpath)) != 0) {
        return GP_EINVAL;
    }
    gp_share_limits lim;
    uint8_t id[ID_BYTES];
    uid_t owner;
    int rc = read_limits(lpath, &lim, id, &owner);
    if (rc != 0) {
        return rc;
    }
    gp_share_region *r = calloc(1, sizeof(*r));
    if (!r) {
        return GP_ENOMEM;
    }
    r->lim = lim;
    rc = map_usage(path, owner, id, r);
    if (rc != 0) {
        free(r);
        return rc;
    }
    fill_handle(r, &lim);
    *out = r;
    return 0;
}

int gp_share_region_new_private(const gp_share_limits *lim, gp_share_region **out)
{
    *out = NULL;
    if (!limits_valid(lim)) {
        return GP_EINVAL;
    }
    gp_share_limits l = *lim;
    l.nslots = slots_of(lim);
    for (uint32_t i = l.ndevices; i < GP_SHARE_MAX_DEVICES; i++) {
        l.mem_bytes[i] = 0;
    }
    size_t size = (size_t)compute_layout(l.nslots).file_size;
    gp_share_region *r = calloc(1, sizeof(*r));
    if (!r) {
        return GP_ENOMEM;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        free(r);
        return GP_ENOMEM;
    }
    uint8_t id[ID_BYTES] = {0};
    int rc = format(p, l.nslots, id);
    if (rc != 0) {
        munmap(p, size);
        free(r);
        return rc;
    }
    r->base = p;
    r->size = size;
    r->is_private = 1;
    fill_handle(r, &l);
    *out = r;
    return 0;
}

void gp_share_region_free(gp_share_region *r)
{
    if (!r) {
        return;
    }
    munmap(r->base, r->size);
    free(r);
}

const gp_share_limits *gp_share_region_limits(const gp_share_region *r)
{
    return &r->lim;
}

uint64_t gp_share_region_limit(const gp_share_region *r, int dev)
{
    if (dev < 0 || (uint32_t)dev >= r->lim.ndevices) {
        return 0;
    }
    return r->lim.mem_bytes[dev];
}

int gp_share_region_is_private(const gp_share_region *r)
{
    return r->is_private;
}

void gp_share_region_reset_private(gp_share_region *r)
{
    if (!r || !r->is_private) {
        return;
    }
    memset(r->sync, 0, sizeof(*r->sync));
    init_lock(&r->sync->lock);
    memset(r->slots, 0, (size_t)r->nslots * sizeof(share_slot));
    r->self_slot = -1;
    memset(r->own, 0, sizeof(r->own));
}

void gp_share_region_forked(gp_share_region *r)
{
    if (!r) {
        return;
    }
    r->self_slot = -1;
    memset(r->own, 0, sizeof(r->own));
    gp_share_region_reset_private(r);
}

/* ---- slots (all under the lock) ---- */

static uint64_t sum_usage(const gp_share_region *r, int dev)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < r->nslots; i++) {
        uint64_t u = r->slots[i].pid != 0 ? r->slots[i].usage[dev] : 0;
        sum = u > UINT64_MAX - sum ? UINT64_MAX : sum + u;
    }
    return sum;
}

/* Totals from the slots: after a holder died mid-update, and whenever a total saturated (a
 * saturated sum cannot be decremented exactly). */
static void recompute(gp_share_region *r)
{
    for (int d = 0; d < GP_SHARE_MAX_DEVICES; d++) {
        r->sync->totals[d] = sum_usage(r, d);
    }
}

static void add_total(gp_share_region *r, int dev, uint64_t v)
{
    uint64_t *t = &r->sync->totals[dev];
    *t = v > UINT64_MAX - *t ? UINT64_MAX : *t + v;
}

static void sub_total(gp_share_region *r, int dev, uint64_t v)
{
    uint64_t *t = &r->sync->totals[dev];
    if (*t == UINT64_MAX || v > *t) {
        recompute(r);
    } else {
        *t -= v;
    }
}

/* Takes the lock, for at most GP_SHARE_LOCK_TIMEOUT_S: the job can write the lock's bytes, and a
 * lock it wedged must end in an error (the library then refuses), not hang every allocation. */
static int lock_region(gp_share_region *r)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += GP_SHARE_LOCK_TIMEOUT_S;
    int rc = pthread_mutex_timedlock(&r->sync->lock, &until);
    if (rc == EOWNERDEAD) {
        /* The holder died mid-update; each update leaves a slot either valid or looking dead,
         * but the totals may be off. */
        recompute(r);
        rc = pthread_mutex_consistent(&r->sync->lock);
    }
    return rc == 0 ? 0 : GP_EIO;
}

static void unlock_region(gp_share_region *r)
{
    pthread_mutex_unlock(&r->sync->lock);
}

/* Frees a slot, taking its usage out of the totals. */
static void clear_slot(gp_share_region *r, share_slot *s)
{
    for (int d = 0; d < GP_SHARE_MAX_DEVICES; d++) {
        if (s->usage[d]) {
            sub_total(r, d, s->usage[d]);
        }
    }
    memset(s, 0, sizeof(*s));
}

static int process_gone(pid_t pid)
{
    return kill(pid, 0) != 0 && errno == ESRCH;
}

static int slot_alive(const share_slot *s)
{
    if (s->pid <= 0 || process_gone(s->pid)) {
        return 0;
    }
    gp_proc_stat ps;
    int rc = gp_proc_stat_read(s->pid, &ps);
    if (rc == GP_ENOENT) {
        /* Gone since kill(), or no /proc: then kill() is all we have. */
        return !process_gone(s->pid);
    }
    if (rc != 0) {
        return 1; /* unreadable: never take a slot that may be live */
    }
    return ps.state != 'Z' && ps.state != 'X' && ps.start_time == s->start_time;
}

static int reclaim(gp_share_region *r)
{
    int n = 0;
    for (uint32_t i = 0; i < r->nslots; i++) {
        if (r->slots[i].pid != 0 && !slot_alive(&r->slots[i])) {
            clear_slot(r, &r->slots[i]);
            n++;
        }
    }
    return n;
}

static int find_free(const gp_share_region *r)
{
    for (uint32_t i = 0; i < r->nslots; i++) {
        if (r->slots[i].pid == 0) {
            return (int)i;
        }
    }
    return -1;
}

int gp_share_region_attach_pid(gp_share_region *r, pid_t pid, uint64_t start_time, int *slot)
{
    if (pid <= 0) {
        return GP_EINVAL;
    }
    int rc = lock_region(r);
    if (rc != 0) {
        return rc;
    }
    int found = -1;
    for (uint32_t i = 0; i < r->nslots && found < 0; i++) {
        if (r->slots[i].pid == pid && r->slots[i].start_time == start_time) {
            found = (int)i; /* an earlier image of this process (exec) */
        }
    }
    if (found < 0 && (found = find_free(r)) < 0 && reclaim(r) > 0) {
        found = find_free(r);
    }
    if (found >= 0) {
        share_slot *s = &r->slots[found];
        clear_slot(r, s);
        s->start_time = start_time;
        s->pid = pid;
        *slot = found;
    }
    unlock_region(r);
    return found >= 0 ? 0 : GP_ENOSPC;
}

int gp_share_region_attach(gp_share_region *r, int *slot)
{
    gp_proc_stat ps = {0};
    pid_t self = getpid();
    /* Without /proc the start time stays 0 and liveness rests on kill() alone. */
    if (gp_proc_stat_read(self, &ps) != 0) {
        ps.start_time = 0;
    }
    int rc = gp_share_region_attach_pid(r, self, ps.start_time, slot);
    if (rc == 0) {
        r->self_slot = *slot; /* what this process already holds (r->own) stays counted */
    }
    return rc;
}

static int slot_ok(const gp_share_region *r, int slot, int dev)
{
    return slot >= 0 && (uint32_t)slot < r->nslots && dev >= 0 && dev < GP_SHARE_MAX_DEVICES;
}

int gp_share_region_detach(gp_share_region *r, int slot)
{
    if (!slot_ok(r, slot, 0)) {
        return GP_EINVAL;
    }
    int rc = lock_region(r);
    if (rc == 0) {
        clear_slot(r, &r->slots[slot]);
        unlock_region(r);
    }
    return rc;
}

static int fits(uint64_t used, uint64_t bytes, uint64_t limit)
{
    return used <= limit && bytes <= limit - used;
}

/* Adds bytes to a slot's usage and to the device's total, both saturating (a slot saturates
 * only if the file was tampered with; a saturated total is recomputed on the next release). */
static void add_usage(gp_share_region *r, share_slot *s, int dev, uint64_t bytes)
{
    s->usage[dev] = bytes > UINT64_MAX - s->usage[dev] ? UINT64_MAX : s->usage[dev] + bytes;
    add_total(r, dev, bytes);
}

/* What this handle's own slot holds by its own count, the file aside. */
static void add_own(gp_share_region *r, int slot, int dev, uint64_t bytes)
{
    if (slot == r->self_slot) {
        r->own[dev] = bytes > UINT64_MAX - r->own[dev] ? UINT64_MAX : r->own[dev] + bytes;
    }
}

static void sub_own(gp_share_region *r, int slot, int dev, uint64_t bytes)
{
    if (slot == r->self_slot) {
        r->own[dev] -= bytes > r->own[dev] ? r->own[dev] : bytes;
    }
}

/* The usage an admission for slot is checked against: the region's total, or for the handle's
 * own slot, what this process holds by its own count if the file says less (the job can write
 * the file; usage it writes only ever denies). */
static uint64_t used_by(const gp_share_region *r, int slot, int dev)
{
    uint64_t t = r->sync->totals[dev];
    return slot == r->self_slot && r->own[dev] > t ? r->own[dev] : t;
}

int gp_share_region_reserve(gp_share_region *r, int slot, int dev, uint64_t bytes)
{
    if (!slot_ok(r, slot, dev)) {
        return GP_EINVAL;
    }
    uint64_t limit = gp_share_region_limit(r, dev);
    int rc = lock_region(r);
    if (rc != 0) {
        return rc;
    }
    share_slot *s = &r->slots[slot];
    if (s->pid == 0) {
        rc = GP_ESTATE;
    } else if (!fits(used_by(r, slot, dev), bytes, limit) &&
               (reclaim(r) == 0 || !fits(used_by(r, slot, dev), bytes, limit))) {
        rc = GP_ENOSPC;
    } else if (s->pid == 0) {
        rc = GP_ESTATE; /* reclaimed as dead: the caller's identity is wrong */
    } else {
        add_usage(r, s, dev, bytes); /* fits() bounds the total: it does not saturate here */
        add_own(r, slot, dev, bytes);
    }
    unlock_region(r);
    return rc;
}

int gp_share_region_charge(gp_share_region *r, int slot, int dev, uint64_t bytes)
{
    if (!slot_ok(r, slot, dev)) {
        return GP_EINVAL;
    }
    int rc = lock_region(r);
    if (rc != 0) {
        return rc;
    }
    share_slot *s = &r->slots[slot];
    if (s->pid == 0) {
        rc = GP_ESTATE;
    } else {
        add_usage(r, s, dev, bytes);
        add_own(r, slot, dev, bytes);
    }
    unlock_region(r);
    return rc;
}

int gp_share_region_release(gp_share_region *r, int slot, int dev, uint64_t bytes)
{
    if (!slot_ok(r, slot, dev)) {
        return GP_EINVAL;
    }
    int rc = lock_region(r);
    if (rc != 0) {
        return rc;
    }
    share_slot *s = &r->slots[slot];
    uint64_t v = bytes > s->usage[dev] ? s->usage[dev] : bytes;
    s->usage[dev] -= v;
    if (v && s->pid != 0) {
        sub_total(r, dev, v);
    }
    sub_own(r, slot, dev, bytes); /* freed, whatever the file says */
    unlock_region(r);
    return 0;
}

int gp_share_region_usage(gp_share_region *r, int dev, uint64_t *out)
{
    if (dev < 0 || dev >= GP_SHARE_MAX_DEVICES) {
        return GP_EINVAL;
    }
    int rc = lock_region(r);
    if (rc != 0) {
        return rc;
    }
    reclaim(r);
    *out = used_by(r, r->self_slot, dev);
    unlock_region(r);
    return 0;
}

int gp_share_region_pids(gp_share_region *r, pid_t *pids, int max, int *n)
{
    *n = 0;
    int rc = lock_region(r);
    if (rc != 0) {
        return rc;
    }
    for (uint32_t i = 0; i < r->nslots && *n < max; i++) {
        if (r->slots[i].pid > 0) {
            pids[(*n)++] = r->slots[i].pid;
        }
    }
    unlock_region(r);
    return 0;
}
