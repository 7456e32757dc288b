/*
 * The CDI spec of the node's GPUs and the MIG capability table (see cdi.h). Pure: the inventory
 * and what the host offers come in, JSON comes out.
 */
#include "agent/cdi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Device nodes every GPU container needs, beside its GPUs' own. */
static const char *const shared_nodes[] = {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"};

/* ---- the MIG capability table ---- */

/* A decimal number at *p (advanced past it); -1 when none or too large. */
static long number(const char **p)
{
    long v = 0;
    const char *s = *p;
    if (*s < '0' || *s > '9') {
        return -1;
    }
    while (*s >= '0' && *s <= '9' && v < 1000000) {
        v = v * 10 + (*s++ - '0');
    }
    *p = s;
    return v < 1000000 ? v : -1;
}

/* Expects the literal lit at *p (advanced past it). */
static bool literal(const char **p, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(*p, lit, n) != 0) {
        return false;
    }
    *p += n;
    return true;
}

/* One line "gpuG/giI[/ciC]/access N" (ending at '\n' or '\0'): 1 when taken. */
static int caps_line(const char *s, gp_cdi_mig_caps *out)
{
    long gpu = -1, gi = -1, ci = -1, minor = -1;
    if (!literal(&s, "gpu") || (gpu = number(&s)) < 0 || !literal(&s, "/gi") ||
        (gi = number(&s)) < 0) {
        return 0;
    }
    if (literal(&s, "/ci") && (ci = number(&s)) < 0) {
        return 0;
    }
    if (!literal(&s, "/access ") || (minor = number(&s)) < 0 || (*s && *s != '\n')) {
        return 0;
    }
    if (gpu >= GP_CDI_CAP_GPUS || gi >= GP_CDI_CAP_GIS || ci >= GP_CDI_CAP_CIS) {
        return 0;
    }
    if (ci < 0) {
        out->gi[gpu][gi] = (int)minor;
    } else {
        out->ci[gpu][gi][ci] = (int)minor;
    }
    return 1;
}

int gp_cdi_mig_caps_parse(const char *text, gp_cdi_mig_caps *out)
{
    memset(out, 0xff, sizeof(*out)); /* every entry -1 */
    int taken = 0;
    for (const char *s = text; s && *s;) {
        taken += caps_line(s, out);
        s = strchr(s, '\n');
        s = s ? s + 1 : NULL;
    }
    return taken;
}

/* ---- names ---- */

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool gp_cdi_name_valid(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 256 || !alnum(name[0]) || !alnum(name[n - 1])) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!alnum(name[i]) && !strchr("_-.:", name[i])) {
            return false;
        }
    }
    return true;
}

bool gp_cdi_mig_same(const gp_nvml_gpu *g, const gp_nvml_mig_reading *now, int n)
{
    if (n != g->nmig) {
        return false;
    }
    for (int i = 0; i < n; i++) {
        bool found = false;
        for (int k = 0; k < g->nmig && !found; k++) {
            found = strcmp(now[i].uuid, g->mig[k].uuid) == 0;
        }
        if (!found) {
            return false;
        }
    }
    return true;
}

/* ---- the spec ---- */

/* A device node: path /dev/REL in the container, DEV_ROOT/REL on the host. */
static json_t *node(const char *dev_root, const char *rel)
{
    char path[GP_CDI_PATH_MAX], host[GP_CDI_PATH_MAX];
    snprintf(path, sizeof(path), "/dev/%s", rel);
    snprintf(host, sizeof(host), "%s/%s", dev_root, rel);
    return json_pack("{s:s, s:s}", "path", path, "hostPath", host);
}

static void skip(json_t *skipped, const char *device, const char *reason)
{
    json_array_append_new(skipped, json_pack("{s:s, s:s}", "device", device, "reason", reason));
}

static json_t *device(const char *name, json_t *nodes)
{
    return json_pack("{s:s, s:{s:o}}", "name", name, "containerEdits", "deviceNodes", nodes);
}

/* MIG device m of GPU g: its parent's node and its two capability nodes; NULL (and a line in
 * skipped) when one cannot be named. */
static json_t *mig_device(const gp_nvml_gpu *g, const gp_nvml_mig *m, const gp_cdi_host *host,
                          const char *parent, json_t *skipped)
{
    const char *why = NULL;
    int gi = m->gpu_instance, ci = m->compute_instance;
    if (gi < 0 || ci < 0) {
        why = "NVML does not tell its GPU instance and compute instance ids";
    } else if (!host->caps) {
        why = "no MIG capability table (/proc/driver/nvidia-caps/mig-minors)";
    } else if (g->minor >= GP_CDI_CAP_GPUS || gi >= GP_CDI_CAP_GIS || ci >= GP_CDI_CAP_CIS ||
               host->caps->gi[g->minor][gi] < 0 || host->caps->ci[g->minor][gi][ci] < 0) {
        why = "its capability minors are not in the MIG capability table";
    }
    if (why) {
        skip(skipped, m->uuid, why);
        return NULL;
    }
    char gicap[64], cicap[64];
    snprintf(gicap, sizeof(gicap), "nvidia-caps/nvidia-cap%d", host->caps->gi[g->minor][gi]);
    snprintf(cicap, sizeof(cicap), "nvidia-caps/nvidia-cap%d", host->caps->ci[g->minor][gi][ci]);
    json_t *nodes = json_array();
    json_array_append_new(nodes, node(host->dev_root, parent));
    json_array_append_new(nodes, node(host->dev_root, gicap));
    json_array_append_new(nodes, node(host->dev_root, cicap));
    return device(m->uuid, nodes);
}

