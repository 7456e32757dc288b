file(REMOVE_RECURSE
  "../bin/test_feasible"
  "../bin/test_feasible.pdb"
  "CMakeFiles/test_feasible.dir/unit/test_feasible.c.o"
  "CMakeFiles/test_feasible.dir/unit/test_feasible.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_feasible.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
