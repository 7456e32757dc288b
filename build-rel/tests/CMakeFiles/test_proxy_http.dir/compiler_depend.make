# Empty compiler generated dependencies file for test_proxy_http.
# This may be replaced when dependencies are built.
