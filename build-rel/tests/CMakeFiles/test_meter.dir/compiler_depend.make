# Empty compiler generated dependencies file for test_meter.
# This may be replaced when dependencies are built.
