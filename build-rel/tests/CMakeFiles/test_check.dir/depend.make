# Empty dependencies file for test_check.
# This may be replaced when dependencies are built.
