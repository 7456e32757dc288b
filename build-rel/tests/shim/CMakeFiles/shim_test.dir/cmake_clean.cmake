file(REMOVE_RECURSE
  "../../bin/shim_test"
  "../../bin/shim_test.pdb"
  "CMakeFiles/shim_test.dir/harness.c.o"
  "CMakeFiles/shim_test.dir/harness.c.o.d"
  "CMakeFiles/shim_test.dir/shim_test.c.o"
  "CMakeFiles/shim_test.dir/shim_test.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/shim_test.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
