# Empty compiler generated dependencies file for nvml-stub.
# This may be replaced when dependencies are built.
