# Empty compiler generated dependencies file for gpupool-agent.
# This may be replaced when dependencies are built.
