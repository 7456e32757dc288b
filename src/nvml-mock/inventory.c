/*
 * The inventory file: YAML (read with the project's YAML-to-JSON reader, which keeps the line of
 * every key) validated field by field into a mock_inv. Every error names the file, the line and
 * the field, as "dgx.yaml:12: gpus[3].nvlink[1]: no GPU 9 (the inventory has 8)".
 *
 *   driver_version: "550.54.15"      cuda_version: "12.4"      control: ctl.txt (optional)
 *   defaults: {any GPU field but uuid and pci_bus_id}
 *   gpus:
 *     - uuid: GPU-…                  name: NVIDIA A100-SXM4-80GB    memory_mib: 81920
 *       pci_bus_id: "00000000:07:00.0"   pci_device_id: 0x20B210DE   numa: 0
 *       minor: 3  (the device minor number, /dev/nvidia3; default: the GPU's index; unique)
 *       nvlink: [1, 2]  (direct links to GPU indexes)   nvswitch_links: 12
 *       mig: false | {enabled: true, instances: [{uuid: MIG-…, profile: 1g.10gb, memory_mib,
 *                                                 start}]}
 *         start is the instance's first memory slice, one of its profile's legal starts
 *         (include/gpupool/mig.h); instances without one take, in listed order, the first legal
 *         start still free after those with one. Overlapping instances are refused. Each
 *         instance is a GPU instance (ids 1.. in listed order) with one compute instance taking
 *         all of it; memory_mib defaults to the profile's GB (at most the GPU's memory).
 *         Its compute instance id is 0 (nvmlDeviceGetComputeInstanceId), as a compute instance
 *         taking a whole GPU instance has on a real GPU.
 *       utilization, memory_utilization, memory_used_mib, temperature, power_w,
 *         encoder_utilization, decoder_utilization: a number, or
 *         {kind: sine, min, max, period_s} or {kind: step, values: [..], period_s}
 *       sm_clock_mhz, memory_clock_mhz, ecc (bool), ecc_corrected, ecc_uncorrected,
 *       power_limit_w (default: the power pattern's peak, rounded up to 10 W, at least 70),
 *       encoder (bool, default true: false for parts without NVENC, A100 and H100)
 *
 * A relative control path is taken from the inventory's directory.
 */
#include "nvml-mock/mock.h"

#include "gpupool/mig.h"
#include "net/yaml_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE (1 << 20)

typedef struct pctx {
    const char *file;
    json_t *lines; /* key path -> line */
    char *err;
    size_t errlen;
    json_t *own; /* the GPU item being read: keys not in it came from defaults */
    int gpu;
} pctx;

typedef enum ftype { F_STR, F_INT, F_HEX, F_BOOL, F_PATTERN, F_OTHER } ftype;

typedef struct field {
    const char *name;
    ftype type;
    size_t off;  /* in struct nvmlDevice_st (F_STR, F_INT, F_HEX, F_BOOL) */
    size_t len;  /* F_STR: buffer size */
    double min;  /* F_INT, F_PATTERN */
    double max;  /* likewise */
    int reading; /* F_PATTERN: which */
    int in_defaults;
} field;

#define DEV(m) offsetof(struct nvmlDevice_st, m)
#define SZ(m)  sizeof(((struct nvmlDevice_st *)0)->m)

