# Empty custom commands generated dependencies file for gpu_mem_limit.
# This may be replaced when dependencies are built.
