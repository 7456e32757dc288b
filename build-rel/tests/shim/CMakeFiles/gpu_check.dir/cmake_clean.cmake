file(REMOVE_RECURSE
  "../../bin/gpu_check"
  "../../bin/gpu_check.pdb"
  "CMakeFiles/gpu_check.dir/gpu_check.c.o"
  "CMakeFiles/gpu_check.dir/gpu_check.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpu_check.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
