# Empty dependencies file for gpupoold-config-doc.
# This may be replaced when dependencies are built.