static const field gpu_fields[] = {
    {"uuid", F_STR, DEV(uuid), SZ(uuid), 0, 0, -1, 0},
    {"name", F_STR, DEV(name), SZ(name), 0, 0, -1, 1},
    {"memory_mib", F_INT, DEV(memory_mib), 0, 1, 1 << 24, -1, 1},
    {"pci_bus_id", F_STR, DEV(bus_id), SZ(bus_id), 0, 0, -1, 0},
    {"pci_device_id", F_HEX, DEV(pci_device_id), 0, 0, 4294967295.0, -1, 1},
    {"numa", F_INT, DEV(numa), 0, -1, 1023, -1, 1},
    {"minor", F_INT, DEV(minor), 0, 0, 254, -1, 0},
    {"nvlink", F_OTHER, 0, 0, 0, 0, -1, 1},
    {"nvswitch_links", F_INT, DEV(nvswitch_links), 0, 0, NVML_NVLINK_MAX_LINKS, -1, 1},
    {"mig", F_OTHER, 0, 0, 0, 0, -1, 1},
    {"utilization", F_PATTERN, 0, 0, 0, 100, MOCK_UTIL, 1},
    {"memory_utilization", F_PATTERN, 0, 0, 0, 100, MOCK_MEM_UTIL, 1},
    {"memory_used_mib", F_PATTERN, 0, 0, 0, 1 << 24, MOCK_MEM_USED, 1},
    {"temperature", F_PATTERN, 0, 0, 0, 150, MOCK_TEMPERATURE, 1},
    {"power_w", F_PATTERN, 0, 0, 0, 5000, MOCK_POWER, 1},
    {"encoder_utilization", F_PATTERN, 0, 0, 0, 100, MOCK_ENC_UTIL, 1},
    {"decoder_utilization", F_PATTERN, 0, 0, 0, 100, MOCK_DEC_UTIL, 1},
    {"power_limit_w", F_INT, DEV(power_limit_w), 0, 0, 5000, -1, 1},
    {"encoder", F_BOOL, DEV(encoder), 0, 0, 0, -1, 1},
    {"sm_clock_mhz", F_INT, DEV(sm_clock_mhz), 0, 0, 10000, -1, 1},
    {"memory_clock_mhz", F_INT, DEV(mem_clock_mhz), 0, 0, 20000, -1, 1},
    {"ecc", F_BOOL, DEV(ecc), 0, 0, 0, -1, 1},
    {"ecc_corrected", F_INT, DEV(ecc_corrected), 0, 0, 1e12, -1, 1},
    {"ecc_uncorrected", F_INT, DEV(ecc_uncorrected), 0, 0, 1e12, -1, 1},
};

#define NFIELDS (sizeof(gpu_fields) / sizeof(gpu_fields[0]))

/* The first line of a sequence item ("gpus[2]"): that of its first key; 0 when it has none. */
static long item_line(json_t *lines, const char *item)
{
    size_t n = strlen(item);
    long best = 0;
    const char *k;
    json_t *v;
    json_object_foreach(lines, k, v)
    {
        long l = (long)json_integer_value(v);
        if (strncmp(k, item, n) == 0 && k[n] == '.' && (best == 0 || l < best)) {
            best = l;
        }
    }
    return best;
}

/* The line of path's key, or of the nearest enclosing key or item; 0 when none is known. */
static long line_of(json_t *lines, const char *path)
{
    char p[512];
    snprintf(p, sizeof(p), "%s", path);
    for (;;) {
        json_t *v = json_object_get(lines, p);
        size_t n = strlen(p);
        long item = n && p[n - 1] == ']' ? item_line(lines, p) : 0;
        if (json_is_integer(v) || item > 0) {
            return item > 0 ? item : (long)json_integer_value(v);
        }
        char *dot = strrchr(p, '.'), *br = strrchr(p, '[');
        char *cut = !dot ? br : !br ? dot : dot > br ? dot : br;
        if (!cut) {
            return 0;
        }
        *cut = '\0';
    }
}

__attribute__((format(printf, 3, 4))) static nvmlReturn_t perr(pctx *c, const char *path,
                                                               const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    long line = line_of(c->lines, path);
    if (line > 0) {
        snprintf(c->err, c->errlen, "%s:%ld: %s: %s", c->file, line, path, msg);
    } else {
        snprintf(c->err, c->errlen, "%s: %s: %s", c->file, path, msg);
    }
    return NVML_ERROR_UNKNOWN;
}

/* The path of a GPU field: "gpus[i].key", or "defaults.key" when the value came from there. */
static void fpath(const pctx *c, const char *key, char *out, size_t len)
{
    if (c->own && !json_object_get(c->own, key)) {
        snprintf(out, len, "defaults.%s", key);
    } else {
        snprintf(out, len, "gpus[%d].%s", c->gpu, key);
    }
}

/* Refuses keys of obj not in names (NULL-terminated). */
static nvmlReturn_t check_keys(pctx *c, json_t *obj, const char *path, const char *const *names)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        int ok = 0;
        for (int i = 0; names[i] && !ok; i++) {
            ok = strcmp(names[i], k) == 0;
        }
        if (!ok) {
            char p[256];
            snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "", k);
            return perr(c, p, "unknown field");
        }
    }
    return NVML_SUCCESS;
}

/* Refuses keys of obj that are not GPU fields. */
static nvmlReturn_t check_fields(pctx *c, json_t *obj, const char *path)
{
    const char *names[NFIELDS + 1];
    for (size_t k = 0; k < NFIELDS; k++) {
        names[k] = gpu_fields[k].name;
    }
    names[NFIELDS] = NULL;
    return check_keys(c, obj, path, names);
}

