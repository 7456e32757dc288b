# Empty compiler generated dependencies file for gpcdi.
# This may be replaced when dependencies are built.
