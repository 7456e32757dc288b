/*
 * Environment variable names: which are well formed, and which gpupool sets itself (so a job's
 * spec may not set them: they name the GPUs a job sees, or would switch enforcement off). The
 * controller refuses such names at submit; gpupool-run drops them again before exec. One list
 * for both.
 */
#ifndef GP_BASE_ENVNAME_H
#define GP_BASE_ENVNAME_H

/* [A-Za-z_][A-Za-z0-9_]*: 1 or 0. */
int gp_env_name_valid(const char *name);
/* CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, LD_PRELOAD, CUDA_DISABLE_CONTROL, and names
 * starting with GPUPOOL_, CUDA_DEVICE_MEMORY_LIMIT or CUDA_DEVICE_SM_LIMIT: 1 or 0. */
int gp_env_reserved(const char *name);
/* The launchers' variables gpupool sets for a gang (a job of more than one replica), so that its
 * spec may not: WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
 * PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE, PET_MASTER_ADDR, PET_MASTER_PORT: 1 or 0.
 * Outside a gang a job may set them. */
int gp_env_gang_reserved(const char *name);

#endif