static nvmlReturn_t get_int(pctx *c, const char *path, json_t *v, double min, double max,
                            int64_t *out)
{
    if (!json_is_integer(v) || (double)json_integer_value(v) < min ||
        (double)json_integer_value(v) > max) {
        return perr(c, path, "must be an integer from %.0f to %.0f", min, max);
    }
    *out = json_integer_value(v);
    return NVML_SUCCESS;
}

/* "0x20B210DE" (YAML leaves hex as a string). */
static nvmlReturn_t get_hex(pctx *c, const char *path, json_t *v, double max, int64_t *out)
{
    const char *s = json_string_value(v);
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 16);
    if (strncmp(s, "0x", 2) != 0 || end == s + 2 || *end || errno || (double)x > max) {
        return perr(c, path, "must be an integer (0x for hex) from 0 to %.0f", max);
    }
    *out = (int64_t)x;
    return NVML_SUCCESS;
}

static nvmlReturn_t get_num(pctx *c, const char *path, json_t *v, double min, double max,
                            double *out)
{
    if (!json_is_number(v) || json_number_value(v) < min || json_number_value(v) > max) {
        return perr(c, path, "must be a number from %g to %g", min, max);
    }
    *out = json_number_value(v);
    return NVML_SUCCESS;
}

static nvmlReturn_t get_str(pctx *c, const char *path, json_t *v, char *out, size_t len)
{
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= len) {
        return perr(c, path, "must be a non-empty string under %zu bytes", len);
    }
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return NVML_SUCCESS;
}

/* A number, or {kind: constant|sine|step, ...}. */
static nvmlReturn_t get_pattern(pctx *c, const char *path, json_t *v, const field *f,
                                mock_pattern *p)
{
    static const char *const keys[] = {"kind", "value", "min", "max", "period_s", "values", NULL};
    memset(p, 0, sizeof(*p));
    p->nvalues = 1;
    if (json_is_number(v)) {
        return get_num(c, path, v, f->min, f->max, &p->values[0]);
    }
    if (!json_is_object(v)) {
        return perr(c, path, "must be a number or a mapping with kind: constant, sine or step");
    }
    nvmlReturn_t rc = check_keys(c, v, path, keys);
    const char *kind = json_string_value(json_object_get(v, "kind"));
    char sub[256];
    snprintf(sub, sizeof(sub), "%s.kind", path);
    if (rc == NVML_SUCCESS &&
        (!kind || (strcmp(kind, "constant") && strcmp(kind, "sine") && strcmp(kind, "step")))) {
        rc = perr(c, sub, "must be constant, sine or step");
    }
    if (rc != NVML_SUCCESS) {
        return rc;
    }
    p->kind = kind[1] == 'o' ? MOCK_CONSTANT : kind[1] == 'i' ? MOCK_SINE : MOCK_STEP;
    const char *need[3] = {"value", NULL, NULL};
    if (p->kind == MOCK_SINE) {
        need[0] = "min", need[1] = "max", need[2] = "period_s";
    } else if (p->kind == MOCK_STEP) {
        need[0] = "values", need[1] = "period_s";
    }
    for (int i = 0; i < 3 && need[i]; i++) {
        json_t *x = json_object_get(v, need[i]);
        snprintf(sub, sizeof(sub), "%s.%s", path, need[i]);
        if (!x) {
            return perr(c, path, "%s: required for kind %s", need[i], kind);
        }
        if (strcmp(need[i], "values") == 0) {
            size_t k;
            json_t *e;
            if (!json_is_array(x) || json_array_size(x) == 0 ||
                json_array_size(x) > MOCK_MAX_STEPS) {
                return perr(c, sub, "must be a list of 1 to %d numbers", MOCK_MAX_STEPS);
            }
            json_array_foreach(x, k, e)
            {
                if ((rc = get_num(c, sub, e, f->min, f->max, &p->values[k])) != NVML_SUCCESS) {
                    return rc;
                }
            }
            p->nvalues = (int)json_array_size(x);
            continue;
        }
        double *dst = strcmp(need[i], "value") == 0 ? &p->values[0]
                      : strcmp(need[i], "min") == 0 ? &p->min
                      : strcmp(need[i], "max") == 0 ? &p->max
                                                    : &p->period_s;
        int period = dst == &p->period_s;
        rc = get_num(c, sub, x, period ? 0.001 : f->min, period ? 1e9 : f->max, dst);
        if (rc != NVML_SUCCESS) {
            return rc;
        }
    }
    return NVML_SUCCESS;
}

