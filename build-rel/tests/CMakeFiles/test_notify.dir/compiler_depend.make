# Empty compiler generated dependencies file for test_notify.
# This may be replaced when dependencies are built.
