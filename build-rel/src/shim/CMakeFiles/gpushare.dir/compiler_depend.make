# Empty compiler generated dependencies file for gpushare.
# This may be replaced when dependencies are built.