/* The scalar and pattern fields of one GPU (merged object m). */
static nvmlReturn_t read_fields(pctx *c, json_t *m, struct nvmlDevice_st *g)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        const field *f = &gpu_fields[i];
        json_t *v = json_object_get(m, f->name);
        char path[128];
        fpath(c, f->name, path, sizeof(path));
        nvmlReturn_t rc = NVML_SUCCESS;
        if (!v || f->type == F_OTHER) {
            continue;
        }
        char *dst = (char *)g + f->off;
        if (f->type == F_STR) {
            rc = get_str(c, path, v, dst, f->len);
        } else if (f->type == F_HEX && json_is_string(v)) {
            rc = get_hex(c, path, v, f->max, (int64_t *)(void *)dst);
        } else if (f->type == F_INT || f->type == F_HEX) {
            rc = get_int(c, path, v, f->min, f->max, (int64_t *)(void *)dst);
        } else if (f->type == F_BOOL && !json_is_boolean(v)) {
            rc = perr(c, path, "must be true or false");
        } else if (f->type == F_BOOL) {
            *(int *)(void *)dst = json_is_true(v);
        } else {
            rc = get_pattern(c, path, v, f, &g->pattern[f->reading]);
        }
        if (rc != NVML_SUCCESS) {
            return rc;
        }
    }
    static const char *const required[] = {"uuid", "name", "memory_mib"};
    for (size_t i = 0; i < 3; i++) {
        if (!json_object_get(m, required[i])) {
            char path[64];
            snprintf(path, sizeof(path), "gpus[%d]", c->gpu);
            return perr(c, path, "%s: required", required[i]);
        }
    }
    return NVML_SUCCESS;
}

/* "00000000:07:00.0" or "0000:07:00.0" -> normalized bus_id and its numbers. */
static nvmlReturn_t read_pci(pctx *c, struct nvmlDevice_st *g)
{
    char path[64];
    fpath(c, "pci_bus_id", path, sizeof(path));
    if (!g->bus_id[0]) {
        snprintf(g->bus_id, sizeof(g->bus_id), "00000000:%02X:00.0", 0x10 + g->index);
    }
    unsigned int dom, bus, dev, fn;
    int n = 0;
    if (sscanf(g->bus_id, "%x:%x:%x.%x%n", &dom, &bus, &dev, &fn, &n) != 4 ||
        g->bus_id[n] != '\0' || bus > 0xff || dev > 0x1f || fn > 7) {
        return perr(c, path, "must be a PCI address DOMAIN:BUS:DEVICE.FUNCTION in hex");
    }
    snprintf(g->bus_id, sizeof(g->bus_id), "%08X:%02X:%02X.%X", dom, bus, dev, fn);
    g->domain = dom, g->bus = bus, g->device = dev;
    return NVML_SUCCESS;
}

/* One entry of mig.instances, read but not yet placed. */
typedef struct inst {
    char path[160]; /* "gpus[0].mig.instances[2]" */
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    const gp_mig_profile *p;
    int64_t memory_mib;
    int start; /* -1: not given */
} inst;

/* "0, 4": the legal starts of p. */
static const char *legal_starts(const gp_mig_profile *p, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int s = 0; s < GP_MIG_MEMORY_SLICES && n < len; s++) {
        if (p->legal_starts & (1u << s)) {
            n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? ", " : "", s);
        }
    }
    return buf;
}

