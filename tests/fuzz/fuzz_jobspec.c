/*
 * libFuzzer target for the job spec parsers: any bytes, as JSON and as YAML, must give a spec or
 * one clear error, never a crash, a leak or undefined behaviour.
 */
#include "gpupool/jobspec.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_jobspec s;
    gp_diag d;
    if (gp_jobspec_parse_json((const char *)data, size, &s, &d) == 0) {
        gp_jobspec_fini(&s);
    }
    if (gp_jobspec_parse_yaml((const char *)data, size, &s, &d) == 0) {
        gp_jobspec_fini(&s);
    }
    return 0;
}