/* GPU g's device and its MIG devices' into devices; what cannot be named into skipped. */
static void gpu_devices(const gp_nvml_gpu *g, const gp_cdi_host *host, json_t *devices,
                        json_t *skipped)
{
    char label[32];
    snprintf(label, sizeof(label), "GPU %d", g->index);
    if (!gp_cdi_name_valid(g->uuid)) {
        skip(skipped, label, "its UUID is not a CDI device name");
        return;
    }
    if (g->minor < 0) {
        skip(skipped, g->uuid, "NVML does not tell its minor number");
        for (int m = 0; m < g->nmig; m++) {
            skip(skipped, g->mig[m].uuid, "NVML does not tell its GPU's minor number");
        }
        return;
    }
    char parent[32];
    snprintf(parent, sizeof(parent), "nvidia%d", g->minor);
    json_t *nodes = json_array();
    json_array_append_new(nodes, node(host->dev_root, parent));
    json_array_append_new(devices, device(g->uuid, nodes));
    for (int m = 0; m < g->nmig; m++) {
        if (!gp_cdi_name_valid(g->mig[m].uuid)) {
            skip(skipped, label, "a MIG device's UUID is not a CDI device name");
            continue;
        }
        json_t *dev = mig_device(g, &g->mig[m], host, parent, skipped);
        if (dev) {
            json_array_append_new(devices, dev);
        }
    }
}

/* The edits every device shares: control nodes, driver files, the env. */
static json_t *shared_edits(const gp_cdi_host *host)
{
    json_t *nodes = json_array(), *mounts = json_array();
    for (size_t i = 0; i < sizeof(shared_nodes) / sizeof(shared_nodes[0]); i++) {
        json_array_append_new(nodes, node(host->dev_root, shared_nodes[i]));
    }
    for (int i = 0; i < host->nmounts; i++) {
        json_array_append_new(mounts,
                              json_pack("{s:s, s:s, s:[s,s,s,s]}", "hostPath", host->mounts[i].host,
                                        "containerPath", host->mounts[i].container, "options", "ro",
                                        "nosuid", "nodev", "bind"));
    }
    json_t *edits =
        json_pack("{s:[s], s:o}", "env", "NVIDIA_VISIBLE_DEVICES=void", "deviceNodes", nodes);
    if (edits && json_array_size(mounts) > 0) {
        json_object_set(edits, "mounts", mounts);
    }
    json_decref(mounts);
    return edits;
}

static int check_host(const gp_cdi_host *host, gp_diag *d)
{
    if (!host->dev_root || host->dev_root[0] != '/' ||
        strlen(host->dev_root) > GP_CDI_PATH_MAX - 64) {
        return gp_diag_set(d, GP_EINVAL, "dev_root: an absolute directory, not \"%s\"",
                           host->dev_root ? host->dev_root : "");
    }
    for (int i = 0; i < host->nmounts; i++) {
        if (host->mounts[i].host[0] != '/' || host->mounts[i].container[0] != '/') {
            return gp_diag_set(d, GP_EINVAL, "mounts[%d]: absolute paths needed, not %s -> %s", i,
                               host->mounts[i].host, host->mounts[i].container);
        }
    }
    return 0;
}

int gp_cdi_spec(const gp_nvml_inv *inv, const gp_cdi_host *host, json_t **spec, json_t **skipped,
                gp_diag *d)
{
    *spec = NULL;
    if (skipped) {
        *skipped = NULL;
    }
    int rc = check_host(host, d);
    if (rc < 0) {
        return rc;
    }
    /* "/dev/" and "/dev" name the same directory: no "//" in host paths. */
    char root[GP_CDI_PATH_MAX];
    snprintf(root, sizeof(root), "%s", host->dev_root);
    for (size_t n = strlen(root); n > 1 && root[n - 1] == '/'; n--) {
        root[n - 1] = '\0';
    }
    gp_cdi_host h = *host;
    h.dev_root = strcmp(root, "/") == 0 ? "" : root;
    json_t *devices = json_array(), *left = json_array();
    for (int g = 0; g < inv->ngpus; g++) {
        gpu_devices(&inv->gpus[g], &h, devices, left);
    }
    json_t *doc = json_pack("{s:s, s:s, s:o, s:o}", "cdiVersion", GP_CDI_VERSION, "kind",
                            GP_CDI_KIND, "containerEdits", shared_edits(&h), "devices", devices);
    if (!doc || !left) {
        json_decref(doc);
        json_decref(left);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    *spec = doc;
    if (skipped) {
        *skipped = left;
    } else {
        json_decref(left);
    }
    return 0;
}