static nvmlReturn_t read_instance(pctx *c, json_t *v, gp_mig_geometry geo,
                                  const struct nvmlDevice_st *g, inst *in)
{
    static const char *const keys[] = {"uuid", "profile", "memory_mib", "start", NULL};
    char sub[sizeof(in->path) + 16], profile[32], legal[32];
    if (!json_is_object(v)) {
        return perr(c, in->path, "must be a mapping {uuid, profile, memory_mib, start}");
    }
    nvmlReturn_t rc = check_keys(c, v, in->path, keys);
    snprintf(sub, sizeof(sub), "%.150s.uuid", in->path);
    if (rc == NVML_SUCCESS) {
        rc = get_str(c, sub, json_object_get(v, "uuid"), in->uuid, sizeof(in->uuid));
    }
    if (rc == NVML_SUCCESS && strncmp(in->uuid, "MIG-", 4) != 0) {
        rc = perr(c, sub, "must start with MIG-");
    }
    snprintf(sub, sizeof(sub), "%.150s.profile", in->path);
    if (rc == NVML_SUCCESS) {
        rc = get_str(c, sub, json_object_get(v, "profile"), profile, sizeof(profile));
    }
    in->p = rc == NVML_SUCCESS ? gp_mig_find(geo, profile) : NULL;
    if (rc == NVML_SUCCESS && !in->p) {
        rc = perr(c, sub, "%s has no MIG profile %s", g->name, profile);
    }
    if (rc == NVML_SUCCESS && strlen(g->name) + 5 + strlen(profile) >= sizeof(g->name)) {
        rc = perr(c, in->path, "name too long");
    }
    json_t *mem = json_object_get(v, "memory_mib");
    snprintf(sub, sizeof(sub), "%.150s.memory_mib", in->path);
    in->memory_mib = in->p ? mock_profile_mib(g, in->p) : 0;
    if (rc == NVML_SUCCESS && mem) {
        rc = get_int(c, sub, mem, 1, (double)g->memory_mib, &in->memory_mib);
    }
    json_t *start = json_object_get(v, "start");
    snprintf(sub, sizeof(sub), "%.150s.start", in->path);
    int64_t st = -1;
    if (rc == NVML_SUCCESS && start) {
        rc = get_int(c, sub, start, 0, GP_MIG_MEMORY_SLICES - 1, &st);
    }
    if (rc == NVML_SUCCESS && st >= 0 && !(in->p->legal_starts & (1u << st))) {
        rc = perr(c, sub, "%s cannot start at memory slice %lld (legal starts: %s)", in->p->name,
                  (long long)st, legal_starts(in->p, legal, sizeof(legal)));
    }
    in->start = (int)st;
    return rc;
}

/* Memory slices first-last of in, as "4-7" or "2". */
static const char *slices(const inst *in, char *buf, size_t len)
{
    int last = in->start + in->p->memory_slices - 1;
    if (last == in->start) {
        snprintf(buf, len, "%d", in->start);
    } else {
        snprintf(buf, len, "%d-%d", in->start, last);
    }
    return buf;
}

/* Places the instances: those with a start where they say (refusing overlaps), then the others in
 * listed order at the first legal start still free; then checks the compute slices. */
static nvmlReturn_t place(pctx *c, inst *in, int n)
{
    uint8_t used = 0;
    int compute = 0;
    char a[16], b[16], sub[192];
    for (int k = 0; k < n; k++) {
        if (in[k].start < 0) {
            continue;
        }
        uint8_t mask = gp_mig_mask(in[k].p, in[k].start);
        for (int j = 0; j < k && (used & mask); j++) {
            if (in[j].start >= 0 && (gp_mig_mask(in[j].p, in[j].start) & mask)) {
                snprintf(sub, sizeof(sub), "%s.start", in[k].path);
                return perr(c, sub, "memory slices %s overlap %s (%s at memory slices %s)",
                            slices(&in[k], a, sizeof(a)), in[j].path, in[j].p->name,
                            slices(&in[j], b, sizeof(b)));
            }
        }
        used |= mask;
    }
    for (int k = 0; k < n; k++) {
        for (int s = 0; in[k].start < 0 && s < GP_MIG_MEMORY_SLICES; s++) {
            if ((in[k].p->legal_starts & (1u << s)) && !(used & gp_mig_mask(in[k].p, s))) {
                in[k].start = s;
            }
        }
        if (in[k].start < 0) {
            char legal[32];
            return perr(c, in[k].path,
                        "no legal start of %s is free (legal starts: %s; the other instances "
                        "take their memory slices)",
                        in[k].p->name, legal_starts(in[k].p, legal, sizeof(legal)));
        }
        used |= gp_mig_mask(in[k].p, in[k].start);
        compute += in[k].p->compute_slices;
        if (compute > GP_MIG_COMPUTE_SLICES) {
            return perr(c, in[k].path, "the instances take more than the GPU's 7 compute slices");
        }
    }
    return NVML_SUCCESS;
}

/* mig: false | {enabled: bool, instances: [...]}; the model must have a MIG geometry. Each
 * instance becomes a GPU instance (ids 1.. in listed order) with one compute instance taking all
 * of it, whose MIG device has the instance's uuid. */
