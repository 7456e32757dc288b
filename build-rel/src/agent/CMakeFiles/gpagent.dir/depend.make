# Empty dependencies file for gpagent.
# This may be replaced when dependencies are built.
