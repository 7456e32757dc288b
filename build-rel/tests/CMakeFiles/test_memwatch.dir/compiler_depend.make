# Empty compiler generated dependencies file for test_memwatch.
# This may be replaced when dependencies are built.
