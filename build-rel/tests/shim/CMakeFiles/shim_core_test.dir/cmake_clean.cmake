file(REMOVE_RECURSE
  "../../bin/shim_core_test"
  "../../bin/shim_core_test.pdb"
  "CMakeFiles/shim_core_test.dir/core_test.c.o"
  "CMakeFiles/shim_core_test.dir/core_test.c.o.d"
  "CMakeFiles/shim_core_test.dir/harness.c.o"
  "CMakeFiles/shim_core_test.dir/harness.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/shim_core_test.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
