# Empty dependencies file for test_nvml_sample.
# This may be replaced when dependencies are built.
