# Empty compiler generated dependencies file for gpupool-run.
# This may be replaced when dependencies are built.
