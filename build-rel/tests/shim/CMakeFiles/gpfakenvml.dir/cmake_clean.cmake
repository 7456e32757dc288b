file(REMOVE_RECURSE
  "CMakeFiles/gpfakenvml.dir/fake_nvml.c.o"
  "CMakeFiles/gpfakenvml.dir/fake_nvml.c.o.d"
  "fake/libnvidia-ml.pdb"
  "fake/libnvidia-ml.so"
  "fake/libnvidia-ml.so.1"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpfakenvml.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
