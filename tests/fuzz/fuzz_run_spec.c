/*
 * libFuzzer target for what the controller sends an agent: a desired replica, as gpupool-run
 * reads it (the agent writes each desired replica of its node as the spec). Any bytes must give
 * a spec or one clear error, never a crash, a leak or undefined behaviour.
 */
#include "agent/run_spec.h"
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
    gp_run_spec *s = NULL;
    gp_diag d;
    if (gp_run_spec_parse(text, &s, &d) == 0) {
        char **env = NULL;
        const char *const base[] = {"PATH=/usr/bin", NULL};
        if (gp_run_env_build(s, base, NULL, &env) == 0) {
            gp_run_env_free(env);
        }
        free(gp_run_hostfile_text(s));
    }
    gp_run_spec_free(s);
    free(text);
    return 0;
}
