# Empty dependencies file for gpstore.
# This may be replaced when dependencies are built.
