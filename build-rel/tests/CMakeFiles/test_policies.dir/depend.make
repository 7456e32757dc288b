# Empty dependencies file for test_policies.
# This may be replaced when dependencies are built.
