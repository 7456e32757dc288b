file(REMOVE_RECURSE
  "../bin/test_idmap"
  "../bin/test_idmap.pdb"
  "CMakeFiles/test_idmap.dir/unit/test_idmap.c.o"
  "CMakeFiles/test_idmap.dir/unit/test_idmap.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_idmap.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
