# Empty dependencies file for test_proxy_pool.
# This may be replaced when dependencies are built.
