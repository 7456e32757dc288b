file(REMOVE_RECURSE
  "../bin/test_relay"
  "../bin/test_relay.pdb"
  "CMakeFiles/test_relay.dir/unit/test_relay.c.o"
  "CMakeFiles/test_relay.dir/unit/test_relay.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_relay.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
