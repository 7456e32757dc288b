/*
 * libFuzzer target for the OCI image reference parser (gpupool/imageref.h): any bytes, as a
 * reference and as a registry, must parse or be refused with a message naming the field, never
 * crash or read out of bounds; and a reference that parses must normalise to a form that parses
 * again to the same normal form (normalising is idempotent) within the documented lengths.
 */
#include "gpupool/imageref.h"
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
    gp_image_ref r, again;
    gp_diag d;
    char normal[GP_IMAGE_REF_MAX + 16], second[GP_IMAGE_REF_MAX + 16];
    gp_diag_clear(&d);
    if (gp_image_ref_parse(text, "image", &r, &d) == 0) {
        if (gp_image_ref_format(&r, normal, sizeof(normal)) < 0 ||
            gp_image_ref_parse(normal, "image", &again, &d) != 0 ||
            gp_image_ref_format(&again, second, sizeof(second)) < 0 ||
            strcmp(normal, second) != 0 || strlen(r.registry) + 1 + strlen(r.path) > 255) {
            abort();
        }
        (void)gp_pull_policy_name(gp_image_ref_default_pull(&r));
    } else if (strncmp(d.msg, "image: ", 7) != 0) {
        abort();
    }
    char reg[GP_IMAGE_REGISTRY_MAX];
    gp_diag_clear(&d);
    if (gp_image_registry_normalize(text, "registry", reg, sizeof(reg), &d) == 0) {
        if (gp_image_registry_normalize(reg, "registry", normal, sizeof(normal), &d) != 0 ||
            strcmp(reg, normal) != 0) {
            abort();
        }
    } else if (strncmp(d.msg, "registry: ", 10) != 0) {
        abort();
    }
    free(text);
    return 0;
}
