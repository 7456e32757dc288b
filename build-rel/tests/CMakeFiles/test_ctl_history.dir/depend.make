# Empty dependencies file for test_ctl_history.
# This may be replaced when dependencies are built.
