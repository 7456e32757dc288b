# CMake generated Testfile for 
# Source directory: /work/wt-place
# Build directory: /work/wt-place/build-rel
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
subdirs("src/base")
subdirs("src/core")
subdirs("src/net")
subdirs("src/store")
subdirs("src/ctl")
subdirs("src/nvml-mock")
subdirs("src/agent")
subdirs("src/shim")
subdirs("src/sim")
subdirs("src/cli")
subdirs("tests")
subdirs("bench")
