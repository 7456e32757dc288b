file(REMOVE_RECURSE
  "../bin/test_prom"
  "../bin/test_prom.pdb"
  "CMakeFiles/test_prom.dir/unit/test_prom.c.o"
  "CMakeFiles/test_prom.dir/unit/test_prom.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_prom.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
