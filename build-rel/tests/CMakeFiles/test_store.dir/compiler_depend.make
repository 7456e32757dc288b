# Empty compiler generated dependencies file for test_store.
# This may be replaced when dependencies are built.
