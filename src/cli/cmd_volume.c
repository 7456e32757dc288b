/*
 * gpupool volume create|set|delete: volumes, named host directories (datasets, models,
 * checkpoints) that jobs mount at /data/NAME. The document: {"path": "/srv/imagenet",
 * "read_only": true, "description": ".."} (src/ctl/volumes.c).
 */
#include "cli/cli.h"

#include "cli/object.h"

static const gp_cli_field volume_fields[] = {
    {"path", "DIR", "path", GP_VAL_STRING, NULL,
     "the host directory (absolute; the same path on every node)"},
    {"read-only", NULL, "read_only", GP_VAL_FIXED, "true", "jobs may only mount it read-only"},
    {"read-write", NULL, "read_only", GP_VAL_FIXED, "false",
     "jobs may mount it read-write (the default)"},
    {"description", "TEXT", "description", GP_VAL_STRING, NULL, "a description"},
    {NULL, NULL, NULL, 0, NULL, NULL},
};

static const gp_cli_object volume = {"volume", "volume", "/v1/volumes", volume_fields};

int gp_cli_volume(int argc, char **argv)
{
    return gp_cli_object_cmd(&volume, argc, argv);
}
