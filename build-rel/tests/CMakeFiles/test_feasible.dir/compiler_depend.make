# Empty compiler generated dependencies file for test_feasible.
# This may be replaced when dependencies are built.
