# Empty dependencies file for test_selector.
# This may be replaced when dependencies are built.
