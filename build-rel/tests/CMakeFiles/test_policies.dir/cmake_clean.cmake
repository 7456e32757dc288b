file(REMOVE_RECURSE
  "../bin/test_policies"
  "../bin/test_policies.pdb"
  "CMakeFiles/test_policies.dir/unit/test_policies.c.o"
  "CMakeFiles/test_policies.dir/unit/test_policies.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_policies.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
