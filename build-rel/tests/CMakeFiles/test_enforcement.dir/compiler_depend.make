# Empty compiler generated dependencies file for test_enforcement.
# This may be replaced when dependencies are built.
