file(REMOVE_RECURSE
  "../bin/test_store_fault"
  "../bin/test_store_fault.pdb"
  "CMakeFiles/test_store_fault.dir/unit/test_store_fault.c.o"
  "CMakeFiles/test_store_fault.dir/unit/test_store_fault.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_store_fault.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
