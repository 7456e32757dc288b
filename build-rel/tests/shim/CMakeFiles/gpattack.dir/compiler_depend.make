# Empty compiler generated dependencies file for gpattack.
# This may be replaced when dependencies are built.
