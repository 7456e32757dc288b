/*
 * For the region tests run by a user other than root: a region is trusted when root owns it
 * (region.h), so such a test program first becomes root of a user namespace of its own (its uid
 * and gid mapped to 0), where the kernel allows that. As root, or where it is not allowed, it
 * does nothing: the tests then run as they are.
 */
#ifndef GP_TESTS_SHIM_USERNS_H
#define GP_TESTS_SHIM_USERNS_H

#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int gp_t_write_file(const char *path, const char *text)
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

#endif
