# Empty compiler generated dependencies file for test_pull.
# This may be replaced when dependencies are built.
