/*
 * Tenants' host id ranges (contract in idmap.h). Pure.
 */
#include "agent/idmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t gp_idmap_tenants(int64_t first)
{
    if (first < GP_IDMAP_FIRST_MIN || first >= GP_IDMAP_END) {
        return 0;
    }
    return (GP_IDMAP_END - first) / GP_IDMAP_SIZE;
}

int gp_idmap_tenant(int64_t first, int64_t tenant_id, gp_idmap *out, gp_diag *d)
{
    out->base = out->size = 0;
    if (first < GP_IDMAP_FIRST_MIN || first >= GP_IDMAP_END) {
        return gp_diag_set(d, GP_EINVAL, "--tenant-uids %lld: must be %lld to %lld",
                           (long long)first, (long long)GP_IDMAP_FIRST_MIN,
                           (long long)GP_IDMAP_END - GP_IDMAP_SIZE);
    }
    if (tenant_id < 0 || tenant_id >= gp_idmap_tenants(first)) {
        return gp_diag_set(d, GP_EINVAL,
                           "tenant %lld: no host id range from --tenant-uids %lld (room for "
                           "tenants 0 to %lld)",
                           (long long)tenant_id, (long long)first,
                           (long long)gp_idmap_tenants(first) - 1);
    }
    out->base = first + tenant_id * GP_IDMAP_SIZE;
    out->size = GP_IDMAP_SIZE;
    return 0;
}

/* One "name:start:count" line: 1 with its range, else 0. */
static int subid_line(const char *line, size_t len, int64_t *start, int64_t *count)
{
    char buf[512];
    if (len == 0 || len >= sizeof(buf) || line[0] == '#') {
        return 0;
    }
    memcpy(buf, line, len);
    buf[len] = '\0';
    char *a = strchr(buf, ':');
    char *b = a ? strchr(a + 1, ':') : NULL;
    if (!a || !b) {
        return 0;
    }
    char *end1, *end2;
    errno = 0;
    long long s = strtoll(a + 1, &end1, 10);
    long long c = strtoll(b + 1, &end2, 10);
    if (errno || end1 != b || end1 == a + 1 || end2 == b + 1 || *end2 || s < 0 || c <= 0) {
        return 0;
    }
    *start = s;
    *count = c;
    return 1;
}

int gp_idmap_subid_overlap(const char *text, int64_t lo, int64_t hi, char *who, size_t cap)
{
    for (const char *p = text; p && *p;) {
        size_t len = strcspn(p, "\n");
        int64_t start, count;
        if (subid_line(p, len, &start, &count) && start < hi && lo < start + count) {
            snprintf(who, cap, "%.*s", (int)len, p);
            return 1;
        }
        p += len + (p[len] == '\n');
    }
    return 0;
}
