# Empty dependencies file for test_jobspec_json.
# This may be replaced when dependencies are built.
