# Empty dependencies file for gpfakenvml.
# This may be replaced when dependencies are built.
