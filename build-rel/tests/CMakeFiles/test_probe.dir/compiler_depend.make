# Empty compiler generated dependencies file for test_probe.
# This may be replaced when dependencies are built.
