# Empty compiler generated dependencies file for test_region.
# This may be replaced when dependencies are built.
