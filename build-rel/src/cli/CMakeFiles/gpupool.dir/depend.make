# Empty dependencies file for gpupool.
# This may be replaced when dependencies are built.
