/*
 * gpupool priorityclass create|set|delete: priority classes, their value (higher runs first)
 * and whether their jobs may preempt lower ones. The document: {"value": 1000,
 * "preemption_policy": "PreemptLowerPriority", "description": ".."} (src/ctl/objects.c).
 */
#include "cli/cli.h"

#include "cli/object.h"

static const gp_cli_field pclass_fields[] = {
    {"value", "V", "value", GP_VAL_INT, NULL, "priority value; higher runs first"},
    {"preempt", NULL, "preemption_policy", GP_VAL_FIXED, "\"PreemptLowerPriority\"",
     "jobs of this class may preempt lower-priority ones"},
    {"no-preempt", NULL, "preemption_policy", GP_VAL_FIXED, "\"Never\"",
     "jobs of this class never preempt (the default)"},
    {"description", "TEXT", "description", GP_VAL_STRING, NULL, "a description"},
    {NULL, NULL, NULL, 0, NULL, NULL},
};

static const gp_cli_object pclass = {"priorityclass", "priorityclass", "/v1/priorityclasses",
                                     pclass_fields};

int gp_cli_priorityclass(int argc, char **argv)
{
    return gp_cli_object_cmd(&pclass, argc, argv);
}
