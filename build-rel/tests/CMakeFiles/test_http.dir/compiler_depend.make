# Empty compiler generated dependencies file for test_http.
# This may be replaced when dependencies are built.
