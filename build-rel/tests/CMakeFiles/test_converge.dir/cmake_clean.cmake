file(REMOVE_RECURSE
  "../bin/test_converge"
  "../bin/test_converge.pdb"
  "CMakeFiles/test_converge.dir/unit/test_converge.c.o"
  "CMakeFiles/test_converge.dir/unit/test_converge.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_converge.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
