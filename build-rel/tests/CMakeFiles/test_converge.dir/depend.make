# Empty dependencies file for test_converge.
# This may be replaced when dependencies are built.
