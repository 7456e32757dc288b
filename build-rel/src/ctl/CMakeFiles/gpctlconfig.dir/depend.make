# Empty dependencies file for gpctlconfig.
# This may be replaced when dependencies are built.
