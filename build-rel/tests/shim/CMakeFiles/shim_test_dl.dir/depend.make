# Empty dependencies file for shim_test_dl.
# This may be replaced when dependencies are built.
