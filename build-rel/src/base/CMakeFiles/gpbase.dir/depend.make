# Empty dependencies file for gpbase.
# This may be replaced when dependencies are built.
