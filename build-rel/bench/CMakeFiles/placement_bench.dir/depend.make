# Empty dependencies file for placement_bench.
# This may be replaced when dependencies are built.
