/*
 * libFuzzer target for Kubernetes manifests: any bytes read as a multi-document YAML stream
 * (gp_yaml_to_json_all) must give documents or one clear error; a stream of one document must
 * read the same as gp_yaml_to_json reads it. The documents are translated (src/cli/k8s.h) with
 * and without a registered volume: never a crash, a leak or undefined behaviour; every job spec
 * made is parsed by the controller's parser, which must answer 0 or GP_EINVAL naming a field.
 */
#include "cli/k8s.h"
#include "gpupool/jobspec.h"
#include "net/yaml_json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void translate(const json_t *docs, const gp_k8s_ctx *ctx)
{
    gp_k8s_result r;
    gp_k8s_translate(docs, ctx, &r);
    for (size_t i = 0; i < r.nobjects; i++) {
        if (!r.objects[i].doc || (r.objects[i].target == GP_K8S_JOB && !r.objects[i].name[0])) {
            abort();
        }
        if (r.objects[i].target != GP_K8S_JOB) {
            continue;
        }
        char *text = json_dumps(r.objects[i].doc, 0);
        gp_jobspec s;
        gp_diag d;
        int rc = gp_jobspec_parse_json(text, strlen(text), &s, &d);
        if (rc == 0) {
            gp_jobspec_fini(&s);
        } else if (rc != GP_EINVAL) {
            abort();
        }
        free(text);
    }
    for (size_t i = 0; i < r.ndiags; i++) {
        if (!r.diags[i].message[0]) {
            abort();
        }
    }
    gp_k8s_result_fini(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *docs = NULL;
    gp_diag d;
    if (gp_yaml_to_json_all((const char *)data, size, &docs, &d) < 0) {
        if (docs || !d.msg[0]) {
            abort();
        }
        return 0;
    }
    json_t *one = NULL;
    if (json_array_size(docs) == 1 && gp_yaml_to_json((const char *)data, size, &one, &d) == 0 &&
        !json_equal(one, json_array_get(docs, 0))) {
        abort();
    }
    json_decref(one);
    translate(docs, NULL);
    json_t *vols = json_pack("[{s:s, s:s}]", "name", "v", "path", "/srv/v");
    gp_k8s_ctx ctx = {.volumes = vols, .ns = "team-a"};
    translate(docs, &ctx);
    json_decref(vols);
    json_decref(docs);
    return 0;
}
