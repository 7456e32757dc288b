file(REMOVE_RECURSE
  "../bin/test_enforcement"
  "../bin/test_enforcement.pdb"
  "CMakeFiles/test_enforcement.dir/unit/test_enforcement.c.o"
  "CMakeFiles/test_enforcement.dir/unit/test_enforcement.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_enforcement.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
