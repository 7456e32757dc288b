/*
 * The sandbox's seccomp profile: podman's default, less the ways into new namespaces.
 *
 * podman's default profile (/usr/share/containers/seccomp.json) lets every process call
 * unshare, setns, mount and clone with namespace flags: a job without capabilities can still
 * make a user namespace, be "root" there and mount over the files that hold its limits
 * (/run/gpupool/share.region.limits, /etc/ld.so.preload). gp_seccomp_confine takes that profile
 * and takes those away: unshare, setns and the mount family are no longer allowed (the profile's
 * default action, an error, answers them), clone is allowed only without namespace flags, and
 * clone3 (whose flags seccomp cannot read) fails with ENOSYS, so that the C library falls back to
 * clone. The first argument of clone is its flags on x86_64 and aarch64, the architectures
 * podman's profile and this rule are written for.
 */
#ifndef GP_AGENT_SECCOMP_H
#define GP_AGENT_SECCOMP_H

#include "gpupool/error.h"

#include <stddef.h>

/* Where podman keeps its default profile. */
#define GP_SECCOMP_DEFAULT "/usr/share/containers/seccomp.json"

/* Pure: the confined profile of the JSON profile text (len bytes), a new string in *out (free
 * it). GP_EINVAL with d saying what is wrong when text is not a profile with a default action
 * that refuses and a syscalls list; GP_ENOMEM. */
int gp_seccomp_confine(const char *text, size_t len, char **out, gp_diag *d);

/* Reads the profile at from (NULL: GP_SECCOMP_DEFAULT) and writes the confined one to path
 * (atomically, 0644). 0, or GP_EIO / GP_EINVAL with d. */
int gp_seccomp_write(const char *from, const char *path, gp_diag *d);

#endif
