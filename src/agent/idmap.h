/*
 * Host identities of tenants: every tenant's jobs run in a user namespace of their own, mapping
 * the container's uids and gids 0..GP_IDMAP_SIZE-1 onto a host range no other tenant has. Pure.
 *
 * The range of tenant T (the controller's tenant id, the same on every node, so files a job left
 * on shared storage are its tenant's wherever it runs next) starts at FIRST + T * GP_IDMAP_SIZE;
 * FIRST is the agent's --tenant-uids (default GP_IDMAP_FIRST_DEFAULT, 2^30: far above the uids of
 * people and system users, and of the subordinate ranges useradd hands out from 100000). A job's
 * user U inside is FIRST + T * GP_IDMAP_SIZE + U on the host: two tenants' processes never share
 * a uid, so neither can signal, ptrace or read what the other's processes own, and the host's
 * files (root's included) are "nobody" inside.
 */
#ifndef GP_AGENT_IDMAP_H
#define GP_AGENT_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "gpupool/error.h"

#define GP_IDMAP_SIZE          65536
#define GP_IDMAP_FIRST_DEFAULT INT64_C(1073741824)
/* The first host id a range may start at: never root's or a system user's. */
#define GP_IDMAP_FIRST_MIN INT64_C(65536)
/* One past the last host id a range may use ((uid_t)-1 is "no id"). */
#define GP_IDMAP_END INT64_C(4294967295)

/* A tenant's host range: base .. base + size - 1. */
typedef struct gp_idmap {
    int64_t base, size;
} gp_idmap;

/* The range of tenant tenant_id (>= 0) from first. GP_EINVAL with d naming what is wrong: first
 * below GP_IDMAP_FIRST_MIN, a negative id, a range past GP_IDMAP_END. */
int gp_idmap_tenant(int64_t first, int64_t tenant_id, gp_idmap *out, gp_diag *d);

/* How many tenants' ranges fit from first (0 when first is out of bounds). */
int64_t gp_idmap_tenants(int64_t first);

/* Whether [lo, hi) meets a range of an /etc/subuid or /etc/subgid text ("name:start:count" per
 * line; blank lines and '#' comments skipped, malformed lines ignored). 1 with the line copied
 * into who (cap bytes), else 0. */
int gp_idmap_subid_overlap(const char *text, int64_t lo, int64_t hi, char *who, size_t cap);

#endif
