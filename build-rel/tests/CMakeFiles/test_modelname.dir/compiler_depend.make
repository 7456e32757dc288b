# Empty compiler generated dependencies file for test_modelname.
# This may be replaced when dependencies are built.
