file(REMOVE_RECURSE
  "../bin/test_servers"
  "../bin/test_servers.pdb"
  "CMakeFiles/test_servers.dir/unit/test_servers.c.o"
  "CMakeFiles/test_servers.dir/unit/test_servers.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_servers.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
