/*
 * libFuzzer target for the trace CSV reader: any bytes, read as a node list and as a pod list,
 * must give either data or one clear error, never a crash, a leak or undefined behaviour. The
 * reader takes a path, so each input is written to one private temporary file.
 */
#include "sim/trace.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        snprintf(path, sizeof(path), "/tmp/gpupool-fuzz-trace.%ld", (long)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        return 0;
    }
    fwrite(data, 1, size, f);
    fclose(f);
    gp_trace t = {0};
    gp_diag d;
    if (gp_trace_read_nodes(&t, path, &d) == 0) {
        gp_cluster *c = NULL;
        if (gp_trace_build_cluster(&t, &c, &d) == 0) {
            gp_cluster_free(c);
        }
    }
    if (gp_trace_read_pods(&t, path, &d) == 0 && t.npods > 0) {
        gp_cluster *c = gp_cluster_new();
        gp_request r;
        gp_trace_pod_request(c, &t.pods[0], &r);
        gp_cluster_free(c);
    }
    gp_trace_fini(&t);
    unlink(path);
    return 0;
}
