/*
 * libFuzzer target for the reading of /proc/PID/cgroup (gp_cgroup_parse_owner, cgroup.h): any
 * bytes must give an owner or none, never a crash or undefined behaviour, and an owner's path
 * is a NUL-terminated string within its buffer.
 */
#include "agent/cgroup.h"
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
    gp_cgroup_replica r;
    char path[32];
    if (gp_cgroup_parse_owner(text, &r, path, sizeof(path)) == 1 &&
        (strlen(path) >= sizeof(path) || r.job < 0 || r.replica < 0 || r.epoch < 0)) {
        abort();
    }
    free(text);
    return 0;
}
