/*
 * gpupool tenant create|set|delete: tenants and their quota of GPUs, GPU memory and GPUs per
 * model. The document: {"quota": {"gpus": 16, "gpu_memory_mib": 655360, "models":
 * {"A100-80GB": 8}}, "priority_classes": [..], "queues": [..], "allow_privileged": false}
 * (src/ctl/objects.c): the grants say which priority classes and queues the tenant's users may
 * submit with, and whether they may run privileged jobs. `gpupool tenant
 * registry ...` is the tenant's image registry credentials (cmd_registry.c).
 */
#include "cli/cli.h"

#include "cli/object.h"

#include <stdio.h>
#include <string.h>

static const gp_cli_field tenant_fields[] = {
    {"quota-gpus", "N", "quota.gpus", GP_VAL_GPUS, NULL,
     "most GPUs in use at once (none: no limit)"},
    {"quota-gpu-memory", "SIZE", "quota.gpu_memory_mib", GP_VAL_MIB, NULL,
     "most GPU memory in use at once, e.g. 640Gi"},
    {"quota-model", "MODEL=N", "quota.models", GP_VAL_MODELS, NULL,
     "most GPUs of MODEL in use at once (repeatable; MODEL=none removes)"},
    {"priority-classes", "A,B", "priority_classes", GP_VAL_LIST, NULL,
     "the priority classes its users may submit with (none: only the default class)"},
    {"queues", "Q1,Q2", "queues", GP_VAL_LIST, NULL,
     "the queues its users may submit to (none: only the default queue)"},
    {"allow-privileged", "[=BOOL]", "allow_privileged", GP_VAL_BOOL, NULL,
     "its users may run privileged jobs (every device of a node: GPU limits do not hold); "
     "=false withdraws it"},
    {NULL, NULL, NULL, 0, NULL, NULL},
};

static const gp_cli_object tenant = {"tenant", "tenant", "/v1/tenants", tenant_fields};

int gp_cli_tenant(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "registry") == 0) {
        return gp_cli_tenant_registry(argc - 1, argv + 1);
    }
    int rc = gp_cli_object_cmd(&tenant, argc, argv);
    if (argc < 2 || (strcmp(argv[1], "create") != 0 && strcmp(argv[1], "set") != 0 &&
                     strcmp(argv[1], "delete") != 0)) {
        /* The usage just printed (help, or a missing or unknown subcommand): one more. */
        fprintf(rc == GP_EXIT_OK ? stdout : stderr,
                "       gpupool tenant registry set|list|delete TENANT ...  (image registry "
                "credentials)\n");
    }
    return rc;
}
