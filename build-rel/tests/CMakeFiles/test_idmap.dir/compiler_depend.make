# Empty compiler generated dependencies file for test_idmap.
# This may be replaced when dependencies are built.
