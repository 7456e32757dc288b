file(REMOVE_RECURSE
  "../bin/test_billing"
  "../bin/test_billing.pdb"
  "CMakeFiles/test_billing.dir/unit/test_billing.c.o"
  "CMakeFiles/test_billing.dir/unit/test_billing.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/test_billing.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
