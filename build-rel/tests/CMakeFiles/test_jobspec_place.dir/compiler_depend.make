# Empty compiler generated dependencies file for test_jobspec_place.
# This may be replaced when dependencies are built.
