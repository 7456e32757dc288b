file(REMOVE_RECURSE
  "../bin/test_sandbox"
  "../bin/test_sandbox.pdb"
  "CMakeFiles/test_sandbox.dir/unit/test_sandbox.c.o"
  "CMakeFiles/test_sandbox.dir/unit/test_sandbox.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_sandbox.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
