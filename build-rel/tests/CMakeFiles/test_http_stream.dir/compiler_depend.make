# Empty compiler generated dependencies file for test_http_stream.
# This may be replaced when dependencies are built.
