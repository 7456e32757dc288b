# Empty dependencies file for shim_bench.
# This may be replaced when dependencies are built.
