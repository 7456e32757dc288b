# Empty compiler generated dependencies file for test_shim_config.
# This may be replaced when dependencies are built.
