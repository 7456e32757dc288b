# Empty dependencies file for gpu_check.
# This may be replaced when dependencies are built.
