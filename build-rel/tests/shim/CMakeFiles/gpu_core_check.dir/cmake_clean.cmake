file(REMOVE_RECURSE
  "../../bin/gpu_core_check"
  "../../bin/gpu_core_check.pdb"
  "CMakeFiles/gpu_core_check.dir/gpu_core_check.c.o"
  "CMakeFiles/gpu_core_check.dir/gpu_core_check.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpu_core_check.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
