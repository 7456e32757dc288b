# Empty dependencies file for test_cdi.
# This may be replaced when dependencies are built.
