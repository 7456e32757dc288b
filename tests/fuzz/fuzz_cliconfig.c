/*
 * libFuzzer target for the CLI's small parsers: the config file (cli/cliconfig.h): any bytes
 * parse or are refused with a message naming the line; what parses formats to a text that parses
 * to the same config and formats to the same text. And gpupool logs' (cli/logtext.h): a --since
 * that parses gives a time whose RFC 3339 form parses back to it; a times file's records are
 * taken up to the last newline.
 */
#include "cli/cliconfig.h"
#include "cli/logtext.h"
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
    /* the parser empties only the fields in use (gp_cli_config_clear): start both from zero so
     * that the bytes compared below are what each parse wrote, not an earlier input's */
    memset(&cfg, 0, sizeof(cfg));
    memset(&again, 0, sizeof(again));
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
    int64_t since, back;
    char stamp[64];
    if (gp_logs_parse_since(text, INT64_C(1777636800000), &since) == 0) {
        gp_logs_format_time(since, stamp, sizeof(stamp));
        if (gp_logs_parse_since(stamp, 0, &back) != 0 || back != since) {
            abort();
        }
    }
    gp_logs_times t = {0};
    long used = gp_logs_times_add(&t, text, size);
    if (used < 0 || (size_t)used > size || (used > 0 && text[used - 1] != '\n') ||
        memchr(text + used, '\n', size - (size_t)used)) {
        abort();
    }
    /* in a real file offsets only grow: then each record's own offset finds it */
    int sorted = 1;
    for (size_t i = 0; i + 1 < t.n; i++) {
        sorted &= t.off[i] < t.off[i + 1];
    }
    for (size_t i = 0; i < t.n; i++) {
        if (gp_logs_times_at(&t, t.off[i]) != t.ms[i] && sorted) {
            abort();
        }
    }
    gp_logs_times_fini(&t);
    free(text);
    return 0;
}
