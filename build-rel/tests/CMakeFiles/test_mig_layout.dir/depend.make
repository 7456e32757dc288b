# Empty dependencies file for test_mig_layout.
# This may be replaced when dependencies are built.
