# Empty dependencies file for gpupool-nvml-mock.
# This may be replaced when dependencies are built.
