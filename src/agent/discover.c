/* The discovery document (see discover.h). */
#include "agent/discover.h"

#include <stdio.h>
#include <stdlib.h>

static void set_if_known(json_t *o, const char *key, int64_t v)
{
    if (o && v >= 0) {
        json_object_set_new(o, key, json_integer((json_int_t)v));
    }
}

static json_t *readings_doc(const gp_nvml *h, int gpu)
{
    gp_nvml_readings r;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_nvml_sample(h, gpu, &r, &d) < 0) {
        return json_pack("{s:s}", "error", d.msg);
    }
    json_t *o = json_object();
    set_if_known(o, "utilization", r.util_gpu);
    set_if_known(o, "memory_utilization", r.util_memory);
    set_if_known(o, "memory_used_mib", r.memory_used_mib);
    set_if_known(o, "temperature_c", r.temperature_c);
    if (r.power_w >= 0) {
        json_object_set_new(o, "power_w", json_real(r.power_w));
    }
    set_if_known(o, "sm_clock_mhz", r.sm_clock_mhz);
    set_if_known(o, "memory_clock_mhz", r.memory_clock_mhz);
    set_if_known(o, "ecc_corrected", r.ecc_corrected);
    set_if_known(o, "ecc_uncorrected", r.ecc_uncorrected);
    return o;
}

static json_t *gpu_doc(const gp_nvml *h, const gp_nvml_gpu *g)
{
    json_t *peers = json_array(), *mig = json_array();
    for (int j = 0; j < GP_NVML_MAX_GPUS; j++) {
        if (g->nvlink & (UINT32_C(1) << j)) {
            json_array_append_new(peers, json_integer(j));
        }
    }
    for (int m = 0; m < g->nmig; m++) {
        const gp_nvml_mig *d = &g->mig[m];
        json_t *o = json_pack("{s:s, s:s, s:I}", "uuid", d->uuid, "profile", d->profile,
                              "memory_mib", (json_int_t)d->memory_mib);
        set_if_known(o, "gpu_instance", d->gpu_instance);
        set_if_known(o, "start", d->start);
        set_if_known(o, "size", d->size);
        set_if_known(o, "compute_instance", d->compute_instance);
        json_array_append_new(mig, o);
    }
    const char *mode = g->mig_mode < 0 ? "unsupported" : g->mig_mode ? "on" : "off";
    json_t *o = json_pack("{s:i, s:s, s:s, s:I, s:s, s:i, s:o, s:s, s:o, s:o}", "index", g->index,
                          "uuid", g->uuid, "name", g->name, "memory_mib", (json_int_t)g->memory_mib,
                          "pci_bus_id", g->pci_bus_id, "numa", g->numa, "nvlink", peers, "mig_mode",
                          mode, "mig", mig, "readings", readings_doc(h, g->index));
    set_if_known(o, "minor", g->minor);
    return o;
}

json_t *gp_nvml_describe(const gp_nvml *h, const gp_nvml_inv *inv)
{
    json_t *gpus = json_array();
    for (int i = 0; i < inv->ngpus; i++) {
        json_array_append_new(gpus, gpu_doc(h, &inv->gpus[i]));
    }
    return json_pack("{s:s, s:s, s:s, s:o}", "library", gp_nvml_path(h), "driver_version",
                     inv->driver_version, "cuda_version", inv->cuda_version, "gpus", gpus);
}

int gp_nvml_discover(const char *library, FILE *out, gp_diag *d)
{
    gp_nvml *h = NULL;
    int rc = gp_nvml_open(library, &h, d);
    if (rc < 0) {
        return rc;
    }
    gp_nvml_inv *inv = malloc(sizeof(*inv));
    if (!inv) {
        gp_nvml_close(h);
        return gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    if ((rc = gp_nvml_inventory(h, inv, d)) == 0) {
        json_t *doc = gp_nvml_describe(h, inv);
        if (!doc || json_dumpf(doc, out, JSON_INDENT(2)) < 0 || fputc('\n', out) == EOF) {
            rc = gp_diag_set(d, GP_EIO, "cannot write the document");
        }
        json_decref(doc);
    }
    free(inv);
    gp_nvml_close(h);
    return rc;
}
