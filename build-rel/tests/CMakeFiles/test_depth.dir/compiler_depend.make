# Empty compiler generated dependencies file for test_depth.
# This may be replaced when dependencies are built.
