file(REMOVE_RECURSE
  "../bin/test_history"
  "../bin/test_history.pdb"
  "CMakeFiles/test_history.dir/unit/test_history.c.o"
  "CMakeFiles/test_history.dir/unit/test_history.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_history.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
