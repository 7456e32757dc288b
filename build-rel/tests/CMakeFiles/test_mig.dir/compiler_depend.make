# Empty compiler generated dependencies file for test_mig.
# This may be replaced when dependencies are built.
