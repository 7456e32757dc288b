# Empty dependencies file for test_autoscale.
# This may be replaced when dependencies are built.
