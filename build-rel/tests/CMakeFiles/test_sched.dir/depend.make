# Empty dependencies file for test_sched.
# This may be replaced when dependencies are built.
