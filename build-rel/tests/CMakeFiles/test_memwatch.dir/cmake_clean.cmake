file(REMOVE_RECURSE
  "../bin/test_memwatch"
  "../bin/test_memwatch.pdb"
  "CMakeFiles/test_memwatch.dir/unit/test_memwatch.c.o"
  "CMakeFiles/test_memwatch.dir/unit/test_memwatch.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_memwatch.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
