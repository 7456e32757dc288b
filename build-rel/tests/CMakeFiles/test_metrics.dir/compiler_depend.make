# Empty compiler generated dependencies file for test_metrics.
# This may be replaced when dependencies are built.
