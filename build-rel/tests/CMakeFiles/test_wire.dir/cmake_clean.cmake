file(REMOVE_RECURSE
  "../bin/test_wire"
  "../bin/test_wire.pdb"
  "CMakeFiles/test_wire.dir/unit/test_wire.c.o"
  "CMakeFiles/test_wire.dir/unit/test_wire.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_wire.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
