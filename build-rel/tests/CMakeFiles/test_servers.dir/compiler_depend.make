# Empty compiler generated dependencies file for test_servers.
# This may be replaced when dependencies are built.
