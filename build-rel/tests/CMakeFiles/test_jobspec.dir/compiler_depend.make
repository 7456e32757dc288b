# Empty compiler generated dependencies file for test_jobspec.
# This may be replaced when dependencies are built.
