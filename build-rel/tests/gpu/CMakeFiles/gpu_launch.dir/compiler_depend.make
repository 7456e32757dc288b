# Empty custom commands generated dependencies file for gpu_launch.
# This may be replaced when dependencies are built.
