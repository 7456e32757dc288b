# Empty dependencies file for test_agent_metrics.
# This may be replaced when dependencies are built.
