# Empty dependencies file for ctl_bench.
# This may be replaced when dependencies are built.
