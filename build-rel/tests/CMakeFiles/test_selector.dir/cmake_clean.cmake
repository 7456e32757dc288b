file(REMOVE_RECURSE
  "../bin/test_selector"
  "../bin/test_selector.pdb"
  "CMakeFiles/test_selector.dir/unit/test_selector.c.o"
  "CMakeFiles/test_selector.dir/unit/test_selector.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_selector.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
