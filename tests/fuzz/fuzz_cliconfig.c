/*
 * libFuzzer target for the CLI's config file (cli/cliconfig.h): any bytes parse or are refused
 * with a message naming the line; what parses formats to a text that parses to the same config
 * and formats to the same text.
 */
#include "cli/cliconfig.h"
#include "tests/fuzz/text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gp_cli_config cfg, again;
    static char text1[1 << 18], text2[1 << 18];
    char *text = fuzz_text(data, size);
    if (!text) {
        return 0;
    }
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_cli_config_parse(text, &cfg, &d) == 0) {
        int n1 = gp_cli_config_format(&cfg, text1, sizeof(text1));
        if (n1 < 0 || gp_cli_config_parse(text1, &again, &d) != 0 ||
            gp_cli_config_format(&again, text2, sizeof(text2)) != n1 || strcmp(text1, text2) != 0 ||
            memcmp(&cfg, &again, sizeof(cfg)) != 0) {
            abort();
        }
    } else if (strncmp(d.msg, "line ", 5) != 0) {
        abort();
    }
    free(text);
    return 0;
}
