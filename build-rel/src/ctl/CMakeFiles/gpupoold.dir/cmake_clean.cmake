file(REMOVE_RECURSE
  "../../bin/gpupoold"
  "../../bin/gpupoold.pdb"
  "CMakeFiles/gpupoold.dir/main.c.o"
  "CMakeFiles/gpupoold.dir/main.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/gpupoold.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
