/*
 * libFuzzer target for the desired-replicas codec (src/net/wire_desired.c): any bytes, parsed as
 * JSON, must decode to a desired document or give one clear error naming a path, never a crash,
 * a leak or undefined behaviour. What decodes must encode to a document that decodes again and
 * encodes to the same JSON (the codec is its own inverse on what it accepts).
 */
#include "net/wire_desired.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!doc) {
        return 0;
    }
    gp_wire_desired dd, again;
    gp_diag d;
    gp_diag_clear(&d);
    if (gp_wire_desired_decode(doc, &dd, &d) != 0) {
        if (!d.msg[0] || dd.replicas || dd.nreplicas) {
            abort(); /* an error always says what is wrong, and leaves nothing behind */
        }
        json_decref(doc);
        return 0;
    }
    json_t *out = gp_wire_desired_encode(&dd, NULL);
    if (!out || gp_wire_desired_decode(out, &again, &d) != 0) {
        abort();
    }
    json_t *out2 = gp_wire_desired_encode(&again, NULL);
    if (!out2 || !json_equal(out, out2) || again.nreplicas != dd.nreplicas) {
        abort();
    }
    for (size_t i = 0; i < dd.nreplicas; i++) {
        json_t *auth = gp_wire_desired_auth_encode(&dd.replicas[i]);
        json_decref(auth);
    }
    gp_wire_desired_fini(&again);
    gp_wire_desired_fini(&dd);
    json_decref(out2);
    json_decref(out);
    json_decref(doc);
    return 0;
}
