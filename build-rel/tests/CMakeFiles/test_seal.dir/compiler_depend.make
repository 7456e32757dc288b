# Empty compiler generated dependencies file for test_seal.
# This may be replaced when dependencies are built.
