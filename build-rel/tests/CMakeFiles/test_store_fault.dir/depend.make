# Empty dependencies file for test_store_fault.
# This may be replaced when dependencies are built.
