file(REMOVE_RECURSE
  "../bin/test_nvml"
  "../bin/test_nvml.pdb"
  "CMakeFiles/test_nvml.dir/unit/test_nvml.c.o"
  "CMakeFiles/test_nvml.dir/unit/test_nvml.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_nvml.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
