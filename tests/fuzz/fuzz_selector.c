/*
 * libFuzzer target for label selectors (gpupool/selector.h): any text parses or is refused with
 * a message starting "selector: "; a selector that parses formats to a text that parses to an
 * equal selector and formats the same again, and matching it never crashes.
 */
#include "gpupool/selector.h"
#include "tests/fuzz/text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char first[GP_SELECTOR_TEXT_MAX], second[GP_SELECTOR_TEXT_MAX];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text) {
        return 0;
    }
    static gp_selector s, again;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_selector_parse(text, &s, &d) == 0) {
        if (gp_selector_format(&s, first, sizeof(first)) != 0 ||
            gp_selector_parse(first, &again, &d) != 0 || !gp_selector_equal(&s, &again) ||
            gp_selector_format(&again, second, sizeof(second)) != 0 || strcmp(first, second)) {
            abort();
        }
        gp_kv labels[] = {{"app", "web"}, {"tier", "db"}, {"gpu", ""}};
        (void)gp_selector_matches(&s, labels, 3);
    } else if (strncmp(d.msg, "selector: ", 10) != 0) {
        abort();
    }
    free(text);
    return 0;
}
