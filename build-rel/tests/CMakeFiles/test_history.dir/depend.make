# Empty dependencies file for test_history.
# This may be replaced when dependencies are built.
