file(REMOVE_RECURSE
  "../bin/test_cdi"
  "../bin/test_cdi.pdb"
  "CMakeFiles/test_cdi.dir/unit/test_cdi.c.o"
  "CMakeFiles/test_cdi.dir/unit/test_cdi.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_cdi.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
