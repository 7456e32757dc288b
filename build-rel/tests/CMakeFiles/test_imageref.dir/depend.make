# Empty dependencies file for test_imageref.
# This may be replaced when dependencies are built.
