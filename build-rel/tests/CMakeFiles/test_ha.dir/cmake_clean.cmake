file(REMOVE_RECURSE
  "../bin/test_ha"
  "../bin/test_ha.pdb"
  "CMakeFiles/test_ha.dir/unit/test_ha.c.o"
  "CMakeFiles/test_ha.dir/unit/test_ha.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_ha.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
