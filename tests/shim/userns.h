/*
 * For the region tests run by a user other than root: a region is trusted when root owns it
 * (region.h), so such a test program first becomes root of a user namespace of its own (its uid
 * and gid mapped to 0), where the kernel allows that. As root, or where it is not allowed, it
 * does nothing: the tests then run as they are. Needs _GNU_SOURCE (unshare) before any include.
 */
#ifndef GP_TESTS_SHIM_USERNS_H
#define GP_TESTS_SHIM_USERNS_H

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static inline int gp_t_write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

static inline void gp_t_become_root(void)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    if (uid == 0 || unshare(CLONE_NEWUSER) != 0) {
        return;
    }
    char map[64];
    snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
    gp_t_write_file("/proc/self/uid_map", map);
    gp_t_write_file("/proc/self/setgroups", "deny\n");
    snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
    gp_t_write_file("/proc/self/gid_map", map);
}

/* 1 when this process can act as other users (root with every uid mapped, not the root of a
 * namespace of one uid): chown to them, become them. */
static inline int gp_t_can_be_others(void)
{
    unsigned inner = 0, outer = 0, count = 0;
    FILE *m = fopen("/proc/self/uid_map", "r");
    int ok = m && fscanf(m, "%u %u %u", &inner, &outer, &count) == 3 && count > 70000;
    if (m) {
        fclose(m);
    }
    return geteuid() == 0 && ok;
}

#endif
