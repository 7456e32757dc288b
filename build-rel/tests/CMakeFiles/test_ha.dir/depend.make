# Empty dependencies file for test_ha.
# This may be replaced when dependencies are built.
