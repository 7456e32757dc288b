file(REMOVE_RECURSE
  "../../bin/shim_test_dl"
  "../../bin/shim_test_dl.pdb"
  "CMakeFiles/shim_test_dl.dir/harness.c.o"
  "CMakeFiles/shim_test_dl.dir/harness.c.o.d"
  "CMakeFiles/shim_test_dl.dir/shim_test.c.o"
  "CMakeFiles/shim_test_dl.dir/shim_test.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/shim_test_dl.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
