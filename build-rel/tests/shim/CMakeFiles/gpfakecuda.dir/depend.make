# Empty dependencies file for gpfakecuda.
# This may be replaced when dependencies are built.
