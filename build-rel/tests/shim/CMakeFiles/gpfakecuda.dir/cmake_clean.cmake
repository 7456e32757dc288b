file(REMOVE_RECURSE
  "CMakeFiles/gpfakecuda.dir/fake_cuda.c.o"
  "CMakeFiles/gpfakecuda.dir/fake_cuda.c.o.d"
  "fake/libcuda.pdb"
  "fake/libcuda.so"
  "fake/libcuda.so.1"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpfakecuda.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
