/*
 * The environment contract of libgpushare.so (see config.h). Pure: the environment comes in
 * through a getter, so the tests drive it with a table.
 */
#include "shim/config.h"

#include <stdio.h>
#include <string.h>

static int parse_digits(const char *s, const char **end, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return -1;
        }
        v = v * 10 + d;
    }
    if (p == s) {
        return -1;
    }
    *end = p;
    *out = v;
    return 0;
}

static int scale(uint64_t v, unsigned shift, uint64_t *out)
{
    if (v > (UINT64_MAX >> shift)) {
        return -1;
    }
    *out = v << shift;
    return 0;
}

int gp_shim_parse_size(const char *s, uint64_t *out)
{
    const char *end;
    uint64_t v;
    if (!s || parse_digits(s, &end, &v) != 0) {
        return -1;
    }
    unsigned shift = 0;
    switch (*end) {
    case '\0':
        return scale(v, 0, out);
    case 'k':
    case 'K':
        shift = 10;
        break;
    case 'm':
    case 'M':
        shift = 20;
        break;
    case 'g':
    case 'G':
        shift = 30;
        break;
    default:
        return -1;
    }
    return end[1] == '\0' ? scale(v, shift, out) : -1;
}

int gp_shim_parse_mib(const char *s, uint64_t *out)
{
    const char *end;
    uint64_t v;
    if (!s || parse_digits(s, &end, &v) != 0 || *end != '\0') {
        return -1;
    }
    return scale(v, 20, out);
}

static void bad(gp_shim_config *cfg, const char *name)
{
    cfg->env_error = 1;
    if (!cfg->bad_var[0]) {
        snprintf(cfg->bad_var, sizeof(cfg->bad_var), "%s", name);
    }
}

/* One memory-limit variable: 0 means "no limit" (as in HAMi-core, and as the agent writes for a
 * fraction without memory). Returns 1 when the variable was set to a valid limit. */
static int read_mem(gp_shim_config *cfg, gp_shim_getenv_fn get, void *ctx, const char *name,
                    int mib, uint64_t *out)
{
    const char *v = get(ctx, name);
    if (!v || !*v) {
        return 0;
    }
    uint64_t bytes;
    if ((mib ? gp_shim_parse_mib(v, &bytes) : gp_shim_parse_size(v, &bytes)) != 0) {
        bad(cfg, name);
        return 0;
    }
    *out = bytes ? bytes : GP_SHARE_UNLIMITED;
    return 1;
}

/* The limit of device i: GPUPOOL_..._MIB_<i>, CUDA_..._LIMIT_<i>, then the all-devices values. */
static void read_limits(gp_shim_config *cfg, gp_shim_getenv_fn get, void *ctx)
{
    uint64_t all = GP_SHARE_UNLIMITED;
    if (!read_mem(cfg, get, ctx, "GPUPOOL_GPU_MEMORY_LIMIT_MIB", 1, &all)) {
        read_mem(cfg, get, ctx, "CUDA_DEVICE_MEMORY_LIMIT", 0, &all);
    }
    gp_share_limits *lim = &cfg->env_limits;
    lim->ndevices = GP_SHARE_MAX_DEVICES;
    for (int i = 0; i < GP_SHARE_MAX_DEVICES; i++) {
        char a[64], b[64];
        snprintf(a, sizeof(a), "GPUPOOL_GPU_MEMORY_LIMIT_MIB_%d", i);
        snprintf(b, sizeof(b), "CUDA_DEVICE_MEMORY_LIMIT_%d", i);
        uint64_t v = all;
        if (!read_mem(cfg, get, ctx, a, 1, &v)) {
            read_mem(cfg, get, ctx, b, 0, &v);
        }
        lim->mem_bytes[i] = v;
    }
}

static void read_core(gp_shim_config *cfg, gp_shim_getenv_fn get, void *ctx)
{
    static const char *const names[] = {"GPUPOOL_GPU_CORE_LIMIT", "CUDA_DEVICE_SM_LIMIT"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *v = get(ctx, names[i]);
        const char *end;
        uint64_t pct;
        if (!v || !*v) {
            continue;
        }
        if (parse_digits(v, &end, &pct) != 0 || *end || pct > 100) {
            bad(cfg, names[i]);
            continue;
        }
        cfg->env_limits.core_percent = (uint32_t)pct;
        break;
    }
    const char *pol = get(ctx, "GPUPOOL_GPU_CORE_POLICY");
    if (pol && strcmp(pol, "strict") == 0) {
        cfg->env_limits.core_policy = GP_SHARE_CORE_STRICT;
    } else if (pol && *pol && strcmp(pol, "default") != 0 && strcmp(pol, "shared") != 0) {
        bad(cfg, "GPUPOOL_GPU_CORE_POLICY");
    }
}

void gp_shim_config_load(gp_shim_config *cfg, gp_shim_getenv_fn get, void *ctx)
{
    memset(cfg, 0, sizeof(*cfg));
    const char *region = get(ctx, "GPUPOOL_SHARE_REGION");
    if (region && *region) {
        if (strlen(region) < sizeof(cfg->region_path)) {
            memcpy(cfg->region_path, region, strlen(region) + 1);
        } else {
            /* Too long to open: keep a path that fails, so the on-error policy applies. */
            snprintf(cfg->region_path, sizeof(cfg->region_path), "/nonexistent");
            bad(cfg, "GPUPOOL_SHARE_REGION");
        }
    }
    const char *oe = get(ctx, "GPUPOOL_SHARE_ON_ERROR");
    cfg->on_error = GP_SHARE_FAIL_OPEN;
    if (oe && strcmp(oe, "closed") == 0) {
        cfg->on_error = GP_SHARE_FAIL_CLOSED;
    } else if (oe && *oe && strcmp(oe, "open") != 0) {
        /* An unknown value is taken as the safer one. */
        cfg->on_error = GP_SHARE_FAIL_CLOSED;
        bad(cfg, "GPUPOOL_SHARE_ON_ERROR");
    }
    read_limits(cfg, get, ctx);
    read_core(cfg, get, ctx);
    cfg->env_limits.on_error = (uint32_t)cfg->on_error;
    const char *vis = get(ctx, "CUDA_VISIBLE_DEVICES");
    if (vis) {
        cfg->visible_set = 1;
        snprintf(cfg->visible_devices, sizeof(cfg->visible_devices), "%s", vis);
    }
}

int gp_shim_visible_position(const char *list, const char *uuid, unsigned int index)
{
    char num[16];
    snprintf(num, sizeof(num), "%u", index);
    int pos = 0;
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n > 0 && p[0] == ' ') {
            p++;
            n--;
        }
        if (n > 4 && uuid && strncmp(p, "GPU-", 4) == 0 && strlen(uuid) >= n &&
            strncmp(uuid, p, n) == 0) {
            return pos;
        }
        if (n > 0 && strlen(num) == n && strncmp(num, p, n) == 0) {
            return pos;
        }
        pos++;
        if (!end) {
            break;
        }
        p = end + 1;
    }
    return -1;
}
