/*
 * libFuzzer target for the job spec's canonical form (gp_jobspec_to_json): any bytes that parse
 * as a spec (JSON or YAML) encode to a document that parses to an equal spec, and encoding that
 * gives the same text. Anything else is a bug: abort.
 */
#include "gpupool/jobspec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const gp_jobspec *s)
{
    json_t *doc = gp_jobspec_to_json(s);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    gp_jobspec again;
    gp_diag d;
    if (!text || gp_jobspec_parse_json(text, strlen(text), &again, &d) != 0 ||
        !gp_jobspec_equal(s, &again)) {
        abort();
    }
    json_t *doc2 = gp_jobspec_to_json(&again);
    char *text2 = doc2 ? json_dumps(doc2, JSON_COMPACT) : NULL;
    if (!text2 || strcmp(text, text2) != 0) {
        abort();
    }
    free(text2);
    json_decref(doc2);
    gp_jobspec_fini(&again);
    free(text);
    json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_jobspec s;
    gp_diag d;
    if (gp_jobspec_parse_json((const char *)data, size, &s, &d) == 0) {
        check(&s);
        gp_jobspec_fini(&s);
    }
    if (gp_jobspec_parse_yaml((const char *)data, size, &s, &d) == 0) {
        check(&s);
        gp_jobspec_fini(&s);
    }
    return 0;
}
