file(REMOVE_RECURSE
  "../bin/test_wire_desired"
  "../bin/test_wire_desired.pdb"
  "CMakeFiles/test_wire_desired.dir/unit/test_wire_desired.c.o"
  "CMakeFiles/test_wire_desired.dir/unit/test_wire_desired.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_wire_desired.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
