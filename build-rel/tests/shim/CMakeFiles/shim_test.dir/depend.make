# Empty dependencies file for shim_test.
# This may be replaced when dependencies are built.
