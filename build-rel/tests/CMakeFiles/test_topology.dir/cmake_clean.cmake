file(REMOVE_RECURSE
  "../bin/test_topology"
  "../bin/test_topology.pdb"
  "CMakeFiles/test_topology.dir/unit/test_topology.c.o"
  "CMakeFiles/test_topology.dir/unit/test_topology.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_topology.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
