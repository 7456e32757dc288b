# Empty dependencies file for test_wire_desired.
# This may be replaced when dependencies are built.