static nvmlReturn_t read_mig(pctx *c, json_t *m, mock_inv *inv, struct nvmlDevice_st *g)
{
    static const char *const keys[] = {"enabled", "instances", NULL};
    char path[64], sub[128];
    fpath(c, "mig", path, sizeof(path));
    json_t *v = json_object_get(m, "mig");
    if (!v || json_is_false(v)) {
        return NVML_SUCCESS;
    }
    if (!json_is_object(v) || !json_is_boolean(json_object_get(v, "enabled"))) {
        return perr(c, path, "must be false or a mapping {enabled: true|false, instances}");
    }
    nvmlReturn_t rc = check_keys(c, v, path, keys);
    if (rc == NVML_SUCCESS && g->geo == GP_MIG_NONE) {
        rc = perr(c, path, "%s has no MIG", g->name);
    }
    json_t *list = json_object_get(v, "instances");
    snprintf(sub, sizeof(sub), "%s.instances", path);
    g->mig_capable = 1;
    g->mig_enabled = json_is_true(json_object_get(v, "enabled"));
    if (rc == NVML_SUCCESS && list &&
        (!json_is_array(list) || json_array_size(list) > MOCK_MAX_MIG || !g->mig_enabled)) {
        rc = perr(c, sub, "must be a list of at most %d instances, with enabled: true",
                  MOCK_MAX_MIG);
    }
    inst in[MOCK_MAX_MIG];
    int n = rc == NVML_SUCCESS ? (int)json_array_size(list) : 0;
    for (int k = 0; rc == NVML_SUCCESS && k < n; k++) {
        snprintf(in[k].path, sizeof(in[k].path), "%s[%d]", sub, k);
        rc = read_instance(c, json_array_get(list, (size_t)k), g->geo, g, &in[k]);
    }
    if (rc == NVML_SUCCESS) {
        rc = place(c, in, n);
    }
    for (int k = 0; rc == NVML_SUCCESS && k < n; k++) {
        struct nvmlGpuInstance_st *gi = NULL;
        struct nvmlComputeInstance_st *ci = NULL;
        rc = mock_gi_create(g, in[k].p, (unsigned int)in[k].start, &gi);
        if (rc == NVML_SUCCESS) {
            rc = mock_ci_create(inv, gi, mock_ci_whole_profile(in[k].p), in[k].uuid,
                                in[k].memory_mib, &ci);
        }
        if (rc != NVML_SUCCESS) {
            rc = perr(c, in[k].path, "cannot be created (NVML %d)", (int)rc);
        }
    }
    return rc;
}

static void gpu_defaults(struct nvmlDevice_st *g, int index)
{
    memset(g, 0, sizeof(*g));
    g->index = index;
    g->numa = -1;
    g->minor = index;
    g->sm_clock_mhz = 1410;
    g->mem_clock_mhz = 1593;
    g->ecc = 1;
    g->encoder = 1;
    static const double values[MOCK_READING_COUNT] = {0, 0, 0, 35, 60, 0, 0};
    for (int r = 0; r < MOCK_READING_COUNT; r++) {
        g->pattern[r].nvalues = 1;
        g->pattern[r].values[0] = values[r];
    }
}

/* GPU i from its item merged over the defaults (the merged object is kept in merged[i]). */
static nvmlReturn_t read_gpu(pctx *c, json_t *defaults, json_t *item, mock_inv *inv, int i,
                             json_t *merged)
{
    char path[32];
    snprintf(path, sizeof(path), "gpus[%d]", i);
    if (!json_is_object(item)) {
        return perr(c, path, "must be a mapping");
    }
    nvmlReturn_t rc = check_fields(c, item, path);
    json_t *m = json_deep_copy(defaults);
    if (!m || json_array_append_new(merged, m) || json_object_update(m, item)) {
        return rc == NVML_SUCCESS ? NVML_ERROR_MEMORY : rc;
    }
    c->own = item;
    c->gpu = i;
    struct nvmlDevice_st *g = &inv->gpus[i];
    gpu_defaults(g, i);
    g->gi = inv->gis[i];
    g->cis = inv->cis[i];
    if (rc == NVML_SUCCESS) {
        rc = read_fields(c, m, g);
        g->ecc_uncorrected_aggregate = g->ecc_uncorrected;
    }
    if (rc == NVML_SUCCESS && strncmp(g->uuid, "GPU-", 4) != 0) {
        fpath(c, "uuid", path, sizeof(path));
        rc = perr(c, path, "must start with GPU-");
    }
    if (rc == NVML_SUCCESS) {
        rc = read_pci(c, g);
    }
    if (rc == NVML_SUCCESS) {
        g->geo = gp_mig_geometry_of_model(g->name);
        rc = read_mig(c, m, inv, g);
    }
    return rc;
}

