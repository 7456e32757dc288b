file(REMOVE_RECURSE
  "../bin/test_store"
  "../bin/test_store.pdb"
  "CMakeFiles/test_store.dir/unit/test_store.c.o"
  "CMakeFiles/test_store.dir/unit/test_store.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_store.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
