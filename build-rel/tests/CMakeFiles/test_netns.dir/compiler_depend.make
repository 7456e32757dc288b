# Empty compiler generated dependencies file for test_netns.
# This may be replaced when dependencies are built.
