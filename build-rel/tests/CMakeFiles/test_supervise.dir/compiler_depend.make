# Empty compiler generated dependencies file for test_supervise.
# This may be replaced when dependencies are built.
