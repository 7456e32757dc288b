file(REMOVE_RECURSE
  "../bin/test_probe"
  "../bin/test_probe.pdb"
  "CMakeFiles/test_probe.dir/unit/test_probe.c.o"
  "CMakeFiles/test_probe.dir/unit/test_probe.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_probe.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
