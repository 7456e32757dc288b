file(REMOVE_RECURSE
  "../bin/test_check"
  "../bin/test_check.pdb"
  "CMakeFiles/test_check.dir/unit/test_check.c.o"
  "CMakeFiles/test_check.dir/unit/test_check.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_check.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
