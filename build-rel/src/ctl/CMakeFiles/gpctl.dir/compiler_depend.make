# Empty compiler generated dependencies file for gpctl.
# This may be replaced when dependencies are built.
