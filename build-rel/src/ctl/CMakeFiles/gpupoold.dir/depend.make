# Empty dependencies file for gpupoold.
# This may be replaced when dependencies are built.
