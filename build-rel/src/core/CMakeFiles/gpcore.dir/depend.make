# Empty dependencies file for gpcore.
# This may be replaced when dependencies are built.
