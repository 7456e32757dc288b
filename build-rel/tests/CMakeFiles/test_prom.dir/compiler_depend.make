# Empty compiler generated dependencies file for test_prom.
# This may be replaced when dependencies are built.
