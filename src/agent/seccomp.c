/*
 * The sandbox's seccomp profile (seccomp.h).
 */
#include "agent/seccomp.h"
#include "base/textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The calls into new namespaces and mounts no job needs. */
static const char *const taken[] = {
    "unshare", "setns",     "mount",      "umount", "umount2", "pivot_root", "clone",
    "clone3",  "open_tree", "move_mount", "fsopen", "fsmount", "fsconfig",   "fspick",
};

/* CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (and NEWTIME's bit,
 * 0x80, which clone reads as CSIGNAL: left out). */
#define NS_FLAGS  0x7E020000ull
#define ENOSYS_NR 38

static bool is_taken(const char *name)
{
    for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
        if (strcmp(name, taken[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* Drops the taken names from every rule of syscalls. */
static void drop_taken(json_t *syscalls)
{
    size_t i;
    json_t *rule;
    json_array_foreach(syscalls, i, rule)
    {
        json_t *names = json_object_get(rule, "names");
        for (size_t k = json_array_size(names); k-- > 0;) {
            const char *n = json_string_value(json_array_get(names, k));
            if (n && is_taken(n)) {
                json_array_remove(names, k);
            }
        }
    }
}

int gp_seccomp_confine(const char *text, size_t len, char **out, gp_diag *d)
{
    *out = NULL;
    json_error_t e;
    json_t *p = json_loadb(text, len, 0, &e);
    json_t *syscalls = p ? json_object_get(p, "syscalls") : NULL;
    const char *def = p ? json_string_value(json_object_get(p, "defaultAction")) : NULL;
    if (!p || !json_is_array(syscalls) || !def || strncmp(def, "SCMP_ACT_ERRNO", 14) != 0) {
        json_decref(p);
        return gp_diag_set(d, GP_EINVAL,
                           "seccomp profile: not a profile whose default action refuses (%s)",
                           p ? "defaultAction or syscalls" : e.text);
    }
    drop_taken(syscalls);
    json_t *clone = json_pack("{s:[s], s:s, s:[{s:i, s:I, s:I, s:s}]}", "names", "clone", "action",
                              "SCMP_ACT_ALLOW", "args", "index", 0, "value", (json_int_t)NS_FLAGS,
                              "valueTwo", (json_int_t)0, "op", "SCMP_CMP_MASKED_EQ");
    json_t *clone3 = json_pack("{s:[s], s:s, s:i}", "names", "clone3", "action", "SCMP_ACT_ERRNO",
                               "errnoRet", ENOSYS_NR);
    int rc = clone && clone3 && json_array_append_new(syscalls, clone) == 0 &&
                     json_array_append_new(syscalls, clone3) == 0
                 ? 0
                 : GP_ENOMEM;
    if (rc < 0) {
        json_decref(clone);
        json_decref(clone3);
    }
    *out = rc == 0 ? json_dumps(p, JSON_INDENT(1)) : NULL;
    json_decref(p);
    return rc < 0 || !*out ? gp_diag_set(d, GP_ENOMEM, "out of memory") : 0;
}

int gp_seccomp_write(const char *from, const char *path, gp_diag *d)
{
    from = from ? from : GP_SECCOMP_DEFAULT;
    size_t len = 0;
    char *text = gp_text_read(from, 4u << 20, &len);
    if (!text) {
        return gp_diag_set(d, errno == ENOMEM ? GP_ENOMEM : GP_EIO, "seccomp profile %s: %s", from,
                           strerror(errno));
    }
    char *confined = NULL;
    int rc = gp_seccomp_confine(text, len, &confined, d);
    free(text);
    if (rc < 0) {
        return rc;
    }
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    size_t clen = strlen(confined);
    bool ok = fd >= 0 && write(fd, confined, clen) == (ssize_t)clen;
    ok = fd >= 0 && close(fd) == 0 && ok && rename(tmp, path) == 0;
    free(confined);
    if (!ok) {
        unlink(tmp);
        return gp_diag_set(d, GP_EIO, "seccomp profile %s: cannot write it", path);
    }
    return 0;
}
