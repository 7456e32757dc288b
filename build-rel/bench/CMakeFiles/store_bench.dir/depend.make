# Empty dependencies file for store_bench.
# This may be replaced when dependencies are built.
