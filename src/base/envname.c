/*
 * Environment variable names (see envname.h).
 */
#include "base/envname.h"

#include <ctype.h>
#include <string.h>

int gp_env_name_valid(const char *n)
{
    if (!(isalpha((unsigned char)*n) || *n == '_')) {
        return 0;
    }
    for (; *n; n++) {
        if (!(isalnum((unsigned char)*n) || *n == '_')) {
            return 0;
        }
    }
    return 1;
}

int gp_env_reserved(const char *name)
{
    static const char *const exact[] = {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
                                        "LD_PRELOAD", "CUDA_DISABLE_CONTROL"};
    static const char *const prefixes[] = {"GPUPOOL_", "CUDA_DEVICE_MEMORY_LIMIT",
                                           "CUDA_DEVICE_SM_LIMIT"};
    for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
        if (strcmp(name, exact[i]) == 0) {
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0) {
            return 1;
        }
    }
    return 0;
}

int gp_env_gang_reserved(const char *name)
{
    static const char *const gang[] = {"WORLD_SIZE",       "RANK",           "LOCAL_RANK",
                                       "LOCAL_WORLD_SIZE", "MASTER_ADDR",    "MASTER_PORT",
                                       "PET_NNODES",       "PET_NODE_RANK",  "PET_NPROC_PER_NODE",
                                       "PET_MASTER_ADDR",  "PET_MASTER_PORT"};
    for (size_t i = 0; i < sizeof(gang) / sizeof(gang[0]); i++) {
        if (strcmp(name, gang[i]) == 0) {
            return 1;
        }
    }
    return 0;
}
