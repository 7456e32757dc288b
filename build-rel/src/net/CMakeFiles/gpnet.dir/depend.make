# Empty dependencies file for gpnet.
# This may be replaced when dependencies are built.
