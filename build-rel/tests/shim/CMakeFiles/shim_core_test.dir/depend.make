# Empty dependencies file for shim_core_test.
# This may be replaced when dependencies are built.
