# Empty dependencies file for gpshareregion.
# This may be replaced when dependencies are built.
