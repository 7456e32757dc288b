# Empty dependencies file for test_billing.
# This may be replaced when dependencies are built.
