# Empty dependencies file for gpusagedoc.
# This may be replaced when dependencies are built.