/* GPU i's links: its nvlink list (validated against the GPU count), then its NVSwitch links. */
static nvmlReturn_t read_links(pctx *c, json_t *m, mock_inv *inv, int i)
{
    struct nvmlDevice_st *g = &inv->gpus[i];
    json_t *v = json_object_get(m, "nvlink");
    char path[64], sub[96];
    fpath(c, "nvlink", path, sizeof(path));
    if (v && !json_is_array(v)) {
        return perr(c, path, "must be a list of GPU indexes");
    }
    size_t k;
    json_t *e;
    json_array_foreach(v, k, e)
    {
        snprintf(sub, sizeof(sub), "%s[%zu]", path, k);
        if (!json_is_integer(e)) {
            return perr(c, sub, "must be a GPU index");
        }
        json_int_t p = json_integer_value(e);
        if (p < 0 || p >= inv->ngpus) {
            return perr(c, sub, "no GPU %lld (the inventory has %d)", (long long)p, inv->ngpus);
        }
        if (p == i) {
            return perr(c, sub, "a GPU has no NVLink to itself");
        }
        if (g->nlinks == NVML_NVLINK_MAX_LINKS) {
            return perr(c, sub, "more than %d links", NVML_NVLINK_MAX_LINKS);
        }
        g->link_peer[g->nlinks++] = (int)p;
    }
    if (g->nlinks + g->nvswitch_links > NVML_NVLINK_MAX_LINKS) {
        fpath(c, "nvswitch_links", path, sizeof(path));
        return perr(c, path, "nvlink and nvswitch_links: more than %d links",
                    NVML_NVLINK_MAX_LINKS);
    }
    while (g->nvswitch_links-- > 0) {
        g->link_peer[g->nlinks++] = -1;
    }
    return NVML_SUCCESS;
}

/* Links are symmetric, UUIDs, PCI addresses and minor numbers unique. */
static nvmlReturn_t cross_check(pctx *c, mock_inv *inv)
{
    char path[64];
    for (int i = 0; i < inv->ngpus; i++) {
        const struct nvmlDevice_st *g = &inv->gpus[i];
        for (int l = 0; l < g->nlinks; l++) {
            int p = g->link_peer[l], back = 0;
            for (int k = 0; p >= 0 && k < inv->gpus[p].nlinks; k++) {
                back |= inv->gpus[p].link_peer[k] == i;
            }
            if (p >= 0 && !back) {
                snprintf(path, sizeof(path), "gpus[%d].nvlink", i);
                return perr(c, path, "GPU %d does not list GPU %d back", p, i);
            }
        }
        for (int j = 0; j < i; j++) {
            if (strcmp(g->uuid, inv->gpus[j].uuid) == 0) {
                snprintf(path, sizeof(path), "gpus[%d].uuid", i);
                return perr(c, path, "%s is also GPU %d's", g->uuid, j);
            }
            if (strcmp(g->bus_id, inv->gpus[j].bus_id) == 0) {
                snprintf(path, sizeof(path), "gpus[%d].pci_bus_id", i);
                return perr(c, path, "%s is also GPU %d's", g->bus_id, j);
            }
            if (g->minor == inv->gpus[j].minor) {
                snprintf(path, sizeof(path), "gpus[%d].minor", i);
                return perr(c, path, "%lld is also GPU %d's", (long long)g->minor, j);
            }
        }
    }
    return NVML_SUCCESS;
}

static nvmlReturn_t read_gpus(pctx *c, json_t *top, mock_inv *inv)
{
    json_t *defaults = json_object_get(top, "defaults");
    json_t *gpus = json_object_get(top, "gpus");
    if (defaults && !json_is_object(defaults)) {
        return perr(c, "defaults", "must be a mapping of GPU fields");
    }
    nvmlReturn_t rc = defaults ? check_fields(c, defaults, "defaults") : NVML_SUCCESS;
    if (rc != NVML_SUCCESS) {
        return rc;
    }
    for (size_t k = 0; k < NFIELDS; k++) {
        char path[64];
        snprintf(path, sizeof(path), "defaults.%s", gpu_fields[k].name);
        if (!gpu_fields[k].in_defaults && json_object_get(defaults, gpu_fields[k].name)) {
            return perr(c, path, "must be given per GPU");
        }
    }
    if (!json_is_array(gpus) || json_array_size(gpus) == 0 ||
        json_array_size(gpus) > MOCK_MAX_GPUS) {
        return perr(c, "gpus", "must be a list of 1 to %d GPUs", MOCK_MAX_GPUS);
    }
    inv->ngpus = (int)json_array_size(gpus);
    json_t *empty = defaults ? NULL : json_object();
    json_t *merged = json_array();
    rc = merged && (defaults || empty) ? NVML_SUCCESS : NVML_ERROR_MEMORY;
    for (int i = 0; rc == NVML_SUCCESS && i < inv->ngpus; i++) {
        rc = read_gpu(c, defaults ? defaults : empty, json_array_get(gpus, (size_t)i), inv, i,
                      merged);
    }
    for (int i = 0; rc == NVML_SUCCESS && i < inv->ngpus; i++) {
        c->own = json_array_get(gpus, (size_t)i);
        c->gpu = i;
        rc = read_links(c, json_array_get(merged, (size_t)i), inv, i);
    }
    c->own = NULL;
    json_decref(empty);
    json_decref(merged);
    return rc == NVML_SUCCESS ? cross_check(c, inv) : rc;
}

