file(REMOVE_RECURSE
  "../bin/test_depth"
  "../bin/test_depth.pdb"
  "CMakeFiles/test_depth.dir/unit/test_depth.c.o"
  "CMakeFiles/test_depth.dir/unit/test_depth.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_depth.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
