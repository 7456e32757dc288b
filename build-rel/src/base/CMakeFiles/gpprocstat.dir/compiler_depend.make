# Empty compiler generated dependencies file for gpprocstat.
# This may be replaced when dependencies are built.
