file(REMOVE_RECURSE
  "../bin/test_nvml_sample"
  "../bin/test_nvml_sample.pdb"
  "CMakeFiles/test_nvml_sample.dir/unit/test_nvml_sample.c.o"
  "CMakeFiles/test_nvml_sample.dir/unit/test_nvml_sample.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_nvml_sample.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
