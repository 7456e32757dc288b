file(REMOVE_RECURSE
  "../bin/test_differential"
  "../bin/test_differential.pdb"
  "CMakeFiles/test_differential.dir/unit/test_differential.c.o"
  "CMakeFiles/test_differential.dir/unit/test_differential.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_differential.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
