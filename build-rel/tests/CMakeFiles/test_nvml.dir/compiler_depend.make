# Empty compiler generated dependencies file for test_nvml.
# This may be replaced when dependencies are built.
