# Empty dependencies file for gperror.
# This may be replaced when dependencies are built.
