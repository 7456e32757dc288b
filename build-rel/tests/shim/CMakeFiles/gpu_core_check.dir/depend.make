# Empty dependencies file for gpu_core_check.
# This may be replaced when dependencies are built.
