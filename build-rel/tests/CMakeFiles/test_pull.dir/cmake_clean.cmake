file(REMOVE_RECURSE
  "../bin/test_pull"
  "../bin/test_pull.pdb"
  "CMakeFiles/test_pull.dir/unit/test_pull.c.o"
  "CMakeFiles/test_pull.dir/unit/test_pull.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_pull.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
