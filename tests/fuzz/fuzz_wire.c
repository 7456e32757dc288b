/*
 * libFuzzer target for the wire codec (src/net/wire.c): any bytes, parsed as JSON, must decode
 * to a heartbeat or give one clear error naming a path, never a crash, a leak or undefined
 * behaviour. What decodes must encode and decode again to the same values (the codec is its own
 * inverse on what it accepts: readings, MIG instances, health and images), and pass or fail the
 * node check without harm.
 */
#include "net/wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const gp_wire_heartbeat *a, const gp_wire_heartbeat *b)
{
    if (a->nreplicas != b->nreplicas || a->ngpus != b->ngpus || a->nevents != b->nevents) {
        abort();
    }
    for (size_t i = 0; i < a->nreplicas; i++) {
        const gp_wire_replica *x = &a->replicas[i], *y = &b->replicas[i];
        if (x->job != y->job || x->replica != y->replica || x->epoch != y->epoch ||
            x->state != y->state || x->pulling != y->pulling || x->ready != y->ready ||
            x->has_metric != y->has_metric || strcmp(x->reason, y->reason)) {
            abort();
        }
    }
    for (size_t i = 0; i < a->ngpus; i++) {
        const gp_wire_gpu *x = &a->gpus[i], *y = &b->gpus[i];
        if (x->index != y->index || x->memory_used_mib != y->memory_used_mib ||
            x->temperature_c != y->temperature_c || x->utilization != y->utilization) {
            abort();
        }
    }
    for (size_t i = 0; i < a->nevents; i++) {
        if (a->events[i].gpu != b->events[i].gpu || a->events[i].xid != b->events[i].xid) {
            abort();
        }
    }
}

/* The node's own reports: MIG instances, health and images. */
static void same_node_parts(const gp_wire_heartbeat *a, const gp_wire_heartbeat *b)
{
    for (size_t i = 0; i < a->ngpus; i++) {
        const gp_wire_gpu *x = &a->gpus[i], *y = &b->gpus[i];
        if (x->has_mig != y->has_mig || x->nmig != y->nmig ||
            memcmp(x->mig, y->mig, sizeof(x->mig[0]) * (size_t)x->nmig) != 0) {
            abort();
        }
    }
    const gp_wire_health *h = &a->health, *k = &b->health;
    if (a->has_health != b->has_health || h->seq != k->seq || h->at_ms != k->at_ms ||
        h->nconditions != k->nconditions || a->has_images != b->has_images ||
        a->nimages != b->nimages) {
        abort();
    }
    for (size_t i = 0; i < h->nconditions; i++) {
        const gp_wire_condition *x = &h->conditions[i], *y = &k->conditions[i];
        if (x->gpu != y->gpu || x->severity != y->severity || strcmp(x->check, y->check) ||
            strcmp(x->message, y->message)) {
            abort();
        }
    }
    for (size_t i = 0; i < a->nimages; i++) {
        const gp_wire_image *x = &a->images[i], *y = &b->images[i];
        if (strcmp(x->ref, y->ref) || strcmp(x->id, y->id) || x->size_bytes != y->size_bytes ||
            x->last_used_ms != y->last_used_ms) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    if (!doc) {
        return 0;
    }
    gp_wire_heartbeat hb, again;
    gp_diag d;
    if (gp_wire_heartbeat_decode(doc, &hb, &d) != 0) {
        if (!d.msg[0]) {
            abort(); /* an error always says what is wrong */
        }
        json_decref(doc);
        return 0;
    }
    json_t *out = gp_wire_heartbeat_encode(&hb);
    if (!out || gp_wire_heartbeat_decode(out, &again, &d) != 0) {
        abort();
    }
    same(&hb, &again);
    same_node_parts(&hb, &again);
    int64_t mem[4] = {81920, 81920, 40960, 0};
    gp_wire_node_gpus node = {.ngpus = 4, .memory_mib = mem};
    (void)gp_wire_heartbeat_check_node(&hb, &node, &d);
    gp_wire_heartbeat_fini(&again);
    gp_wire_heartbeat_fini(&hb);
    json_decref(out);
    json_decref(doc);
    return 0;
}
