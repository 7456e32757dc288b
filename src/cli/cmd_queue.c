/*
 * gpupool queue create|set|delete: queues, their fair-share weight, the GPUs (and CPU, memory)
 * they are guaranteed and capped at, and whether others may borrow their idle guarantee
 * (reclaimable). The document: {"weight": 2, "guarantee": {"gpus": 8}, "capability": {"gpus":
 * 32}, "reclaimable": true} (src/ctl/objects.c).
 */
#include "cli/cli.h"

#include "cli/object.h"

static const gp_cli_field queue_fields[] = {
    {"weight", "W", "weight", GP_VAL_NUMBER, NULL, "fair-share weight (default 1)"},
    {"guarantee-gpus", "N", "guarantee.gpus", GP_VAL_GPUS, NULL, "GPUs guaranteed"},
    {"guarantee-gpu-memory", "SIZE", "guarantee.gpu_memory_mib", GP_VAL_MIB, NULL,
     "GPU memory guaranteed (e.g. 640Gi)"},
    {"guarantee-cpu", "CORES", "guarantee.cpu_milli", GP_VAL_CPU, NULL, "CPU cores guaranteed"},
    {"guarantee-memory", "SIZE", "guarantee.memory_mib", GP_VAL_MIB, NULL, "memory guaranteed"},
    {"capability-gpus", "N", "capability.gpus", GP_VAL_GPUS, NULL,
     "most GPUs the queue may use (none: unlimited)"},
    {"capability-gpu-memory", "SIZE", "capability.gpu_memory_mib", GP_VAL_MIB, NULL,
     "most GPU memory the queue may use"},
    {"capability-cpu", "CORES", "capability.cpu_milli", GP_VAL_CPU, NULL,
     "most CPU cores the queue may use"},
    {"capability-memory", "SIZE", "capability.memory_mib", GP_VAL_MIB, NULL,
     "most memory the queue may use"},
    {"no-reclaim", NULL, "reclaimable", GP_VAL_FIXED, "false",
     "other queues may not borrow this queue's idle guarantee"},
    {"reclaim", NULL, "reclaimable", GP_VAL_FIXED, "true",
     "other queues may borrow this queue's idle guarantee (the default)"},
    {NULL, NULL, NULL, 0, NULL, NULL},
};

static const gp_cli_object queue = {"queue", "queue", "/v1/queues", queue_fields};

int gp_cli_queue(int argc, char **argv)
{
    return gp_cli_object_cmd(&queue, argc, argv);
}
