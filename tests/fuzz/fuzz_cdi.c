/*
 * libFuzzer target for what the agent reads from the host to make its CDI spec: the driver's MIG
 * capability table (/proc/driver/nvidia-caps/mig-minors), the ld cache as `ldconfig -p` prints
 * it, and podman's help text; and the podman options of names taken from the same bytes. Any
 * bytes must give a table, entries or a clear refusal, never a crash, a leak or undefined
 * behaviour.
 */
#include "agent/cdi.h"
#include "agent/cdi_driver.h"
#include "tests/fuzz/text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text) {
        return 0;
    }
    static gp_cdi_mig_caps caps;
    gp_cdi_mig_caps_parse(text, &caps);
    const char *cur = text;
    char name[256], path[1024];
    const char *names[8];
    char held[8][256];
    int n = 0;
    while (gp_cdi_ldcache_next(&cur, name, sizeof(name), path, sizeof(path)) == 1) {
        (void)gp_cdi_driver_link(name);
        (void)gp_cdi_driver_library(gp_cdi_basename(path), "550.54.15");
        if (n < 8) {
            memcpy(held[n], name, sizeof(name));
            names[n] = held[n];
            n++;
        }
    }
    (void)gp_cdi_podman_takes_spec_dir(text);
    gp_cdi_args args;
    gp_diag d;
    if (gp_cdi_podman_args(size % 2 ? "/state/cdi" : NULL, names, n, &args, &d) == 0) {
        gp_cdi_args_fini(&args);
    }
    free(text);
    return 0;
}
