file(REMOVE_RECURSE
  "../../bin/gpu_launch"
  "CMakeFiles/gpu_launch"
)

# Per-language clean rules from dependency scanning.
foreach(lang )
  include(CMakeFiles/gpu_launch.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
