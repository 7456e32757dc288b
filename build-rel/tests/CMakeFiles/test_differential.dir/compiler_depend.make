# Empty compiler generated dependencies file for test_differential.
# This may be replaced when dependencies are built.
