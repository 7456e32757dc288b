# Empty compiler generated dependencies file for test_sched_constraint.
# This may be replaced when dependencies are built.