static nvmlReturn_t read_top(pctx *c, json_t *top, mock_inv *inv)
{
    static const char *const keys[] = {"driver_version", "cuda_version", "control",
                                       "defaults",       "gpus",         NULL};
    if (!json_is_object(top)) {
        return perr(c, "", "the inventory must be a mapping");
    }
    nvmlReturn_t rc = check_keys(c, top, "", keys);
    snprintf(inv->driver, sizeof(inv->driver), "550.54.15");
    inv->cuda = 12040;
    json_t *v = json_object_get(top, "driver_version");
    if (rc == NVML_SUCCESS && v) {
        rc = get_str(c, "driver_version", v, inv->driver, sizeof(inv->driver));
    }
    char cuda[16];
    int major = 0, minor = 0, n = 0;
    v = json_object_get(top, "cuda_version");
    if (rc == NVML_SUCCESS && v) {
        rc = get_str(c, "cuda_version", v, cuda, sizeof(cuda));
    }
    if (rc == NVML_SUCCESS && v) {
        if (sscanf(cuda, "%d.%d%n", &major, &minor, &n) != 2 || cuda[n] || major < 1 ||
            major > 99 || minor < 0 || minor > 9) {
            rc = perr(c, "cuda_version", "must be MAJOR.MINOR, as \"12.4\"");
        }
        inv->cuda = major * 1000 + minor * 10;
    }
    v = json_object_get(top, "control");
    if (rc == NVML_SUCCESS && v) {
        char rel[MOCK_PATH_MAX];
        rc = get_str(c, "control", v, rel, sizeof(rel));
        const char *slash = strrchr(c->file, '/');
        int dir = rel[0] != '/' && slash ? (int)(slash - c->file) + 1 : 0;
        if (rc == NVML_SUCCESS && snprintf(inv->control, sizeof(inv->control), "%.*s%s", dir,
                                           c->file, rel) >= (int)sizeof(inv->control)) {
            rc = perr(c, "control", "path too long");
        }
    }
    return rc == NVML_SUCCESS ? read_gpus(c, top, inv) : rc;
}

/* Reads the whole file; NULL with err set when it cannot. */
static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *buf = f ? malloc(MAX_FILE + 1) : NULL;
    if (!buf) {
        snprintf(err, errlen, "%s: cannot read the inventory: %s", path, strerror(errno));
        if (f) {
            fclose(f);
        }
        return NULL;
    }
    *len = fread(buf, 1, MAX_FILE + 1, f);
    int bad = ferror(f) || *len > MAX_FILE;
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "%s: cannot read the inventory (larger than 1 MiB?)", path);
        free(buf);
        return NULL;
    }
    buf[*len] = '\0';
    return buf;
}

nvmlReturn_t mock_inv_load(const char *path, mock_inv *inv, char *err, size_t errlen)
{
    memset(inv, 0, sizeof(*inv));
    size_t len = 0;
    char *text = slurp(path, &len, err, errlen);
    if (!text) {
        return NVML_ERROR_DRIVER_NOT_LOADED;
    }
    json_t *top = NULL, *lines = NULL;
    gp_diag d;
    int prc = gp_yaml_to_json_lines(text, len, &top, &lines, &d);
    free(text);
    if (prc < 0) {
        long line = 0, col = 0;
        int n = 0;
        if (sscanf(d.msg, "line %ld, column %ld: %n", &line, &col, &n) == 2 && n > 0) {
            snprintf(err, errlen, "%s:%ld:%ld: %s", path, line, col, d.msg + n);
        } else {
            snprintf(err, errlen, "%s: %s", path, d.msg);
        }
        return NVML_ERROR_UNKNOWN;
    }
    pctx c = {path, lines, err, errlen, NULL, 0};
    snprintf(inv->path, sizeof(inv->path), "%s", path);
    nvmlReturn_t rc = read_top(&c, top, inv);
    json_decref(top);
    json_decref(lines);
    return rc;
}
