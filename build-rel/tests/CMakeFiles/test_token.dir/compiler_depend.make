# Empty compiler generated dependencies file for test_token.
# This may be replaced when dependencies are built.
