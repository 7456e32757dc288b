# Empty dependencies file for test_jobspec_serve.
# This may be replaced when dependencies are built.
