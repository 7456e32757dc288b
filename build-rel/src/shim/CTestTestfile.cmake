# CMake generated Testfile for 
# Source directory: /work/wt-place/src/shim
# Build directory: /work/wt-place/build-rel/src/shim
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
