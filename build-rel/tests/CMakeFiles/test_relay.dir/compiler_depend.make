# Empty compiler generated dependencies file for test_relay.
# This may be replaced when dependencies are built.
