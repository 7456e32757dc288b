file(REMOVE_RECURSE
  "../../bin/gpu_mem_limit"
  "CMakeFiles/gpu_mem_limit"
)

# Per-language clean rules from dependency scanning.
foreach(lang )
  include(CMakeFiles/gpu_mem_limit.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
