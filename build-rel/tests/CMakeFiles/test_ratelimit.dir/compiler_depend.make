# Empty compiler generated dependencies file for test_ratelimit.
# This may be replaced when dependencies are built.
