# Empty compiler generated dependencies file for test_openapi.
# This may be replaced when dependencies are built.
