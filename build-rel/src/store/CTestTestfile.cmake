# CMake generated Testfile for 
# Source directory: /work/wt-place/src/store
# Build directory: /work/wt-place/build-rel/src/store
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
