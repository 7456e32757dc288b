# CMake generated Testfile for 
# Source directory: /work/wt-place/tests/gpu
# Build directory: /work/wt-place/build-rel/tests/gpu
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[gpu_mem_limit]=] "/usr/bin/cmake" "-E" "env" "LD_PRELOAD=/work/wt-place/build-rel/lib/libgpushare.so" "GPUPOOL_GPU_MEMORY_LIMIT_MIB=1024" "/work/wt-place/build-rel/bin/gpu_mem_limit" "1024")
set_tests_properties([=[gpu_mem_limit]=] PROPERTIES  LABELS "gpu" SKIP_RETURN_CODE "77" TIMEOUT "120" _BACKTRACE_TRIPLES "/work/wt-place/tests/gpu/CMakeLists.txt;22;add_test;/work/wt-place/tests/gpu/CMakeLists.txt;0;")
