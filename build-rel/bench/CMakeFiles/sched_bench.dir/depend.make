# Empty dependencies file for sched_bench.
# This may be replaced when dependencies are built.
