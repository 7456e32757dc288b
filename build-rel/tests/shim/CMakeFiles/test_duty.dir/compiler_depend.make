# Empty compiler generated dependencies file for test_duty.
# This may be replaced when dependencies are built.
