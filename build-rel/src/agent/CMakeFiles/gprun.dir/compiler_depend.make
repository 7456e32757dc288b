# Empty compiler generated dependencies file for gprun.
# This may be replaced when dependencies are built.
