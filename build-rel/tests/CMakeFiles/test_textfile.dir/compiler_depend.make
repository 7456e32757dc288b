# Empty compiler generated dependencies file for test_textfile.
# This may be replaced when dependencies are built.
