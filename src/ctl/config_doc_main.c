/*
 * gpupoold-config-doc: prints docs/config.md, the reference of every gpupoold setting, from the
 * configuration table (`make docs` writes it; a test checks the file is current).
 */
#include "ctl/config.h"

#include <stdio.h>

int main(void)
{
    printf("# gpupoold configuration\n\n"
           "Every setting has a key in the YAML file given with `--config FILE` (or "
           "`GPUPOOL_CONFIG`), an environment variable and a flag. Later sources win: defaults < "
           "file < environment < flags. `gpupoold --dump-config` prints the effective "
           "configuration as YAML that gpupoold reads back.\n\n"
           "Durations are seconds or a number with ms, s, m, h or d; sizes are bytes or a number "
           "with K/Ki/KiB or M/Mi/MiB (powers of 1024).\n\n");
    gp_ctl_config_doc(stdout);
    return ferror(stdout) ? 1 : 0;
}
