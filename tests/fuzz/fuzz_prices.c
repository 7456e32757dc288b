/*
 * libFuzzer target for the price table of billing (src/ctl/prices.c): any bytes as the file must
 * give a table or one clear error, never a crash, a leak or undefined behaviour. A table that
 * parses then prices a few intervals (libgpcore's metering math), so that extreme prices reach
 * its overflow checks.
 */
#include "ctl/prices.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ctl_prices *t = NULL;
    gp_diag d;
    if (ctl_prices_parse("fuzz.yaml", (const char *)data, size, &t, &d) != 0) {
        return 0;
    }
    const char *model = t->p.nentries > 0 ? t->p.entries[0].model : "A100-80GB";
    int64_t from = t->p.nentries > 0 ? t->p.entries[0].from_ms : 0;
    gp_meter_interval iv[3];
    for (int i = 0; i < 3; i++) {
        iv[i] = (gp_meter_interval){.tenant = "a",
                                    .queue = "q",
                                    .node = i ? "n1" : "n0",
                                    .job = "1",
                                    .model = model,
                                    .kind = (gp_meter_kind)i,
                                    .gpus = 8,
                                    .milli = i == 0   ? 1000
                                             : i == 1 ? 500
                                                      : 142,
                                    .mig_profile = "1g.10gb",
                                    .cpu_milli = 64000,
                                    .memory_mib = 1048576,
                                    .start_ms = from - 3600000,
                                    .end_ms = from + INT64_C(86400000) * 40,
                                    .used_milli_ms = 1000};
    }
    gp_meter_query q = {from - 86400000, from + INT64_C(86400000) * 60, GP_METER_BY_NODE,
                        GP_METER_DAY};
    gp_meter_report r;
    if (gp_meter_report_build(iv, 3, &t->p, &q, &r, &d) == 0) {
        gp_meter_report_fini(&r);
    }
    ctl_prices_free(t);
    return 0;
}
